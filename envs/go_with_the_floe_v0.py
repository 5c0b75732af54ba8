"""Go with the Floe, version 0 (see :mod:`envs.go_with_the_floe.env` for the full documentation)."""

from envs.go_with_the_floe.env import __doc__, env, raw_env  # noqa: F401
