"""baselines/runs.py: the CLIs' shared pieces (here: ``--quick``), and train's quick config."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from polarzoo.baselines.runs import add_quick, apply_quick


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
    from polarzoo.baselines import train as train_module

    seen: dict[str, Any] = {}
    monkeypatch.setattr(train_module, "train", lambda config, run_dir, **kwargs: seen.update(config=config, run_dir=run_dir))
    train_module.main(["--env", "thin_ice_v0", "--quick", "--eval-games", "3", "--runs", str(tmp_path)])
    config = seen["config"]
    assert config["total_timesteps"] == train_module.QUICK["total_timesteps"] and config["n_envs"] == 2
    assert config["vec_env"] == "dummy" and config["eval_games"] == 3  # the flag beside --quick wins
    assert config["learning_rate"] == 0.001  # the env's own settings stay
    with pytest.raises(SystemExit):
        train_module.main(["--quick", "--resume", str(tmp_path)])
