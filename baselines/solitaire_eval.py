"""``python -m polarzoo.baselines.solitaire_eval`` (console script ``polarzoo-solitaire-eval``): a solitaire agent against the exact solver.

The code is :mod:`polarzoo.baselines.evaluation.solitaire_eval`; this module keeps the documented command.
"""

from polarzoo.baselines.evaluation.solitaire_eval import main

if __name__ == "__main__":
    main()
