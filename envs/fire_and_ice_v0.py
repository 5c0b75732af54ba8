"""Fire & Ice, version 0 (see :mod:`envs.fire_and_ice.env` for the full documentation)."""

from envs.fire_and_ice.env import __doc__, env, raw_env  # noqa: F401
