"""``python -m polarzoo.baselines.league`` (console script ``polarzoo-league``): the rated league per game.

The code is :mod:`polarzoo.baselines.evaluation.league`; this module keeps the documented command.
"""

from polarzoo.baselines.evaluation.league_cli import main

if __name__ == "__main__":
    main()
