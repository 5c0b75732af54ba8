"""Every user mistake the CLIs know of ends with one line naming it (exit 2, no traceback, no run
folder left behind); interrupted or damaged runs resume without losing work."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import scaled

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=scaled(300), cwd=cwd or ROOT)


def run_main(capsys: pytest.CaptureFixture[str], module: str, *args: str) -> SimpleNamespace:
    """A CLI's ``main`` in this process (no interpreter start-up), as ``cli`` reports it."""
    main = importlib.import_module(module).main
    try:
        main(list(args))
        code = 0
    except SystemExit as exit_info:
        code = exit_info.code if isinstance(exit_info.code, int) else 1
        if isinstance(exit_info.code, str):  # sys.exit("message"): the interpreter prints it on stderr
            print(exit_info.code, file=sys.stderr)
    captured = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=captured.out, stderr=captured.err)


def assert_one_line_error(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and words in errors[0], result.stderr


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


TRAIN = "polarzoo.baselines.train"


@pytest.mark.parametrize(
    "args,words",
    [
        (["--n-envs", "0"], "--n-envs must be at least 1"),
        (["--total-timesteps", "-5"], "--total-timesteps must be at least 1"),
        (["--eval-every", "-1"], "--eval-every must be at least 0"),
        (["--update-threads", "-1"], "--update-threads must be at least 0"),
    ],
)
def test_train_rejects_bad_numbers_before_any_work(args: list[str], words: str, runs: Path) -> None:
    assert_one_line_error(cli(TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), *args), words)
    assert not runs.exists() or not any(runs.iterdir())


def test_train_rejects_a_bad_config(tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("default: [unclosed\n")
    assert_one_line_error(
        run_main(capsys, TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(bad)), "not valid YAML"
    )
    assert_one_line_error(
        run_main(capsys, TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(tmp_path / "none.yaml")),
        "no such file",
    )
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("default: {n_envs: zero}\n")
    assert_one_line_error(
        run_main(capsys, TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(wrong)), "--config"
    )
    # A user's file layers over the packaged defaults: a misspelt key, a bad device or a file
    # that is not a mapping each get one line.
    for text, words in (
        ("fire_and_ice_v0: {shapng: 1.0}\n", "unknown config key(s) ['shapng']"),
        ("fire_and_ice_v0: {device: gpu}\n", "device must be cpu, cuda or auto"),
        ("- a\n", "expected a mapping of env ids"),
        ("fire_and_ice_v0: [1, 2]\n", "section 'fire_and_ice_v0' must be a mapping"),
        ("fire_and_ice_v0: {learner_seat: {white: 1}}\n", "unknown seat 'white'"),
    ):
        wrong.write_text(text)
        assert_one_line_error(
            run_main(capsys, TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(wrong)), words
        )
    # Thin Ice's list of player counts: a count out of range, with seat weights; the teacher's opponents
    for text, words in (
        ("thin_ice_v0: {env_kwargs: {num_players: [3, 9]}}\n", "list of whole numbers 2..6"),
        ("thin_ice_v0: {bc_opponents: {random: -1}}\n", "bc_opponents must be a mapping"),
        ("thin_ice_v0: {bc_opponents: {}}\n", "bc_opponents must be a mapping"),
        ("thin_ice_v0: {env_kwargs: {num_players: [3, 4]}, learner_seat: {player_0: 1}}\n", "needs one player count"),
    ):
        wrong.write_text(text)
        assert_one_line_error(run_main(capsys, TRAIN, "--env", "thin_ice_v0", "--runs", str(runs), "--config", str(wrong)), words)
    assert not runs.exists() or not any(runs.iterdir())


def test_resume_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(run_main(capsys, TRAIN, "--resume", str(tmp_path / "missing")), "no such folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(run_main(capsys, TRAIN, "--resume", str(empty)), "not a training run folder")
    broken = tmp_path / "broken"
    (broken / "checkpoints").mkdir(parents=True)
    import yaml

    from polarzoo.baselines.training.ppo import load_config

    (broken / "config.yaml").write_text(yaml.safe_dump(load_config("fire_and_ice_v0")))
    (broken / "checkpoints" / "state.json").write_text("{not json")
    (broken / "checkpoints" / "latest.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{truncated")
    assert_one_line_error(run_main(capsys, TRAIN, "--resume", str(broken)), "no readable checkpoint")


def test_run_name_collision_and_unique_default_names(runs: Path) -> None:
    from polarzoo.baselines.cli.runs import new_run_dir

    first = new_run_dir(runs, None, "x")
    second = new_run_dir(runs, None, "x")  # the same second: a suffix, never the same folder
    assert first != second and first.is_dir() and second.is_dir()
    new_run_dir(runs, "taken", "x")
    assert_one_line_error(cli(TRAIN, "--env", "fire_and_ice_v0", "--runs", str(runs), "--run-name", "taken"), "exists")


EVALUATE = "polarzoo.baselines.evaluate"


@pytest.mark.parametrize(
    "args,words",
    [
        (["--env", "fire_and_ice_v0", "--agents", "mcts:abc", "random"], "mcts needs a positive whole number"),
        (["--env", "fire_and_ice_v0", "--agents", "random", "model:/nonexistent.zip"], "no model file /nonexistent.zip"),
        (["--env", "fire_and_ice_v0", "--agents", "random"], "at least two agents"),
        (["--env", "fire_and_ice_v0", "--games", "0"], "--games must be at least 1"),
        (["--env", "thin_ice_v0", "--agents", "random", "mcts:5"], "MCTS needs a two-player rules core"),
        (["--env", "thin_ice_v0", "--env-kwargs", "{bad"], "--env-kwargs is not JSON"),
        (
            ["--env", "fire_and_ice_v0", "--env-kwargs", '{"render_mode": "human"}'],
            "render_mode is not for games played to be scored",
        ),
        (["--env", "fire_and_ice_v0", "--agents", "random", "random"], "same name"),
    ],
)
def test_evaluate_errors(args: list[str], words: str) -> None:
    assert_one_line_error(cli(EVALUATE, *args), words)


def test_evaluate_refuses_an_output_it_cannot_write_before_playing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = cli(
        EVALUATE,
        "--env",
        "fire_and_ice_v0",
        "--agents",
        "random",
        "heuristic",
        "--games",
        "1",
        "--out",
        str(blocker / "out"),
        "--no-progress",
    )
    assert_one_line_error(result, "cannot write there")
    assert blocker.read_text() == "not a folder"


def test_evaluate_prints_the_table_and_exits_1_when_saving_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A disk that fills during the games: the table is still printed, the exit status says
    nothing was saved, and no half-written summary is left."""
    from polarzoo.baselines.evaluation import evaluate, evaluate_cli

    def full(self, *args):  # type: ignore[no-untyped-def]
        self._fail(OSError(28, "No space left on device"))

    for method in ("game", "write", "call"):
        monkeypatch.setattr(evaluate._Writer, method, full)
    with pytest.raises(SystemExit) as exit_info:
        evaluate_cli.main(
            [
                "--env",
                "fire_and_ice_v0",
                "--agents",
                "random",
                "heuristic",
                "--games",
                "1",
                "--no-progress",
                "--out",
                str(tmp_path / "out"),
            ]
        )
    monkeypatch.undo()
    captured = capsys.readouterr()
    assert exit_info.value.code == 1 and "| random | heuristic | 2 |" in captured.out
    assert "No space left on device" in captured.out and "nothing was written" in captured.err
    assert not [p for p in (tmp_path / "out").iterdir() if p.name not in ("games.jsonl", "command.json")]  # what --resume needs


def test_evaluate_writes_games_as_it_goes_and_a_new_folder_per_run(tmp_path: Path) -> None:
    outs = []
    for _ in range(2):
        result = cli(
            EVALUATE, "--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "--games", "1", "--no-progress", cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        outs.append(result.stdout.splitlines()[0].removeprefix("writing to "))
    assert outs[0] != outs[1]
    games = (tmp_path / outs[0] / "games.jsonl").read_text().splitlines()
    assert len(games) == 2 and json.loads(games[0])["opponent"] == "heuristic"
    assert "written:" in result.stdout and "eval.json" in result.stdout


@pytest.mark.parametrize(
    "module,args,words",
    [
        ("polarzoo.baselines.solitaire_eval", ["--deals", "0"], "--deals must be at least 1"),
        ("polarzoo.baselines.solitaire_solver", ["--deals", "-1"], "--deals must be at least 1"),
        ("polarzoo.baselines.solitaire_eval", ["--model", "/nonexistent.zip"], "no model file"),
    ],
)
def test_solitaire_cli_errors(module: str, args: list[str], words: str, tmp_path: Path) -> None:
    assert_one_line_error(
        cli(
            module,
            *args,
            "--out" if module.endswith("eval") else "--json",
            str(tmp_path / ("o" if module.endswith("eval") else "o.json")),
        ),
        words,
    )


def _interrupt_when(path: Path, args: list[str], tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", TRAIN, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + scaled(240)
    while time.time() < deadline and not path.exists():
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=scaled(120))
    assert process.returncode == 130, err[-2000:]
    assert "--resume" in out


@pytest.mark.slow
def test_ctrl_c_during_behaviour_cloning_then_resume(tmp_path: Path) -> None:
    run = tmp_path / "r"
    args = [
        "--env",
        "go_with_the_floe_v0",
        "--runs",
        str(tmp_path),
        "--run-name",
        "r",
        "--total-timesteps",
        "512",
        "--n-envs",
        "2",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        "--bc-games",
        "4",
        "--bc-epochs",
        "400",
        "--no-progress",
        "--no-final-eval",
    ]
    _interrupt_when(run / "checkpoints" / "state.json", args, tmp_path)
    done = json.loads((run / "checkpoints" / "state.json").read_text())["bc_epochs_done"]
    assert 1 <= done < 400 and (run / "demonstrations.npz").exists()
    resumed = subprocess.run(
        [sys.executable, "-m", TRAIN, "--resume", str(run), "--seed", "5", "--no-progress", "--no-final-eval"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "ignoring --seed" in resumed.stdout and "behaviour cloning" in resumed.stdout
    assert f"resuming {run} in behaviour cloning" in resumed.stdout and "older code" not in resumed.stdout
    report = json.loads((run / "behaviour_cloning.json").read_text())
    assert len(report["loss_per_epoch"]) == 400
    assert (run / "model.zip").exists()


def test_ctrl_c_while_collecting_demonstrations_leaves_a_checkpoint_that_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from polarzoo.baselines.training import ppo, ppo_cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    run = tmp_path / "r"
    args = [
        "--env",
        "go_with_the_floe_v0",
        "--runs",
        str(tmp_path),
        "--run-name",
        "r",
        "--total-timesteps",
        "256",
        "--n-envs",
        "2",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        "--bc-games",
        "2",
        "--bc-epochs",
        "1",
        "--no-progress",
        "--no-final-eval",
    ]
    with monkeypatch.context() as patch:
        patch.setattr(ppo, "collect_demonstrations", interrupted)
        with pytest.raises(SystemExit) as stopped:
            ppo_cli.main(args)
    assert stopped.value.code == 130 and f"--resume {run}" in capsys.readouterr().err
    state, _ = ppo.read_checkpoint_state(run)  # the resume the message promises has a checkpoint
    assert state.get("bc_epochs_done", 0) == 0 and state["timesteps"] == 0
    resumed = cli(TRAIN, "--resume", str(run), "--no-progress", "--no-final-eval")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "behaviour cloning" in resumed.stdout and (run / "model.zip").exists()


@pytest.mark.slow
def test_truncated_latest_checkpoint_falls_back_to_the_previous_one(tmp_path: Path) -> None:
    run = tmp_path / "r"
    first = cli(
        TRAIN,
        "--env",
        "fire_and_ice_v0",
        "--runs",
        str(tmp_path),
        "--run-name",
        "r",
        "--total-timesteps",
        "1024",
        "--bc-games",
        "0",
        "--n-envs",
        "2",
        "--checkpoint-every",
        "256",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        "--no-progress",
        "--no-final-eval",
    )
    assert first.returncode == 0, first.stderr[-2000:]
    latest = run / "checkpoints" / "latest.safetensors"
    latest.write_bytes(latest.read_bytes()[:100])  # a crash mid-write on a filesystem without atomic rename
    previous = json.loads((run / "checkpoints" / "previous_state.json").read_text())["timesteps"]
    resumed = cli(TRAIN, "--resume", str(run), "--total-timesteps", "1536", "--no-progress", "--no-final-eval")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming from the previous checkpoint" in resumed.stdout and f"at {previous} timesteps" in resumed.stdout


@pytest.mark.parametrize(
    "module,extra",
    [
        ("polarzoo.baselines.evaluate", ["--env", "fire_and_ice_v0"]),
        ("polarzoo.baselines.play", ["--env", "fire_and_ice_v0"]),
        ("polarzoo.baselines.solitaire_solver", []),
        ("polarzoo.baselines.solitaire_eval", []),
        ("polarzoo.baselines.solitaire_train", []),
        (TRAIN, ["--env", "fire_and_ice_v0"]),
    ],
)
def test_a_negative_seed_is_one_line(module: str, extra: list[str], tmp_path: Path) -> None:
    """--seed -1 reached NumPy's seeding (a traceback) in evaluate, play and the solver."""
    result = cli(module, *extra, "--seed", "-1", cwd=tmp_path)
    assert_one_line_error(result, "argument --seed: must be a whole number >= 0, got -1")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "args,words",
    [
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--agents", "search:x", "random"], "search needs a positive whole number of placements to try"),
        (
            ["--agents", "search:2", "random", "--env", "fire_and_ice_v0"],
            "search:N is a search of go_with_the_floe_v0, thin_ice_v0, not of fire_and_ice_v0",
        ),
    ],
)
def test_evaluate_new_options_are_one_line(args: list[str], words: str, tmp_path: Path) -> None:
    base = ["--env", "thin_ice_v0"] if "--env" not in args else []
    result = cli("polarzoo.baselines.evaluate", *base, *args, "--games", "1", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert_one_line_error(result, words)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ in-process: one line each
def _main_error(main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


PRETRAINED_FIRE = ROOT / "baselines" / "pretrained" / "fire_and_ice_v0.safetensors"


def test_typed_config_values_and_run_names(tmp_path: Path, runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from polarzoo.baselines.training import ppo_cli as train

    fast = tmp_path / "fast.yaml"
    fast.write_text('fire_and_ice_v0: {learning_rate: "fast"}\n')
    line = _main_error(train.main, ["--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(fast)], capsys)
    assert "learning_rate must be a number in [0, 1], got 'fast'" in line
    anneal = tmp_path / "anneal.yaml"
    anneal.write_text("fire_and_ice_v0: {learning_rate_end: -0.1}\n")
    line = _main_error(train.main, ["--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(anneal)], capsys)
    assert "learning_rate_end must be null or a number in [0, 1], got -0.1" in line
    arch = tmp_path / "arch.yaml"
    arch.write_text("fire_and_ice_v0: {net_arch: [256, -1]}\n")
    assert "net_arch" in _main_error(train.main, ["--env", "fire_and_ice_v0", "--runs", str(runs), "--config", str(arch)], capsys)
    line = _main_error(train.main, ["--env", "fire_and_ice_v0", "--runs", str(runs), "--run-name", "../../escape"], capsys)
    assert "not a plain folder name" in line
    assert not (tmp_path.parent / "escape").exists() and (not runs.exists() or not any(runs.iterdir()))


def test_evaluate_checks_where_it_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from polarzoo.baselines.evaluation import evaluate_cli

    a_file = tmp_path / "a_file"
    a_file.write_text("")
    base = ["--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "--games", "1", "--no-progress"]
    assert "is a file, not a folder" in _main_error(evaluate_cli.main, [*base, "--out", str(a_file)], capsys)
    assert "no such run folder" in _main_error(
        evaluate_cli.main, [*base, "--out", str(tmp_path / "e"), "--run-dir", str(tmp_path / "missing")], capsys
    )
    assert a_file.read_text() == ""


def test_a_model_of_another_game_is_refused_at_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from polarzoo.baselines.evaluation import evaluate_cli, solitaire_eval
    from polarzoo.baselines.play import terminal as play

    line = _main_error(
        evaluate_cli.main,
        ["--env", "go_with_the_floe_v0", "--agents", f"model:{PRETRAINED_FIRE}", "random", "--out", str(tmp_path / "e")],
        capsys,
    )
    assert "does not fit go_with_the_floe_v0" in line and "fire_and_ice_v0 model" in line
    line = _main_error(
        play.main, ["--env", "go_with_the_floe_v0", "--human", "black", "--opponent", f"az:2:{PRETRAINED_FIRE}"], capsys
    )
    assert "does not fit go_with_the_floe_v0" in line
    line = _main_error(
        solitaire_eval.main, ["--model", str(PRETRAINED_FIRE), "--deals", "1", "--out", str(tmp_path / "s")], capsys
    )
    assert "not a solitaire model" in line


@pytest.mark.parametrize(
    "content, name",
    [(b"not a zip", "model.zip"), (None, "model.safetensors"), (b"PK\x03\x04cut", "model.zip")],
    ids=["not-a-zip", "truncated", "cut-zip"],
)
def test_damaged_model_files_are_one_line(
    content: bytes | None, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from polarzoo.baselines.evaluation import evaluate_cli, solitaire_eval
    from polarzoo.baselines.play import terminal as play
    from polarzoo.baselines.training import export

    bad = tmp_path / name
    bad.write_bytes(content if content is not None else PRETRAINED_FIRE.read_bytes()[:3000])
    words = ("not a model file", "not a readable")
    assert any(w in _main_error(export.main, [str(bad), str(tmp_path / "copy.safetensors")], capsys) for w in words)
    assert not (tmp_path / "copy.safetensors").exists() and not list(tmp_path.glob("*.tmp*"))
    assert any(
        w in _main_error(solitaire_eval.main, ["--model", str(bad), "--deals", "1", "--out", str(tmp_path / "s")], capsys)
        for w in words
    )
    assert not (tmp_path / "s").exists()  # refused before its output folder is made
    for spec in (f"model:{bad}", f"az:2:{bad}"):
        assert any(
            w in _main_error(play.main, ["--env", "fire_and_ice_v0", "--human", "fire", "--opponent", spec], capsys)
            for w in words
        )
        assert any(
            w
            in _main_error(
                evaluate_cli.main, ["--env", "fire_and_ice_v0", "--agents", spec, "random", "--out", str(tmp_path / "e")], capsys
            )
            for w in words
        )


def _two_checkpoints(tmp_path: Path) -> Path:
    """A run folder's two checkpoints (200 and 100 timesteps) as ``save_checkpoint`` writes them."""
    from types import SimpleNamespace

    import torch

    from polarzoo.baselines.training.checkpoints import save_checkpoint
    from polarzoo.baselines.training.config import TrainingState

    policy = torch.nn.Linear(4, 3)
    policy.optimizer = torch.optim.Adam(policy.parameters())  # type: ignore[assignment]
    policy(torch.ones(2, 4)).sum().backward()
    policy.optimizer.step()  # type: ignore[operator]
    for steps in (100, 200):
        model = SimpleNamespace(policy=policy, num_timesteps=steps, _n_updates=steps // 100)
        save_checkpoint(tmp_path, model, TrainingState(timesteps=steps))
    return tmp_path / "checkpoints"


@pytest.mark.parametrize("damage", ["cut", "tensor_bytes", "header", "other_state"])
def test_a_damaged_latest_checkpoint_falls_back_to_the_previous(tmp_path: Path, damage: str) -> None:
    """A latest.safetensors cut short, with changed tensor bytes (its digest catches them), a
    damaged header, or beside the state of another checkpoint: the resume takes the previous one."""
    from polarzoo.baselines.training.config import TrainingState
    from polarzoo.baselines.training.ppo import read_checkpoint_state

    folder = _two_checkpoints(tmp_path)
    assert read_checkpoint_state(tmp_path) == (TrainingState(timesteps=200).as_dict(), "latest.safetensors")
    latest = folder / "latest.safetensors"
    data = bytearray(latest.read_bytes())
    if damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "tensor_bytes":
        data[-6:-2] = b"XXXX"
    elif damage == "header":
        data[12:20] = b"\xff" * 8
    else:
        (folder / "state.json").write_text(json.dumps({"timesteps": 150}))
    latest.write_bytes(bytes(data))
    assert read_checkpoint_state(tmp_path) == (TrainingState(timesteps=100).as_dict(), "previous.safetensors")


#: a folder nobody can write, root included (a read-only file system): Linux's /proc
UNWRITABLE = Path("/proc/polarzoo-test")


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's read-only /proc")
@pytest.mark.parametrize(
    "module,args,words",
    [
        (
            "polarzoo.baselines.solitaire_solver",
            ["--deals", "2", "--json", str(UNWRITABLE / "x.json")],
            "--json /proc/polarzoo-test: cannot write there",
        ),
        (
            "polarzoo.baselines.solitaire_train",
            ["--quick", "--out", str(UNWRITABLE)],
            "--out /proc/polarzoo-test: cannot write there",
        ),
        (
            "polarzoo.baselines.solitaire_eval",
            ["--model", "pretrained", "--out", str(UNWRITABLE)],
            "--out /proc/polarzoo-test: cannot",
        ),
        (
            "polarzoo.baselines.evaluate",
            ["--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "--out", str(UNWRITABLE)],
            "--out /proc/polarzoo-test: cannot write there",
        ),
        (
            "polarzoo.baselines.export",
            [str(ROOT / "baselines" / "pretrained" / "fire_and_ice_v0.safetensors"), str(UNWRITABLE / "m.safetensors")],
            "out /proc/polarzoo-test: cannot write there",
        ),
        (TRAIN, ["--env", "fire_and_ice_v0", "--quick", "--runs", str(UNWRITABLE)], "--runs /proc/polarzoo-test: cannot create"),
    ],
)
def test_an_output_folder_that_cannot_be_written_is_one_line_before_any_work(
    module: str, args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read-only output folders (the probe found tracebacks in the solver and solitaire_train)."""
    result = run_main(capsys, module, *args)
    assert_one_line_error(result, words)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [
        ["--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "mcts:8", "--games", "2"],
        [
            "--env",
            "thin_ice_v0",
            "--env-kwargs",
            '{"num_players": 3, "grid": 3}',
            "--agents",
            "random",
            "random",
            "heuristic",
            "--games",
            "1",
        ],
    ],
)
def test_an_interrupted_evaluation_resumes_to_the_same_table(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate --resume OUT: the same command, the games already in games.jsonl kept (a line cut
    off by the interruption is played again), the rest played: the same files as one whole run."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert run_main(capsys, "polarzoo.baselines.evaluate", *args, "--out", str(whole), "--no-progress").returncode == 0
    lines = (whole / "games.jsonl").read_text().splitlines()
    cut.mkdir()
    (cut / "command.json").write_text((whole / "command.json").read_text())
    (cut / "games.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:15])  # as a Ctrl-C leaves it
    resumed = run_main(capsys, "polarzoo.baselines.evaluate", "--resume", str(cut), "--no-progress")
    assert resumed.returncode == 0 and "2 finished game(s) kept" in resumed.stdout
    assert json.loads((cut / "eval.json").read_text()) == json.loads((whole / "eval.json").read_text())
    assert (cut / "games.jsonl").read_text() == (whole / "games.jsonl").read_text()
    assert_one_line_error(
        run_main(capsys, "polarzoo.baselines.evaluate", "--resume", str(tmp_path / "none")),  # type: ignore[arg-type]
        "not an evaluation folder",
    )


def test_evaluate_resume_keeps_only_its_own_well_formed_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record of another game or seed, or a damaged one, is played again, not counted; other
    options beside --resume are refused (the saved command is replayed)."""
    args = ["--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "--games", "2", "--no-progress"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert run_main(capsys, "polarzoo.baselines.evaluate", *args, "--out", str(whole)).returncode == 0
    lines = [json.loads(line) for line in (whole / "games.jsonl").read_text().splitlines()]
    cut.mkdir()
    (cut / "command.json").write_text((whole / "command.json").read_text())
    foreign = {**lines[1], "seed": 99}
    damaged = {**lines[2], "result": "won?"}
    (cut / "games.jsonl").write_text("\n".join(json.dumps(r) for r in (lines[0], foreign, damaged)) + "\n")
    resumed = run_main(capsys, "polarzoo.baselines.evaluate", "--resume", str(cut), "--no-progress")
    assert resumed.returncode == 0 and "1 finished game(s) kept" in resumed.stdout
    assert "1 damaged or cut-off record(s) and 1 of another command" in resumed.stderr
    assert json.loads((cut / "eval.json").read_text()) == json.loads((whole / "eval.json").read_text())
    assert_one_line_error(
        run_main(capsys, "polarzoo.baselines.evaluate", "--resume", str(cut), "--games", "5"),
        "it takes no other options (--games)",
    )


@pytest.mark.parametrize("interrupt_at_step", [45, 64])  # inside a rollout / during the update after one
def test_an_interrupted_run_resumes_to_the_same_weights_and_evaluations(
    interrupt_at_step: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exact resume: Ctrl-C at any point, then --resume, ends with the same weights, optimizer
    state and evaluations as one uninterrupted run with the same seed and threads (self-play
    snapshots, reward-free opponents and periodic evaluations included)."""
    import torch

    from polarzoo.baselines.training import ppo as train_module
    from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv

    config = train_module.load_config(
        "fire_and_ice_v0",
        {
            "n_envs": 2,
            "n_steps": 32,
            "batch_size": 32,
            "n_epochs": 2,
            "total_timesteps": 256,
            "vec_env": "dummy",
            "opponents": {"random": 0.5, "self": 0.5},
            "snapshot_every": 64,
            "max_snapshots": 2,
            "eval_every": 96,
            "eval_games": 1,
            "checkpoint_every": 64,
            "torch_threads": 1,
            "board_policy": {"dim": 8, "blocks": 1},
            "bc_games": 0,
        },
    )

    def run(folder: Path) -> Path:
        folder.mkdir()
        train_module.train(config, folder, seed=3, progress_bar=False, final_eval=False)
        return folder

    whole = run(tmp_path / "whole")
    calls = {"n": 0}
    original_step_wait, original_train = (
        OpponentBatchingVecEnv.step_wait,
        train_module.MaskablePPO.train if hasattr(train_module, "MaskablePPO") else None,
    )
    from sb3_contrib import MaskablePPO

    original_train = MaskablePPO.train

    def step_wait(self):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == interrupt_at_step and interrupt_at_step % 16:
            raise KeyboardInterrupt
        return original_step_wait(self)

    def ppo_train(self):  # type: ignore[no-untyped-def]
        if calls["n"] >= interrupt_at_step and not interrupt_at_step % 16:  # inside the update, weights half changed
            original_train(self)
            raise KeyboardInterrupt
        return original_train(self)

    monkeypatch.setattr(OpponentBatchingVecEnv, "step_wait", step_wait)
    monkeypatch.setattr(MaskablePPO, "train", ppo_train)
    with pytest.raises(SystemExit):
        run(tmp_path / "cut")
    monkeypatch.undo()
    before = json.loads((tmp_path / "cut" / "checkpoints" / "state.json").read_text())["train_seconds"]
    assert before > 0
    train_module.train(config, tmp_path / "cut", resume=True, seed=3, progress_bar=False, final_eval=False)
    # The training time counts both parts (before: only the part after the resume).
    record = json.loads((tmp_path / "cut" / "training.json").read_text())
    assert record["seconds"] == pytest.approx(before + record["seconds_this_part"]) and record["seconds_from"] == 0
    first = MaskablePPO.load(whole / "model.zip", device="cpu")
    second = MaskablePPO.load(tmp_path / "cut" / "model.zip", device="cpu")
    for (name, a), b in zip(first.policy.state_dict().items(), second.policy.state_dict().values()):
        assert torch.equal(a, b), name
    adam_first, adam_second = first.policy.optimizer.state_dict(), second.policy.optimizer.state_dict()
    for key, value in adam_first["state"].items():
        assert torch.equal(value["exp_avg"], adam_second["state"][key]["exp_avg"])
    assert (whole / "evaluations.csv").read_text() == (tmp_path / "cut" / "evaluations.csv").read_text()
    assert first.num_timesteps == second.num_timesteps == 256


def test_a_full_disk_during_training_is_one_line_and_the_last_checkpoint_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No space left while writing the third checkpoint: one line, exit 1, the second checkpoint
    intact (nothing half-written beside it) and an exact point to resume from."""
    from polarzoo.baselines.training import checkpoints

    original, calls = checkpoints.atomic_write, {"n": 0}

    def write(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(path).name == "latest.tmp.safetensors":
            calls["n"] += 1
            if calls["n"] == 3:  # checkpoints at 256 and 512 are written, the one at 768 meets a full disk
                raise OSError(28, "No space left on device")
        return original(path, *args, **kwargs)

    monkeypatch.setattr(checkpoints, "atomic_write", write)
    runs = tmp_path / "runs"
    result = run_main(
        capsys,
        TRAIN,
        "--env",
        "fire_and_ice_v0",
        "--quick",
        "--bc-games",
        "0",
        "--total-timesteps",
        "1024",
        "--checkpoint-every",
        "256",
        "--snapshot-every",
        "0",
        "--eval-every",
        "0",
        "--no-final-eval",
        "--runs",
        str(runs),
        "--run-name",
        "full",
    )
    monkeypatch.undo()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "could not write into" in result.stderr and "No space left on device" in result.stderr and "--resume" in result.stderr
    folder = runs / "full" / "checkpoints"
    assert not [p.name for p in folder.iterdir() if ".tmp" in p.name]
    assert json.loads((folder / "state.json").read_text())["timesteps"] == 512
    resumed = run_main(capsys, TRAIN, "--resume", str(runs / "full"), "--no-final-eval")
    assert resumed.returncode == 0 and "exactly where it stopped" in resumed.stdout and "1024 timesteps" in resumed.stdout


@pytest.mark.parametrize("to_group", [False, True], ids=["to-the-parent", "to-the-group-as-a-terminal"])
@pytest.mark.slow
def test_ctrl_c_stops_an_evaluation_with_workers_at_once_and_exits_130(tmp_path: Path, to_group: bool) -> None:
    """A terminal's Ctrl-C reaches the whole process group (the workers too); ``kill -INT`` the
    parent alone.  (A program started in the background of a non-interactive shell inherits
    Ctrl-C ignored, as POSIX asks: Python then never sees it; run it in the foreground.)"""
    import os
    import signal
    import time

    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.evaluate",
            "--env",
            "fire_and_ice_v0",
            "--agents",
            "random",
            "mcts:30",
            "--games",
            "400",
            "--workers",
            "2",
            "--no-progress",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C's own disposition, whatever this process inherited (an earlier test may ignore it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        start_new_session=to_group,
    )
    games = out / "games.jsonl"
    deadline = time.monotonic() + scaled(120)
    while (not games.exists() or games.stat().st_size == 0) and time.monotonic() < deadline:
        time.sleep(0.2)
    if to_group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=scaled(60))
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "continue with --resume" in stderr
    kept = len(games.read_text().splitlines())
    time.sleep(1.0)
    assert len(games.read_text().splitlines()) == kept < 1600  # nothing plays on after the exit


def _policy_and_adam(model_zip: Path) -> tuple[dict, list]:
    import zipfile

    import torch

    with zipfile.ZipFile(model_zip) as archive:
        weights = torch.load(archive.open("policy.pth"), map_location="cpu", weights_only=True)
        optimizer = torch.load(archive.open("policy.optimizer.pth"), map_location="cpu", weights_only=True)
    return weights, list(optimizer["state"].values())


@pytest.mark.slow
def test_kill_9_then_resume_with_every_option_matches_one_straight_run(tmp_path: Path) -> None:
    """One run with every training option at once (behaviour cloning, random / heuristic / self
    opponents, self-play snapshots, periodic evaluations, envs in subprocesses), killed with
    SIGKILL mid-way and resumed in a new process, ends with every tensor and the Adam state of one
    straight run, and the same evaluations."""
    import torch
    import yaml

    config = tmp_path / "config.yaml"
    # The opponents not in alphabetical order: the resumed run must keep the pool's order (a
    # sorted copy of the config once made it draw other opponents after its first snapshot).
    config.write_text(
        yaml.safe_dump(
            {
                "go_with_the_floe_v0": {
                    "n_steps": 32,
                    "batch_size": 32,
                    "n_epochs": 1,
                    "opponents": {"random": 0.2, "heuristic": 0.5, "self": 0.3},
                    "snapshot_every": 64,
                    "max_snapshots": 2,
                    "eval_every": 96,
                    "eval_games": 1,
                    "checkpoint_every": 64,
                    "board_policy": {"dim": 8, "blocks": 1},
                    "bc_games": 2,
                    "bc_epochs": 2,
                    "bc_teacher": "heuristic",
                }
            },
            sort_keys=False,
        )
    )
    common = [
        "--env",
        "go_with_the_floe_v0",
        "--config",
        str(config),
        "--runs",
        str(tmp_path),
        "--n-envs",
        "2",
        "--vec-env",
        "subproc",
        "--torch-threads",
        "1",
        "--seed",
        "3",
        "--total-timesteps",
        "384",
        "--no-progress",
        "--no-final-eval",
    ]
    straight = subprocess.run(
        [sys.executable, "-m", TRAIN, *common, "--run-name", "straight"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert straight.returncode == 0, straight.stderr[-3000:]
    cut = tmp_path / "cut"
    process = subprocess.Popen(
        [sys.executable, "-m", TRAIN, *common, "--run-name", "cut"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    state = cut / "checkpoints" / "state.json"
    deadline = time.time() + scaled(300)
    while time.time() < deadline and process.poll() is None:
        try:
            if json.loads(state.read_text())["timesteps"] >= 192:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)  # the learner and its env subprocesses, no chance to save
    process.wait(timeout=scaled(60))
    assert not (cut / "model.zip").exists()
    resumed = subprocess.run(
        [sys.executable, "-m", TRAIN, "--resume", str(cut), "--no-progress", "--no-final-eval"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    weights, moments = _policy_and_adam(tmp_path / "straight" / "model.zip")
    weights_resumed, moments_resumed = _policy_and_adam(cut / "model.zip")
    assert weights.keys() == weights_resumed.keys()
    for key, value in weights.items():
        assert torch.equal(value, weights_resumed[key]), key
    assert moments and len(moments) == len(moments_resumed)
    for mine, theirs in zip(moments, moments_resumed):
        assert all(torch.equal(mine[k], theirs[k]) for k in ("exp_avg", "exp_avg_sq")) and mine["step"] == theirs["step"]
    assert (tmp_path / "straight" / "evaluations.csv").read_text() == (cut / "evaluations.csv").read_text()


def test_evaluate_resume_of_a_folder_whose_games_file_is_a_folder(tmp_path: Path) -> None:
    out = tmp_path / "e"
    first = cli(
        "polarzoo.baselines.evaluate",
        "--env",
        "fire_and_ice_v0",
        "--agents",
        "random",
        "heuristic",
        "--games",
        "1",
        "--out",
        str(out),
        "--no-progress",
    )
    assert first.returncode == 0, first.stderr
    (out / "games.jsonl").unlink()
    (out / "games.jsonl").mkdir()
    assert_one_line_error(cli("polarzoo.baselines.evaluate", "--resume", str(out)), "cannot read its games.jsonl")
