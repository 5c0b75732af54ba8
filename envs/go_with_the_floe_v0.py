"""Go with the Floe, version 0 (see :mod:`polarzoo.envs.go_with_the_floe.env` for the full documentation)."""

from polarzoo.envs.go_with_the_floe.env import __doc__, env, parallel_env, raw_env  # type: ignore[no-redef]  # noqa: F401
