"""Tic-tac-toe, a test-only fourth game: its rules core (``rules``), AEC env (``env``) and its
facts (``GAME``), and its kit (``kit``: a heuristic and tiny training settings).  Nothing outside this folder names it; a test registers it with
``polarzoo.envs.register_game(GAME)`` and every tool plays it."""

from polarzoo.envs.game_info import GameInfo

GAME = GameInfo(
    id="tic_tac_toe_v0",
    title="Tic-tac-toe",
    module="tests.games.tic_tac_toe.env",
    notation_example="b2",
    view="board",
    rules_core=True,
    kit="tests.games.tic_tac_toe.kit:KIT",
)
