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
benchmark) and steps through its games.  The page may name any built-in agent spec (and
``model:PATH`` files on the server's machine); your own ``module:callable`` agent is given with
``--opponent`` (the server would otherwise import and call what a request names).

The JSON API the page uses (also for scripts): ``GET /api/info``; ``POST /api/games`` ``{"env",
"seat", "opponent", "players", "seed"}``; ``GET /api/games/ID``; ``POST /api/games/ID/move``
``{"action": int}`` or ``{"notation": "D4-A4"}``; ``POST /api/games/ID/undo``; ``GET
/api/games/ID/hint``; ``GET /api/games/ID/picture.png[?ply=K]`` (Thin Ice; after move K); ``POST /api/replays`` (the text of a
``games.jsonl``); ``GET /api/replays/ID/K``.  A bad request gets status 4xx and ``{"error": "one
line"}``; the game is left as it was.  Ctrl-C stops the server (exit 130).
"""

from __future__ import annotations

import argparse
import copy
import json
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
from polarzoo.baselines.play.board import WEB_GAMES, legal_moves, picture_png, position
from polarzoo.baselines.play.replay import ReplayError, read_records, record_label, replay
from polarzoo.baselines.play.turns import next_live_agent, outcome_line
from polarzoo.envs import ENVIRONMENTS

STATIC = Path(__file__).parent / "web_static"
#: games (and loaded replay files) kept in memory; the oldest go first
MAX_GAMES, MAX_REPLAYS = 256, 32
TITLES = {"fire_and_ice_v0": "Fire & Ice", "go_with_the_floe_v0": "Go with the Floe", "thin_ice_v0": "Thin Ice"}
#: suggestions in the page's opponent box (any spec may be typed): search:3 is the Floe's endgame
#: search, search:4 / vsearch:4 Thin Ice's look-ahead
OPPONENTS = ("random", "heuristic", "pretrained", "mcts:200", "az:50", "az-jax:pretrained", "search:3", "search:4", "vsearch:4")


class BadRequest(ValueError):
    """A request the server refuses (``status``: the HTTP status) with one line that says why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class WebGame:
    """One game in one browser tab: a person in ``human``'s seat (``None``: the first),
    ``opponent_spec`` in the others."""

    def __init__(self, env_id: str, human: str | None, opponent_spec: str, seed: int = 0, players: int | None = None,
                 hint_spec: str | None = None, trusted: tuple[str, ...] = ()) -> None:
        if env_id not in WEB_GAMES:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(WEB_GAMES)}")
        kwargs: dict[str, Any] = {}
        if players is not None:
            if env_id != "thin_ice_v0":
                raise BadRequest("players is for thin_ice_v0 only")
            if not (isinstance(players, int) and not isinstance(players, bool) and 2 <= players <= 6):
                raise BadRequest(f"players must be 2..6, got {players!r}")
            kwargs["num_players"] = players
        if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63):
            raise BadRequest(f"seed must be a non-negative integer, got {seed!r}")
        self.env_id = env_id
        self.env = ENVIRONMENTS[env_id].raw_env(**kwargs)
        self.env.reset(seed=seed)
        human = self.env.possible_agents[0] if human is None else human
        if human not in self.env.possible_agents:
            raise BadRequest(f"seat must be one of {', '.join(self.env.possible_agents)}, got {human!r}")
        self.human = human
        kind, _, argument = str(opponent_spec).partition(":")
        if argument and kind not in KINDS and opponent_spec not in trusted:
            # Importing and calling a module named by a request would run code chosen by whoever
            # reaches the server: a person's own agent is given on the command line.
            raise BadRequest(f"opponent {opponent_spec!r}: your own module:callable agents are given on the command line "
                             "(polarzoo-web --opponent module:callable), not from the page")
        try:
            self.opponent = make_agent(str(opponent_spec), env_id)
        except (ValueError, FileNotFoundError, ImportError) as error:
            raise BadRequest(f"opponent {opponent_spec!r}: {error}") from None
        self.opponent_spec = str(opponent_spec)
        self.hint_spec = hint_spec
        self.hint_agent: Any = None
        self.rng = np.random.default_rng(seed)
        self.totals = {agent: 0.0 for agent in self.env.possible_agents}
        self.moves: list[dict[str, str]] = []
        self.history: list[tuple[Any, dict[str, float], int]] = []  # before each of the person's moves
        self.version = 0  # which position the picture shows
        self.lock = threading.Lock()
        self.kwargs = kwargs
        # Thin Ice: the position after every move (a snapshot), so the page can show the piles
        # after each of the opponents' actions too; [0] is the start.
        self.positions: list[dict[str, Any]] = [self.env.snapshot()] if env_id == "thin_ice_v0" else []
        self._scratch: Any = None
        self._advance()

    # ---- playing -----------------------------------------------------------------------------
    def _advance(self) -> None:
        """The opponents move until it is the person's turn or the game is over."""
        while (agent := next_live_agent(self.env, self.totals)) is not None and agent != self.human:
            action = int(self.opponent.act(self.env, agent, self.rng))
            self._step(agent, action)

    def _step(self, agent: str, action: int) -> None:
        self.moves.append({"player": agent, "notation": self.env.action_to_notation(action)})
        self.env.step(action)
        self.version += 1
        if self.positions:
            self.positions.append(self.env.snapshot())

    def to_move(self) -> str | None:
        return next_live_agent(self.env, self.totals)

    def move(self, body: dict[str, Any]) -> None:
        agent = self.to_move()
        if agent is None:
            raise BadRequest("the game is over; start a new game")
        if agent != self.human:  # pragma: no cover - _advance always returns on the person's turn
            raise BadRequest(f"it is {agent}'s turn")
        action = body.get("action")
        if action is None and isinstance(body.get("notation"), str):
            try:
                action = self.env.notation_to_action(body["notation"])
            except ValueError as error:
                raise BadRequest(f"{body['notation']!r}: {error}") from None
        if not isinstance(action, int) or isinstance(action, bool):
            raise BadRequest('a move is {"action": <integer>} or {"notation": "<the game\'s notation>"}')
        mask = self.env.observe(agent)["action_mask"]
        if not 0 <= action < len(mask):
            raise BadRequest(f"action {action} is out of range 0..{len(mask) - 1}")
        if not mask[action]:
            raise BadRequest(f"illegal: {self.env._explain_illegal(action)}")
        self.history.append((copy.deepcopy(self.env), dict(self.totals), len(self.moves)))
        self._step(agent, action)
        self._advance()

    def undo(self) -> None:
        if not self.history:
            raise BadRequest("nothing to undo: you have not moved yet")
        self.env, self.totals, kept = self.history.pop()
        del self.moves[kept:]
        del self.positions[kept + 1:]
        self.version += 1

    def position_env(self, ply: int | None) -> Any:
        """Thin Ice: the env at the position after move ``ply`` (``None``: now)."""
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
            self.hint_agent = self.opponent if spec == self.opponent_spec else make_agent(spec, self.env_id)
        helper = self.hint_agent
        if hasattr(helper, "action_probabilities"):
            probabilities = helper.action_probabilities(self.env, agent)
            best = [int(a) for a in np.argsort(-probabilities, kind="stable")[:3] if probabilities[a] > 0]
            moves = [{"action": a, "notation": self.env.action_to_notation(a), "probability": float(probabilities[a])} for a in best]
            value = float(helper.value(self.env, agent)) if hasattr(helper, "value") else None
        else:  # a search or hand-written agent: its choice only
            action = int(helper.act(copy.deepcopy(self.env), agent, np.random.default_rng(0)))
            moves, value = [{"action": action, "notation": self.env.action_to_notation(action), "probability": None}], None
        return {"by": getattr(helper, "name", str(self.hint_spec)), "moves": moves, "value": value}

    def view(self, game_id: str) -> dict[str, Any]:
        agent = self.to_move()
        over = agent is None
        data = {"id": game_id, "env": self.env_id, "title": TITLES[self.env_id], "seats": list(self.env.possible_agents),
                "human": self.human, "opponent": getattr(self.opponent, "name", self.opponent_spec), "to_move": agent,
                "over": over, "result": outcome_line(self.env, self.totals) if over else None, "moves": self.moves,
                "can_undo": bool(self.history), "version": self.version, **position(self.env)}
        data["legal"] = legal_moves(self.env, agent) if agent == self.human else []
        if self.env_id == "thin_ice_v0":
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
        entry = {"source": source, "env": env_id, "records": records, "pictures": {}, "cache": {}}
        replay_id = secrets.token_hex(6)
        with self.lock:
            self.replays[replay_id] = entry
            while len(self.replays) > MAX_REPLAYS:
                self.replays.popitem(last=False)
        return replay_id, entry

    def replay(self, replay_id: str) -> dict[str, Any]:
        with self.lock:
            entry = self.replays.get(replay_id)
        if entry is None:
            raise BadRequest(f"no replay file {replay_id!r} here (the server may have restarted): open the file again", 404)
        return entry


def replay_list(replay_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"id": replay_id, "source": entry["source"],
            "games": [{"index": i, "label": record_label(r), "env": r.get("env") or entry["env"], "replayable": "actions" in r}
                      for i, r in enumerate(entry["records"])]}


def create_app(store: Store | None = None, defaults: dict[str, Any] | None = None, hint_spec: str | None = None) -> Any:
    """The Starlette application (``uvicorn`` serves it; tests use Starlette's ``TestClient``)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from concurrent.futures import ThreadPoolExecutor

    store = store or Store()
    defaults = dict(defaults or {})
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
        return endpoint

    async def body_json(request: Request) -> dict[str, Any]:
        raw = await request.body()
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as problem:
            raise BadRequest(f"malformed JSON: {getattr(problem, 'msg', problem)}") from None
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

    games = {env_id: {"title": TITLES[env_id], "seats": list(ENVIRONMENTS[env_id].raw_env().possible_agents),
                      "players": [2, 6] if env_id == "thin_ice_v0" else None} for env_id in WEB_GAMES}

    async def info(request: Request) -> Response:
        return JSONResponse({"games": games, "opponents": list(OPPONENTS), "defaults": defaults})

    async def new_game(request: Request) -> Response:
        body = await body_json(request)
        env_id = body.get("env", defaults.get("env", "fire_and_ice_v0"))
        if env_id not in WEB_GAMES:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(WEB_GAMES)}")
        trusted = tuple(spec for spec in (defaults.get("opponent"),) if spec)
        game = await run(WebGame, env_id, body.get("seat"), body.get("opponent", "random"), body.get("seed", 0), body.get("players"),
                         hint_spec, trusted)
        game_id = store.add_game(game)
        return JSONResponse(game.view(game_id), status_code=201)

    def locked(game: WebGame, function: Any, *args: Any) -> Any:
        if not game.lock.acquire(timeout=60):
            raise BadRequest("the game is busy with another request", 409)
        try:
            return function(*args)
        finally:
            game.lock.release()

    async def show(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        return JSONResponse(await run(locked, game, game.view, game_id))

    async def move(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        body = await body_json(request)
        await run(locked, game, game.move, body)
        return JSONResponse(await run(locked, game, game.view, game_id))

    async def undo(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        await run(locked, game, game.undo)
        return JSONResponse(await run(locked, game, game.view, game_id))

    async def hint(request: Request) -> Response:
        game = store.game(request.path_params["game_id"])
        return JSONResponse(await run(locked, game, game.hint))

    async def picture(request: Request) -> Response:
        game = store.game(request.path_params["game_id"])
        if game.env_id != "thin_ice_v0":
            raise BadRequest(f"{game.env_id} is drawn in SVG; pictures are Thin Ice's", 404)
        ply = request.query_params.get("ply")
        if ply is not None and not ply.isdigit():
            raise BadRequest(f"ply must be a move number, got {ply!r}")
        png = await run_drawing(locked, game, lambda: picture_png(game.position_env(None if ply is None else int(ply))))
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    async def load_replays(request: Request) -> Response:
        raw = await request.body()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("the file is not text (a games.jsonl is UTF-8 JSON lines)") from None
        env_id = request.query_params.get("env")
        if env_id is not None and env_id not in WEB_GAMES:
            raise BadRequest(f"unknown game {env_id!r}; the games: {', '.join(WEB_GAMES)}")
        replay_id, entry = store.add_replays(text, request.query_params.get("name", "games.jsonl"), env_id)
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
                entry["pictures"][(index, ply)] = picture_png(env)
                return f"/api/replays/{replay_id}/{index}/{ply}.png"

            entry["cache"][index] = await run_drawing(replay, entry["records"][index], entry["env"], picture_url)
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
        return Response(f"{getattr(exc, 'status_code', 404)}: {request.url.path}", status_code=getattr(exc, "status_code", 404),
                        media_type="text/plain")

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
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})


def _require_web() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        sys.exit('error: the web app needs the web extra: pip install "polarzoo[web]"')


def serve(host: str = "127.0.0.1", port: int = 8000, defaults: dict[str, Any] | None = None,
          replay_path: Path | None = None, hint_spec: str | None = None, env_id: str | None = None) -> None:
    """Serve until Ctrl-C (then exit 130); the URL is printed first."""
    _require_web()
    import socket

    import uvicorn

    try:
        store = Store()
        path = "/"
        if replay_path is not None:
            try:
                replay_id, _ = store.add_replays(replay_path.read_text(), replay_path.name, env_id)
            except OSError as problem:
                sys.exit(f"error: cannot read {replay_path}: {problem.strerror or problem}")
            except ReplayError as problem:
                sys.exit(f"error: {problem}")
            path = f"/replay?id={replay_id}"
        try:  # a taken port or an unknown host: one line, before uvicorn's own logging
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
                port = probe.getsockname()[1]
        except OSError as problem:
            sys.exit(f"error: cannot listen on {host}:{port}: {problem.strerror or problem}")
        server = uvicorn.Server(uvicorn.Config(create_app(store, defaults, hint_spec), host=host, port=port, log_level="warning"))
        shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        print(f"polarzoo web: http://{shown}:{port}{path}  (Ctrl-C stops it)", flush=True)
        server.run()  # uvicorn raises Ctrl-C again once it has shut down
        if not server.started:
            sys.exit(f"error: the server did not start on {host}:{port}")
    except KeyboardInterrupt:
        pass
    print("stopped", flush=True)
    sys.exit(130)


def port_number(text: str) -> int:
    """An argparse type: a TCP port 0..65535."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be 0..65535, got {text}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every network)")
    parser.add_argument("--port", type=port_number, default=8000, help="the port (0: any free one)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog_name("polarzoo.baselines.play.web"), description=__doc__, formatter_class=HelpFormatter)
    add_arguments(parser)
    parser.add_argument("--env", choices=WEB_GAMES, default=None, help="the game preselected on the page (and of --replay records that do not name it)")
    parser.add_argument("--opponent", default=None, help="the opponent preselected on the page (any agent spec)")
    parser.add_argument("--hint", default=None, help="the agent spec whose policy gives hints (default: the opponent's policy, else pretrained)")
    parser.add_argument("--replay", type=Path, default=None, help="a games.jsonl to open in the replay viewer")
    args = parser.parse_args(argv)
    defaults = {k: v for k, v in (("env", args.env), ("opponent", args.opponent)) if v is not None}
    serve(args.host, args.port, defaults, args.replay, args.hint, args.env)


if __name__ == "__main__":
    main()
