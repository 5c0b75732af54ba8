"""AlphaZero on the JAX twins: the network's shapes and masking, a tiny run end to end (files,
exact resume), the exported model played in the PettingZoo env through ``make_agent``, and bad
models or arguments as one clear error.  Skipped without the jax extra."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # compiles the search: a minute or two

jax = pytest.importorskip("jax")
pytest.importorskip("mctx")
pytest.importorskip("optax")

from polarzoo.baselines.agents import make_agent  # noqa: E402
from polarzoo.baselines.evaluation.tournament import head_to_head  # noqa: E402
from polarzoo.baselines.policies import alphazero_jax as net  # noqa: E402
from polarzoo.baselines.training import alphazero_jax as az  # noqa: E402
from tests.helpers import scaled  # noqa: E402

TINY = [
    "--games",
    "8",
    "--plies",
    "64",
    "--simulations",
    "2",
    "--minibatch",
    "64",
    "--epochs",
    "1",
    "--dim",
    "8",
    "--blocks",
    "1",
    "--eval-every",
    "1",
    "--eval-games",
    "8",
    "--no-final-eval",
]


@pytest.mark.parametrize("game, actions", [("fire_and_ice", 2402), ("go_with_the_floe", 1025)])
def test_network_shapes(game: str, actions: int) -> None:
    from polarzoo.envs import jax_envs

    env = jax_envs.make(game)
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 3))
    config = net.NetworkConfig(game, dim=8, blocks=1)
    params = net.init_params(config, jax.random.PRNGKey(1))
    logits, value = net.forward(config, params, state.observation)
    assert logits.shape == (3, actions) and value.shape == (3,)
    assert np.all(np.abs(np.asarray(value)) <= 1)
    masked = np.asarray(net.masked_logits(logits, state.legal_action_mask))
    assert (masked[~np.asarray(state.legal_action_mask)] < -1e30).all()


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two iterations straight, and one iteration then ``--resume`` to two."""
    runs = tmp_path_factory.mktemp("az-runs")
    az.main(["--env", "fire_and_ice", "--iterations", "2", "--runs", str(runs), "--run-name", "straight", *TINY])
    az.main(["--env", "fire_and_ice", "--iterations", "1", "--runs", str(runs), "--run-name", "resumed", *TINY])
    az.main(["--resume", str(runs / "resumed"), "--iterations", "2", "--no-final-eval"])
    return {"straight": runs / "straight", "resumed": runs / "resumed"}


def test_tiny_run_writes_its_files(tiny_runs: dict[str, Path]) -> None:
    run = tiny_runs["straight"]
    for name in ("config.json", "command.txt", "checkpoint.npz", "evaluations.csv", "model.npz", "model.json"):
        assert (run / name).is_file(), name
    rows = (run / "evaluations.csv").read_text().splitlines()
    assert rows[0].startswith("iteration,positions,minutes,win_rate") and len(rows) == 3
    assert json.loads((run / "model.json").read_text())["env"] == "fire_and_ice"
    assert not list(run.glob("*.tmp*"))


def test_resume_is_a_continuation(tiny_runs: dict[str, Path]) -> None:
    """Interrupted after an iteration and resumed: the same weights as the straight run."""
    straight = np.load(tiny_runs["straight"] / "model.npz")
    resumed = np.load(tiny_runs["resumed"] / "model.npz")
    assert sorted(straight) == sorted(resumed)
    for name in straight:
        assert np.array_equal(straight[name], resumed[name]), name
    assert (tiny_runs["straight"] / "evaluations.csv").read_text().splitlines()[1:] != []


def test_az_jax_agent_plays_in_pettingzoo(tiny_runs: dict[str, Path]) -> None:
    model = tiny_runs["straight"] / "model.npz"
    agent = make_agent(f"az-jax:2:{model}", "fire_and_ice_v0")
    assert agent.name == "az-jax2"
    result = head_to_head("fire_and_ice_v0", agent, make_agent("random", "fire_and_ice_v0"), 1, seed=0)
    assert sum(map(sum, result.by_seat.values())) == 2 and result.illegal == 0
    assert make_agent(f"az-jax:{model}", "fire_and_ice_v0").simulations == 2  # from model.json


def test_bad_models_and_specs(tiny_runs: dict[str, Path], tmp_path: Path) -> None:
    model = tiny_runs["straight"] / "model.npz"
    with pytest.raises(ValueError, match="az-jax model for fire_and_ice_v0, not go_with_the_floe_v0"):
        make_agent(f"az-jax:{model}", "go_with_the_floe_v0")
    with pytest.raises(ValueError, match="need a model"):
        make_agent("az-jax", "fire_and_ice_v0")
    broken = tmp_path / "model.npz"
    broken.write_bytes(b"not a zip")
    (tmp_path / "model.json").write_text((model.with_suffix(".json")).read_text())
    with pytest.raises(ValueError, match="not a readable az-jax model"):
        make_agent(f"az-jax:{broken}", "fire_and_ice_v0")
    with pytest.raises(FileNotFoundError, match="model.json beside it"):
        make_agent(f"az-jax:{tmp_path / 'missing.npz'}", "fire_and_ice_v0")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--iterations", "0"], "--iterations must be at least 1"),
        (["--env", "thin_ice"], "invalid choice"),
        (["--seed", "-1"], "must be a whole number >= 0"),
        (["--minibatch", "100000"], "more than an iteration's positions"),
        (["--learning-rate", "nan"], "--learning-rate must be a number in (0, 1]"),
        (["--learning-rate", "-1"], "--learning-rate must be a number in (0, 1]"),
    ],
)
def test_cli_errors(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        az.main([*argv, "--runs", str(tmp_path)])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing half-made


def test_resume_of_a_folder_that_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        az.main(["--resume", str(tmp_path)])
    assert "not a readable alphazero_jax run folder" in capsys.readouterr().err


@pytest.mark.parametrize(
    "config, checkpoint",
    [
        ('{"env": "fire_and_ice", "learning_rate": "x"}', b""),
        ('{"env": "fire_and_ice", "dim": 0}', b""),
        ('{"env": "fire_and_ice"}', b"garbage"),
        ('{"env": "fire_and_ice"}', b"\x80\x04K\x01."),  # a pickle of the number 1
        ('{"env": "fire_and_ice"}', b"PK\x03\x04" + b"\0" * 40),  # a broken zip
    ],
)
def test_a_damaged_run_folder_is_one_line(
    config: str, checkpoint: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.json").write_text(config)
    (tmp_path / "checkpoint.npz").write_bytes(checkpoint)
    with pytest.raises(SystemExit) as exit_info:
        az.main(["--resume", str(tmp_path)])
    assert exit_info.value.code == 2 and "not a readable alphazero_jax run folder" in capsys.readouterr().err


def test_a_crafted_checkpoint_never_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run folder from someone else is data: a pickle that would write a file when loaded (the
    checkpoint.pkl of older versions), or the same pickle inside checkpoint.npz, is refused."""
    import pickle

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (open, (str(marker), "w"))

    (tmp_path / "config.json").write_text('{"env": "fire_and_ice"}')
    (tmp_path / "checkpoint.pkl").write_bytes(pickle.dumps({"params": Payload()}))
    with pytest.raises(SystemExit):
        az.main(["--resume", str(tmp_path)])
    assert "is a pickle" in capsys.readouterr().err and not marker.exists()
    np.savez(tmp_path / "checkpoint.npz", progress=np.array([Payload()], dtype=object))
    with pytest.raises(SystemExit):
        az.main(["--resume", str(tmp_path)])
    assert "not a readable alphazero_jax run folder" in capsys.readouterr().err and not marker.exists()


def test_a_truncated_model_file_is_refused_by_name(tmp_path: Path) -> None:
    from polarzoo.baselines.agents.pretrained import PRETRAINED_DIR

    source = PRETRAINED_DIR / "fire_and_ice_v0_az_jax.npz"
    (tmp_path / "model.npz").write_bytes(source.read_bytes()[:5000])
    (tmp_path / "model.json").write_text(source.with_suffix(".json").read_text())
    with pytest.raises(ValueError, match="is not a readable az-jax model"):
        make_agent(f"az-jax:{tmp_path / 'model.npz'}", "fire_and_ice_v0")


def test_the_pretrained_az_jax_model_loads_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    agent = make_agent("az-jax:4:pretrained", "fire_and_ice_v0")
    assert agent.simulations == 4 and agent.net.game == "fire_and_ice"
    with pytest.raises(ValueError, match="no pretrained az-jax model for go_with_the_floe_v0"):
        make_agent("az-jax:pretrained", "go_with_the_floe_v0")


def test_a_pickled_az_jax_agent_is_rebuilt_from_its_file() -> None:
    """A worker process gets the agent pickled: its file and settings (a jitted search does not
    pickle), its name kept, the same move after the trip."""
    import pickle

    import numpy as np

    from polarzoo.envs import fire_and_ice_v0

    agent = make_agent("az-jax:2:pretrained", "fire_and_ice_v0")
    agent.name = "renamed"
    copy = pickle.loads(pickle.dumps(agent))
    assert (copy.name, copy.simulations) == ("renamed", 2)
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=5)
    assert copy.act(env, env.agent_selection, np.random.default_rng(1)) == agent.act(
        env, env.agent_selection, np.random.default_rng(1)
    )


def test_ctrl_c_before_the_first_iteration_is_one_line_and_resume_starts_the_run(tmp_path: Path) -> None:
    """Interrupted before any iteration ended: one line, exit 130 (no abort at exit), and the
    --resume it advises starts the run from its first iteration (it failed: no checkpoint)."""
    import signal
    import subprocess
    import sys
    import time

    # Ctrl-C's own handler in the child whatever this process inherited (a suite started in the
    # background of a shell runs with Ctrl-C ignored, and a child inherits that); set in the child
    # itself, since a preexec_fn would fork beside JAX's threads.
    arguments = ["--runs", str(tmp_path), "--iterations", "1", *TINY]
    launcher = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"sys.argv = ['alphazero_jax', *{arguments!r}]; runpy.run_module('polarzoo.baselines.alphazero_jax', run_name='__main__')"
    )
    process = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()  # "run folder: ...": the first iteration has only begun
    assert line.startswith("run folder:"), line
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=scaled(120))
    assert process.returncode == 130, (process.returncode, err[-2000:])
    assert "no iteration had finished" in err and "Traceback" not in err and "double free" not in err
    run_dir = Path(line.split(":", 1)[1].strip())
    resumed = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.alphazero_jax", "--resume", str(run_dir), "--no-final-eval"],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "no finished iteration yet" in resumed.stdout and (run_dir / "model.npz").exists()
