"""``python -m polarzoo.baselines.train`` (console script ``polarzoo-train``): MaskablePPO training with self-play.

The code is :mod:`polarzoo.baselines.training.ppo`; this module keeps the documented command.
"""

from polarzoo.baselines.training.ppo_cli import main

if __name__ == "__main__":
    main()
