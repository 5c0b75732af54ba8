"""The web app (``polarzoo.baselines.play.web``): its JSON API (Starlette's test client), its
command line (the URL, a taken port, Ctrl-C = 130, ``--window`` without a display), and the
pages in headless Chromium driven by Playwright: whole games by clicks, hint, undo, an illegal
click refused, a Thin Ice game with a call, a placement, a pick-up and *done*, the replay viewer
against the env's own positions, and no console errors anywhere."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason='the web extra: pip install "polarzoo[web]"')
pytest.importorskip("httpx", reason='the web extra: pip install "polarzoo[web]"')

from starlette.testclient import TestClient  # noqa: E402

from polarzoo.baselines.play import replay as replays  # noqa: E402
from polarzoo.baselines.play.board import position  # noqa: E402
from polarzoo.baselines.play.web import create_app  # noqa: E402
from polarzoo.envs import ENVIRONMENTS  # noqa: E402
from tests.helpers import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as test_client:
        yield test_client


JSON = {"Content-Type": "application/json"}
JSONL = {"Content-Type": "application/x-ndjson"}


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


# ---- the API ---------------------------------------------------------------------------------
def test_the_pages_are_the_layout_around_their_bodies(client: TestClient) -> None:
    for path, title, busy, body in (("/", "play", 1, 'id="setup"'), ("/replay", "replays", 0, 'id="open-file"')):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
        assert response.headers["cache-control"] == "no-store"
        page = response.text
        assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>") and "$" not in page.split("<body")[0]
        assert f"<title>polarzoo: {title}</title>" in page and f'data-busy="{busy}"' in page and body in page
        assert page.count("<header>") == 1 and page.count("<head>") == 1


def test_a_game_through_the_api(client: TestClient) -> None:
    game = new_game(client, env="fire_and_ice_v0", seat="ice", opponent="random", seed=4)
    assert game["to_move"] == "ice" and len(game["moves"]) == 1  # fire (the opponent) moved first
    assert game["svg"].startswith("<svg") and all("from" in m for m in game["legal"] if m["notation"] != "pass")
    env = ENVIRONMENTS["fire_and_ice_v0"].raw_env()
    env.reset(seed=4)
    env.step(env.notation_to_action(game["moves"][0]["notation"]))
    assert game["svg"] == position(env)["svg"]
    hint = client.get(f"/api/games/{game['id']}/hint").json()
    assert hint["by"] == "pretrained" and 1 <= len(hint["moves"]) <= 3 and -1.5 < hint["value"] < 1.5
    assert all(m["action"] in {x["action"] for x in game["legal"]} for m in hint["moves"])
    probabilities = [m["probability"] for m in hint["moves"]]
    assert probabilities == sorted(probabilities, reverse=True)
    after = client.post(f"/api/games/{game['id']}/move", json={"notation": game["legal"][0]["notation"]}).json()
    assert len(after["moves"]) == 3 and after["can_undo"]
    undone = client.post(f"/api/games/{game['id']}/undo").json()
    assert undone["moves"] == game["moves"] and undone["svg"] == game["svg"] and not undone["can_undo"]
    while not (view := client.get(f"/api/games/{game['id']}").json())["over"]:
        response = client.post(f"/api/games/{game['id']}/move", json={"action": view["legal"][0]["action"]})
        assert response.status_code == 200, response.text
    assert view["result"] in ("fire wins", "ice wins", "draw") and view["legal"] == []
    assert client.post(f"/api/games/{game['id']}/move", json={"action": 0}).json()["error"].startswith("the game is over")


def test_bad_requests_leave_the_game_as_it_was(client: TestClient) -> None:
    game = new_game(client, env="go_with_the_floe_v0", opponent="heuristic")
    gid = game["id"]
    illegal = next(a for a in range(1025) if a not in {m["action"] for m in game["legal"]})
    cases = [
        (client.post(f"/api/games/{gid}/move", content=b"{not json", headers=JSON), 400, "malformed JSON"),
        (client.post(f"/api/games/{gid}/move", json=[1, 2]), 400, "JSON object"),
        (client.post(f"/api/games/{gid}/move", json={"action": illegal}), 400, "illegal"),
        (client.post(f"/api/games/{gid}/move", json={"action": 10**6}), 400, "out of range"),
        (client.post(f"/api/games/{gid}/move", json={"action": True}), 400, "integer"),
        (client.post(f"/api/games/{gid}/move", json={"action": "3"}), 400, "integer"),
        (client.post(f"/api/games/{gid}/move", json={"notation": "Z9-A1"}), 400, "Z9-A1"),
        (client.post(f"/api/games/{gid}/undo", json={}), 400, "nothing to undo"),
        (client.get("/api/games/0123456789ab"), 404, "start a new game"),
        (client.post("/api/games", json={"env": "chess"}), 400, "unknown game"),
        (client.post("/api/games", json={"env": "fire_and_ice_v0", "players": 3}), 400, "thin_ice_v0 only"),
        (client.post("/api/games", json={"env": "thin_ice_v0", "players": 9}), 400, "2..6"),
        (client.post("/api/games", json={"env": "fire_and_ice_v0", "seat": "water"}), 400, "seat must be one of"),
        (client.post("/api/games", json={"env": "fire_and_ice_v0", "opponent": "grandmaster"}), 400, "built-in agents"),
        (client.post("/api/games", json={"env": "fire_and_ice_v0", "seed": -1}), 400, "seed"),
        (client.post("/api/games", json={"env": "fire_and_ice_v0", "opponent": "os:system"}), 400, "on the command line"),
        (client.get(f"/api/games/{gid}/picture.png"), 404, "SVG"),
        (client.post("/api/replays", content=b"\xff\xfe", headers=JSONL), 400, "not text"),
        (client.post("/api/replays", content=b"{oops\n", headers=JSONL), 400, "not JSON"),
        (client.get("/api/replays/nope/0"), 404, "open the file again"),
        (client.delete(f"/api/games/{gid}"), 405, "DELETE"),
        (client.get("/api/unknown"), 404, "no such API path"),
    ]
    for response, status, words in cases:
        assert response.status_code == status and words in response.json()["error"], (response.status_code, response.text)
        assert "Traceback" not in response.text
    assert client.get(f"/api/games/{gid}").json() == game


def test_thin_ice_through_the_api(client: TestClient) -> None:
    game = new_game(client, env="thin_ice_v0", players=3, seat="player_1", opponent="random", seed=2)
    assert [p["agent"] for p in game["players"]] == ["player_0", "player_1", "player_2"]
    assert game["to_move"] == "player_1" and game["moves"]  # player_0 called (and maybe added) first
    kinds = {m["kind"] for m in game["legal"]}
    assert kinds <= {"call", "place", "pickup", "done"} and kinds
    picture = client.get(game["picture"])
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/png" and picture.content[:4] == b"\x89PNG"
    # the piles after each earlier move (the opponent's actions before your turn)
    start, first = (client.get(f"/api/games/{game['id']}/picture.png?ply={k}") for k in (0, 1))
    assert start.status_code == first.status_code == 200 and start.content[:4] == b"\x89PNG"
    assert client.get(f"/api/games/{game['id']}/picture.png?ply={len(game['moves'])}").content == picture.content
    assert client.get(f"/api/games/{game['id']}/picture.png?ply=999").status_code == 404
    assert client.get(f"/api/games/{game['id']}/picture.png?ply=x").status_code == 400


def test_thin_ice_with_one_agent_per_seat(client: TestClient) -> None:
    # four other seats, four agents (a list, or one string with commas), in seat order
    game = new_game(client, env="thin_ice_v0", players=5, seat="player_2", opponent="random, heuristic:1, heuristic:2, random")
    assert game["opponents"] == {"player_0": "random", "player_1": "heuristic:1", "player_3": "heuristic:2", "player_4": "random"}
    listed = new_game(client, env="thin_ice_v0", players=3, seat="player_0", opponent=["heuristic:1", "random"])
    assert listed["opponents"] == {"player_1": "heuristic:1", "player_2": "random"}
    cases = [
        ({"opponent": ["random", "random"]}, "one for each of the 4"),
        ({"opponent": ["random", 3, "random", "random"]}, "agent spec"),
        ({"opponent": "random,,random,random"}, "agent spec"),
        ({"opponent": "random,random,model:/etc/passwd,random"}, "command line"),
    ]
    for body, words in cases:
        response = client.post("/api/games", json={"env": "thin_ice_v0", "players": 5, "seat": "player_0", **body})
        assert response.status_code == 400 and words in response.json()["error"], response.text


def test_replays_through_the_api(client: TestClient) -> None:
    records = [replays.record_game("fire_and_ice_v0", ["random"], seed=s) for s in (1, 2)]
    old = {"env": "fire_and_ice_v0", "seed": 0, "agent": "a", "opponent": "b", "agent_seat": 0, "game": 0, "result": "win"}
    text = "".join(json.dumps(r) + "\n" for r in [*records, old])
    listing = client.post("/api/replays?name=games.jsonl", content=text.encode(), headers=JSONL).json()
    assert [g["replayable"] for g in listing["games"]] == [True, True, False]
    data = client.get(f"/api/replays/{listing['id']}/1").json()
    assert len(data["frames"]) == len(records[1]["actions"]) + 1
    refused = client.get(f"/api/replays/{listing['id']}/2")
    assert refused.status_code == 400 and "no moves" in refused.json()["error"]
    assert client.get(f"/api/replays/{listing['id']}/7").status_code == 404


# ---- what a request from elsewhere cannot do (docs/security.md) ----------------------------------
def test_a_cross_origin_request_is_refused(client: TestClient) -> None:
    # a page elsewhere posting text/plain (a CORS "simple request": no preflight) or JSON
    for headers in (
        {"Origin": "https://evil.example", "Content-Type": "text/plain"},
        {"Origin": "https://evil.example", "Content-Type": "application/json"},
        {"Origin": "http://127.0.0.1:9999", "Content-Type": "application/json"},
        {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
    ):
        response = client.post("/api/games", content=b'{"opponent": "random"}', headers=headers)
        assert response.status_code == 403 and "only its own page" in response.json()["error"], response.text
    assert client.get("/api/info", headers={"Origin": "https://evil.example"}).status_code == 403
    # the page's own origin is served
    assert client.post("/api/games", json={}, headers={"Origin": "http://127.0.0.1:8000"}).status_code == 201


def test_a_post_that_is_not_json_is_refused(client: TestClient) -> None:
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        response = client.post("/api/games", content=b'{"opponent": "random"}', headers={"Content-Type": kind})
        assert response.status_code == 415 and "application/json" in response.json()["error"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", "localhost.evil:80"])
def test_a_foreign_host_is_refused(client: TestClient, host: str) -> None:
    """DNS rebinding: a site's name pointed at 127.0.0.1 is not this server's name."""
    for path in ("/", "/api/info"):
        response = client.get(path, headers={"Host": host})
        assert response.status_code == 403, (host, response.status_code)


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost", "10.1.2.3:8000"])
def test_loopback_and_address_hosts_are_served(client: TestClient, host: str) -> None:
    assert client.get("/api/info", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "spec",
    [
        "model:{path}",
        "az:2:{path}",
        "search:3:{path}",
        "vsearch:4:{path}",
        "az-jax:{path}",
        "az-jax:3:{path}",
        "pretrained:{path}",
        "os:system",
        "{path}:x",
    ],
)
def test_a_request_cannot_name_a_file_or_module(client: TestClient, spec: str, tmp_path: Path) -> None:
    """Whatever the file holds, a request never loads it, and the answer does not tell whether it exists."""
    from polarzoo.baselines.agents import pretrained_path

    answers = set()
    for path in (str(pretrained_path("fire_and_ice_v0")), "/etc/passwd", str(tmp_path / "missing.zip")):
        response = client.post("/api/games", json={"env": "fire_and_ice_v0", "opponent": spec.format(path=path)})
        assert response.status_code == 400, response.text
        answers.add(response.json()["error"].replace(path, "PATH"))
    assert len(answers) == 1 and "command line" in answers.pop()


@pytest.mark.parametrize(
    "spec",
    ["mcts:2000000000", "az:100000", "vsearch:1000", "az-jax:99999:pretrained", "heuristic:500", "mcts:" + "9" * 5000, "mcts:²"],
)
def test_search_budgets_from_a_request_are_capped(client: TestClient, spec: str) -> None:
    env_id = "thin_ice_v0" if spec.startswith(("vsearch", "heuristic")) else "fire_and_ice_v0"
    response = client.post("/api/games", json={"env": env_id, "opponent": spec})
    assert response.status_code == 400 and any(w in response.json()["error"] for w in ("at most", "whole number", "agent spec"))


def test_the_command_lines_agents_are_offered_by_name(tmp_path: Path) -> None:
    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.play.web import named_agents

    path = tmp_path / "my-run" / "model.safetensors"
    path.parent.mkdir()
    path.write_bytes(pretrained_path("fire_and_ice_v0").read_bytes())
    named = named_agents([f"model:{path}", "strong=mcts:20000"])
    assert named == {"model:my-run/model": f"model:{path}", "strong": "mcts:20000"}
    with TestClient(create_app(named=named), base_url="http://127.0.0.1:8000") as local:
        assert local.get("/api/info").json()["opponents"][:2] == ["model:my-run/model", "strong"]
        game = local.post("/api/games", json={"env": "fire_and_ice_v0", "opponent": "model:my-run/model", "seat": "ice"})
        assert game.status_code == 201 and str(path) not in game.text
        assert local.post("/api/games", json={"opponent": f"model:{path}"}).status_code == 400  # by its path: no


def test_hostile_bodies_are_4xx_never_5xx(client: TestClient) -> None:
    game = new_game(client, env="fire_and_ice_v0", opponent="random")
    gid = game["id"]
    deep = b"[" * 100_000 + b"]" * 100_000
    cases = [
        (client.post("/api/games", content=deep, headers=JSON), 413),  # over the body limit
        (client.post("/api/games", content=b'{"a":' * 5000 + b"1" + b"}" * 5000, headers=JSON), 400),  # nested deeply
        (client.post(f"/api/games/{gid}/move", content=b'{"action": ' + b"7" * 5000 + b"}", headers=JSON), 400),
        (client.post("/api/games", json={"seed": 10**30}), 400),
        (client.post("/api/games", json={"seed": 1.5}), 400),
        (client.post("/api/games", json={"env": ["fire_and_ice_v0"]}), 400),
        (client.post("/api/games", json={"opponent": {"x": 1}}), 400),
        (client.post("/api/games", json={"opponent": "random" * 100}), 400),
        (client.post(f"/api/games/{gid}/move", json={"action": 3, "ply": "x"}), 400),
        (client.get(f"/api/games/{gid}/picture.png?ply=%C2%B2"), 404),  # a Fire & Ice game has no pictures
        (client.post("/api/replays", content=b"x" * (16 * 1024 * 1024 + 1), headers=JSONL), 413),
        (
            client.post("/api/replays", content=b'{"env": "fire_and_ice_v0", "env_seed": "abc", "actions": []}\n', headers=JSONL),
            201,
        ),
    ]
    for response, status in cases:
        assert response.status_code == status, (status, response.status_code, response.text[:200])
        if status != 201:
            assert list(response.json()) == ["error"]
    thin = new_game(client, env="thin_ice_v0", opponent="random")
    for ply in ("%C2%B2", "-1", "1e3", "99999999999999"):
        response = client.get(f"/api/games/{thin['id']}/picture.png?ply={ply}")
        assert response.status_code in (400, 404), (ply, response.status_code)


@pytest.mark.parametrize(
    "record",
    [
        {"env_seed": "abc"},
        {"env_seed": -3},
        {"env_seed": 1.5},
        {"env_kwargs": {"colour": "green"}},
        {"env_kwargs": {"num_players": 99}},
        {"env_kwargs": [1]},
        {"actions": list(range(20_000))},
        {"actions": [10**40]},
        {"env": "thin_ice_v0", "env_kwargs": {"num_players": "x"}},
    ],
)
def test_damaged_replay_records_are_400(client: TestClient, record: dict[str, Any]) -> None:
    line = {"env": "fire_and_ice_v0", "env_seed": 0, "env_kwargs": {}, "actions": [], **record}
    listing = client.post("/api/replays", content=(json.dumps(line) + "\n").encode(), headers=JSONL)
    assert listing.status_code == 201
    response = client.get(f"/api/replays/{listing.json()['id']}/0")
    assert response.status_code == 400 and "line 1" in response.json()["error"], response.text


def test_replays_kept_have_a_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from polarzoo.baselines.play import web_game

    monkeypatch.setattr(web_game, "REPLAY_BUDGET", 3000)
    store = web_game.Store()
    line = json.dumps({"env": "fire_and_ice_v0", "env_seed": 0, "actions": [], "pad": "x" * 1000}) + "\n"
    ids = [store.add_replays(line, "g.jsonl")[0] for _ in range(5)]
    assert store.replay_bytes() <= 3000 and ids[-1] in store.replays and ids[0] not in store.replays


def test_a_stale_move_is_409(client: TestClient) -> None:
    game = new_game(client, env="fire_and_ice_v0", seat="ice", opponent="random", seed=3)
    gid, ply = game["id"], len(game["moves"])
    first = client.post(f"/api/games/{gid}/move", json={"action": game["legal"][0]["action"], "ply": ply})
    assert first.status_code == 200
    # a second tab still showing the old position
    second = client.post(f"/api/games/{gid}/move", json={"action": game["legal"][1]["action"], "ply": ply})
    assert second.status_code == 409 and "moved on" in second.json()["error"]
    assert client.post(f"/api/games/{gid}/undo", json={"ply": ply}).status_code == 409
    assert client.get(f"/api/games/{gid}").json()["moves"] == first.json()["moves"]


def test_opponents_stop_when_the_client_has_gone() -> None:
    """A client that has gone sets ``cancelled``: the opponents stop after the move in progress,
    and the next request goes on from there."""
    from polarzoo.baselines.play.web import WebGame

    game = WebGame("thin_ice_v0", "player_0", "random", seed=1, players=3)
    calls: list[str] = []
    act = game.opponent.act

    def act_then_leave(env: Any, agent: str, rng: Any) -> int:
        calls.append(agent)
        game.cancelled.set()  # what the server does when the client disconnects meanwhile
        return act(env, agent, rng)

    game.opponent.act = act_then_leave
    while not calls:
        game.move({"action": game.view("g")["legal"][0]["action"]})
    assert len(calls) == 1 and game.to_move() in ("player_1", "player_2")
    game.opponent.act = act
    game._advance()
    assert game.to_move() in ("player_0", None)


# ---- the command line ------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server(**variables: str) -> subprocess.Popen[str]:
    """``polarzoo-web`` on a free port, with Python's own Ctrl-C (a pytest worker may ignore it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "polarzoo.baselines.play.web", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **variables},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_cli_prints_its_url_and_ctrl_c_is_130() -> None:
    process = _server()
    try:
        line = process.stdout.readline()
        assert line.startswith("polarzoo web: http://127.0.0.1:"), line
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=scaled(30))
    assert process.returncode == 130 and "Traceback" not in err, err


def _request(url: str, body: dict[str, Any] | None = None, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_fresh_server_answers_its_first_requests_at_once_and_ctrl_c_ends_a_search() -> None:
    """The first requests of a fresh server arrive together (hints import torch: preloaded before
    the server listens); Ctrl-C stops it at once while a request searches without end."""
    from concurrent.futures import ThreadPoolExecutor

    process = subprocess.Popen(
        [sys.executable, "-m", "polarzoo.baselines.play.web", "--port", "0", "--opponent", "endless=mcts:1000000000"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = process.stdout.readline()
        base = line.split()[2].rstrip("/")
        assert base.startswith("http://127.0.0.1:"), line
        with ThreadPoolExecutor(4) as pool:
            games = list(
                pool.map(
                    lambda env: _request(base + "/api/games", {"env": env, "opponent": "random"}),
                    ["fire_and_ice_v0", "go_with_the_floe_v0", "fire_and_ice_v0", "go_with_the_floe_v0"],
                )
            )
            assert [status for status, _ in games] == [201] * 4, games
            hints = list(pool.map(lambda game: _request(f"{base}/api/games/{game[1]['id']}/hint"), games))
        assert [status for status, _ in hints] == [200] * 4, hints

        def endless_game() -> None:
            try:
                _request(base + "/api/games", {"env": "fire_and_ice_v0", "seat": "ice", "opponent": "endless"}, timeout=30)
            except OSError:  # the server stops without answering: what this test does
                pass

        threading.Thread(target=endless_game, daemon=True).start()
        time.sleep(2)  # the search is running
    finally:
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=scaled(30))
    assert process.returncode == 130 and time.monotonic() - started < 10, (process.returncode, err)
    assert "Traceback" not in err and "Error" not in err, err


@pytest.mark.parametrize("content, words", [(b"\x89PNG\r\n\x1a\n\x00\xff", "is not text"), (b"{oops\n", "not JSON")])
def test_replay_of_a_bad_file_is_one_line(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "games.jsonl"
    path.write_bytes(content)
    run = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play.web", "--port", "0", "--replay", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert run.returncode == 1 and words in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_cli_refuses_a_taken_port() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        run = subprocess.run(
            [sys.executable, "-m", "polarzoo.baselines.play.web", "--port", str(taken.getsockname()[1])],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=scaled(60),
        )
    assert run.returncode == 1 and run.stderr.startswith("error: cannot listen on") and "Traceback" not in run.stderr


@pytest.mark.parametrize("argv", [["polarzoo.baselines.play.web"], ["polarzoo.baselines.play", "--web"]])
def test_a_bad_port_is_one_line(argv: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", *argv, "--port", "70000"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(60)
    )
    assert run.returncode == 2 and "must be 0..65535, got 70000" in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_window_without_a_display_is_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    start = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.play",
            "--env",
            "fire_and_ice_v0",
            "--human",
            "fire",
            "--opponent",
            "random",
            "--window",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env=env,
    )
    assert run.returncode == 1 and "needs a display" in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert time.monotonic() - start < 30


# ---- the pages in a browser ------------------------------------------------------------------
@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    uvicorn = pytest.importorskip("uvicorn")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no Chromium (Debian: apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason='Playwright: pip install "polarzoo[docs]"')
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=flags)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(60_000)
    yield page
    page.close()
    # a refused move answers 400, which Chromium also logs as a failed resource load
    assert not [e for e in errors if "status of 400" not in e], errors


def settle(page: Any) -> None:
    page.wait_for_selector('body[data-busy="0"]', state="attached")


def start(page: Any, served: str, env_id: str, seat: str, opponent: str = "random", players: int | None = None) -> None:
    page.goto(served + "/")
    page.wait_for_selector("#env option", state="attached")
    settle(page)
    page.select_option("#env", env_id)
    if players:
        page.select_option("#players", str(players))
    page.select_option("#seat", seat)
    page.fill("#opponent", opponent)
    page.click("#new-game")
    page.wait_for_function(f"window.polarzoo.game && window.polarzoo.game.env === {env_id!r}")
    settle(page)


def play_to_the_end(page: Any, limit: int = 400) -> str:
    for _ in range(limit):
        settle(page)
        result = page.inner_text("#result").strip()
        if result:
            return result
        if page.is_visible("#pass-button"):
            page.click("#pass-button")
            continue
        page.locator("g.cell.movable").first.click()
        page.locator("g.cell.target").first.click()
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("env_id, seat", [("fire_and_ice_v0", "fire"), ("go_with_the_floe_v0", "white")])
def test_a_whole_game_by_clicks(page: Any, served: str, env_id: str, seat: str) -> None:
    start(page, served, env_id, seat)
    # hint: the policy's top moves with probabilities and the value; its best move lit up
    page.click("#hint-button")
    page.wait_for_selector("#hint:not([hidden]) li")
    assert "%" in page.inner_text("#hint") and "value" in page.inner_text("#hint")
    assert page.locator("g.cell.hint").count() == 2
    # an illegal click: an empty cell that is not a target is refused, the board unchanged
    board = page.inner_html("#board")
    version = page.get_attribute("body", "data-version")
    page.locator('g.cell[data-piece=""]:not(.movable)').first.click()
    assert "error" in page.get_attribute("#message", "class") and "not a move" in page.inner_text("#message")
    assert page.get_attribute("body", "data-version") == version
    assert page.inner_html("#board").replace(" hint", "") == board.replace(" hint", "")
    # a move, then undo it
    moves_before = page.locator("#moves li").count()
    page.locator("g.cell.movable").first.click()
    page.locator("g.cell.target").first.click()
    page.wait_for_function(f"document.querySelectorAll('#moves li').length > {moves_before}")
    settle(page)
    page.click("#undo-button")
    page.wait_for_function(f"document.querySelectorAll('#moves li').length === {moves_before}")
    settle(page)
    assert "undone" in page.inner_text("#message")
    result = play_to_the_end(page)
    assert result.endswith("wins") or result == "draw"
    # the game on the server is the one the page shows
    game = page.evaluate("window.polarzoo.game")
    assert game["over"] and page.locator("#moves li").count() == len(game["moves"])


def test_thin_ice_by_clicks(page: Any, served: str) -> None:
    start(page, served, "thin_ice_v0", "player_0", players=2)
    picture = page.locator("#picture")
    picture.wait_for()
    assert picture.evaluate("img => img.complete && img.naturalWidth > 0") or page.wait_for_function(
        "document.getElementById('picture').naturalWidth > 0"
    )
    page.click("button.call >> text=call S")
    settle(page)
    page.wait_for_selector("#grid rect.legal")
    page.select_option("#orientation", "upright")
    page.locator("#grid rect.legal").nth(24).click()  # the middle of the 7 x 7 lattice
    settle(page)
    page.wait_for_selector("button.pickup")
    page.locator("button.pickup").first.click()
    settle(page)
    page.wait_for_selector("#grid rect.legal")
    page.locator("#grid rect.legal").first.click()
    settle(page)
    page.click("#done-button")
    settle(page)
    notations = [m["notation"].split()[0] for m in page.evaluate("window.polarzoo.game.moves")]
    assert notations[:5] == ["call", "place", "pickup", "place", "done"], notations
    assert page.locator("#piles tr").count() == 3  # the header and two piles
    page.locator("#moves li[data-ply='2']").click()  # the piles right after the first placement
    page.wait_for_function("document.getElementById('picture').src.includes('ply=2')")
    assert "after move 2" in page.inner_text("#message")
    page.click("#picture")
    assert page.get_attribute("#picture", "data-ply") == str(len(page.evaluate("window.polarzoo.game.moves")))
    assert "player_1" in page.inner_text("#piles")
    page.wait_for_function("document.getElementById('picture').complete && document.getElementById('picture').naturalWidth > 0")


def test_the_replay_viewer_shows_the_envs_positions(page: Any, served: str, tmp_path: Path) -> None:
    record = replays.record_game("go_with_the_floe_v0", ["heuristic", "random"], seed=6, opening_plies=2)
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(record) + "\n")
    page.goto(served + "/replay")
    page.set_input_files("#file", str(games))
    page.wait_for_selector(".replay[data-ply='0']")
    env = ENVIRONMENTS["go_with_the_floe_v0"].raw_env()
    env.reset(seed=6)
    for ply, action in enumerate(record["actions"], 1):
        env.step(action)
        page.click(".replay-forward")
        page.wait_for_selector(f".replay[data-ply='{ply}']")
        assert _same_cells(page, env), ply
    page.click(".replay-back")
    page.wait_for_selector(f".replay[data-ply='{len(record['actions']) - 1}']")
    page.click(".replay-first")
    page.wait_for_selector(".replay[data-ply='0']")
    assert page.is_visible(".replay-slider")


def _same_cells(page: Any, env: Any) -> bool:
    """The pieces and rings of every square the page shows are the env's."""
    shown = page.eval_on_selector_all(
        ".replay-board g.cell", "cells => cells.map(c => [c.dataset.cell, c.dataset.piece, c.dataset.ring])"
    )
    from polarzoo.envs.go_with_the_floe import rules

    expected = [
        [str(sq), {rules.SEAL: "seal", rules.BEAR: "bear"}.get(int(env.state.board[sq]), ""), str(int(bool(env.state.rings[sq])))]
        for sq in range(rules.NUM_SQUARES)
        if rules.ON_BOARD[sq]
    ]
    return shown == expected


def test_tabs_play_their_own_games(browser: Any, served: str) -> None:
    first, second = browser.new_page(), browser.new_page()
    try:
        start(first, served, "fire_and_ice_v0", "fire")
        start(second, served, "go_with_the_floe_v0", "black")
        ids = [p.evaluate("window.polarzoo.game.id") for p in (first, second)]
        assert ids[0] != ids[1]
        first.reload()
        first.wait_for_function("window.polarzoo.game")
        assert first.evaluate("window.polarzoo.game.id") == ids[0]  # a reload keeps the tab's game
    finally:
        first.close()
        second.close()


def test_an_exported_replay_plays_as_a_static_page(page: Any, tmp_path: Path) -> None:
    """``replay export`` writes a page that plays the game from the disk (no server): the recipe
    in replay.js's header and docs/getting_started.md."""
    record = replays.record_game("go_with_the_floe_v0", ["random", "heuristic"], seed=3)
    (tmp_path / "games.jsonl").write_text(json.dumps(record) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.play.replay",
            "export",
            str(tmp_path / "games.jsonl"),
            "--name",
            "game",
            "--out",
            str(tmp_path / "site"),
        ],
        check=True,
        capture_output=True,
        timeout=scaled(120),
    )
    page.goto((tmp_path / "site" / "game.html").as_uri())
    page.wait_for_selector(".polarzoo-replay[data-mounted] svg")
    assert page.get_attribute(".polarzoo-replay", "data-ply") == "0"
    page.click(".replay-last")
    assert page.get_attribute(".polarzoo-replay", "data-ply") == str(len(record["actions"]))
    assert page.inner_text(".polarzoo-replay .result").strip().endswith("wins")


def test_a_client_that_never_finishes_its_headers_is_closed() -> None:
    """A connection that sends half a request line and waits (slowloris) is closed by the server
    once its header deadline passes; a whole request on another connection is answered meanwhile."""
    process = _server(POLARZOO_WEB_HEADER_TIMEOUT="1")
    try:
        line = process.stdout.readline()
        base = line.split("polarzoo web: ", 1)[1].split()[0].rstrip("/")
        host, port = base.removeprefix("http://").split(":")
        slow = socket.create_connection((host, int(port)), timeout=scaled(30))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert _request(base + "/api/games")[0] in (200, 404, 405)  # the server still answers others
        started = time.monotonic()
        assert slow.recv(1024) == b""  # closed by the server, not by our timeout
        assert time.monotonic() - started < scaled(20)
        slow.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=scaled(30))
