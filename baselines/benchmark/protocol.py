"""The benchmark protocol: games, algorithms, training budgets, seeds and the evaluation of a run.

Written once here; ``docs/benchmark.md`` explains it and the runner (:mod:`.runner`) follows it.
A result is comparable with ours when it uses the same budget, at least 5 seeds, this
evaluation, and the aggregate of :mod:`.aggregate` (IQM with stratified bootstrap intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from polarzoo.baselines.kits import kit_of
from polarzoo.baselines.training import ppo
from polarzoo.envs import GAMES as ENV_GAMES

DEFAULT_SEEDS = (0, 1, 2, 3, 4)


@dataclass(frozen=True)
class Algorithm:
    name: str
    trainer: str  # "ppo" (training/ppo.py) or "alphazero_jax" (training/alphazero_jax.py)
    overrides: dict[str, Any] = field(default_factory=dict)  # on top of the game kit's hyperparams
    description: str = ""


ALGORITHMS: dict[str, Algorithm] = {
    "ppo-mlp": Algorithm("ppo-mlp", "ppo", {"policy": "mlp"}, "MaskablePPO, SB3's MLP on the flat observation"),
    "ppo-board": Algorithm(
        "ppo-board", "ppo", {"policy": "board"}, "MaskablePPO, the board / pile policy (baselines/policies/networks.py)"
    ),
    "az-jax": Algorithm("az-jax", "alphazero_jax", {}, "AlphaZero (Gumbel MuZero, mctx) on the JAX twin"),
}

#: the test suite's PPO: two envs, one small update a rollout, one game an evaluation
_TINY_PPO: dict[str, Any] = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "eval_games": 1}

#: budget -> game -> trainer -> settings.  "short" is sized for the 2-core machine (about 6 hours
#: for all of it, two runs at a time, by the training speeds of docs/results.md; not yet measured
#: whole); "long" is for a GPU or a cluster; "tiny" is the test suite's.
BUDGETS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "short": {
        "fire_and_ice_v0": {"ppo": {"total_timesteps": 150_000}, "alphazero_jax": {"iterations": 8}},
        "go_with_the_floe_v0": {"ppo": {"total_timesteps": 200_000}, "alphazero_jax": {"iterations": 6}},
        "thin_ice_v0": {"ppo": {"total_timesteps": 24_000}},
    },
    "long": {
        "fire_and_ice_v0": {"ppo": {"total_timesteps": 2_000_000}, "alphazero_jax": {"iterations": 100}},
        "go_with_the_floe_v0": {"ppo": {"total_timesteps": 4_000_000}, "alphazero_jax": {"iterations": 100}},
        "thin_ice_v0": {"ppo": {"total_timesteps": 1_000_000}},
    },
    "tiny": {
        "fire_and_ice_v0": {
            "ppo": {**_TINY_PPO, "total_timesteps": 512, "eval_every": 256, "snapshot_every": 256, "checkpoint_every": 256},
            "alphazero_jax": {
                "iterations": 1,
                "games": 8,
                "plies": 48,
                "simulations": 2,
                "minibatch": 64,
                "epochs": 1,
                "dim": 8,
                "blocks": 1,
                "eval_every": 1,
                "eval_games": 4,
            },
        },
        "go_with_the_floe_v0": {"ppo": {**_TINY_PPO, "total_timesteps": 512, "eval_every": 256}},
        "thin_ice_v0": {"ppo": {**_TINY_PPO, "total_timesteps": 256, "eval_every": 128}},
    },
}


@dataclass(frozen=True)
class Track:
    """A benchmark game that is not an env's default table: the env, the player counts its runs
    train on (one drawn per episode, observations padded to the largest) and the counts they are
    scored at besides the env's default (2 players)."""

    env: str
    train_players: tuple[int, ...]
    eval_players: tuple[int, ...]


#: The multi-player track: Thin Ice trained on tables of 2 to 6 players and scored at each (first
#: place and mean points against N-1 heuristics, the league rating at N players), besides the
#: 2-player scores every run has.  Its budgets are Thin Ice's.
TRACKS: dict[str, Track] = {
    "thin_ice_v0-multiplayer": Track("thin_ice_v0", (2, 3, 4, 5, 6), (3, 4, 5, 6)),
}
for _budget in BUDGETS.values():
    for _name, _track in TRACKS.items():
        _budget[_name] = _budget[_track.env]


def env_of(game: str) -> str:
    """The env id a benchmark game plays (a track's env, else the game itself)."""
    return TRACKS[game].env if game in TRACKS else game


#: The benchmark's games: those its budgets name (the envs' default tables, then the tracks).
GAMES = tuple(BUDGETS["short"])
#: The games with a JAX twin (AlphaZero runs on them only): game -> the twin's name.
TWIN_GAMES = {game: ENV_GAMES[env_of(game)].jax_twin for game in GAMES if ENV_GAMES[env_of(game)].jax_twin}

#: Every run's trainer settings that keep runs comparable and two of them side by side on two
#: cores: one torch thread, the envs in the learner's process.
PPO_FIXED: dict[str, Any] = {"torch_threads": 1, "update_threads": 0, "vec_env": "dummy", "rollouts": "lockstep"}
#: What the protocol's PPO algorithms keep whatever the main job's defaults become: they learn
#: from scratch (no behaviour cloning), Fire & Ice against the opponent mixture its published
#: runs used (the main job's default moved to behaviour cloning of the heuristic afterwards).
PPO_PINNED: dict[str, dict[str, Any]] = {
    "fire_and_ice_v0": {"bc_games": 0, "bc_epochs": 20, "opponents": {"random": 0.4, "heuristic": 0.2, "self": 0.4}},
    "go_with_the_floe_v0": {"bc_games": 0},
    "thin_ice_v0": {"bc_games": 0},
    **{game: {"bc_games": 0, "env_kwargs": {"num_players": list(track.train_players)}} for game, track in TRACKS.items()},
}


def budget_settings(budget: str, game: str, trainer: str) -> dict[str, Any]:
    """A run's training budget: the published protocol's for its games, a game kit's own
    (``Kit.benchmark``: budget -> trainer -> settings) for a game the protocol does not name;
    ``ValueError`` naming what is missing otherwise."""
    if game in BUDGETS.get(budget, {}):
        settings = BUDGETS[budget][game].get(trainer)
    else:
        own = dict(kit_of(game).benchmark) if game in ENV_GAMES else {}
        settings = (own.get(budget) or {}).get(trainer)
    if settings is None:
        raise ValueError(f"no {budget!r} budget for {game} with the {trainer} trainer (the protocol's games: {', '.join(GAMES)})")
    return dict(settings)


def benchmark_games() -> tuple[str, ...]:
    """The games a benchmark run may name: the protocol's, then those whose kit declares budgets
    of its own (a user's registered game)."""
    return GAMES + tuple(env_id for env_id in ENV_GAMES if env_id not in GAMES and kit_of(env_id).benchmark)


def ppo_config(game: str, algorithm: str, budget: str) -> dict[str, Any]:
    """The resolved MaskablePPO config of a protocol run (the game kit's hyperparams,
    then the algorithm's, the budget's, the fixed and the pinned settings)."""
    settings = budget_settings(budget, game, "ppo")
    return ppo.load_config(env_of(game), {**ALGORITHMS[algorithm].overrides, **settings, **PPO_FIXED, **PPO_PINNED.get(game, {})})


@dataclass(frozen=True)
class Evaluation:
    """How a finished run is scored."""

    opponents: tuple[str, ...] = ("random", "heuristic")
    games_per_seat: int = 50  # against each named opponent
    league_width: float = 120.0  # rate until the 95% interval is at most this wide...
    league_max_games: int = 600  # ...or this many games are played
    seed: int = 20_000  # the evaluation's first seed (the run's seed is added)
    #: a track's tables of N players: games per rotation of the lineup (the run's agent and N-1
    #: of ``table_opponent``: N x this many games), and the league rating's budget at N players
    table_games: int = 10
    table_opponent: str = "heuristic"
    table_league_max_games: int = 200
    #: exploitability: a best response fine-tuned from a PPO run's model with this share of the
    #: run's own training timesteps (``league exploit``'s), then ``exploit_games`` games a seat
    #: against it; 0: not measured
    exploit_fraction: float = 0.15
    exploit_games: int = 50


EVALUATIONS = {
    "short": Evaluation(),
    "long": Evaluation(games_per_seat=100, league_width=80.0, league_max_games=1500, table_games=40, table_league_max_games=800),
    "tiny": Evaluation(
        games_per_seat=1, league_width=10_000.0, league_max_games=12, table_games=1, table_league_max_games=12, exploit_games=1
    ),
}


def applicable(algorithm: str, game: str) -> bool:
    """Whether the protocol runs ``algorithm`` on ``game`` (AlphaZero needs a JAX twin)."""
    return ALGORITHMS[algorithm].trainer != "alphazero_jax" or (game in TWIN_GAMES and game not in TRACKS)
