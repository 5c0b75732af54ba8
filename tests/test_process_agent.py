"""``proc:COMMAND`` agents (baselines/agents/process.py): an agent in its own process, in any
language, over JSON lines; every hostile agent loses its game with the reason recorded, the
tournament goes on, and no process is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from polarzoo.baselines.agents import RandomAgent, make_agent
from polarzoo.baselines.agents.process import AgentForfeit, ProcessAgent
from polarzoo.baselines.evaluation.tournament import play_game
from tests.helpers import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
PYTHON = sys.executable


def agent_script(tmp_path: Path, name: str, body: str) -> Path:
    """A Python agent that records its pid (and its children's) in ``name.pids`` first: the pid
    as this process sees it (``/proc/self`` names it in the root namespace, where the agent may
    run in a PID namespace of its own)."""
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import json, os, sys, time\n"
        f"open({str(tmp_path / (name + '.pids'))!r}, 'a').write(os.readlink('/proc/self') + '\\n')\n" + textwrap.dedent(body)
    )
    return path


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


GOOD = """
for line in sys.stdin:
    turn = json.loads(line)
    print(json.dumps({"action": turn["legal_actions"][0]}), flush=True)
"""

HOSTILE = {
    "never_answers": ("for line in sys.stdin:\n    time.sleep(1000)\n", "no answer within the time limit"),
    "sleeps_past_the_limit": (
        "for line in sys.stdin:\n    time.sleep(3)\n    print(json.dumps({'action': json.loads(line)['legal_actions'][0]}), flush=True)\n",
        "no answer within the time limit",
    ),
    "exits_at_once": ("sys.exit(3)\n", "exited"),
    "answers_garbage": ("for line in sys.stdin:\n    print('hello', flush=True)\n", "not JSON"),
    "answers_an_illegal_id": (
        "for line in sys.stdin:\n    print(json.dumps({'action': 999999}), flush=True)\n",
        "illegal action 999999",
    ),
    "answers_an_unknown_move": (
        "for line in sys.stdin:\n    print(json.dumps({'move': 'Z9-Z9'}), flush=True)\n",
        "is not a move",
    ),
    "prints_before_answering": (
        "for line in sys.stdin:\n    print('thinking...', flush=True)\n    print(json.dumps({'action': json.loads(line)['legal_actions'][0]}), flush=True)\n",
        "not JSON",
    ),
    "allocates_past_the_cap": ("for line in sys.stdin:\n    hog = bytearray(2 * 1024 ** 3)\n", ("exited", "memory cap")),
    "slow_start_up": (
        "time.sleep(3)\nfor line in sys.stdin:\n    print(json.dumps({'action': json.loads(line)['legal_actions'][0]}), flush=True)\n",
        "no answer within the time limit",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_agent_loses_its_game_with_the_reason_and_leaves_no_process(name: str, tmp_path: Path) -> None:
    body, words = HOSTILE[name]
    script = agent_script(tmp_path, name, body)
    agent = ProcessAgent([PYTHON, str(script)], move_time=0.5, bank=0.5, memory_mb=512, log_dir=tmp_path / "logs")
    started = time.monotonic()
    record = play_game("fire_and_ice_v0", [agent, RandomAgent()], seed=0)
    assert time.monotonic() - started < 15
    assert (
        record.scores == [0.0, 1.0]
        and 0 in record.forfeits
        and any(w in record.forfeits[0] for w in ([words] if isinstance(words, str) else words))
    ), record.forfeits
    for pid in map(int, (tmp_path / f"{name}.pids").read_text().split()):
        assert not alive(pid), f"{name}: process {pid} left behind"


def test_a_child_the_agent_forks_ends_with_the_game(tmp_path: Path) -> None:
    body = f"""
child = os.fork()
if child == 0:
    open({str(tmp_path / "lingers.pids")!r}, 'a').write(os.readlink('/proc/self') + '\\n')
    time.sleep(1000)
for line in sys.stdin:
    print(json.dumps({{"action": json.loads(line)["legal_actions"][0]}}), flush=True)
"""
    script = agent_script(tmp_path, "lingers", body)
    agent = ProcessAgent([PYTHON, str(script)], move_time=2.0)
    record = play_game("fire_and_ice_v0", [RandomAgent(), agent], seed=1)
    assert not record.forfeits and record.length > 0
    time.sleep(0.2)
    pids = list(map(int, (tmp_path / "lingers.pids").read_text().split()))
    assert len(pids) == 2 and not any(alive(pid) for pid in pids)


def test_a_good_agent_plays_every_game_in_its_own_process(tmp_path: Path) -> None:
    script = agent_script(tmp_path, "good", GOOD)
    agent = ProcessAgent([PYTHON, str(script)], move_time=2.0)
    for seed in (0, 1):
        record = play_game("go_with_the_floe_v0", [agent, RandomAgent()], seed=seed)
        assert not record.forfeits and record.length > 0
    pids = list(map(int, (tmp_path / "good.pids").read_text().split()))
    assert len(pids) == 2 and not any(alive(pid) for pid in pids)  # one process a game, each gone


def test_the_message_is_the_documented_protocol(tmp_path: Path) -> None:
    seen = tmp_path / "turn.json"
    script = agent_script(
        tmp_path,
        "recorder",
        f"""
for line in sys.stdin:
    open({str(seen)!r}, 'w').write(line)
    print(json.dumps({{"move": json.loads(line)["legal_moves"][-1]["notation"]}}), flush=True)
""",
    )
    agent = ProcessAgent([PYTHON, str(script)], move_time=2.0)
    record = play_game("thin_ice_v0", [agent, RandomAgent()], seed=0, env_kwargs={"grid": 3})
    turn = json.loads(seen.read_text())
    assert turn["protocol"] == "polarzoo-agent/1" and turn["game"] == "thin_ice_v0" and turn["seats"] == ["player_0", "player_1"]
    assert {m["action"] for m in turn["legal_moves"]} == set(turn["legal_actions"]) and "players" in turn["state"]
    assert isinstance(turn["observation"], list) and turn["time"]["move"] == 2.0 and not record.forfeits


@pytest.mark.slow
def test_evaluate_rates_a_process_agent_and_records_forfeits(tmp_path: Path) -> None:
    """The issue's command: a Python agent that reads legal_actions, under --move-time 1; beside it
    an agent that always times out: the command exits 0, the forfeits are in the tables."""
    slow = agent_script(tmp_path, "slow", HOSTILE["never_answers"][0])
    result = subprocess.run(
        [
            PYTHON,
            "-m",
            "polarzoo.baselines.evaluate",
            "--env",
            "go_with_the_floe_v0",
            "--agents",
            f"proc:{PYTHON} {EXAMPLES / 'random_agent.py'}",
            "random",
            f"proc:{PYTHON} {slow}",
            "--games",
            "2",
            "--move-time",
            "0.3",
            "--out",
            str(tmp_path / "eval"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "eval" / "eval.json").read_text())
    (slow_name,) = [name for name in summary["forfeits"]]
    assert "slow.py" in slow_name and "no answer within the time limit" in next(iter(summary["forfeits"][slow_name]))
    assert "Forfeits" in (tmp_path / "eval" / "eval.md").read_text()
    games = [json.loads(line) for line in (tmp_path / "eval" / "games.jsonl").read_text().splitlines()]
    assert any("forfeits" in game for game in games) and len(games) == 12
    assert (tmp_path / "eval" / "agent-logs").is_dir()


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js here")
def test_the_javascript_example_plays() -> None:
    agent = make_agent(f"proc:node {EXAMPLES / 'first_move.js'}", "fire_and_ice_v0")
    record = play_game("fire_and_ice_v0", [agent, RandomAgent()], seed=2)
    assert not record.forfeits and record.length > 0


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler here")
def test_the_c_example_plays(tmp_path: Path) -> None:
    subprocess.run(
        ["cc", "-O2", "-o", str(tmp_path / "first_action"), str(EXAMPLES / "first_action.c")], check=True, timeout=scaled(60)
    )
    agent = make_agent(f"proc:{tmp_path / 'first_action'}", "go_with_the_floe_v0")
    record = play_game("go_with_the_floe_v0", [RandomAgent(), agent], seed=3)
    assert not record.forfeits and record.length > 0


def test_a_command_that_cannot_start_forfeits(tmp_path: Path) -> None:
    agent = ProcessAgent([str(tmp_path / "no-such-agent")])
    record = play_game("fire_and_ice_v0", [agent, RandomAgent()], seed=0)
    assert "could not start" in record.forfeits[0]
    with pytest.raises(ValueError, match="needs a command"):
        make_agent("proc:", "fire_and_ice_v0")


def test_only_the_command_line_runs_a_command() -> None:
    """A league file or a web request naming proc: is refused (it would run a program)."""
    from polarzoo.baselines.evaluation.league import member_problem
    from polarzoo.baselines.play.web_game import page_agent_problem

    assert "runs a command" in member_problem("proc:python agent.py")
    assert member_problem("proc:python agent.py", trusted=["proc:python agent.py"]) is None
    assert page_agent_problem("proc:python agent.py") is not None
    assert isinstance(AgentForfeit("x"), Exception) and os.name == "posix"


def test_league_rate_records_the_forfeits(tmp_path: Path) -> None:
    from polarzoo.baselines.evaluation.league import build
    from polarzoo.baselines.evaluation.league_rate import rate, rating_markdown

    league = build(
        "fire_and_ice_v0", ["random", "heuristic"], games=2, out=tmp_path / "league", bootstrap=20, show_progress=False
    )
    script = agent_script(tmp_path, "illegal", HOSTILE["answers_an_illegal_id"][0])
    result = rate(
        "fire_and_ice_v0",
        ProcessAgent([PYTHON, str(script)]),
        league,
        tmp_path / "rate",
        max_games=4,
        min_rounds=1,
        bootstrap=20,
        log=lambda line: None,
    )
    assert result.forfeits and all("illegal action 999999" in why for why in result.forfeits)
    assert "**Forfeits**" in rating_markdown(result, league, "fire_and_ice_v0")
    lines = [json.loads(line) for line in (tmp_path / "rate" / "games.jsonl").read_text().splitlines()]
    assert all(line.get("forfeits") for line in lines)


@pytest.mark.parametrize("env_id, cells", [("fire_and_ice_v0", 49), ("go_with_the_floe_v0", 64)])
def test_the_state_a_program_reads_has_the_board_and_no_picture(env_id: str, cells: int) -> None:
    from polarzoo.envs import ENVIRONMENTS

    env = ENVIRONMENTS[env_id].raw_env()
    env.reset(seed=0)
    state = env.describe(pictures=False)
    assert "svg" not in state and len(state["board"]) == cells and "svg" in env.describe()
    json.dumps(state)  # JSON as it is


@pytest.mark.parametrize("flag, value", [("--move-time", "-1"), ("--move-time", "nan"), ("--game-time", "0")])
def test_a_bad_time_control_is_one_line(flag: str, value: str) -> None:
    result = subprocess.run(
        [PYTHON, "-m", "polarzoo.baselines.evaluate", "--env", "fire_and_ice_v0", "--agents", "random", "random", flag, value],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        cwd=ROOT,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"argument {flag}: must be a positive number of seconds" in result.stderr


def test_isolate_plays_a_users_python_agent_in_its_own_process(tmp_path: Path) -> None:
    """``--isolate``: a ``module:callable`` agent is imported and played in a process of its own
    (its import-time code never runs in the rater's process); one that crashes mid-game loses
    those games with the reason, and the command exits 0."""
    (tmp_path / "their_agents.py").write_text(
        textwrap.dedent(
            """
            import os
            import sys
            import numpy as np

            # import-time code: where does it run?  (in a private working folder, maybe a PID namespace)
            with open(os.path.join(os.environ["HERE"], "imported_by.txt"), "a") as handle:
                handle.write(f"{os.readlink('/proc/self')} {os.path.basename(sys.argv[0])}\\n")


            class Last:
                name = "last"

                def act(self, env, agent, rng):
                    return int(np.flatnonzero(env.legal_action_mask())[-1])


            class Crash:
                name = "crash"

                def act(self, env, agent, rng):
                    os._exit(3)
            """
        )
    )
    result = subprocess.run(
        [
            PYTHON,
            "-m",
            "polarzoo.baselines.evaluate",
            "--env",
            "fire_and_ice_v0",
            "--agents",
            "their_agents:Last",
            "random",
            "their_agents:Crash",
            "--games",
            "1",
            "--isolate",
            "--out",
            str(tmp_path / "eval"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=tmp_path,
        env={**os.environ, "HERE": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    imports = [line.split() for line in (tmp_path / "imported_by.txt").read_text().splitlines()]
    assert len({pid for pid, _ in imports}) >= 4  # a process per game of each of them
    assert {program for _, program in imports} == {"host.py"}  # polarzoo's host, never the rater (evaluate)
    summary = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert set(summary["forfeits"]) == {"their_agents:Crash"}
    assert "exited" in next(iter(summary["forfeits"]["their_agents:Crash"]))
    games = [json.loads(line) for line in (tmp_path / "eval" / "games.jsonl").read_text().splitlines()]
    played = [g for g in games if {g["agent"], g["opponent"]} == {"their_agents:Last", "random"}]
    assert len(played) == 2 and all(g["length"] > 2 and "forfeits" not in g for g in played)
