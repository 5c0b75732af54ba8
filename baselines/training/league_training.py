"""League training: a main agent that its own exploiters keep training against (AlphaStar's league,
Vinyals et al. 2019, on SB3's MaskablePPO), so that what a best response would farm is trained away.

    python -m polarzoo.baselines.training.league_training --env fire_and_ice_v0 --init pretrained
    python -m polarzoo.baselines.training.league_training --env go_with_the_floe_v0 --rounds 4 --out runs/hard-floe

Each round ``r`` (the main agent is ``main_0`` = ``--init`` before the first):

1. **Main exploiters**: ``--exploiters-per-round`` copies of ``main_{r-1}``, each fine-tuned against
   it alone on its own seed (both seats in turn, ``--exploiter-timesteps``): the approximate best
   responses of ``polarzoo-league exploit``.  They join the league.
2. **Measure**: every exploiter so far plays ``main_{r-1}`` (``--measure-games`` per seat, opened by
   the kit's random plies); its win rate ``p`` sets its weight in the main agent's opponents,
   prioritised fictitious self-play (``p ** --pfsp-power``, with a floor so that no old exploit is
   forgotten).  The best of the round's new exploiters is the round's exploitability estimate
   (one best response's win rate varies with its seed; several find more of the holes).
3. **Main agent**: ``main_{r-1}`` fine-tuned for ``--main-timesteps`` against the mixture:
   the exploiters (``--exploiter-share``, PFSP), the past main agents (``--past-share``, equal), the
   kit's heuristic (``--heuristic-share``, so that it keeps beating it) and random (the rest).
   Then it plays the heuristic, ``--eval-games`` per seat.

Every opponent is frozen and deterministic, as the agents are when they are measured.  Outputs in
``OUT`` (default ``runs/league-training-ENV-seedS``): ``round<r>/exploiter/`` (``exploiter2/``, ... with several a round) and ``round<r>/main/``
(training runs: model, checkpoints, log), ``league.json`` (the members, each round's measurements and
timing), ``progress.csv`` and ``progress.png``, and the result: ``model.zip``, ``model.safetensors``
(the last main agent; with ``--average-last K`` the mean of the last K main agents' weights, which
a best response farms less) and ``training.json``, whose ``timesteps`` are the main agent's own (``--init``'s
training plus every main round), the figure ``league exploit`` states a best response's budget
against, beside ``league_timesteps`` (the exploiters' too).  The same command again continues an
interrupted run where it stopped: a finished phase is kept, a training resumes from its checkpoint;
with a larger ``--rounds`` it goes on from the last main agent.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import sys
import time
import zipfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents import PolicyAgent, make_agent
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    atomic_write,
    ctrl_c_is_one_line,
    prog_name,
    save_figure,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.kits import kit_of
from polarzoo.baselines.policies.weights import load_policy, read_weights, save_policy
from polarzoo.baselines.training.config import InitModelError, load_config, model_file
from polarzoo.baselines.training.exploit import agent_training_timesteps, best_response_games, overall
from polarzoo.baselines.training.ppo import train
from polarzoo.envs import GAMES
from polarzoo.envs.utils import read_json_file

#: an exploiter's PFSP weight never falls below this share of the largest one
PFSP_FLOOR = 0.05


@dataclass(frozen=True)
class LeagueConfig:
    """A league training's settings (the command line's, kept in ``league.json``: a resumed run
    refuses different ones)."""

    env: str
    init: str = field(default="pretrained", metadata={"help": "the first main agent: 'pretrained' or a model file"})
    rounds: int = field(default=10, metadata={"help": "rounds (an exploiter, then the main agent)"})
    # the compute: each exploiter's and the main agent's per round
    exploiter_timesteps: int = field(default=81_920, metadata={"help": "each exploiter's budget"})
    exploiters_per_round: int = field(default=1, metadata={"help": "new main exploiters a round, each on its own seed"})
    main_timesteps: int = field(default=24_576, metadata={"help": "the main agent's budget per round"})
    # the main agent's opponents
    exploiter_share: float = field(default=0.5, metadata={"help": "the exploiters' share of the main agent's opponents"})
    past_share: float = field(default=0.15, metadata={"help": "the past main agents' share"})
    heuristic_share: float = field(default=0.3, metadata={"help": "the heuristic's share (random: the rest)"})
    pfsp_power: float = field(default=2.0, metadata={"help": "PFSP: an exploiter's weight is its win rate to this power"})
    average_last: int = field(default=1, metadata={"help": "the result: the mean of the last K main agents' weights"})
    # the measurements
    measure_games: int = field(default=20, metadata={"help": "games per seat measuring each exploiter"})
    eval_games: int = field(default=50, metadata={"help": "games per seat against the heuristic"})
    # the run
    seed: int = field(default=0, metadata={"help": "the league's seed"})
    torch_threads: int = field(default=1, metadata={"help": "torch threads"})

    def check(self) -> None:
        if min(self.rounds, self.exploiter_timesteps, self.exploiters_per_round, self.main_timesteps) < 1:
            raise ValueError("--rounds, --exploiter-timesteps, --exploiters-per-round and --main-timesteps must be at least 1")
        if self.measure_games < 1 or self.eval_games < 1:
            raise ValueError("--measure-games and --eval-games must be at least 1")
        shares = (self.exploiter_share, self.past_share, self.heuristic_share)
        if min(shares) < 0 or sum(shares) > 1:
            raise ValueError(f"the opponent shares must be at least 0 and sum to at most 1, got {shares}")
        if self.pfsp_power < 0:
            raise ValueError(f"--pfsp-power must be at least 0, got {self.pfsp_power}")
        if self.torch_threads < 1:
            raise ValueError(f"--torch-threads must be at least 1, got {self.torch_threads}")
        if not 1 <= self.average_last <= self.rounds:
            raise ValueError(f"--average-last must be from 1 to --rounds ({self.rounds}), got {self.average_last}")


def pfsp_weights(win_rates: list[float], power: float) -> list[float]:
    """Prioritised fictitious self-play: an opponent that beats the learner with rate ``p`` is
    drawn in proportion to ``p ** power`` (AlphaStar's "hard" weighting), never less than
    :data:`PFSP_FLOOR` of the largest weight; normalised to sum to 1 (equal when all are 0)."""
    raw = [max(p, 0.0) ** power for p in win_rates]
    top = max(raw, default=0.0)
    if top <= 0:
        return [1.0 / len(raw)] * len(raw) if raw else []
    floored = [max(w, PFSP_FLOOR * top) for w in raw]
    total = sum(floored)
    return [w / total for w in floored]


def main_opponents(
    config: LeagueConfig, exploiters: list[str], exploiter_win_rates: list[float], past_mains: list[str]
) -> dict[str, float]:
    """The main agent's opponent mixture for one round (agent spec -> weight, summing to 1)."""
    mixture: dict[str, float] = {}
    heuristic = "heuristic" if kit_of(config.env).heuristic else "random"
    mixture[heuristic] = config.heuristic_share
    for spec, weight in zip(exploiters, pfsp_weights(exploiter_win_rates, config.pfsp_power), strict=True):
        mixture[spec] = mixture.get(spec, 0.0) + config.exploiter_share * weight
    for spec in past_mains:
        mixture[spec] = mixture.get(spec, 0.0) + config.past_share / len(past_mains)
    mixture["random"] = mixture.get("random", 0.0) + max(0.0, 1.0 - sum(mixture.values()))
    return {spec: round(weight, 6) for spec, weight in mixture.items() if weight > 0}


def model_spec(path: Path) -> str:
    return f"model:{path.resolve()}"


def phase(
    config: LeagueConfig,
    run_dir: Path,
    init_model: str,
    opponents: dict[str, float],
    timesteps: int,
    seed: int,
    again: str,
    exploiter: bool = False,
) -> Path:
    """One training of the league (fine-tuned from ``init_model``, no cloning, no snapshots, no
    periodic evaluation) into ``run_dir``, or the model it already made; resumed from its
    checkpoint when one is there.  An exploiter plays every seat in turn (as ``league exploit``'s
    best response does); the main agent keeps the game's own seat weights (the Floe's kit trains
    White three episodes in four, the seat where its games are lost)."""
    model = run_dir / "model.zip"
    if model.exists():
        return model
    seats = {"learner_seat": "alternate"} if exploiter else {}
    values = load_config(
        config.env,
        {
            "opponents": opponents,
            "total_timesteps": timesteps,
            **seats,
            "snapshot_every": 0,
            "eval_every": 0,
            "bc_games": 0,
            "init_model": init_model,
            "torch_threads": config.torch_threads,
            "update_threads": config.torch_threads,
        },
    )
    resume = (run_dir / "checkpoints").is_dir() and any((run_dir / "checkpoints").iterdir())
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / "config.json", json.dumps(values, indent=2) + "\n")
    train(values, run_dir, resume=resume, seed=seed, progress_bar=False, final_eval=False, log_every=60.0, again=again)
    return model


def trained(run_dir: Path) -> dict[str, Any]:
    """A finished training's timesteps (whole updates: a budget is rounded up to one) and seconds."""
    record = read_json_file(run_dir / "training.json", "training record")
    return {"timesteps": int(record["timesteps"]), "seconds": round(float(record["seconds"]), 1)}


def win_rate(env_id: str, agent: Any, opponent: Any, games_per_seat: int, seed: int) -> dict[str, Any]:
    """``agent``'s results against ``opponent`` in both seats (games opened by the kit's random
    plies): the tallies by seat and overall."""
    by_seat, distinct = best_response_games(env_id, agent, opponent, games_per_seat, seed)
    return {"by_seat": by_seat, "overall": overall(by_seat), "distinct_games": distinct}


class League:
    """The run's record, ``league.json``: the settings, the members and each round's numbers."""

    def __init__(self, out: Path, config: LeagueConfig) -> None:
        self.path = out / "league.json"
        self.out = out
        self.config = config
        self.rounds: list[dict[str, Any]] = []
        if self.path.exists():
            saved = read_json_file(self.path, "league record")
            rounds = saved.get("rounds") if isinstance(saved, dict) else None
            numbered = isinstance(rounds, list) and all(
                isinstance(record, dict) and record.get("round") == r for r, record in enumerate(rounds, start=1)
            )
            if not (numbered and isinstance(saved.get("config"), dict)):
                raise ValueError(f"{self.path} is not a league training's record (no config and rounds): choose another --out")
            # a setting added since the league was saved had its default then
            before = {**asdict(LeagueConfig(env=config.env)), **saved["config"]}
            # more rounds continue a league, another average only remakes its result; every other setting is its own
            differing = sorted(k for k, v in asdict(config).items() if k not in ("rounds", "average_last") and before.get(k) != v)
            if differing:
                raise ValueError(
                    f"{out} holds a league trained with other settings ({', '.join(differing)}): "
                    "run the same command again (--rounds may grow), or choose another --out"
                )
            self.rounds = list(rounds or [])
            if config.rounds < len(self.rounds):
                raise ValueError(f"{out} holds {len(self.rounds)} rounds already: --rounds must be at least that")

    def save(self) -> None:
        record = {"env": self.config.env, "config": asdict(self.config), "rounds": self.rounds}
        atomic_write(self.path, json.dumps(record, indent=2) + "\n")

    def exploiters(self) -> list[Path]:
        """Every exploiter trained so far, in the order they joined."""
        return [self.out / e["model"] for record in self.rounds for e in round_exploiters(record)]


def round_exploiters(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A round's exploiters (their model, timesteps and seconds), the first one first."""
    return ([record["exploiter"]] if "exploiter" in record else []) + list(record.get("more_exploiters", []))


def exploiter_folder(r: int, i: int) -> str:
    """Round ``r``'s ``i``-th exploiter's folder (1-based; the first is ``exploiter``, as with one a round)."""
    return f"round{r}/exploiter" if i == 1 else f"round{r}/exploiter{i}"


def init_path(config: LeagueConfig) -> Path:
    return model_file(config.init, config.env)


def run_round(league: League, r: int, again: str) -> None:
    """Round ``r`` (1-based) of the league, each part recorded as it ends."""
    config, out = league.config, league.out
    env_id = config.env
    record: dict[str, Any] = league.rounds[r - 1] if len(league.rounds) >= r else {"round": r}
    if len(league.rounds) < r:
        league.rounds.append(record)
    previous = init_path(config) if r == 1 else out / f"round{r - 1}" / "main" / "model.zip"
    previous_agent = PolicyAgent(str(previous), name=f"main{r - 1}")
    started = time.perf_counter()
    for i in range(len(round_exploiters(record)) + 1, config.exploiters_per_round + 1):
        # the first exploiter's seed is the one a league of one exploiter a round gives it
        seed = 1000 * config.seed + 2 * r + 100_000 * (i - 1)
        exploiter = phase(config, out / exploiter_folder(r, i), str(previous), {model_spec(previous): 1.0},
                          config.exploiter_timesteps, seed, again, exploiter=True)  # fmt: skip
        made = {"model": str(exploiter.relative_to(out)), **trained(exploiter.parent)}
        if i == 1:
            record["exploiter"] = made
        else:
            record.setdefault("more_exploiters", []).append(made)
        league.save()
    if "measured" not in record:
        # every exploiter so far against the main agent it will train: PFSP's weights
        measured = []
        for j, path in enumerate(league.exploiters(), start=1):
            result = win_rate(env_id, PolicyAgent(str(path), name=f"exploiter{j}"), previous_agent,
                              config.measure_games, 500_000 + 1000 * r + j)  # fmt: skip
            measured.append(result["overall"]["win_rate"])
        record["measured"] = measured
        new = measured[len(measured) - len(round_exploiters(record)) :]
        record["exploitability"] = max(new)
        league.save()
        print(f"round {r}: its exploiters beat main {r - 1} " + " / ".join(f"{p:.0%}" for p in new)
              + f" of the time ({record['exploiter']['timesteps']:,} timesteps each); all {len(measured)} against it: "
              + " ".join(f"{p:.0%}" for p in measured), flush=True)  # fmt: skip
    if "main" not in record:
        past = [model_spec(init_path(config))] + [model_spec(out / f"round{j}" / "main" / "model.zip") for j in range(1, r)]
        opponents = main_opponents(config, [model_spec(p) for p in league.exploiters()], record["measured"], past)
        record["opponents"] = {spec.replace(str(out.resolve()) + "/", ""): w for spec, w in opponents.items()}
        main = phase(config, out / f"round{r}" / "main", str(previous), opponents, config.main_timesteps,
                     1000 * config.seed + 2 * r + 1, again)  # fmt: skip
        record["main"] = {"model": str(main.relative_to(out)), **trained(main.parent)}
        league.save()
    if "against_heuristic" not in record:
        main_agent = PolicyAgent(str(out / f"round{r}" / "main" / "model.zip"), name=f"main{r}")
        reference = make_agent("heuristic" if kit_of(env_id).heuristic else "random", env_id)
        result = win_rate(env_id, main_agent, reference, config.eval_games, 700_000 + r)
        record["against_heuristic"] = result["overall"]["win_rate"]
        record["against_heuristic_by_seat"] = {seat: row["win_rate"] for seat, row in result["by_seat"].items()}
        record["seconds"] = round(record.get("seconds", 0.0) + time.perf_counter() - started, 1)
        league.save()
        print(f"round {r}: main {r} beats {reference.name} {record['against_heuristic']:.0%} of the time "
              f"({config.eval_games} games per seat)", flush=True)  # fmt: skip


def progress_rows(league: League) -> list[dict[str, Any]]:
    rows = []
    for record in league.rounds:
        if "against_heuristic" not in record:
            break
        rows.append(
            {
                "round": record["round"],
                "exploiter_vs_previous_main": record["exploitability"],
                "main_vs_heuristic": record["against_heuristic"],
                "main_timesteps": sum(r["main"]["timesteps"] for r in league.rounds[: record["round"]]),
                "exploiter_timesteps": sum(e["timesteps"] for r in league.rounds[: record["round"]] for e in round_exploiters(r)),
            }
        )
    return rows


def write_progress(league: League) -> None:
    rows = progress_rows(league)
    if not rows:
        return
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(league.out / "progress.csv", text.getvalue())
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    figure, axis = plt.subplots(figsize=(6, 3.5))
    rounds = [row["round"] for row in rows]
    axis.plot(rounds, [row["exploiter_vs_previous_main"] for row in rows], "o-", label="best new exploiter vs main before it")
    axis.plot(rounds, [row["main_vs_heuristic"] for row in rows], "s-", label="main vs heuristic")
    axis.axhline(0.6, color="grey", linestyle=":", linewidth=1)
    axis.set(xlabel="round", ylabel="win rate", ylim=(0, 1.02), title=f"League training: {GAMES[league.config.env].title}")
    axis.legend(loc="lower left", fontsize=8)
    save_figure(figure, league.out / "progress.png")


def average_models(paths: list[Path], out: Path) -> None:
    """``out``: an SB3 zip whose policy weights are the mean of ``paths``' (main agents of one
    lineage, each a fine-tune of the one before: their mean is a model of its own, smoother than
    any of them; a tensor that is not floating point is the last one's) and whose other parts are
    the last one's.  The weights are read as data (:func:`~polarzoo.baselines.policies.weights.read_weights`)."""
    import numpy as np
    import torch

    states = [read_weights(path)[1] for path in paths]
    last = states[-1]
    mean = {
        k: sum(state[k] for state in states) / len(states) if np.issubdtype(last[k].dtype, np.floating) else last[k] for k in last
    }
    weights = io.BytesIO()
    torch.save({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in mean.items()}, weights)
    written = io.BytesIO()
    with zipfile.ZipFile(paths[-1]) as source, zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            target.writestr(member, weights.getvalue() if member.filename == "policy.pth" else source.read(member.filename))
    atomic_write(out, written.getvalue())


def finish(league: League) -> None:
    """The last main agent (or the mean of the last ``average_last``) as the run's model, with its
    training record."""
    config, out = league.config, league.out
    averaged = list(range(config.rounds - config.average_last + 1, config.rounds + 1))
    mains = [out / f"round{r}" / "main" / "model.zip" for r in averaged]
    if len(mains) > 1:
        average_models(mains, out / "model.zip")
    else:
        shutil.copyfile(mains[0], out / "model.zip.tmp")
        (out / "model.zip.tmp").replace(out / "model.zip")
    init_timesteps = agent_training_timesteps("pretrained" if config.init == "pretrained" else f"model:{config.init}", config.env)
    main_timesteps = sum(r["main"]["timesteps"] for r in league.rounds)
    exploiter_timesteps = sum(e["timesteps"] for r in league.rounds for e in round_exploiters(r))
    seconds = sum(r["main"]["seconds"] + sum(e["seconds"] for e in round_exploiters(r)) for r in league.rounds)
    record = {
        "timesteps": (init_timesteps or 0) + main_timesteps,
        "init_timesteps": init_timesteps,
        "main_timesteps": main_timesteps,
        "league_timesteps": (init_timesteps or 0) + main_timesteps + exploiter_timesteps,
        "seconds": round(seconds, 1),
        "wall_seconds": round(sum(r.get("seconds", 0.0) for r in league.rounds), 1),
        "averaged_rounds": averaged,
    }
    # weights only, with the game and the main agent's own timesteps in its settings
    save_policy(load_policy(out / "model.zip"), out / "model.safetensors", env_id=config.env, num_timesteps=record["timesteps"])
    atomic_write(out / "training.json", json.dumps(record, indent=2) + "\n")


def _parser() -> argparse.ArgumentParser:
    defaults = LeagueConfig(env="")
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.training.league_training"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--env", choices=list(GAMES), required=True, help="the game")
    for option in fields(LeagueConfig)[1:]:  # every setting but the game, with its default and help
        kind = seed_type if option.name == "seed" else type(getattr(defaults, option.name))
        parser.add_argument(f"--{option.name.replace('_', '-')}", type=kind, default=getattr(defaults, option.name),
                            help=option.metadata["help"])  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: runs/league-training-ENV-seedS)")
    return parser


def _main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    config = LeagueConfig(**{option.name: getattr(args, option.name) for option in fields(LeagueConfig)})
    try:
        config.check()
    except ValueError as error:
        parser.error(str(error))
    if config.init != "pretrained":
        if not Path(config.init).is_file():
            parser.error(f"--init {config.init}: no such model file")
        config = LeagueConfig(**{**asdict(config), "init": str(Path(config.init).resolve())})
    try:  # the first main agent is also the first exploiter's opponent: it must play this game
        PolicyAgent(str(init_path(config)), name="main0").check_fits(config.env)
    except (ValueError, OSError) as error:
        parser.error(f"--init {config.init}: {error}")
    out = args.out or Path("runs") / f"league-training-{config.env}-seed{config.seed}"
    writable_folder_or_exit(parser, "--out", out)
    try:
        league = League(out, config)
    except ValueError as error:
        parser.error(str(error))
    league.save()
    print(f"league training folder: {out}", flush=True)
    again = " ".join([prog_name("polarzoo.baselines.training.league_training"), *(sys.argv[1:] if argv is None else argv)])
    for r in range(1, config.rounds + 1):
        try:
            run_round(league, r, again)
        except InitModelError as error:  # a model file of another game or network: before any training
            parser.error(f"--init {config.init}: {error}")
        write_progress(league)
    finish(league)
    rows = progress_rows(league)
    print("\n| round | best new exploiter vs main before it | main vs heuristic |\n|---:|---:|---:|")
    for row in rows:
        print(f"| {row['round']} | {row['exploiter_vs_previous_main']:.0%} | {row['main_vs_heuristic']:.0%} |")
    print(f"\nwritten: {out / 'model.zip'}, {out / 'model.safetensors'}, {out / 'training.json'}, {out / 'progress.csv'}")


main = writes_fail_in_one_line(
    ctrl_c_is_one_line(_main, "every finished phase and the running training's checkpoint are kept: run the same command again"),
    "every finished phase is kept whole: make room and run the same command again",
)


if __name__ == "__main__":
    main()
