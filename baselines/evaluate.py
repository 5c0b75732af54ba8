"""``python -m polarzoo.baselines.evaluate`` (console script ``polarzoo-evaluate``): round robins and N-player tables.

The code is :mod:`polarzoo.baselines.evaluation.evaluate`; this module keeps the documented command.
"""

from polarzoo.baselines.evaluation.evaluate_cli import main

if __name__ == "__main__":
    main()
