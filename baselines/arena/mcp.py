"""An MCP tool server: an LLM client (or any MCP client) plays the games against polarzoo's agents.

    python -m polarzoo.baselines.arena.mcp                 # over stdin/stdout (the client starts it)
    python -m polarzoo.baselines.arena.mcp --opponent mine=model:runs/x/model.safetensors

``polarzoo-mcp`` is the same command (a console script installed with the package).  A client
configuration names the command, e.g. ``{"command": "polarzoo-mcp"}``.

Tools (each answers JSON):

* ``list_games``: the games, their player counts and rules pages;
* ``list_agents(game)``: the opponents it may name: the game's rated league members with their
  ratings, and the built-in specs (``random``, ``heuristic``, ``mcts:N``, ...);
* ``new_game(game, opponent, seat, seed, players)``: a game against ``opponent`` in every other
  seat; the opponents move first when ``seat`` is not the first;
* ``get_state(game_id)``: the position as JSON (the env's ``describe(pictures=False)``, the same
  objects as the arena protocol's), whose turn, the moves so far, the result when over, and the
  legal moves in the game's notation beside their action ids;
* ``play(game_id, move)``: your move, in notation (``"b2-c3"``) or as an action id; the
  opponents answer, and the new state comes back;
* ``undo(game_id)``, ``resign(game_id)``.

As in the web app (:mod:`polarzoo.baselines.play.web_game`, whose games this serves), a client
names built-in agents only, with search budgets capped: a spec that names a file or a module is
refused, since whoever talks to the server must not make it load or run code.  The command
line's ``--opponent NAME=SPEC`` offers other agents by name.  A bad call is an MCP tool error
with one line saying why.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.cli.runs import HelpFormatter, prog_name
from polarzoo.baselines.evaluation.league import load_league
from polarzoo.baselines.evaluation.tournament import seat_names
from polarzoo.baselines.play.board import legal_moves
from polarzoo.baselines.play.web import named_agents
from polarzoo.baselines.play.web_game import OPPONENTS, BadRequest, Store, WebGame, page_agent_problem
from polarzoo.envs import GAMES
from polarzoo.envs.utils import require

MODULE = "polarzoo.baselines.arena.mcp"


class Games:
    """The games a server plays, by id, and the tools' answers (plain functions of JSON values,
    tested without a transport)."""

    def __init__(self, named: dict[str, str] | None = None) -> None:
        self.store, self.named = Store(), dict(named or {})
        self.resigned: dict[str, str] = {}  # game id -> who resigned
        self.lock = threading.Lock()

    def list_games(self) -> list[dict[str, Any]]:
        return [
            {
                "game": env_id,
                "title": info.title,
                "players": list(info.player_counts()),
                "rules": info.rules,
                "notation_example": info.notation_example,
            }
            for env_id, info in GAMES.items()
        ]

    def list_agents(self, game: str) -> dict[str, Any]:
        if game not in GAMES:
            raise BadRequest(f"unknown game {game!r}; the games: {', '.join(GAMES)}")
        try:
            league = load_league(game, check=False)
            members = [
                {"name": m["name"], "spec": m["spec"], "rating": round(league.ratings[m["name"]])}
                for m in sorted(league.members, key=lambda m: -league.ratings[m["name"]])
                if page_agent_problem(m["spec"], game) is None
            ]
            rated = f"league v{league.version}"
        except ValueError:
            members, rated = [], None
        return {
            "game": game,
            "league": rated,
            "members": members,
            "built_in": [spec for spec in OPPONENTS if page_agent_problem(spec, game) is None],
            "server_agents": sorted(self.named),
        }

    def new_game(
        self, game: str, opponent: str = "heuristic", seat: int = 0, seed: int = 0, players: int | None = None
    ) -> dict[str, Any]:
        if game not in GAMES:
            raise BadRequest(f"unknown game {game!r}; the games: {', '.join(GAMES)}")
        try:
            seats = seat_names(game, GAMES[game].env_kwargs(players) or {})
        except ValueError as error:
            raise BadRequest(str(error)) from None
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(seats):
            raise BadRequest(f"seat must be a seat number 0..{len(seats) - 1} ({', '.join(seats)}), got {seat!r}")
        web = WebGame(game, seats[seat], opponent, seed=seed, players=players, named=self.named)
        with self.lock:
            game_id = self.store.add_game(web)
        return self.get_state(game_id)

    def _game(self, game_id: str) -> WebGame:
        try:
            return self.store.game(game_id)
        except (KeyError, BadRequest):
            raise BadRequest(f"no game {game_id!r} (games are kept in memory while the server runs)") from None

    def get_state(self, game_id: str) -> dict[str, Any]:
        web = self._game(game_id)
        with web.lock:
            env = web.env
            to_move = web.to_move()
            resigned = self.resigned.get(game_id)
            over = to_move is None or resigned is not None
            state = {
                "game_id": game_id,
                "game": web.env_id,
                "seats": list(env.possible_agents),
                "you": web.human,
                "opponent": getattr(web.opponent, "name", web.opponent_spec),
                "opponents": {seat: getattr(agent, "name", "?") for seat, agent in web.opponents.items()},
                "to_move": None if over else to_move,
                "your_turn": not over and to_move == web.human,
                "over": over,
                "result": f"{resigned} resigned" if resigned else (web.view(game_id)["result"] if over else None),
                "moves": list(web.moves),
                "position": env.describe(pictures=False),
            }
            state["legal_moves"] = legal_moves(env) if state["your_turn"] else []
        return state

    def play(self, game_id: str, move: str | int) -> dict[str, Any]:
        web = self._game(game_id)
        if game_id in self.resigned:
            raise BadRequest("the game is over (resigned); start a new game")
        if isinstance(move, bool) or not isinstance(move, (str, int)):
            raise BadRequest("move is the game's notation (a string) or an action id (an integer)")
        if isinstance(move, int) and not 0 <= move < 10**9:
            raise BadRequest(f"action id {str(move)[:20]} is out of range")
        if isinstance(move, str) and len(move) > 100:
            raise BadRequest(f"move has {len(move)} characters; a move's notation or action id is short")
        body: dict[str, Any] = {"action": move} if isinstance(move, int) else {"notation": move.strip()}
        text = move.strip() if isinstance(move, str) else ""
        if text and text.isascii() and text.isdigit():
            if len(text) > 9:
                raise BadRequest(f"action id {text[:20]}... is out of range")
            body = {"action": int(text)}
        elif text and any(c.isdigit() for c in text) and not text.isascii() and text.replace(" ", "").isdigit():
            raise BadRequest(f"move {text[:20]!r}: an action id is written with the digits 0-9")
        with web.lock:
            web.move(body)
        return self.get_state(game_id)

    def undo(self, game_id: str) -> dict[str, Any]:
        web = self._game(game_id)
        if game_id in self.resigned:
            raise BadRequest("the game is over (resigned); start a new game")
        with web.lock:
            web.undo()
        return self.get_state(game_id)

    def resign(self, game_id: str) -> dict[str, Any]:
        web = self._game(game_id)
        if web.to_move() is None or game_id in self.resigned:
            raise BadRequest("the game is already over")
        self.resigned[game_id] = web.human
        return self.get_state(game_id)


def server(games: Games) -> Any:
    """The MCP server (the ``mcp`` SDK's ``MCPServer``) whose tools call ``games``."""
    require("mcp", "the MCP tool server (pip install 'polarzoo[mcp]')")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from polarzoo import __version__

    app = MCPServer(
        "polarzoo", version=__version__, instructions=__doc__.split("\n\n")[0] + " Start with list_games, then new_game."
    )

    def answer(call: Any, *args: Any) -> str:
        try:
            return json.dumps(call(*args))
        except BadRequest as error:
            raise ToolError(str(error)) from None

    @app.tool()
    def list_games() -> str:
        """The games: id, title, player counts, rules page, a notation example."""
        return answer(games.list_games)

    @app.tool()
    def list_agents(game: str) -> str:
        """The opponents a game may be played against: its league members (best first, with ratings) and built-in specs."""
        return answer(games.list_agents, game)

    @app.tool()
    def new_game(game: str, opponent: str = "heuristic", seat: int = 0, seed: int = 0, players: int | None = None) -> str:
        """Start a game of `game` in seat `seat` (0 moves first) against `opponent` (an agent spec or league member's spec) in every other seat, or one per other seat separated by commas ("heuristic,pretrained,vsearch:4"); `players` for games of 2-6 players. Returns the state, with your legal moves."""
        return answer(games.new_game, game, opponent, seat, seed, players)

    @app.tool()
    def get_state(game_id: str) -> str:
        """The game's state: the position as JSON, whose turn, the moves so far, the result when over, your legal moves (notation and action id)."""
        return answer(games.get_state, game_id)

    @app.tool()
    def play(game_id: str, move: str | int) -> str:
        """Play your move: the game's notation (as in legal_moves, a string) or an action id (a JSON number); the opponents answer. Returns the new state."""
        return answer(games.play, game_id, move)

    @app.tool()
    def undo(game_id: str) -> str:
        """Take back your last move (and the opponents' answers)."""
        return answer(games.undo, game_id)

    @app.tool()
    def resign(game_id: str) -> str:
        """Resign the game."""
        return answer(games.resign, game_id)

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog_name(MODULE), description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="[NAME=]SPEC",
        help="also offer this agent (any spec, a model file included) to clients by NAME (repeatable)",
    )
    args = parser.parse_args(argv)
    named = named_agents(args.opponent)
    for spec in named.values():  # the command line's agents: a bad one is said now, in one line
        if not any(_plays(spec, env_id) for env_id in GAMES):
            parser.error(f"--opponent {spec}: not an agent of any game here")
    app = server(Games(named))
    try:
        app.run()  # stdio: the client started this process and talks over its stdin / stdout
    except KeyboardInterrupt:
        sys.exit(130)


def _plays(spec: str, env_id: str) -> bool:
    try:
        make_agent(spec, env_id)
    except (ValueError, FileNotFoundError, ImportError):
        return False
    return True


if __name__ == "__main__":
    main()
