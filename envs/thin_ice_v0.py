"""Thin Ice, version 0 (see :mod:`polarzoo.envs.thin_ice.env` for the full documentation)."""

from polarzoo.envs.thin_ice.env import __doc__, env, parallel_env, raw_env  # type: ignore[no-redef]  # noqa: F401
from polarzoo.envs.thin_ice.rules import pad_observation, players_of_size  # noqa: F401 (GameInfo.observation_padding)
