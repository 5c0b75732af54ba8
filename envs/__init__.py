"""polarzoo environments.

``ENVIRONMENTS`` maps each multi-agent env id to its module (each with ``env`` and ``raw_env``),
so tests and scripts can iterate over all of them.  Importing this package also registers the
single-agent Gymnasium envs under the ``polarzoo/`` namespace.
"""

from __future__ import annotations

from types import ModuleType

from envs import fire_and_ice_v0, go_with_the_floe_v0

ENVIRONMENTS: dict[str, ModuleType] = {
    "fire_and_ice_v0": fire_and_ice_v0,
    "go_with_the_floe_v0": go_with_the_floe_v0,
}

__all__ = ["ENVIRONMENTS", "fire_and_ice_v0", "go_with_the_floe_v0"]
