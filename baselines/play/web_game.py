"""A game in a browser tab and the games and replays the server keeps: what a request may name
(built-in agents, capped budgets: :func:`page_agent_problem`), how a move, an undo, a hint and a
view are answered (:class:`WebGame`, each step one descent into the env, which checks the move),
and the store of games and loaded replay files (:class:`Store`).  The web server around them is
:mod:`polarzoo.baselines.play.web`."""

from __future__ import annotations

import copy
import secrets
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.spec import SpecError, Trust, parse_spec
from polarzoo.baselines.kits import kit_of
from polarzoo.baselines.play.board import legal_moves, position, web_games
from polarzoo.baselines.play.replay import read_records, record_label
from polarzoo.baselines.play.turns import next_live_agent, outcome_line
from polarzoo.envs import ENVIRONMENTS, GAMES, table_kwargs

#: games (and loaded replay files) kept in memory; the oldest go first
MAX_GAMES, MAX_REPLAYS = 256, 32
#: suggestions in the page's opponent box (any spec may be typed): search:3 is the Floe's endgame
#: search, search:4 / vsearch:4 Thin Ice's look-ahead
OPPONENTS = (
    "random",
    "heuristic",
    "pretrained",
    "mcts:200",
    "az:50",
    "az-jax:pretrained",
    "search:3",
    "search:4",
    "vsearch:4",
)
#: the largest search budget a request may ask for, by spec kind (a move's thinking time stays
#: within seconds on a laptop core; the command line's ``--opponent`` is not capped)
BUDGET_CAPS = {"mcts": 5000, "az": 400, "az-jax": 400, "search": 16, "vsearch": 16, "heuristic": 24}
#: the largest request body (a move, a new game) and replay upload, in bytes; the replays kept at
#: once hold at most REPLAY_BUDGET bytes of text (the oldest go first)
MAX_BODY, MAX_UPLOAD, REPLAY_BUDGET = 64 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024
#: agents made at once: two request threads must not import torch (or load one model) together
_AGENT_LOCK = threading.Lock()


def page_agent_problem(spec: str, env_id: str = "") -> str | None:
    """Why the page may not name ``spec`` (``None``: it may): a request names built-in agents
    only (the grammar's trust class, nested specs included: :mod:`polarzoo.baselines.agents.spec`),
    with capped budgets.  The answer never depends on the file system (it does not say whether a
    path exists)."""
    try:
        parsed = parse_spec(spec)
    except SpecError as error:
        parsed = None
        if "needs a positive whole number" in str(error):  # a budget's own problem, said as it is
            return str(error)
    if parsed is None or parsed.trust is not Trust.BUILTIN:
        return (
            "the page names built-in agents (" + ", ".join(OPPONENTS) + ") or the server's own; your "
            "module:callable agents, commands and model files are given on the command line that starts the server "
            "(polarzoo-web or polarzoo-mcp --opponent SPEC)"
        )
    for part in parsed.parts():
        # a game's kit may cap a kind lower (the Floe's search:D looks D White moves deep)
        game_caps = kit_of(env_id).budget_caps if env_id in GAMES else {}
        cap = game_caps.get(part.kind, BUDGET_CAPS.get(part.kind))
        if part.budget is not None and cap is not None and part.budget > cap:
            return f"{part.kind}:{part.budget} is more than the page allows ({part.kind}:{cap} at most; a bigger budget is given on the command line)"
    return None


def held_bytes(value: Any) -> int:
    """About how much memory ``value`` holds: its containers, strings, numbers and arrays, each
    counted once (``sys.getsizeof``, an array's ``nbytes``)."""
    import sys

    seen: set[int] = set()
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, np.ndarray):
            total += item.nbytes
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            stack.append(vars(item))
    return total


class BadRequest(ValueError):
    """A request the server refuses (``status``: the HTTP status) with one line that says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class WebGame:
    """One game in one browser tab: a person in ``human``'s seat (``None``: the first),
    ``opponent_spec`` in the others (one spec for all, or a list / comma-separated string with one
    per other seat, in seat order)."""

    def __init__(
        self,
        env_id: str,
        human: str | None,
        opponent_spec: str | list[str],
        seed: int = 0,
        players: int | None = None,
        hint_spec: str | None = None,
        named: dict[str, str] | None = None,
    ) -> None:
        info = GAMES.get(env_id)
        if info is None:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(web_games())}")
        try:
            kwargs = table_kwargs(env_id, players)
        except ValueError as error:
            raise BadRequest(str(error)) from None
        if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63):
            raise BadRequest(f"seed must be a non-negative integer, got {seed!r}")
        self.env_id, self.info = env_id, info
        self.env = ENVIRONMENTS[env_id].raw_env(**kwargs)
        self.env.reset(seed=seed)
        human = self.env.possible_agents[0] if human is None else human
        if human not in self.env.possible_agents:
            raise BadRequest(f"seat must be one of {', '.join(self.env.possible_agents)}, got {human!r}")
        self.human = human
        # One agent for every other seat, or one for each of them in seat order (Thin Ice at 3-6
        # players): a list, or one string with the specs separated by commas.
        specs = opponent_spec.split(",") if isinstance(opponent_spec, str) else opponent_spec
        others = [agent for agent in self.env.possible_agents if agent != human]
        if (
            not isinstance(specs, list)
            or not specs
            or not all(isinstance(spec, str) and 0 < len(spec.strip()) <= 200 for spec in specs)
        ):
            raise BadRequest('opponent must be an agent spec (a string), e.g. "random" or "mcts:200", or a list of them')
        specs = [spec.strip() for spec in specs]
        if len(specs) not in (1, len(others)):
            raise BadRequest(
                f"opponent: give one agent for every other seat, or one for each of the {len(others)}, got {len(specs)}"
            )
        named = named or {}
        made: dict[str, Any] = {}
        for asked in dict.fromkeys(specs):
            made[asked] = self._make_opponent(asked, env_id, named)
        self.opponents = {agent: made[specs[0] if len(specs) == 1 else specs[i]] for i, agent in enumerate(others)}
        self.opponent = self.opponents[others[0]]  # the hints' helper
        self.opponent_spec = ",".join(specs)
        self.hint_spec = hint_spec
        self.hint_agent: Any = None
        self.rng = np.random.default_rng(seed)
        self.totals = {agent: 0.0 for agent in self.env.possible_agents}
        self.moves: list[dict[str, str]] = []
        self.history: list[tuple[dict[str, Any], dict[str, float], int]] = []  # snapshots before each of the person's moves
        self.version = 0  # which position the picture shows
        self.lock = threading.Lock()
        self.kwargs = kwargs
        # A game drawn as pictures: the position after every move (a snapshot), so the page can
        # show it after each of the opponents' actions too; [0] is the start.
        self.positions: list[dict[str, Any]] = [self.env.snapshot()] if info.view == "piles" else []
        self._scratch: Any = None
        #: set when the client that asked for the opponents' moves has gone: they stop after the
        #: move in progress (the next request goes on from there)
        self.cancelled = threading.Event()
        self._advance()

    @staticmethod
    def _make_opponent(opponent_spec: str, env_id: str, named: dict[str, str]) -> Any:
        # Importing a module or loading a file a request names would run code chosen by whoever
        # reaches the server: the page names built-in agents, and the server's own by name.
        spec = named.get(opponent_spec)
        if spec is None:
            problem = page_agent_problem(opponent_spec, env_id)
            if problem is not None:
                raise BadRequest(f"opponent {opponent_spec!r}: {problem}")
            spec = opponent_spec
        try:
            with _AGENT_LOCK:
                return make_agent(spec, env_id)
        except (ValueError, FileNotFoundError, ImportError) as error:
            if spec != opponent_spec:  # the server's own agent: its file is the server's business
                raise BadRequest(f"opponent {opponent_spec!r} does not play {env_id}") from None
            raise BadRequest(f"opponent {opponent_spec!r}: {error}") from None

    # ---- playing -----------------------------------------------------------------------------
    def _advance(self) -> None:
        """The opponents move until it is the person's turn or the game is over (or the client
        has gone: :attr:`cancelled`)."""
        self.cancelled.clear()
        while (agent := next_live_agent(self.env, self.totals)) is not None and agent != self.human:
            if self.cancelled.is_set():
                return
            action = int(self.opponents[agent].act(self.env, agent, self.rng))
            self._step(agent, action)

    def _step(self, agent: str, action: int) -> None:
        self.env.step(action)  # the env checks the action: TypeError / ValueError, nothing changed
        self.moves.append({"player": agent, "notation": self.env.action_to_notation(action)})
        self.version += 1
        if self.positions:
            self.positions.append(self.env.snapshot())

    def to_move(self) -> str | None:
        return next_live_agent(self.env, self.totals)

    def check_ply(self, body: dict[str, Any]) -> None:
        """409 when the body's ``ply`` (the moves its page showed) is not the game's: a second tab
        (or a repeated click) moved since."""
        ply = body.get("ply")
        if ply is None:
            return
        if not isinstance(ply, int) or isinstance(ply, bool):
            raise BadRequest(f"ply must be the number of moves your page shows, got {ply!r}")
        if ply != len(self.moves):
            raise BadRequest(
                f"the game has moved on since your page showed it (move {ply}; it is at move {len(self.moves)}): reload it", 409
            )

    def move(self, body: dict[str, Any]) -> None:
        self.check_ply(body)
        if self.to_move() not in (self.human, None):  # the opponents stopped when a client left: go on
            self._advance()
        agent = self.to_move()
        if agent is None:
            raise BadRequest("the game is over; start a new game")
        if agent != self.human:  # the opponents were stopped again
            raise BadRequest("the opponents are still moving; try again", 409)
        action = body.get("action")
        if action is None and isinstance(body.get("notation"), str):
            try:
                action = self.env.notation_to_action(body["notation"])
            except ValueError as error:
                raise BadRequest(f"{body['notation']!r}: {error}") from None
        if not isinstance(action, int) or isinstance(action, bool):
            raise BadRequest('a move is {"action": <integer>} or {"notation": "<the game\'s notation>"}')
        before = (self.env.snapshot(), dict(self.totals), len(self.moves))
        try:
            self._step(agent, action)
        except ValueError as error:  # out of range or illegal, in the env's words
            raise BadRequest(f"illegal: {error}") from None
        self.history.append(before)
        self._advance()

    def undo(self, body: dict[str, Any] | None = None) -> None:
        self.check_ply(body or {})
        if not self.history:
            raise BadRequest("nothing to undo: you have not moved yet")
        snapshot, self.totals, kept = self.history.pop()
        self.env.restore(snapshot)
        del self.moves[kept:]
        del self.positions[kept + 1 :]
        self.version += 1

    def position_env(self, ply: int | None) -> Any:
        """A game drawn as pictures: the env at the position after move ``ply`` (``None``: now)."""
        if ply is None or ply == len(self.moves):
            return self.env
        if not 0 <= ply < len(self.positions):
            raise BadRequest(f"no move {ply} in this game (it has {len(self.moves)})", 404)
        if self._scratch is None:
            self._scratch = ENVIRONMENTS[self.env_id].raw_env(**self.kwargs)
            self._scratch.reset(seed=0)
        self._scratch.restore(self.positions[ply])
        return self._scratch

    def hint(self) -> dict[str, Any]:
        """A policy's top three moves for the person, with probabilities, and its value."""
        agent = self.to_move()
        if agent != self.human:
            raise BadRequest("no hint: it is not your turn" if agent else "no hint: the game is over")
        if self.hint_agent is None:
            spec = self.hint_spec or (self.opponent_spec if hasattr(self.opponent, "action_probabilities") else "pretrained")
            if spec == self.opponent_spec:
                self.hint_agent = self.opponent
            else:
                with _AGENT_LOCK:
                    self.hint_agent = make_agent(spec, self.env_id)
        helper = self.hint_agent
        if hasattr(helper, "action_probabilities"):
            probabilities = helper.action_probabilities(self.env, agent)
            best = [int(a) for a in np.argsort(-probabilities, kind="stable")[:3] if probabilities[a] > 0]
            moves = [
                {"action": a, "notation": self.env.action_to_notation(a), "probability": float(probabilities[a])} for a in best
            ]
            value = float(helper.value(self.env, agent)) if hasattr(helper, "value") else None
        else:  # a search or hand-written agent: its choice only
            action = int(helper.act(copy.deepcopy(self.env), agent, np.random.default_rng(0)))
            moves, value = [{"action": action, "notation": self.env.action_to_notation(action), "probability": None}], None
        return {"by": getattr(helper, "name", str(self.hint_spec)), "moves": moves, "value": value}

    def view(self, game_id: str) -> dict[str, Any]:
        agent = self.to_move()
        over = agent is None
        data = {
            "id": game_id,
            "env": self.env_id,
            "title": self.info.title,
            "view": self.info.view,
            "seats": list(self.env.possible_agents),
            "human": self.human,
            "opponent": getattr(self.opponent, "name", self.opponent_spec),
            "opponents": {seat: getattr(agent, "name", "?") for seat, agent in self.opponents.items()},
            "to_move": agent,
            "over": over,
            "result": outcome_line(self.env, self.totals) if over else None,
            "moves": self.moves,
            "can_undo": bool(self.history),
            "version": self.version,
            **position(self.env),
        }
        data["legal"] = legal_moves(self.env) if agent == self.human else []
        if self.info.view == "piles":
            data["picture"] = f"/api/games/{game_id}/picture.png?v={self.version}"
        return data


class Store:
    """Games and loaded replay files by id (random ids: one tab cannot guess another's game)."""

    def __init__(self) -> None:
        self.games: OrderedDict[str, WebGame] = OrderedDict()
        self.replays: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.lock = threading.Lock()

    def add_game(self, game: WebGame) -> str:
        game_id = secrets.token_hex(6)
        with self.lock:
            self.games[game_id] = game
            while len(self.games) > MAX_GAMES:
                self.games.popitem(last=False)
        return game_id

    def game(self, game_id: str) -> WebGame:
        with self.lock:
            game = self.games.get(game_id)
        if game is None:
            raise BadRequest(f"no game {game_id!r} here (the server may have restarted): start a new game", 404)
        return game

    def add_replays(self, text: str, source: str, env_id: str | None = None) -> tuple[str, dict[str, Any]]:
        records = read_records(text, source)
        # what the entry holds, about: its text, and later its replayed games and pictures
        entry = {"source": source, "env": env_id, "records": records, "pictures": {}, "cache": {}, "size": held_bytes(records)}
        replay_id = secrets.token_hex(6)
        with self.lock:
            self.replays[replay_id] = entry
            while len(self.replays) > 1 and (len(self.replays) > MAX_REPLAYS or self.replay_bytes() > REPLAY_BUDGET):
                self.replays.popitem(last=False)
        return replay_id, entry

    def replay_bytes(self) -> int:
        """The memory the replays kept hold, about: their parsed records (counted once, as Python
        objects: several times their text), and the replayed games and pictures they cached since."""
        return sum(entry["size"] + held_bytes(entry["pictures"]) + held_bytes(entry["cache"]) for entry in self.replays.values())

    def replay(self, replay_id: str) -> dict[str, Any]:
        with self.lock:
            entry = self.replays.get(replay_id)
        if entry is None:
            raise BadRequest(f"no replay file {replay_id!r} here (the server may have restarted): open the file again", 404)
        return entry


def replay_list(replay_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": replay_id,
        "source": entry["source"],
        "games": [
            {"index": i, "label": record_label(r), "env": r.get("env") or entry["env"], "replayable": "actions" in r}
            for i, r in enumerate(entry["records"])
        ],
    }
