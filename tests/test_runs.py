"""baselines/cli/runs.py: the CLIs' shared pieces (here: ``--quick``), and train's quick config."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from polarzoo.baselines.cli.runs import add_quick, apply_quick


def test_quick_fills_in_what_the_command_line_does_not_give() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=128)
    parser.add_argument("--plies", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    add_quick(parser, {"games": 16, "plies": 64})
    argv = ["--quick", "--plies=32", "--seed", "3"]
    args = parser.parse_args(argv)
    apply_quick(parser, args, argv)
    assert (args.games, args.plies, args.seed) == (16, 32, 3)
    assert "_quick" not in vars(args)  # nothing extra lands in the namespace (run files dump it)
    plain = parser.parse_args([])
    apply_quick(parser, plain, [])
    assert (plain.games, plain.plies) == (128, 128)
    assert "--games 16, --plies 64" in parser.format_help()


def test_train_quick_is_a_tiny_config_that_explicit_flags_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from polarzoo.baselines.training import ppo as train_module
    from polarzoo.baselines.training import ppo_cli

    seen: dict[str, Any] = {}
    monkeypatch.setattr(train_module, "train", lambda config, run_dir, **kwargs: seen.update(config=config, run_dir=run_dir))
    ppo_cli.main(["--env", "thin_ice_v0", "--quick", "--eval-games", "3", "--runs", str(tmp_path)])
    config = seen["config"]
    assert config["total_timesteps"] == train_module.QUICK["total_timesteps"] and config["n_envs"] == 2
    assert config["vec_env"] == "dummy" and config["eval_games"] == 3  # the flag beside --quick wins
    assert config["learning_rate"] == 0.001  # the env's own settings stay
    assert config["bc_games"] == 0  # Thin Ice's job clones no teacher, nor does its smoke run
    # Fire & Ice's job clones the heuristic first: its smoke run clones a little (a --bc flag wins)
    ppo_cli.main(["--env", "fire_and_ice_v0", "--quick", "--bc-epochs", "2", "--runs", str(tmp_path)])
    assert seen["config"]["bc_games"] == train_module.QUICK_BC["bc_games"] and seen["config"]["bc_epochs"] == 2
    with pytest.raises(SystemExit):
        ppo_cli.main(["--quick", "--resume", str(tmp_path)])


CLIS = [
    "train",
    "evaluate",
    "play",
    "play.web",
    "play.replay",
    "export",
    "solitaire_solver",
    "solitaire_train",
    "solitaire_eval",
    "rllib_train",
    "alphazero_jax",
    "league",
    "benchmark",
]


@pytest.mark.parametrize("name", CLIS)
def test_every_option_of_every_cli_has_help_and_a_real_default(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    seen: dict[str, argparse.ArgumentParser] = {}
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        seen["parser"] = self
        return original(self, args, namespace)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(f"polarzoo.baselines.{name}").main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "(default: None)" not in text and "(default: %(default)s)" not in text
    parsers = [seen["parser"]] + [
        sub
        for action in seen["parser"]._actions
        if isinstance(action, argparse._SubParsersAction)
        for sub in action.choices.values()
    ]  # league, benchmark: their subcommands too
    missing = [
        action.option_strings or action.dest
        for parser in parsers
        for action in parser._actions
        if action.dest != "help" and not action.help
    ]
    assert not missing, f"{name}: options without help text: {missing}"
    for block in text.split("\n  -")[1:]:
        assert block.count("(default:") <= 1, block


class _FullDisk:
    """A model whose ``save`` writes half a file and then finds the disk full."""

    def save(self, path: Path) -> None:
        Path(path).write_bytes(b"PK\x03\x04 half a zip")
        raise OSError(28, "No space left on device")


def test_a_full_disk_never_leaves_a_file_that_looks_complete(tmp_path: Path) -> None:
    from polarzoo.baselines.cli.runs import atomic_write, save_model

    model_path = tmp_path / "model.zip"
    with pytest.raises(OSError, match="No space"):
        save_model(_FullDisk(), model_path)
    assert list(tmp_path.iterdir()) == []  # neither model.zip nor the temporary file
    atomic_write(tmp_path / "config.yaml", "old: 1\n")

    original = Path.write_text

    def full(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        original(self, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "write_text", full)
        with pytest.raises(OSError):
            atomic_write(tmp_path / "config.yaml", "new: 2\nmore: 3\n")
    assert (tmp_path / "config.yaml").read_text() == "old: 1\n"  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


def test_a_ctrl_c_waits_for_a_write_that_must_finish_whole() -> None:
    """``interrupts_deferred``: the Ctrl-C that came during a checkpoint's write is raised after it
    (inside torch's zip writer it surfaced as a RuntimeError from the writer's cleanup)."""
    import os
    import signal
    import threading
    import time

    from polarzoo.baselines.cli.runs import interrupts_deferred

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own Ctrl-C (a pytest worker ignores it)
    try:
        finished = []
        with pytest.raises(KeyboardInterrupt), interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            finished.append(True)
        assert finished == [True] and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
