"""polarzoo.baselines.policies.weights: model files are data.  The weight-only format round-trips
and plays the same; an SB3 zip carrying a payload in its pickles is read by every command line
without the payload running; a zip polarzoo cannot read as data is refused in one line, and
loaded (running its pickles) only with --trust-pickles."""

from __future__ import annotations

import base64
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("safetensors")

from polarzoo.baselines.agents import PolicyAgent, make_agent, pretrained_path  # noqa: E402
from polarzoo.baselines.policies.weights import ModelFileError, load_policy, policy_digest, save_policy  # noqa: E402
from tests.helpers import sb3_zip_of, scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = "fire_and_ice_v0"


class Payload:
    """Unpickled, it creates ``path`` (what a crafted model file would do: run anything)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def crafted_zip(tmp_path: Path, marker: Path, policy_module: str | None = None) -> Path:
    """An SB3 zip of the shipped weights whose ``data`` holds a payload (and, with
    ``policy_module``, whose policy class is replaced by the payload under that module's name)."""
    path = sb3_zip_of(ENV, tmp_path / "crafted.zip")
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(members["data"])
    payload = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data["extra"] = {":type:": "<class 'object'>", ":serialized:": payload}
    if policy_module is not None:
        data["policy_class"] = {":type:": "<class 'abc.ABCMeta'>", ":serialized:": payload, "__module__": policy_module}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def test_the_weight_only_file_round_trips(tmp_path: Path) -> None:
    shipped = load_policy(pretrained_path(ENV))
    copy = save_policy(shipped, tmp_path / "copy.safetensors", env_id=ENV)
    again = load_policy(copy)
    assert policy_digest(copy) == policy_digest(pretrained_path(ENV))
    assert again.info["policy_class"] == "BoardPolicy" and again.action_space.n == 2402


def test_a_zip_and_its_weights_play_the_same_moves(tmp_path: Path) -> None:
    from polarzoo.envs import ENVIRONMENTS

    zipped, shipped = PolicyAgent(sb3_zip_of(ENV, tmp_path / "m.zip")), PolicyAgent(pretrained_path(ENV))
    env = ENVIRONMENTS[ENV].raw_env()
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in range(60):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        assert zipped.act(env, agent, rng) == shipped.act(env, agent, rng)
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


def test_a_payload_in_a_zip_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = crafted_zip(tmp_path, marker, policy_module="polarzoo.baselines.policies")
    for spec in (f"model:{path}", f"az:2:{path}"):
        agent = make_agent(spec, ENV)
        assert agent is not None and not marker.exists()
    assert policy_digest(path) == policy_digest(pretrained_path(ENV)) and not marker.exists()


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", "not a model file"),
        (b"hello", "not a model file"),
        (b"PK\x03\x04broken", "not a readable SB3 model"),
        (b'\x10\x00\x00\x00\x00\x00\x00\x00{"a":{}}' + b" " * 8, "not a model file"),
    ],
)
def test_a_file_that_is_not_a_model_is_one_line(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=words):
        load_policy(path)


def test_a_safetensors_file_without_our_settings_is_refused(tmp_path: Path) -> None:
    import torch
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(3)}, tmp_path / "m.safetensors")
    with pytest.raises(ModelFileError, match="without polarzoo's settings"):
        load_policy(tmp_path / "m.safetensors")


def test_a_weight_file_with_an_unknown_update_precision_is_one_line(tmp_path: Path) -> None:
    """A file whose settings name an update precision polarzoo does not have (or a setting it does
    not know) is refused at load, in one line; its tensors are never built into anything else."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(pretrained_path(ENV)), framework="pt") as handle:
        metadata = dict(handle.metadata())
    tensors = load_file(str(pretrained_path(ENV)))
    for change, words in (
        ({"update_precision": "float16"}, "update_precision must be one of"),
        ({"trunk": 1}, "does not know: trunk"),
    ):
        settings = json.loads(metadata["settings"])
        settings["policy_kwargs"].update(change)
        save_file(tensors, tmp_path / "m.safetensors", metadata={**metadata, "settings": json.dumps(settings)})
        with pytest.raises(ModelFileError, match=words):
            load_policy(tmp_path / "m.safetensors")


def _run(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, input=stdin, timeout=scaled(300)
    )


@pytest.mark.slow
def test_every_command_line_reads_a_crafted_zip_as_data(tmp_path: Path) -> None:
    """evaluate, league rate, play, export and the web server given a crafted zip: each works (the
    weights are the shipped ones) and the payload never runs."""
    from polarzoo.baselines.evaluation.league import LEAGUE_FORMAT, content_digest, fingerprint

    marker = tmp_path / "ran"
    path = crafted_zip(tmp_path, marker)
    evaluate = _run(
        [
            "polarzoo.baselines.evaluate",
            "--env",
            ENV,
            "--agents",
            f"model:{path}",
            "random",
            "--games",
            "1",
            "--out",
            str(tmp_path / "eval"),
            "--no-progress",
        ],
        tmp_path,
    )
    assert evaluate.returncode == 0, evaluate.stderr
    league = {
        "format": LEAGUE_FORMAT,
        "env": ENV,
        "version": "1",
        "members": [{"name": "random", "spec": "random"}, {"name": "heuristic", "spec": "heuristic"}],
        "ratings": {"random": 500, "heuristic": 1500},
        "ci95": {"random": [450, 550], "heuristic": [1450, 1550]},
        "fingerprint": fingerprint(ENV, ["random", "heuristic"]),
    }
    league["digest"] = content_digest(league)  # a league file as league build writes it
    (tmp_path / "league.json").write_text(json.dumps(league))
    rate = _run(
        [
            "polarzoo.baselines.league",
            "rate",
            "--env",
            ENV,
            "--agent",
            f"model:{path}",
            "--league",
            str(tmp_path / "league.json"),
            "--max-games",
            "4",
            "--min-rounds",
            "1",
            "--out",
            str(tmp_path / "rate"),
        ],
        tmp_path,
    )
    assert rate.returncode == 0, rate.stderr
    play = _run(
        ["polarzoo.baselines.play", "--env", ENV, "--human", "fire", "--opponent", f"model:{path}"], tmp_path, stdin="quit\n"
    )
    assert "Traceback" not in play.stderr, play.stderr
    export = _run(["polarzoo.baselines.export", str(path), str(tmp_path / "out.safetensors")], tmp_path)
    assert export.returncode == 0, export.stderr
    assert not marker.exists()


def test_a_zip_of_a_foreign_policy_class_is_refused_unless_trusted(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = crafted_zip(tmp_path, marker, policy_module="somebody.policies")
    refused = _run(
        [
            "polarzoo.baselines.evaluate",
            "--env",
            ENV,
            "--agents",
            f"model:{path}",
            "random",
            "--games",
            "1",
            "--out",
            str(tmp_path / "eval"),
            "--no-progress",
        ],
        tmp_path,
    )
    assert refused.returncode == 2 and "exists only as a pickle" in refused.stderr and "--trust-pickles" in refused.stderr
    assert "Traceback" not in refused.stderr and not marker.exists()
    # --trust-pickles means it: SB3 unpickles the file, and its payload runs (then SB3 fails on it)
    trusted = _run(
        [
            "polarzoo.baselines.evaluate",
            "--env",
            ENV,
            "--agents",
            f"model:{path}",
            "random",
            "--games",
            "1",
            "--out",
            str(tmp_path / "eval2"),
            "--no-progress",
            "--trust-pickles",
        ],
        tmp_path,
    )
    assert marker.exists(), trusted.stderr
