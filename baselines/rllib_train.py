"""``python -m polarzoo.baselines.rllib_train`` (console script ``polarzoo-rllib-train``): self-play PPO on Ray RLlib.

The code is :mod:`polarzoo.baselines.training.rllib`; this module keeps the documented command.
"""

from polarzoo.baselines.cli.moved import moved_names
from polarzoo.baselines.training.rllib import main

__getattr__ = moved_names(__name__, "polarzoo.baselines.training.rllib", ["build_config", "evaluate_vs_random"])

if __name__ == "__main__":
    main()
