"""Thin Ice, version 0 (see :mod:`polarzoo.envs.thin_ice.env` for the full documentation)."""

from polarzoo.envs.thin_ice.env import __doc__, env, parallel_env, raw_env  # type: ignore[no-redef]  # noqa: F401

#: Thin Ice steps run physics (tens of ms each): kept out of the steps/s table, which has its own.
BENCHMARK_STEPS = False
