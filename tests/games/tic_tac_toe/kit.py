"""Tic-tac-toe's kit (``polarzoo.baselines.kits.Kit``): a heuristic and tiny training settings, so
``train``, ``league exploit`` and the tools that ask a game's kit take it like the shipped games."""

from __future__ import annotations

from typing import Any

import numpy as np

from polarzoo.baselines.kits import Kit
from tests.games.tic_tac_toe import rules

EMPTY = -1  # an empty cell (rules.State.board)


class Heuristic:
    """Wins at once if it can, else blocks the other's line, else the centre, else a random cell."""

    name = "heuristic"

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        state = env.state
        legal = np.flatnonzero(rules.legal_action_mask(state))
        for colour in (state.to_move, 1 - state.to_move):  # my win first, then the other's
            for line in rules.LINES:
                cells = state.board[line]
                if (cells == colour).sum() == 2 and (cells == EMPTY).sum() == 1:
                    return int(line[cells == EMPTY][0])
        return 4 if 4 in legal else int(rng.choice(legal))


KIT = Kit(
    heuristic="tests.games.tic_tac_toe.kit:Heuristic",
    opening_plies=1,
    exploit_timesteps=2_048,
    hyperparams={"policy": "mlp", "net_arch": [32], "total_timesteps": 4_096, "n_envs": 4, "n_steps": 64, "batch_size": 64},
    # the benchmark's tiny budget for a game the published protocol does not name
    benchmark={
        "tiny": {"ppo": {"total_timesteps": 512, "n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "eval_every": 0}}
    },
)
