"""polarzoo environments.

``ENVIRONMENTS`` maps each multi-agent env id to its module (each with ``env`` and ``raw_env``),
so tests and scripts can iterate over all of them.  Importing this package also registers the
single-agent Gymnasium envs under the ``polarzoo/`` namespace.
"""

from __future__ import annotations

from types import ModuleType

import gymnasium

from polarzoo.envs import fire_and_ice_solitaire_v0, fire_and_ice_v0, go_with_the_floe_v0, thin_ice_v0

ENVIRONMENTS: dict[str, ModuleType] = {
    "fire_and_ice_v0": fire_and_ice_v0,
    "go_with_the_floe_v0": go_with_the_floe_v0,
    "thin_ice_v0": thin_ice_v0,
}

#: Single-agent Gymnasium envs: id -> module.
GYMNASIUM_ENVIRONMENTS: dict[str, ModuleType] = {
    fire_and_ice_solitaire_v0.GYMNASIUM_ID: fire_and_ice_solitaire_v0,
}

if fire_and_ice_solitaire_v0.GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(
        id=fire_and_ice_solitaire_v0.GYMNASIUM_ID,
        entry_point="polarzoo.envs.fire_and_ice.solitaire_env:FireAndIceSolitaireEnv",
        max_episode_steps=None,
    )

#: Our env id -> its id in PettingZoo's registry (``pettingzoo.make("aec" | "parallel", id)``).
PETTINGZOO_IDS: dict[str, str] = {
    "fire_and_ice_v0": "polarzoo/fire_and_ice-v0",
    "go_with_the_floe_v0": "polarzoo/go_with_the_floe-v0",
    "thin_ice_v0": "polarzoo/thin_ice-v0",
}


def _register_with_pettingzoo() -> None:
    import pettingzoo

    if not hasattr(pettingzoo, "register"):  # PettingZoo < 1.27 has no registry
        return
    for env_id, registry_id in PETTINGZOO_IDS.items():
        for kind, registry, function in (("aec", pettingzoo.aec_registry, "env"),
                                         ("parallel", pettingzoo.parallel_registry, "parallel_env")):
            if registry_id not in registry:
                pettingzoo.register(kind, registry_id, entry_point=f"polarzoo.envs.{env_id}:{function}")


_register_with_pettingzoo()

__all__ = ["PETTINGZOO_IDS", "GYMNASIUM_ENVIRONMENTS", "fire_and_ice_solitaire_v0", "ENVIRONMENTS", "fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"]
