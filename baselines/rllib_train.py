"""``python -m polarzoo.baselines.rllib_train`` (console script ``polarzoo-rllib-train``): self-play PPO on Ray RLlib.

The code is :mod:`polarzoo.baselines.training.rllib`; this module keeps the documented command.
"""

from polarzoo.baselines._moved import moved_names
from polarzoo.baselines.training.rllib import main

# ``from polarzoo.baselines.rllib_train import build_config`` (earlier docs): until 0.4, with a warning
__getattr__ = moved_names(
    "polarzoo.baselines.rllib_train",
    dict.fromkeys(
        ["build_config", "evaluate_vs_random", "greedy_action", "TWO_PLAYER_ENVS"], "polarzoo.baselines.training.rllib"
    ),
    "0.4",
)

if __name__ == "__main__":
    main()
