"""The Fire & Ice heuristic (``heuristic`` for ``fire_and_ice_v0``), its scoring compiled (numba)
on the batch core's move (:func:`polarzoo.envs.fire_and_ice.kernels.play`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.fire_and_ice import kernels, rules

_N = rules.NUM_POSITIONS
_HOLES = rules.NUM_HOLES
_LINES = rules.LINES.astype(np.int64)
_DESTINATIONS = rules.MOVE_DESTINATIONS.astype(np.int64)
_EMPTY = rules.EMPTY


@njit(cache=True, nogil=True)
def _after(board, supply, control, mover, action, out_board, out_supply, out_control):
    """The position after ``mover`` plays ``action`` into the ``out_`` arrays; its winner or -1."""
    out_board[:] = board
    out_supply[:] = supply
    out_control[:] = control
    return kernels.play(out_board, out_supply, out_control, mover, action)


@njit(cache=True, nogil=True)
def score_moves(board, supply, control, actions, me, score, loses):
    """Each move's static score into ``score``: 10 x (islands held - the opponent's) +
    uncontrolled islands with an open line of two; ``loses``: the move hands the opponent an
    island line.  ``control``: the islands' owners on ``board``.  Returns the index of the first
    move that wins at once (the rest then unscored), or -1."""
    after, after_supply, after_control = np.empty_like(board), np.empty_like(supply), np.empty_like(control)
    for i in range(actions.shape[0]):
        winner = _after(board, supply, control, me, actions[i], after, after_supply, after_control)
        if winner == me:
            return i
        held = 0
        open_twos = 0
        for island in range(_N):
            if after_control[island] == me:
                held += 1
            elif after_control[island] == 1 - me:
                held -= 1
            else:
                for line in range(_N):
                    mine, empty = 0, 0
                    for k in range(3):
                        value = after[island * _N + _LINES[line, k]]
                        mine += value == me + 1
                        empty += value == _EMPTY
                    if mine == 2 and empty == 1:
                        open_twos += 1
                        break
        score[i] = 10.0 * held + open_twos
        loses[i] = winner == 1 - me
    return -1


@njit(cache=True, nogil=True)
def opponent_can_win(board, supply, control, action, me):
    """Whether, after ``me`` plays ``action``, some reply of the opponent wins at once."""
    after, after_supply, after_control = np.empty_like(board), np.empty_like(supply), np.empty_like(control)
    reply, reply_supply, reply_control = np.empty_like(board), np.empty_like(supply), np.empty_like(control)
    _after(board, supply, control, me, action, after, after_supply, after_control)
    opponent = 1 - me
    for source in range(_HOLES):
        if after[source] != opponent + 1:
            continue
        for k in range(_DESTINATIONS.shape[1]):
            destination = _DESTINATIONS[source, k]
            if after[destination] != _EMPTY:
                continue
            move = source * _HOLES + destination
            if _after(after, after_supply, after_control, opponent, move, reply, reply_supply, reply_control) == opponent:
                return True
    return False


class FireAndIceHeuristic:
    """Win now; avoid moves after which the opponent wins (itself, or by its best reply);
    otherwise maximise control: 10 x (islands held - opponent's) + open lines of two.  The
    candidate moves are scored by a compiled loop (:func:`score_moves`)."""

    name = "heuristic"
    #: Only the best few moves by static score get the check of the opponent's replies.
    reply_checks = 6

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        state, me = env.state, env.colour_of(agent)
        actions = legal_actions(env, agent)
        if len(actions) == 1:
            return int(actions[0])
        control = rules.island_control(state.board)
        score, loses = np.empty(len(actions)), np.empty(len(actions), dtype=np.bool_)
        winning = score_moves(state.board, state.supply, control, actions, me, score, loses)
        if winning >= 0:
            return int(actions[winning])
        score += 0.1 * rng.random(len(actions))  # ties broken at random (no draw when a move wins)
        score[loses] = -np.inf  # never hand the opponent the game
        # numpy's argsort, as the order of equal scores (-inf) decides the last resort below
        order = np.argsort(-score)
        for index in order[: self.reply_checks]:
            if np.isfinite(score[index]) and not opponent_can_win(state.board, state.supply, control, actions[index], me):
                return int(actions[index])
        return int(actions[order[0]])
