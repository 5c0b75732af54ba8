"""baselines.play: a person plays through stdin (every game and seat, bad input, undo, quit),
and bad invocations end with one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.helpers import scaled

CASES = [
    ("fire_and_ice_v0", "fire", "heuristic", []),
    ("fire_and_ice_v0", "ice", "random", []),
    ("go_with_the_floe_v0", "black", "heuristic", []),
    ("go_with_the_floe_v0", "white", "random", []),
    ("thin_ice_v0", "player_0", "random", ["--players", "2"]),
    ("thin_ice_v0", "player_1", "pretrained", ["--players", "2"]),
]


class Session:
    """The play CLI in a subprocess, driven prompt by prompt."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", "polarzoo.baselines.play", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=0,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.output = ""

    def until_prompt(self, timeout: float = 120.0) -> str | None:
        """Output up to the next prompt (``None`` once the program has ended)."""
        start, chunk = time.time(), ""
        while time.time() - start < timeout:
            char = self.process.stdout.read(1)
            if char == "":
                self.output += chunk
                return None
            chunk += char
            if chunk.endswith("> ") and "\n" not in chunk[chunk.rfind("\n") + 1 : -2]:
                line = chunk[chunk.rfind("\n") + 1 :]
                if line[:-2].replace("_", "").isalnum():
                    self.output += chunk
                    return chunk
        raise AssertionError(f"no prompt within {timeout} s; output so far:\n{self.output[-2000:]}")

    def send(self, line: str) -> str | None:
        self.process.stdin.write(line + "\n")
        return self.until_prompt()


@pytest.mark.parametrize("env_id,seat,opponent,extra", CASES)
def test_a_person_plays_a_whole_game_through_stdin(env_id: str, seat: str, opponent: str, extra: list[str]) -> None:
    session = Session("--env", env_id, "--human", seat, "--opponent", opponent, "--seed", "3", *extra)
    assert session.until_prompt() is not None
    reply = session.send("this is not a move")
    assert reply is not None and "Traceback" not in reply and ("not a" in reply or "expected" in reply)
    assert "nothing to undo" in session.send("undo")
    moves, undone = 0, False
    while True:
        reply = session.send("moves")
        if reply is None:
            break
        legal = [line for line in reply.splitlines() if line.startswith("legal: ")]
        assert len(legal) == 1, reply
        options = legal[0][len("legal: ") :].split(" ")
        if env_id == "thin_ice_v0":  # notation has spaces: re-split on the verbs
            joined, options = legal[0][len("legal: ") :], []
            for word in joined.split(" "):
                if word in ("call", "place", "pickup", "done") or not options:
                    options.append(word)
                else:
                    options[-1] += " " + word
        reply = session.send(options[-1])
        moves += 1
        if reply is None:
            break
        if moves == 2 and not undone:
            reply = session.send("undo")
            assert reply is not None and "undone" in reply
            undone = True
    session.process.wait(timeout=scaled(30))
    assert session.process.returncode == 0, session.output[-3000:]
    assert "Traceback" not in session.output
    last_lines = session.output.strip().splitlines()[-1]
    assert "wins" in last_lines or "draw" in last_lines, last_lines


def test_quit_and_end_of_input_exit_cleanly() -> None:
    for stdin in ("hint\nquit\n", "moves\n"):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "polarzoo.baselines.play",
                "--env",
                "go_with_the_floe_v0",
                "--human",
                "black",
                "--opponent",
                "random",
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=scaled(60),
        )
        assert result.returncode == 0 and "game abandoned" in result.stdout and not result.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play", "--env", "fire_and_ice_v0", "--human", "ice", "--opponent", "random"],
        input="hint\nquit\n",
        capture_output=True,
        text=True,
        timeout=scaled(60),
    ).stdout
    assert "thinking (random)..." in shown and "hint (random): " in shown  # a slow hint says so first


@pytest.mark.parametrize(
    "args,message",
    [
        (["--human", "red"], "--human must be one of"),
        (["--human", "fire", "--opponent", "chess"], "--opponent chess"),
        (["--human", "fire", "--opponent", "model:/nonexistent.zip"], "--opponent model:/nonexistent.zip"),
        (["--players", "3"], "--players is for thin_ice_v0 only"),
        (["--human", "fire", "--opponent", "random", "heuristic"], "one for each of the 1, got 2"),
    ],
)
def test_bad_invocations_give_one_line(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play", "--env", "fire_and_ice_v0", *args],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("play.py: error") or "error:" in line]) == 1


def test_thin_ice_window_shows_the_picture_while_you_type() -> None:
    pytest.importorskip("mujoco")
    pytest.importorskip("pygame")
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.play",
            "--env",
            "thin_ice_v0",
            "--human",
            "player_0",
            "--opponent",
            "random",
            "--window",
        ],
        input="call S\nquit\n",
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "game abandoned" in result.stdout and "Traceback" not in result.stderr


def test_long_move_lists_are_grouped() -> None:
    from polarzoo.baselines.play import format_moves

    assert format_moves(["D4-A4", "pass"]) == "legal: D4-A4 pass"
    cells = [f"{c}{r}" for c in "ab" for r in (1, 2)]
    text = format_moves([f"place S {cell} upright" for cell in cells] + ["place M a1 inverted", "done"], limit=3)
    assert text.splitlines() == ["legal (6 moves):", "  done", "  place S upright: any of the 4 cells", "  place M inverted: a1"]


def test_a_person_plays_a_table_of_four_with_an_agent_per_seat() -> None:
    """Thin Ice at 4 players, ``--opponent random heuristic random``: each seat plays its own
    agent, to the end of the game."""
    import numpy as np

    from polarzoo.baselines.play.terminal import HumanGame

    lines: list[str] = []
    holder: dict = {}

    def first_legal(prompt: str) -> str:
        env = holder["game"].env
        return env.action_to_notation(int(np.flatnonzero(env.legal_action_mask())[0]))

    game = HumanGame(
        "thin_ice_v0", "player_0", ["random", "heuristic", "random"], 2, {"num_players": 4}, read=first_legal, write=lines.append
    )
    holder["game"] = game
    assert {seat: agent.name for seat, agent in game.opponents.items()} == {
        "player_1": "random",
        "player_2": "heuristic",
        "player_3": "random",
    }
    assert game.run() == 0
    assert lines[0].startswith("You play player_0 against random, heuristic.")
    assert any(line.startswith("player_3 plays") for line in lines)
    assert lines[-1].endswith(("wins", "share the win")) or lines[-1] == "draw"  # the game ran to its end
    with pytest.raises(ValueError, match="one for each of the 3"):
        HumanGame("thin_ice_v0", "player_0", ["random", "heuristic"], 2, {"num_players": 4}, read=first_legal, write=lines.append)
