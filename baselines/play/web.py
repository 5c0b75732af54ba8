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
"seat", "opponent", "players", "seed"}`` (``opponent``: one spec for every other seat, or a list /
a string of specs separated by commas, one per other seat in seat order); ``GET /api/games/ID``; ``POST /api/games/ID/move``
``{"action": int}`` or ``{"notation": "D4-A4"}``, with ``"ply"``: the number of moves the page
showed (a move made on a position that has changed since is refused, 409); ``POST /api/games/ID/undo``; ``GET
/api/games/ID/hint``; ``GET /api/games/ID/picture.png[?ply=K]`` (Thin Ice; after move K); ``POST /api/replays`` (the text of a
``games.jsonl``, as ``application/x-ndjson``); ``GET /api/replays/ID/K``.  A bad request gets
status 4xx and ``{"error": "one line"}``; the game is left as it was.  Ctrl-C stops the server at
once, whatever it is computing (exit 130).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.spec import SpecError, map_paths, parse_spec
from polarzoo.baselines.cli.runs import HelpFormatter, prog_name
from polarzoo.baselines.play.board import picture_png, web_games
from polarzoo.baselines.play.replay import ReplayError, replay
from polarzoo.baselines.play.web_game import (  # noqa: F401 (public here too: the page's rules)
    _AGENT_LOCK,
    BUDGET_CAPS,
    MAX_BODY,
    MAX_GAMES,
    MAX_REPLAYS,
    MAX_UPLOAD,
    OPPONENTS,
    REPLAY_BUDGET,
    BadRequest,
    Store,
    WebGame,
    page_agent_problem,
    replay_list,
)
from polarzoo.envs import ENVIRONMENTS, GAMES
from polarzoo.envs.utils import loads_json

STATIC = Path(__file__).parent / "web_static"


def page_html(body: str, title: str, busy: bool) -> str:
    """A page of the app: ``web_static/layout.html`` (the head, the header's links) around the body
    ``web_static/<body>`` (``data-busy`` is 1 while the page's script is still setting up)."""
    layout = Template((STATIC / "layout.html").read_text(encoding="utf-8"))
    return layout.substitute(title=title, busy=int(busy), body=(STATIC / body).read_text(encoding="utf-8"))


#: seconds a client has to send a request's headers (a connection that never finishes them is
#: closed); ``POLARZOO_WEB_HEADER_TIMEOUT`` sets another
HEADER_TIMEOUT = 10.0


def header_deadline_protocol() -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request headers are not complete
    within :data:`HEADER_TIMEOUT` seconds of its start or of the previous response (a client that
    opens connections and never finishes them would otherwise hold them for ever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    text = os.environ.get("POLARZOO_WEB_HEADER_TIMEOUT", "")
    try:
        seconds = float(text) if text else HEADER_TIMEOUT
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 3600:
        sys.exit(f"error: POLARZOO_WEB_HEADER_TIMEOUT must be a number of seconds in (0, 3600), got {text[:40]!r}")

    class HeaderDeadline(H11Protocol):
        _deadline: Any = None

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._late)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _late(self) -> None:
            self._deadline = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not None and self.cycle is not cycle:  # a new request's headers are in
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderDeadline


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
    from starlette.responses import HTMLResponse, JSONResponse, Response
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
        try:  # the one safe reader: depth, size and number length bounded before parsing
            body = loads_json(raw or b"{}", what="malformed JSON", max_bytes=MAX_BODY, max_depth=32)
        except ValueError as problem:
            raise BadRequest(str(problem)) from None
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

    async def changed(request: Request, change: str) -> tuple[Any, Callable[[], dict[str, Any]]]:
        """The request's game and a call that makes ``change`` (``move`` / ``undo``) with the
        request's body, then views the game."""
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        body = await body_json(request)

        def change_and_view() -> dict[str, Any]:
            getattr(game, change)(body)
            return game.view(game_id)

        return game, change_and_view

    async def move(request: Request) -> Response:
        game, move_and_view = await changed(request, "move")
        return JSONResponse(await while_connected(request, game, move_and_view))

    async def undo(request: Request) -> Response:
        game, undo_and_view = await changed(request, "undo")
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

    def page(body: str, title: str, busy: bool) -> Any:
        text = page_html(body, title, busy)

        async def endpoint(request: Request) -> Response:
            return HTMLResponse(text, headers={"Cache-Control": "no-store"})

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
        Route("/", page("play.html", "play", busy=True)),
        Route("/replay", page("replay.html", "replays", busy=False)),
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
    try:
        parsed = parse_spec(spec)
    except SpecError:
        return spec  # (said in one line when the agent is made)

    def short(path: str) -> str:
        where = Path(path)
        return f"{where.parent.name}/{where.stem}" if where.parent.name else where.stem

    return map_paths(parsed, short)


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
        config = uvicorn.Config(
            app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=1, http=header_deadline_protocol()
        )
        server = Server(config)
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
