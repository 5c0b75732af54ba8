"""``python -m polarzoo.baselines.export`` (console script ``polarzoo-export``): a saved model made small for shipping.

The code is :mod:`polarzoo.baselines.training.export`; this module keeps the documented command.
"""

from polarzoo.baselines.training.export import main

if __name__ == "__main__":
    main()
