"""Go with the Floe's kit (:class:`polarzoo.baselines.kits.Kit`): the heuristic, the endgame
search ``search:D``, the board network, the shipped model, the solver behind ``oracle`` and the
shaped White-heavy training."""

from __future__ import annotations

from polarzoo.baselines.kits import Kit

KIT = Kit(
    heuristic="polarzoo.baselines.agents.go_with_the_floe:FloeHeuristic",
    searches={"search": "polarzoo.baselines.agents.floe_search:build_search"},
    network="go_with_the_floe",
    pretrained="go_with_the_floe_v0.safetensors",
    pretrained_timesteps=350_000,  # 250,000 timesteps, then a 100,000-timestep fine-tune (its model card)
    az_jax={"scale": [1.0] * 9 + [104.0, 104.0], "head": "per_square"},
    encoder="polarzoo.envs.go_with_the_floe.encoding:observation_tensor",
    solver="polarzoo.envs.go_with_the_floe.solver:FloeSolver",
    score_search="polarzoo.envs.go_with_the_floe.solver:match_value",
    oracle_fallback="az:100",  # the top of the league
    opening_plies=2,
    exploit_timesteps=200_000,
    # two games, sides swapped, the winner of each scoring the empty squares left
    match_env_kwargs={"match": True},
    # search:D looks D White moves deep (exponential): a page grants at most 5
    budget_caps={"search": 5},
    hyperparams={
        # From scratch (no behaviour cloning).  The bears' reward is rare (random White beats random
        # Black 5% of the time) and any competent Black beats White, so the learner plays White 3
        # episodes in 4, mostly against random seals, with potential-based shaping (captures, the
        # bear-seal distance); README, "Agents that learn the games".
        "total_timesteps": 800_000,
        "n_envs": 16,
        "n_steps": 128,
        "batch_size": 256,
        "n_epochs": 4,
        "learner_seat": {"white": 3, "black": 1},
        "shaping": 1.0,
        "opponents": {"random": 0.7, "heuristic": 0.15, "self": 0.15},
        "eval_every": 100_000,
        # one pass on a canonical orientation (README)
        "board_policy": {"dim": 32, "blocks": 2, "symmetrize": "canonical"},
    },
)
