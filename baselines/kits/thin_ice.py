"""Thin Ice's kit (:class:`polarzoo.baselines.kits.Kit`): the heuristic (``heuristic:K`` tries K
placements), the look-aheads ``search:K`` / ``vsearch:K``, the pile network, the shipped model and
the physics-bound training."""

from __future__ import annotations

from polarzoo.baselines.kits import Kit

KIT = Kit(
    heuristic="polarzoo.baselines.agents.thin_ice:ThinIceHeuristic",
    searches={
        "search": "polarzoo.baselines.agents.thin_ice:build_search",
        "vsearch": "polarzoo.baselines.agents.thin_ice:build_search",
    },
    network="thin_ice",
    pretrained="thin_ice_v0.safetensors",
    pretrained_timesteps=141_312,  # three rounds of PPO from 0.3's 2-player policy (its model card)
    # One random ply: the first call (which sizes every player adds; no piece moves).  A random
    # placement would knock piles over, so no more; without it two greedy policies replayed the
    # same choices in most games (6-57 distinct games of 100, the tremor notwithstanding).
    opening_plies=1,
    exploit_timesteps=30_000,
    hyperparams={
        # The pile policy (baselines/policies/networks.py ThinIceNet) on the default 2-player game;
        # the physics is the bottleneck (milliseconds a placement), so the envs run in subprocesses
        # (every core) and the learner's update is small beside a rollout; README "Thin Ice".
        # rollouts: async (training/rollouts.py) steps each env as soon as it is back, with lock
        # step's random numbers and the callbacks at lock step's steps, in passes of lock step's
        # shape: the same weights as SB3's lock step to the bit (tested; also at 30,720 timesteps of
        # this config), without a core waiting for the slowest env; update_threads: 2 puts the
        # update on both cores (float rounding only).  Results page, "Thin Ice physics".  Eight envs
        # x 128 steps learned less in 3 seeds (42.5% against the heuristic vs 60.0%; within the seed
        # spread).
        "rollouts": "async",
        "update_threads": 2,
        "policy": "board",
        "learning_rate": 0.001,  # the default 3e-4 moved the policy by a KL of 1e-4 an update here
        "board_policy": {"dim": 32, "blocks": 2, "symmetrize": "canonical"},
        "total_timesteps": 120_000,
        "vec_env": "subproc",
        "n_envs": 4,
        "n_steps": 256,  # 1,024 transitions per update
        "batch_size": 256,
        "n_epochs": 4,
        "torch_threads": 1,
        "opponents": {"random": 0.6, "heuristic": 0.15, "self": 0.25},
        "snapshot_every": 15_000,
        "checkpoint_every": 5_000,
        "eval_every": 20_000,
        "eval_games": 10,
        "final_eval_games": 30,
        "env_kwargs": {},
    },
)
