"""Adapters that let single-agent RL libraries (SB3, sb3-contrib) train on our AEC games."""

from polarzoo.wrappers.single_agent import SingleAgentEnv

__all__ = ["SingleAgentEnv"]
