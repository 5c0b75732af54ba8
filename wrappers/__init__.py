"""Adapters that let single-agent RL libraries (SB3, sb3-contrib) train on our AEC games.

``SingleAgentEnv`` (one learner seat, opponents inside the env) needs only Gymnasium;
``BatchVecEnv`` (an SB3 ``VecEnv`` over the compiled batch cores) needs stable-baselines3 and is
imported when first asked for.
"""

from typing import Any

from polarzoo.wrappers.single_agent import SingleAgentEnv

__all__ = ["BatchVecEnv", "SingleAgentEnv"]


def __getattr__(name: str) -> Any:
    if name == "BatchVecEnv":
        from polarzoo.wrappers.batch_vec_env import BatchVecEnv

        return BatchVecEnv
    raise AttributeError(f"module 'polarzoo.wrappers' has no attribute {name!r}")
