"""The Fire & Ice heuristic (``heuristic`` for ``fire_and_ice_v0``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.fire_and_ice import rules


class FireAndIceHeuristic:
    """Win now; avoid moves after which the opponent wins (itself, or by its best reply);
    otherwise maximise control: 10 x (islands held - opponent's) + open lines of two.
    Every candidate move is scored at once on a stack of boards (numpy)."""

    name = "heuristic"
    #: Only the best few moves by static score get the check of the opponent's replies.
    reply_checks = 6

    @staticmethod
    def _boards_after(board: np.ndarray, actions: np.ndarray, mover: int, place_opponent: bool) -> np.ndarray:
        boards = np.repeat(board[None, :], len(actions), axis=0)
        rows = np.arange(len(actions))
        source, destination = np.divmod(actions, rules.NUM_HOLES)
        boards[rows, destination] = mover + 1
        boards[rows, source] = (2 - mover) if place_opponent else rules.EMPTY
        return boards

    @staticmethod
    def _control(boards: np.ndarray) -> np.ndarray:
        return rules.island_control(boards)

    def _opponent_can_win(self, board: np.ndarray, opponent: int, supply_left: bool) -> bool:
        own = board == opponent + 1
        legal = own[:, None] & (board == rules.EMPTY)[rules.MOVE_DESTINATIONS]
        replies = rules.MOVE_ACTIONS[legal]
        if replies.size == 0:
            return False
        control = self._control(self._boards_after(board, replies, opponent, supply_left))
        return bool((rules.winners_from_control(control) == opponent).any())

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        state, me = env.state, env.colour_of(agent)
        actions = legal_actions(env, agent)
        if len(actions) == 1:
            return int(actions[0])
        boards = self._boards_after(state.board, actions, me, state.supply[1 - me] > 0)
        control = self._control(boards)  # (n, 7)
        winners = rules.winners_from_control(control)
        if (winners == me).any():
            return int(actions[np.flatnonzero(winners == me)[0]])
        line_values = boards[:, rules.HOLE_LINES]  # (n, 7 islands, 7 lines, 3)
        open_twos = ((line_values == me + 1).sum(axis=3) == 2) & ((line_values == rules.EMPTY).sum(axis=3) == 1)
        open_twos = (open_twos.any(axis=2) & (control < 0)).sum(axis=1)
        held = (control == me).sum(axis=1) - (control == 1 - me).sum(axis=1)
        score = 10.0 * held + open_twos + 0.1 * rng.random(len(actions))
        score[winners == 1 - me] = -np.inf  # never hand the opponent the game
        order = np.argsort(-score)
        supply_left = state.supply[me] > 0  # the opponent's replies place our pegs
        for index in order[: self.reply_checks]:
            if np.isfinite(score[index]) and not self._opponent_can_win(boards[index], 1 - me, supply_left):
                return int(actions[index])
        return int(actions[order[0]])
