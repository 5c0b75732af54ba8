"""Play and watch in the browser: a local web server (Starlette + uvicorn, the ``web`` extra).

    polarzoo-web                                   # http://127.0.0.1:8000/ : pick a game, a seat, an opponent
    polarzoo-play --web --env go_with_the_floe_v0 --opponent pretrained    # the same, with those preselected
    polarzoo-web --replay runs/eval-.../games.jsonl   # watch recorded games at /replay
    polarzoo-web --host 0.0.0.0 --port 8080           # reachable from other machines (no login: mind the network)

The page draws the board in SVG (the envs' own ``render_svg``): click one of your pieces (its
legal targets light up, from the action mask), then a target.  Thin Ice shows the MuJoCo picture
of every pile after each action, with buttons for the legal calls, a size / orientation choice and
a grid of cells for placements, pick-ups by slot, and *done*; a pile that went out shows its rule
(T four pieces on the table, A three touching nothing, N tip in tip).  ``hint`` shows a policy's
three most likely moves with their probabilities and its value of the position (the opponent's
policy if it has one, else the shipped ``pretrained`` model); ``undo`` takes back your last move
and the replies to it; the move list is in the game's notation.  Each browser tab plays its own
game (several at once); ``/replay`` opens any ``games.jsonl`` (from ``evaluate``, a league, a
benchmark) and steps through its games.

What a request can do (docs/security.md): the page names built-in agents only (``random``,
``heuristic``, ``mcts:N``, ``pretrained``, ``az:N``, ``az-jax:pretrained``, ``search:K``,
``vsearch:K``: none reads a file a request names), their search budgets capped
(:data:`BUDGET_CAPS`), and the agents the person who started the server named with ``--opponent``
(a model file, your own ``module:callable``), offered by their name, never by a path.  The
server answers only its own page: a request from another site (its ``Origin``), for another host
name (its ``Host``: DNS rebinding) or a POST that is not ``application/json`` is refused (403 /
415); bodies and replay uploads have size limits (413) and the replays kept a memory budget.

The JSON API the page uses (also for scripts): ``GET /api/info``; ``POST /api/games`` ``{"env",
"seat", "opponent", "players", "seed"}``; ``GET /api/games/ID``; ``POST /api/games/ID/move``
``{"action": int}`` or ``{"notation": "D4-A4"}``, with ``"ply"``: the number of moves the page
showed (a move made on a position that has changed since is refused, 409); ``POST /api/games/ID/undo``; ``GET
/api/games/ID/hint``; ``GET /api/games/ID/picture.png[?ply=K]`` (Thin Ice; after move K); ``POST /api/replays`` (the text of a
``games.jsonl``, as ``application/x-ndjson``); ``GET /api/replays/ID/K``.  A bad request gets
status 4xx and ``{"error": "one line"}``; the game is left as it was.  Ctrl-C stops the server at
once, whatever it is computing (exit 130).
"""

from __future__ import annotations

import argparse
import copy
import ipaddress
import json
import os
import secrets
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.registry import KINDS
from polarzoo.baselines.cli.runs import HelpFormatter, prog_name
from polarzoo.baselines.play.board import legal_moves, picture_png, position, web_games
from polarzoo.baselines.play.replay import ReplayError, read_records, record_label, replay
from polarzoo.baselines.play.turns import next_live_agent, outcome_line
from polarzoo.envs import ENVIRONMENTS, GAMES, games_with_player_range

STATIC = Path(__file__).parent / "web_static"
#: games (and loaded replay files) kept in memory; the oldest go first
MAX_GAMES, MAX_REPLAYS = 256, 32
#: suggestions in the page's opponent box (any spec may be typed): search:3 is the Floe's endgame
#: search, search:4 / vsearch:4 Thin Ice's look-ahead
OPPONENTS = ("random", "heuristic", "pretrained", "mcts:200", "az:50", "az-jax:pretrained", "search:3", "search:4", "vsearch:4")
#: the largest search budget a request may ask for, by spec kind (a move's thinking time stays
#: within seconds on a laptop core; the command line's ``--opponent`` is not capped)
BUDGET_CAPS = {"mcts": 5000, "az": 400, "az-jax": 400, "search": 16, "vsearch": 16, "heuristic": 24}
#: caps of their own for a game, by (kind, env id): Go with the Floe's search:D looks D White
#: moves deep (exponential)
GAME_BUDGET_CAPS = {("search", "go_with_the_floe_v0"): 5}
FLOE_SEARCH_CAP = GAME_BUDGET_CAPS[("search", "go_with_the_floe_v0")]
#: the largest request body (a move, a new game) and replay upload, in bytes; the replays kept at
#: once hold at most REPLAY_BUDGET bytes of text (the oldest go first)
MAX_BODY, MAX_UPLOAD, REPLAY_BUDGET = 64 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024
#: agents made at once: two request threads must not import torch (or load one model) together
_AGENT_LOCK = threading.Lock()


def page_agent_problem(spec: str, env_id: str = "") -> str | None:
    """Why the page may not name ``spec`` (``None``: it may): a request names built-in agents
    only, none of which reads a file the request names, with capped budgets.  The answer never
    depends on the file system (it does not say whether a path exists)."""
    kind, _, argument = spec.partition(":")
    parts = argument.split(":") if argument else []
    if kind not in KINDS or kind == "model":  # the registry's kinds; model:PATH always names a file
        return (
            "the page names built-in agents (" + ", ".join(OPPONENTS) + ") or the server's own; your "
            "module:callable agents and model files are given on the command line (polarzoo-web --opponent SPEC)"
        )
    if kind == "az-jax":  # az-jax:pretrained, az-jax:N:pretrained
        if not parts or parts[-1] != "pretrained" or len(parts) > 2:
            return (
                "az-jax from the page plays the shipped network only (az-jax:pretrained or az-jax:N:pretrained); "
                "other model files are given on the command line (polarzoo-web --opponent SPEC)"
            )
        parts = parts[:-1]
    if kind in ("random", "pretrained") and parts or len(parts) > 1:
        return "agents that play a file a request names are given on the command line (polarzoo-web --opponent SPEC), not from the page"
    if parts:
        budget = parts[0]
        if not (budget.isascii() and budget.isdigit()) or len(budget) > 9:
            return f"{kind}:N takes a positive whole number, got {budget!r}"
        cap = GAME_BUDGET_CAPS.get((kind, env_id), BUDGET_CAPS.get(kind))
        if cap is not None and int(budget) > cap:
            return f"{kind}:{budget} is more than the page allows ({kind}:{cap} at most; a bigger budget is given on the command line)"
    return None


class BadRequest(ValueError):
    """A request the server refuses (``status``: the HTTP status) with one line that says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class WebGame:
    """One game in one browser tab: a person in ``human``'s seat (``None``: the first),
    ``opponent_spec`` in the others."""

    def __init__(
        self,
        env_id: str,
        human: str | None,
        opponent_spec: str,
        seed: int = 0,
        players: int | None = None,
        hint_spec: str | None = None,
        named: dict[str, str] | None = None,
    ) -> None:
        info = GAMES.get(env_id)
        if info is None:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(web_games())}")
        kwargs: dict[str, Any] = {}
        if players is not None:
            if not info.variable_players:
                raise BadRequest(f"players is for {', '.join(games_with_player_range())} only")
            try:
                kwargs = info.env_kwargs(players) or {}
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
        if not isinstance(opponent_spec, str) or not 0 < len(opponent_spec) <= 200:
            raise BadRequest('opponent must be an agent spec (a string), e.g. "random" or "mcts:200"')
        named = named or {}
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
                self.opponent = make_agent(spec, env_id)
        except (ValueError, FileNotFoundError, ImportError) as error:
            if spec != opponent_spec:  # the server's own agent: its file is the server's business
                raise BadRequest(f"opponent {opponent_spec!r} does not play {env_id}") from None
            raise BadRequest(f"opponent {opponent_spec!r}: {error}") from None
        self.opponent_spec = opponent_spec
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

    # ---- playing -----------------------------------------------------------------------------
    def _advance(self) -> None:
        """The opponents move until it is the person's turn or the game is over (or the client
        has gone: :attr:`cancelled`)."""
        self.cancelled.clear()
        while (agent := next_live_agent(self.env, self.totals)) is not None and agent != self.human:
            if self.cancelled.is_set():
                return
            action = int(self.opponent.act(self.env, agent, self.rng))
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
        entry = {"source": source, "env": env_id, "records": records, "pictures": {}, "cache": {}, "size": len(text)}
        replay_id = secrets.token_hex(6)
        with self.lock:
            self.replays[replay_id] = entry
            while len(self.replays) > 1 and (len(self.replays) > MAX_REPLAYS or self.replay_bytes() > REPLAY_BUDGET):
                self.replays.popitem(last=False)
        return replay_id, entry

    def replay_bytes(self) -> int:
        """What the replays kept hold, about (their text, replayed frames and pictures)."""
        return sum(entry["size"] for entry in self.replays.values())

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


def host_allowed(host_header: str, served: str | None = None) -> bool:
    """Whether a request's ``Host`` names this server: an IP address, ``localhost``, or the name it
    was started with (``--host``).  Any other name is DNS rebinding: a site's name made to point
    at 127.0.0.1 so that its pages could read this server."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost") or (served is not None and host == served.lower()):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class SameOrigin:
    """ASGI middleware: the server answers only its own page.  Refused: a ``Host`` that is not
    this server's (403), an API request from another site (its ``Origin`` or ``Sec-Fetch-Site``;
    403), and a POST whose body is not JSON (415: a form or ``text/plain`` POST is a CORS
    "simple request" that any page may send without asking)."""

    #: the body types a POST may have: JSON, and JSON lines for a replay upload
    BODY_TYPES = ("application/json", "application/x-ndjson", "application/jsonl")

    def __init__(self, app: Any, served_host: str | None = None) -> None:
        self.app = app
        self.served_host = served_host

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        problem, status = None, 403
        host = headers.get("host", "")
        path = scope.get("path", "")
        if not host_allowed(host, self.served_host):
            problem = f"this server answers requests for itself only (Host {host[:80]!r}); open it at 127.0.0.1 or localhost"
        elif path.startswith("/api/"):
            origin = headers.get("origin")
            if origin is not None and origin.lower().rstrip("/") != f"{scope.get('scheme', 'http')}://{host}".lower():
                problem = f"cross-origin request refused (from {origin[:80]!r}): this server answers only its own page"
            elif headers.get("sec-fetch-site") in ("cross-site", "same-site"):
                problem = "cross-origin request refused: this server answers only its own page"
            elif scope["method"] == "POST":
                kind = headers.get("content-type", "").split(";")[0].strip().lower()
                empty = headers.get("content-length", "0") == "0" and "transfer-encoding" not in headers
                if kind not in self.BODY_TYPES and not (empty and not kind):  # an empty POST (undo) needs no type
                    problem, status = f"a POST's body is JSON (Content-Type: application/json), got {kind or 'none'!r}", 415
        if problem is None:
            return await self.app(scope, receive, send)
        body = json.dumps({"error": problem}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def create_app(
    store: Store | None = None,
    defaults: dict[str, Any] | None = None,
    hint_spec: str | None = None,
    named: dict[str, str] | None = None,
    served_host: str | None = None,
) -> Any:
    """The Starlette application (``uvicorn`` serves it; tests use Starlette's ``TestClient`` with
    ``base_url="http://127.0.0.1"``).  ``named``: the agents the server's command line offers, by
    name (``{"my-model": "model:runs/x/model.safetensors"}``); ``served_host``: the ``--host`` name
    that requests may use besides IP addresses and ``localhost``."""
    from concurrent.futures import ThreadPoolExecutor

    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    store = store or Store()
    defaults = dict(defaults or {})
    named = dict(named or {})
    drawing_thread = ThreadPoolExecutor(1, thread_name_prefix="polarzoo-drawing")

    def error(message: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except BadRequest as problem:
                return error(str(problem), problem.status)
            except ReplayError as problem:
                return error(str(problem), 400)
            except ClientDisconnect:  # nobody is left to answer
                return Response(status_code=499)

        return endpoint

    async def body_bytes(request: Request, limit: int) -> bytes:
        """The body, refused (413) past ``limit`` bytes before more of it is read."""
        declared = request.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise BadRequest(f"the body is {int(declared):,} bytes; at most {limit:,} are accepted here", 413)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(f"the body is over {limit:,} bytes, the most accepted here", 413)
            chunks.append(chunk)
        return b"".join(chunks)

    async def body_json(request: Request) -> dict[str, Any]:
        raw = await body_bytes(request, MAX_BODY)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError) as problem:  # JSONDecodeError, and a number of 4,300+ digits
            raise BadRequest(f"malformed JSON: {getattr(problem, 'msg', None) or str(problem)[:120]}") from None
        except RecursionError:
            raise BadRequest("malformed JSON: nested too deeply") from None
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        return body

    def run(function: Any, *args: Any) -> Any:
        from starlette.concurrency import run_in_threadpool

        return run_in_threadpool(function, *args)

    def run_drawing(function: Any, *args: Any) -> Any:
        # MuJoCo's OpenGL context belongs to the thread that made it current: every picture is
        # drawn on one thread of its own.
        import asyncio

        return asyncio.get_running_loop().run_in_executor(drawing_thread, lambda: function(*args))

    games = {
        env_id: {
            "title": GAMES[env_id].title,
            "view": GAMES[env_id].view,
            "seats": list(ENVIRONMENTS[env_id].raw_env().possible_agents),
            "players": list(GAMES[env_id].players) if GAMES[env_id].variable_players else None,
        }
        for env_id in web_games()
    }

    async def info(request: Request) -> Response:
        return JSONResponse({"games": games, "opponents": list(named) + list(OPPONENTS), "defaults": defaults})

    async def new_game(request: Request) -> Response:
        body = await body_json(request)
        env_id = body.get("env", defaults.get("env") or next(iter(games)))
        if not isinstance(env_id, str) or env_id not in games:
            raise BadRequest(f"unknown game {str(env_id)[:80]!r}; the games: {', '.join(games)}")
        game = await run(
            WebGame,
            env_id,
            body.get("seat"),
            body.get("opponent", "random"),
            body.get("seed", 0),
            body.get("players"),
            hint_spec,
            named,
        )
        game_id = store.add_game(game)
        return JSONResponse(game.view(game_id), status_code=201)

    def locked(game: WebGame, function: Any, *args: Any) -> Any:
        if not game.lock.acquire(timeout=60):
            raise BadRequest("the game is busy with another request", 409)
        try:
            return function(*args)
        finally:
            game.lock.release()

    async def while_connected(request: Request, game: WebGame, function: Any, *args: Any) -> Any:
        """``function(*args)`` in a worker thread; should the client go meanwhile, the game's
        opponents stop after the move in progress (nobody waits for the rest)."""
        import asyncio

        work = asyncio.ensure_future(run(locked, game, function, *args))
        while not work.done():
            await asyncio.wait([work], timeout=0.25)
            if not work.done() and await request.is_disconnected():
                game.cancelled.set()
                raise ClientDisconnect()
        return work.result()

    async def show(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        return JSONResponse(await run(locked, game, game.view, game_id))

    async def move(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        body = await body_json(request)

        def move_and_view() -> dict[str, Any]:
            game.move(body)
            return game.view(game_id)

        return JSONResponse(await while_connected(request, game, move_and_view))

    async def undo(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        body = await body_json(request)

        def undo_and_view() -> dict[str, Any]:
            game.undo(body)
            return game.view(game_id)

        return JSONResponse(await run(locked, game, undo_and_view))

    async def hint(request: Request) -> Response:
        game = store.game(request.path_params["game_id"])
        return JSONResponse(await run(locked, game, game.hint))

    async def picture(request: Request) -> Response:
        game = store.game(request.path_params["game_id"])
        if game.info.view != "piles":
            raise BadRequest(f"{game.env_id} is drawn in SVG; it has no pictures", 404)
        ply = request.query_params.get("ply")
        if ply is not None and not (ply.isascii() and ply.isdigit() and len(ply) < 10):
            raise BadRequest(f"ply must be a move number, got {ply[:40]!r}")
        png = await run_drawing(locked, game, lambda: picture_png(game.position_env(None if ply is None else int(ply))))
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    async def load_replays(request: Request) -> Response:
        raw = await body_bytes(request, MAX_UPLOAD)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("the file is not text (a games.jsonl is UTF-8 JSON lines)") from None
        env_id = request.query_params.get("env")
        if env_id is not None and env_id not in games:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(games)}")
        name = request.query_params.get("name", "games.jsonl")[:200]
        replay_id, entry = await run(store.add_replays, text, name, env_id)
        return JSONResponse(replay_list(replay_id, entry), status_code=201)

    async def replay_files(request: Request) -> Response:
        replay_id = request.path_params["replay_id"]
        return JSONResponse(replay_list(replay_id, store.replay(replay_id)))

    async def replay_game(request: Request) -> Response:
        replay_id, index = request.path_params["replay_id"], request.path_params["index"]
        entry = store.replay(replay_id)
        if not 0 <= index < len(entry["records"]):
            raise BadRequest(f"no game {index} in {entry['source']} (it has {len(entry['records'])})", 404)
        if index not in entry["cache"]:

            def picture_url(env: Any, ply: int) -> str:
                png = entry["pictures"][(index, ply)] = picture_png(env)
                entry["size"] += len(png)
                return f"/api/replays/{replay_id}/{index}/{ply}.png"

            def replayed() -> dict[str, Any]:
                try:
                    return replay(entry["records"][index], entry["env"], picture_url)
                except RecursionError:
                    raise ReplayError(f"line {entry['records'][index].get('_line', '?')}: damaged record") from None

            game = await run_drawing(replayed)
            entry["cache"][index] = game
            entry["size"] += len(json.dumps(game))
        return JSONResponse(entry["cache"][index])

    async def replay_picture(request: Request) -> Response:
        entry = store.replay(request.path_params["replay_id"])
        png = entry["pictures"].get((request.path_params["index"], request.path_params["ply"]))
        if png is None:
            raise BadRequest("no such picture (open the game first)", 404)
        return Response(png, media_type="image/png")

    def page(name: str) -> Any:
        async def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})

        return endpoint

    async def not_found(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return error(f"no such API path: {request.method} {request.url.path}", getattr(exc, "status_code", 404))
        return Response(
            f"{getattr(exc, 'status_code', 404)}: {request.url.path}",
            status_code=getattr(exc, "status_code", 404),
            media_type="text/plain",
        )

    routes = [
        Route("/", page("play.html")),
        Route("/replay", page("replay.html")),
        Route("/api/info", guarded(info)),
        Route("/api/games", guarded(new_game), methods=["POST"]),
        Route("/api/games/{game_id}", guarded(show)),
        Route("/api/games/{game_id}/move", guarded(move), methods=["POST"]),
        Route("/api/games/{game_id}/undo", guarded(undo), methods=["POST"]),
        Route("/api/games/{game_id}/hint", guarded(hint)),
        Route("/api/games/{game_id}/picture.png", guarded(picture)),
        Route("/api/replays", guarded(load_replays), methods=["POST"]),
        Route("/api/replays/{replay_id}", guarded(replay_files)),
        Route("/api/replays/{replay_id}/{index:int}", guarded(replay_game)),
        Route("/api/replays/{replay_id}/{index:int}/{ply:int}.png", guarded(replay_picture)),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={404: not_found, 405: not_found},
        middleware=[Middleware(SameOrigin, served_host=served_host)],
    )


def _require_web() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        sys.exit('error: the web app needs the web extra: pip install "polarzoo[web]"')


def offered_name(spec: str) -> str:
    """The name under which the page offers an agent of the command line: the spec itself, but
    for a file its folder and stem (``model:my-run/model``), never its path."""
    kind, _, argument = spec.partition(":")
    parts = argument.split(":")
    if kind in ("model", "az", "search", "vsearch", "az-jax") and argument and ("/" in parts[-1] or "." in parts[-1]):
        path = Path(parts[-1])
        return ":".join([kind, *parts[:-1], f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem])
    return spec


def named_agents(specs: list[str] | None) -> dict[str, str]:
    """``--opponent [NAME=]SPEC`` values -> ``{name: spec}`` (:func:`offered_name` when no NAME)."""
    named: dict[str, str] = {}
    for text in specs or []:
        name, equals, spec = text.partition("=")
        if not equals or ":" in name or not name:
            name, spec = offered_name(text), text
        named[name] = spec
    return named


def preload(env_ids: Any = None) -> None:
    """Import what requests will need before the server listens: two request threads importing
    torch at once crashed a fresh server (a segfault, or a half-initialised module)."""
    import importlib

    for module in ("torch", "sb3_contrib", "polarzoo.baselines.policies", "polarzoo.baselines.agents.alphazero"):
        try:
            importlib.import_module(module)
        except ImportError:  # an install without the train extra plays the agents that need none
            pass
    for env_id in web_games() if env_ids is None else env_ids:
        ENVIRONMENTS[env_id].raw_env().reset(seed=0)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    defaults: dict[str, Any] | None = None,
    replay_path: Path | None = None,
    hint_spec: str | None = None,
    env_id: str | None = None,
    opponents: list[str] | None = None,
) -> None:
    """Serve until Ctrl-C (then exit 130 at once, whatever a request is computing); the URL is
    printed once the server listens.  ``opponents``: ``[NAME=]SPEC`` agents the page may name."""
    _require_web()
    import socket

    import uvicorn

    defaults = dict(defaults or {})
    texts = ([defaults.pop("opponent")] if defaults.get("opponent") else []) + list(opponents or [])
    named = named_agents(texts)
    if texts:
        defaults["opponent"] = next(iter(named))
    try:
        store = Store()
        path = "/"
        if replay_path is not None:
            try:
                text = replay_path.read_bytes().decode("utf-8")
                replay_id, _ = store.add_replays(text, replay_path.name, env_id)
            except OSError as problem:
                sys.exit(f"error: cannot read {replay_path}: {problem.strerror or problem}")
            except UnicodeDecodeError:
                sys.exit(f"error: {replay_path} is not text (a games.jsonl is UTF-8 JSON lines)")
            except ReplayError as problem:
                sys.exit(f"error: {problem}")
            path = f"/replay?id={replay_id}"
        for _name, spec in named.items():  # the command line's agents: a bad one is said now, in one line
            try:
                make_agent(spec, defaults.get("env") or env_id or web_games()[0])
            except (ValueError, FileNotFoundError, ImportError) as problem:
                sys.exit(f"error: --opponent {spec}: {problem}")
        try:  # a taken port or an unknown host: one line, before uvicorn's own logging
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
                port = probe.getsockname()[1]
        except OSError as problem:
            sys.exit(f"error: cannot listen on {host}:{port}: {problem.strerror or problem}")
        preload()
        shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        url = f"http://{shown}:{port}{path}"

        class Server(uvicorn.Server):
            async def startup(self, sockets: Any = None) -> None:
                await super().startup(sockets)
                if self.started:  # listening now: the URL works
                    print(f"polarzoo web: {url}  (Ctrl-C stops it)", flush=True)

            def handle_exit(self, sig: int, frame: Any) -> None:
                # Ctrl-C stops at once: nothing is saved (games live in memory), a search in a
                # request's thread is not waited for, and no finaliser prints at exit (EGL).
                print("stopped", flush=True)
                sys.stderr.flush()
                os._exit(130)

        app = create_app(store, defaults, hint_spec, named, served_host=host)
        server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=1))
        server.run()  # uvicorn raises Ctrl-C again once it has shut down
        if not server.started:
            sys.exit(f"error: the server did not start on {host}:{port}")
    except KeyboardInterrupt:
        pass
    print("stopped", flush=True)
    sys.stderr.flush()
    # At once: a search still running in a request's thread, and MuJoCo's OpenGL contexts (whose
    # finalisers print EGL errors at interpreter exit), are not waited for.
    os._exit(130)


def port_number(text: str) -> int:
    """An argparse type: a TCP port 0..65535."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be 0..65535, got {text}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every network)")
    parser.add_argument("--port", type=port_number, default=8000, help="the port (0: any free one)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.play.web"), description=__doc__, formatter_class=HelpFormatter
    )
    add_arguments(parser)
    parser.add_argument(
        "--env",
        choices=web_games(),
        default=None,
        help="the game preselected on the page (and of --replay records that do not name it)",
    )
    parser.add_argument(
        "--opponent",
        action="append",
        default=None,
        metavar="[NAME=]SPEC",
        help="an agent the page may name (any spec: model:PATH, module:callable; offered by NAME, or by "
        "the file's folder and stem, never its path); repeat for more; the first is preselected",
    )
    parser.add_argument(
        "--hint", default=None, help="the agent spec whose policy gives hints (default: the opponent's policy, else pretrained)"
    )
    parser.add_argument("--replay", type=Path, default=None, help="a games.jsonl to open in the replay viewer")
    args = parser.parse_args(argv)
    opponents = args.opponent or []
    defaults = {k: v for k, v in (("env", args.env), ("opponent", opponents[0] if opponents else None)) if v is not None}
    serve(args.host, args.port, defaults, args.replay, args.hint, args.env, opponents[1:])


if __name__ == "__main__":
    main()
