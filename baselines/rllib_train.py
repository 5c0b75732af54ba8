"""``python -m polarzoo.baselines.rllib_train`` (console script ``polarzoo-rllib-train``): self-play PPO on Ray RLlib.

The code is :mod:`polarzoo.baselines.training.rllib`; this module keeps the documented command.
"""

from polarzoo.baselines.training.rllib import main

if __name__ == "__main__":
    main()
