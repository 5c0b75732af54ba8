"""Agents never choose illegal actions; tournament statistics; train/evaluate CLIs incl. resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from polarzoo.baselines.agents import MCTSAgent, RandomAgent, make_agent
from polarzoo.baselines.evaluation.tournament import elo_ratings, head_to_head, play_game, wilson_interval
from tests.helpers import scaled

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "env_id, specs, kwargs",
    [
        ("fire_and_ice_v0", ["random", "heuristic", "mcts:8"], {}),
        ("go_with_the_floe_v0", ["random", "heuristic", "mcts:8"], {}),
        ("thin_ice_v0", ["random", "heuristic"], {"grid": 3}),
    ],
)
def test_agents_never_choose_illegal_actions(env_id: str, specs: list[str], kwargs: dict) -> None:
    agents = [make_agent(spec, env_id) for spec in specs]
    for seed in range(2 if env_id == "thin_ice_v0" else 3):
        for first in agents:
            for second in agents:
                record = play_game(env_id, [first, second], seed=seed, env_kwargs=kwargs)
                assert record.illegal == [0, 0]
                assert sorted(record.scores) in ([0.0, 1.0], [0.5, 0.5])


def test_heuristics_beat_random() -> None:
    for env_id in ("fire_and_ice_v0", "go_with_the_floe_v0"):
        result = head_to_head(env_id, make_agent("heuristic", env_id), RandomAgent(), games_per_seat=10)
        assert result.wins >= 15, result.as_dict()


def test_mcts_uses_its_budget() -> None:
    with pytest.raises(ValueError):
        MCTSAgent(0)
    result = head_to_head("go_with_the_floe_v0", MCTSAgent(60), RandomAgent(), games_per_seat=4)
    assert result.wins >= 5


def test_statistics() -> None:
    low, high = wilson_interval(8, 10)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95
    assert wilson_interval(0, 0) == (0.0, 1.0)
    results = [head_to_head("fire_and_ice_v0", make_agent("heuristic", "fire_and_ice_v0"), RandomAgent(), 3)]
    ratings = elo_ratings(results, ["heuristic", "random"])
    assert ratings["heuristic"] > ratings["random"]
    with pytest.raises(ValueError, match="unknown agent spec"):
        make_agent("alphazero", "fire_and_ice_v0")


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=scaled(timeout))


TINY = [
    "--total-timesteps",
    "1024",
    "--n-envs",
    "2",
    "--eval-every",
    "512",
    "--eval-games",
    "1",
    "--checkpoint-every",
    "256",
    "--snapshot-every",
    "512",
    "--final-eval-games",
    "1",
    "--no-progress",
]


@pytest.mark.slow
def test_train_and_evaluate_cli(tmp_path: Path) -> None:
    result = run(
        "-m",
        "polarzoo.baselines.train",
        "--env",
        "go_with_the_floe_v0",
        "--runs",
        str(tmp_path),
        "--run-name",
        "r",
        *TINY,
        "--bc-games",
        "2",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = tmp_path / "r"
    for name in (
        "model.zip",
        "config.yaml",
        "command.txt",
        "evaluations.csv",
        "eval.json",
        "eval.md",
        "winrate.png",
        "learning_curve.png",
        "checkpoints/latest.safetensors",
        "behaviour_cloning.json",
    ):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "tb").iterdir()) and list((run_dir / "snapshots").iterdir())
    import csv

    with (run_dir / "evaluations.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(row.keys() >= {"win_rate_as_black", "win_rate_as_white"} for row in rows)
    for row in rows:  # one game per seat: the overall rate is the two seats' mean
        assert float(row["win_rate"]) == pytest.approx((float(row["win_rate_as_black"]) + float(row["win_rate_as_white"])) / 2)
    summary = json.loads((run_dir / "eval.json").read_text())
    assert summary["illegal_moves"] == 0 and "| trained | random |" in result.stdout
    evaluation = run(
        "-m",
        "polarzoo.baselines.evaluate",
        "--env",
        "go_with_the_floe_v0",
        "--agents",
        "random",
        "heuristic",
        f"model:{run_dir / 'model.zip'}",
        "--games",
        "1",
        "--out",
        str(tmp_path / "eval"),
        "--run-dir",
        str(run_dir),
    )
    assert evaluation.returncode == 0, evaluation.stderr[-3000:]
    assert (tmp_path / "eval" / "winrate.png").exists() and (tmp_path / "eval" / "learning_curve.png").exists()
    assert run("-m", "polarzoo.baselines.train", "--help").returncode == 0


def _timesteps(state_file: Path) -> int:
    try:
        return int(json.loads(state_file.read_text())["timesteps"])
    except (OSError, ValueError, KeyError):  # being replaced right now
        return 0


@pytest.mark.slow
def test_resume_after_interrupt(tmp_path: Path) -> None:
    import signal
    import time

    args = [
        sys.executable,
        "-m",
        "polarzoo.baselines.train",
        "--env",
        "fire_and_ice_v0",
        "--runs",
        str(tmp_path),
        "--run-name",
        "r",
        "--total-timesteps",
        "200000",
        "--n-envs",
        "2",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        "--checkpoint-every",
        "256",
        "--bc-games",
        "0",
        "--no-progress",
        "--no-final-eval",
    ]
    # A shell that runs us in the background (`cmd &`) leaves SIGINT ignored, and Python keeps it
    # so; restore the default so the child gets Python's KeyboardInterrupt, as on a terminal.
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    state_file = tmp_path / "r" / "checkpoints" / "state.json"
    deadline = time.time() + scaled(240)
    # Wait for the event (a checkpoint past 256 timesteps), however slow the machine is.
    while time.time() < deadline and not (state_file.exists() and _timesteps(state_file) >= 256):
        time.sleep(0.5)
    process.send_signal(signal.SIGINT)  # Ctrl-C: the run saves a checkpoint and exits
    process.communicate(timeout=scaled(120))
    saved = json.loads(state_file.read_text())["timesteps"]
    assert saved >= 256
    resumed = run(
        "-m",
        "polarzoo.baselines.train",
        "--resume",
        str(tmp_path / "r"),
        "--total-timesteps",
        str(saved + 512),
        "--no-progress",
        "--no-final-eval",
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming {tmp_path / 'r'} at {saved} timesteps" in resumed.stdout
    assert json.loads(state_file.read_text())["timesteps"] >= saved + 512
    assert (tmp_path / "r" / "model.zip").exists()


def test_init_model_starts_from_the_given_weights(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.policies.weights import load_policy
    from polarzoo.baselines.training import ppo as train

    config = train.load_config(
        "go_with_the_floe_v0",
        {
            "init_model": "pretrained",
            "board_policy": {"dim": 32, "blocks": 2, "symmetrize": "canonical"},
            "learning_rate": 0.0,
            "total_timesteps": 32,
            "n_envs": 2,
            "n_steps": 16,
            "batch_size": 32,
            "n_epochs": 1,
            "snapshot_every": 0,
            "eval_every": 0,
            "checkpoint_every": 1000,
            "opponents": {"random": 1.0},
        },
    )
    train.check_config(config)
    train.train(config, tmp_path, progress_bar=False, final_eval=False)
    trained = MaskablePPO.load(tmp_path / "model.zip", device="cpu").policy.state_dict()
    shipped = load_policy(pretrained_path("go_with_the_floe_v0")).policy.state_dict()
    assert all(torch.equal(trained[key], shipped[key]) for key in shipped)  # learning rate 0: still the shipped weights


def test_init_model_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.training import ppo as train
    from polarzoo.baselines.training import ppo_cli

    with pytest.raises(ValueError, match="no model file"):
        train.check_config(train.load_config("fire_and_ice_v0", {"init_model": str(tmp_path / "missing.zip")}))
    train.check_config(train.load_config("thin_ice_v0", {"init_model": "pretrained"}))  # shipped since the pile policy
    # a board network setting it does not have, or an update precision it does not know: one line, before any work
    with pytest.raises(ValueError, match=r"board_policy: unknown setting\(s\) \['dimm'\]"):
        train.check_config(train.load_config("fire_and_ice_v0", {"board_policy": {"dimm": 32}}))
    with pytest.raises(ValueError, match="update_precision must be one of"):
        train.check_config(train.load_config("fire_and_ice_v0", {"board_policy": {"update_precision": "float16"}}))
    train.check_config(train.load_config("fire_and_ice_v0", {"board_policy": {"update_precision": "auto", "ortho_init": True}}))
    with pytest.raises(ValueError, match="no pretrained model for chess_v0"):
        pretrained_path("chess_v0")
    with pytest.raises(SystemExit):
        ppo_cli.main(
            [
                "--env",
                "fire_and_ice_v0",
                "--runs",
                str(tmp_path),
                "--no-progress",
                "--total-timesteps",
                "64",
                "--n-envs",
                "2",
                "--config",
                str(_write(tmp_path / "c.yaml", f"fire_and_ice_v0: {{init_model: {pretrained_path('go_with_the_floe_v0')}}}")),
            ]
        )
    assert "does not fit this config's policy" in capsys.readouterr().err


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_learning_curve_plots_old_and_per_seat_evaluations(tmp_path: Path) -> None:
    from polarzoo.baselines.evaluation.evaluate import plot_learning_curve

    header = "timesteps,opponent,win_rate,ci_low,ci_high,games,illegal"
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "evaluations.csv").write_text(f"{header}\n100,random,0.5,0.3,0.7,40,0\n200,random,0.6,0.4,0.8,40,0\n")
    (new / "evaluations.csv").write_text(
        f"{header},win_rate_as_black,win_rate_as_white\n"
        "100,random,0.5,0.3,0.7,40,0,1.0,0.0\n200,random,0.6,0.4,0.8,40,0,1.0,0.2\n"
    )
    for run_dir in (old, new):
        assert plot_learning_curve(run_dir, run_dir / "curve.png") and (run_dir / "curve.png").stat().st_size > 0
    assert not plot_learning_curve(tmp_path, tmp_path / "none.png")  # no evaluations yet: nothing drawn


# ------------------------------------------------------------------------------ N players
def test_ranks_and_mean_intervals() -> None:
    from polarzoo.baselines.evaluation.tournament import mean_interval, ranks_of

    assert ranks_of([3.0, 1.0, 2.0]) == [1, 3, 2]
    assert ranks_of([2.5, 2.5, 1.0]) == [1, 1, 3]  # shared points share the better rank
    mean, low, high = mean_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and low < 2.0 < high


def test_three_player_table_plays_every_rotation_and_counts_every_game(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    from polarzoo.baselines.evaluation.evaluate import evaluate

    kwargs = {"num_players": 3, "grid": 3}
    summary = evaluate("thin_ice_v0", ["random", "random", "heuristic"], 1, tmp_path, env_kwargs=kwargs, show_progress=False)
    rows = {row["agent"]: row for row in summary["results"]}
    assert set(rows) == {"random", "heuristic"}
    assert rows["random"]["games"] == 6 and rows["heuristic"]["games"] == 3  # 3 rotations x 1 game, per seat it holds
    for row in rows.values():
        assert abs(sum(row["rank_distribution"].values()) - 1) < 1e-9 and set(row["rank_distribution"]) == {"1", "2", "3"}
        assert sum(row["went_out"].values()) == row["games"] and row["went_out"]["other"] == 0
        assert 1.0 <= row["mean_points"] <= 3.0
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(games) == 3 and sorted(g["rotation"] for g in games) == [0, 1, 2]
    for game in games:
        assert abs(sum(game["points"]) - 6.0) < 1e-9  # 1 + 2 + 3 points shared out
    # every seat held the heuristic once
    assert sorted(g["seats"].index("heuristic") for g in games) == [0, 1, 2]
    assert (tmp_path / "ranks.png").stat().st_size > 0 and "rank 3" in (tmp_path / "eval.md").read_text()
    with pytest.raises(ValueError, match="give exactly 3 agents"):
        evaluate("thin_ice_v0", ["random", "heuristic"], 1, tmp_path / "x", env_kwargs=kwargs, show_progress=False)


def test_evaluate_cli_three_players_and_a_wrong_lineup(tmp_path: Path) -> None:
    pytest.importorskip("mujoco")
    kwargs = '{"num_players": 3, "grid": 3}'
    out = run(
        "-m",
        "polarzoo.baselines.evaluate",
        "--env",
        "thin_ice_v0",
        "--env-kwargs",
        kwargs,
        "--agents",
        "random",
        "random",
        "--games",
        "1",
        "--out",
        str(tmp_path / "bad"),
    )
    assert out.returncode == 2 and "give exactly 3 agents" in out.stderr and "Traceback" not in out.stderr
    out = run(
        "-m",
        "polarzoo.baselines.evaluate",
        "--env",
        "thin_ice_v0",
        "--env-kwargs",
        kwargs,
        "--agents",
        "random",
        "random",
        "random",
        "--games",
        "1",
        "--out",
        str(tmp_path / "ok"),
        "--no-progress",
    )
    assert out.returncode == 0, out.stderr
    assert "3 players" in out.stdout and "out T / A / N / stayed in" in out.stdout
    assert json.loads((tmp_path / "ok" / "eval.json").read_text())["num_players"] == 3


@pytest.mark.slow
def test_games_in_worker_processes_give_the_same_results() -> None:
    pytest.importorskip("mujoco")
    from polarzoo.baselines.evaluation.tournament import multiplayer_table

    heuristic, random_agent = make_agent("heuristic", "thin_ice_v0"), RandomAgent()
    one = head_to_head("thin_ice_v0", heuristic, random_agent, 2, env_kwargs={"grid": 3})
    two = head_to_head("thin_ice_v0", heuristic, random_agent, 2, env_kwargs={"grid": 3}, workers=2)
    assert one.as_dict() == two.as_dict()
    kwargs = {"grid": 3, "num_players": 3}
    lineup = [heuristic, random_agent, random_agent]
    assert [s.as_dict() for s in multiplayer_table("thin_ice_v0", lineup, 1, env_kwargs=kwargs)] == [
        s.as_dict() for s in multiplayer_table("thin_ice_v0", lineup, 1, env_kwargs=kwargs, workers=2)
    ]


@pytest.mark.slow
def test_model_and_search_agents_in_worker_processes_give_the_same_results() -> None:
    """The agents travel to the workers as their files (loaded once per worker, not per game)."""
    policy, search = make_agent("pretrained", "fire_and_ice_v0"), make_agent("az:2", "fire_and_ice_v0")
    one = head_to_head("fire_and_ice_v0", policy, search, 3)
    two = head_to_head("fire_and_ice_v0", policy, search, 3, workers=2)
    assert one.as_dict() == two.as_dict() and one.games == 6


def test_thin_ice_search_skips_the_policy_choice_that_puts_it_out() -> None:
    """search:K tries the policy's most probable placements on a snapshot, most probable first,
    and plays the first that keeps the player in: an S upright on the S upright already there
    nests (out by N), so with a second choice it plays that."""
    pytest.importorskip("mujoco")
    import numpy as np

    from polarzoo.baselines.agents import ThinIceSearch
    from polarzoo.envs import thin_ice_v0

    env = thin_ice_v0.raw_env()
    env.reset(seed=0)
    for move in ("call SS", "place S d4 upright"):
        env.step(env.notation_to_action(move))
    nest, apart = env.notation_to_action("place S d4 upright"), env.notation_to_action("place S a1 lying+x")

    class Ranked:  # a policy whose favourite placements are fixed
        def action_probabilities(self, env, agent):
            probs = np.zeros(env.num_actions)
            probs[[nest, apart]] = [0.6, 0.3]
            return probs

        def act(self, env, agent, rng):  # pragma: no cover - only placements are asked here
            raise AssertionError

    rng = np.random.default_rng(0)
    before = env.snapshot()
    assert ThinIceSearch(Ranked(), k=2).act(env, "player_0", rng) == apart
    assert ThinIceSearch(Ranked(), k=1).act(env, "player_0", rng) == nest  # nothing else tried
    # the tries left the live game as it was
    assert env.game.state.pending == before["game"].pending and not env.game.state.out_rule[0]
    env.step(nest)
    assert env.game.state.out_rule[0] == "N"
    with pytest.raises(ValueError, match="is a search of .*thin_ice_v0, not of"):
        make_agent("search:4", "fire_and_ice_v0")


@pytest.mark.slow
def test_train_without_a_terminal_logs_progress_lines(tmp_path: Path) -> None:
    """Output to a file (a server's log): steady progress lines, not a bar that shows at exit."""
    out = run(
        "-m",
        "polarzoo.baselines.train",
        "--env",
        "fire_and_ice_v0",
        "--runs",
        str(tmp_path),
        "--total-timesteps",
        "2048",
        "--bc-games",
        "0",
        "--n-envs",
        "2",
        "--eval-every",
        "1024",
        "--eval-games",
        "1",
        "--no-final-eval",
        "--log-every",
        "0.01",
    )
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if "timesteps (" in line and "fps, ETA" in line]
    assert len(lines) >= 2, out.stdout
    assert any("evaluation at 1,024 timesteps" in line for line in out.stdout.splitlines())
    assert "last evaluation (1,024)" in lines[-1]
    bad = run("-m", "polarzoo.baselines.train", "--env", "fire_and_ice_v0", "--log-every", "-1")
    assert bad.returncode == 2 and "--log-every must be at least 0" in bad.stderr


def test_head_to_head_labels_its_seats() -> None:
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.evaluation.tournament import SeatTally, head_to_head

    result = head_to_head(
        "fire_and_ice_v0", make_agent("heuristic", "fire_and_ice_v0"), make_agent("random", "fire_and_ice_v0"), 2
    )
    assert set(result.by_seat) == {0, 1} and all(isinstance(t, SeatTally) for t in result.by_seat.values())
    wins, draws, losses = result.by_seat[0]
    assert wins + draws + losses == 2
    assert set(result.as_dict()["by_seat"]) == {"fire", "ice"}
    assert result.as_dict()["by_seat"]["fire"] == {"wins": wins, "draws": draws, "losses": losses}


def test_a_run_with_snapshot_opponents_resumes_to_the_same_weights(tmp_path) -> None:
    """Training to 256 timesteps and resuming to 512 gives the weights and Adam moments of one
    straight 512-step run, with snapshot opponents in the pool (putting the envs back loads their
    models, and SB3's load reseeds the global generators: they are restored after it)."""
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training import ppo

    settings = {
        "n_envs": 2,
        "n_steps": 64,
        "batch_size": 64,
        "n_epochs": 1,
        "eval_every": 0,
        "snapshot_every": 256,
        "checkpoint_every": 256,
        "torch_threads": 1,
        "vec_env": "dummy",
        "bc_games": 0,
    }

    def config(total: int) -> dict:
        return ppo.load_config("fire_and_ice_v0", {**settings, "total_timesteps": total})

    ppo.train(config(512), tmp_path / "straight", seed=3, progress_bar=False, final_eval=False)
    ppo.train(config(256), tmp_path / "resumed", seed=3, progress_bar=False, final_eval=False)
    ppo.train(config(512), tmp_path / "resumed", resume=True, seed=3, progress_bar=False, final_eval=False)
    straight, resumed = (MaskablePPO.load(tmp_path / name / "model.zip").policy for name in ("straight", "resumed"))
    for key, value in straight.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key
    moments = [
        (s, r)
        for s, r in zip(straight.optimizer.state_dict()["state"].values(), resumed.optimizer.state_dict()["state"].values())
    ]
    assert moments and all(torch.equal(s["exp_avg"], r["exp_avg"]) for s, r in moments)


def test_learning_rate_end_anneals_the_learning_rate_linearly_over_the_budget(tmp_path: Path) -> None:
    """``learning_rate_end``: SB3 sets each update's rate from the timesteps collected before it,
    so the four updates of a 512-timestep run (128 a rollout) use the line's values at 128, 256,
    384 and 512: the last one trains at ``learning_rate_end``."""
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training import ppo

    seen: list[float] = []
    update = MaskablePPO.train

    def recording_update(self):  # noqa: ANN001, ANN202
        update(self)
        seen.append(self.policy.optimizer.param_groups[0]["lr"])

    settings = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "eval_every": 0, "bc_games": 0}
    config = ppo.load_config("fire_and_ice_v0", {**settings, "total_timesteps": 512, "learning_rate_end": 1e-4})
    schedule = ppo.learning_rate_schedule(ppo.TrainConfig.from_mapping(config))
    assert schedule(1.0) == pytest.approx(3e-4) and schedule(0.0) == pytest.approx(1e-4)
    assert ppo.learning_rate_schedule(ppo.TrainConfig.from_mapping({**config, "learning_rate_end": None})) == 3e-4
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MaskablePPO, "train", recording_update)
        ppo.train(config, tmp_path / "run", progress_bar=False, final_eval=False)
    assert seen == pytest.approx([3e-4 - 2e-4 * done / 512 for done in (128, 256, 384, 512)])


def test_the_update_runs_on_update_threads_and_the_rollouts_on_torch_threads(tmp_path, monkeypatch) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training import ppo
    from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv

    seen: dict[str, set[int]] = {"update": set(), "rollout": set()}
    update, step = MaskablePPO.train, OpponentBatchingVecEnv.step_wait

    def recording_update(self, *args, **kwargs):  # noqa: ANN202
        seen["update"].add(torch.get_num_threads())
        return update(self, *args, **kwargs)

    def recording_step(self):  # noqa: ANN202
        seen["rollout"].add(torch.get_num_threads())
        return step(self)

    monkeypatch.setattr(MaskablePPO, "train", recording_update)
    monkeypatch.setattr(OpponentBatchingVecEnv, "step_wait", recording_step)
    threads = torch.get_num_threads()
    config = ppo.load_config(
        "fire_and_ice_v0",
        {
            "n_envs": 2,
            "n_steps": 32,
            "batch_size": 64,
            "n_epochs": 1,
            "eval_every": 0,
            "total_timesteps": 192,
            "torch_threads": 1,
            "update_threads": 2,
            "vec_env": "dummy",
            "bc_games": 0,
        },
    )
    try:
        ppo.train(config, tmp_path / "run", progress_bar=False, final_eval=False)
        assert seen == {"update": {2}, "rollout": {1}}
        assert torch.get_num_threads() == 1  # what follows the training (the evaluation) plays as the rollouts did
    finally:
        torch.set_num_threads(threads)


def test_a_resumed_run_trains_keys_added_since_it_started_as_before(monkeypatch) -> None:
    from polarzoo.baselines.training import ppo

    saved = ppo.load_config("thin_ice_v0")
    del saved["update_threads"]  # a run started before the key existed updated on torch_threads
    monkeypatch.setitem(ppo.ADDED_KEYS, "update_threads", 0)
    monkeypatch.setattr(ppo, "load_config", lambda env_id: {**saved, "update_threads": 2})  # were today's default 2
    assert ppo.saved_run_config(saved)["update_threads"] == 0
    assert ppo.saved_run_config({**saved, "update_threads": 3})["update_threads"] == 3


def test_the_auto_thread_count_does_not_depend_on_the_load(monkeypatch) -> None:
    import os

    from polarzoo.baselines.training.ppo import choose_torch_threads

    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    from polarzoo.baselines.training.config import TrainConfig

    idle, _ = choose_torch_threads(TrainConfig(torch_threads=0, vec_env="dummy"))
    monkeypatch.setattr(os, "getloadavg", lambda: (50.0, 50.0, 50.0))
    busy, why = choose_torch_threads(TrainConfig(torch_threads=0, vec_env="dummy"))
    assert busy == idle >= 1 and "busy" in why
    assert choose_torch_threads(TrainConfig(torch_threads=3, vec_env="dummy"))[0] == 3


def test_every_default_training_config_runs_on_one_torch_thread() -> None:
    """One thread is the default (results page, "Torch threads"): the same weights on any machine,
    whatever its cores; Thin Ice's update alone takes two (a fixed count, not the machine's)."""
    from polarzoo.baselines.training.config import TrainConfig, load_config
    from polarzoo.baselines.training.ppo import choose_torch_threads
    from polarzoo.envs import ENVIRONMENTS

    for env_id in ENVIRONMENTS:
        config = TrainConfig.from_mapping(load_config(env_id))
        assert choose_torch_threads(config) == (1, "torch_threads in the config"), env_id
    assert choose_torch_threads(TrainConfig(vec_env="dummy"))[0] == 1


def test_a_random_opening_makes_deterministic_agents_play_different_games() -> None:
    """Fire & Ice has no chance: two greedy policies play one game over and over, unless the first
    plies are a random opening (drawn from its own seed: the same opening with the seats swapped)."""
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.evaluation.tournament import play_game

    first, second = make_agent("pretrained", "fire_and_ice_v0"), make_agent("heuristic", "fire_and_ice_v0")
    plain = {
        tuple(play_game("fire_and_ice_v0", [first, first], seed).scores)
        + (play_game("fire_and_ice_v0", [first, first], seed).length,)
        for seed in range(4)
    }
    assert len(plain) == 1  # the same game every time
    lengths = {play_game("fire_and_ice_v0", [first, first], 0, opening=(seed, 2)).length for seed in range(6)}
    assert len(lengths) > 1
    from polarzoo.baselines.evaluation.league import lineup_seed, opening_seed

    names = (first.name, second.name)
    assert opening_seed(0, names, 3) == opening_seed(0, names[::-1], 3) != opening_seed(0, names, 4)  # paired
    assert lineup_seed(0, names, 3) != lineup_seed(0, names[::-1], 3)


def test_teacher_games_go_round_the_player_counts_padded_to_the_largest() -> None:
    """Behaviour cloning on a list of Thin Ice player counts: the games go round the counts,
    every observation has the largest game's size (absent seats padded), the opponents come from
    ``opponents``; a game of two players keeps the stream the one-count collection had."""
    from polarzoo.baselines.training.imitation import collect_demonstrations
    from polarzoo.envs.thin_ice import rules

    teacher = make_agent("heuristic", "thin_ice_v0")
    counts = [2, 4]
    observations, masks, actions = collect_demonstrations(
        "thin_ice_v0", teacher, 2, seed=3, env_kwargs={"num_players": counts}, opponents={"random": 1, "heuristic": 1}
    )
    assert observations.shape[1] == rules.observation_size(4) and len(masks) == len(actions) > 0
    present = rules.present_players(observations)
    assert set(present.tolist()) == {2, 4}  # both counts played, the two-player rows padded with absent seats
    assert all(masks[i, a] for i, a in enumerate(actions))
    # The default opponents (random or the teacher, one draw a game) are those of before.
    one = collect_demonstrations("thin_ice_v0", teacher, 1, seed=5, env_kwargs={"num_players": 2})
    again = collect_demonstrations(
        "thin_ice_v0", teacher, 1, seed=5, env_kwargs={"num_players": 2}, opponents={"random": 0.5, "teacher": 0.5}
    )
    assert all((a == b).all() for a, b in zip(one, again))
