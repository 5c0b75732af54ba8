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

__all__ = ["GYMNASIUM_ENVIRONMENTS", "fire_and_ice_solitaire_v0", "ENVIRONMENTS", "fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"]
