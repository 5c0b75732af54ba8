"""``python -m polarzoo.baselines.solitaire_train`` (console script ``polarzoo-solitaire-train``): training on the solitaire variant.

The code is :mod:`polarzoo.baselines.training.solitaire`; this module keeps the documented command.
"""

from polarzoo.baselines.training.solitaire import main

if __name__ == "__main__":
    main()
