"""``python -m polarzoo.baselines.solitaire_solver`` (console script ``polarzoo-solve``): the solitaire variant's exact solver.

The code is :mod:`polarzoo.baselines.evaluation.solitaire_solver`; this module keeps the documented command.
"""

from polarzoo.baselines.evaluation.solitaire_solver import main

if __name__ == "__main__":
    main()
