"""The Fire & Ice heuristic (``heuristic`` for ``fire_and_ice_v0``), its scoring compiled (numba)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.fire_and_ice import rules

_N = rules.NUM_POSITIONS
_HOLES = rules.NUM_HOLES
_LINE_OWNER = rules.LINE_OWNER
_POWERS = rules.POWERS_OF_THREE
_LINES = rules.LINES.astype(np.int64)
_DESTINATIONS = rules.MOVE_DESTINATIONS.astype(np.int64)
_EMPTY = rules.EMPTY


@njit(cache=True, nogil=True)
def _island_control(board, control):
    """``rules.island_control`` of one board into ``control`` (7,)."""
    for island in range(_N):
        code = 0
        for position in range(_N):
            code += board[island * _N + position] * _POWERS[position]
        control[island] = _LINE_OWNER[code]


@njit(cache=True, nogil=True)
def _winner(control):
    """``rules.winners_from_control`` of one board's control."""
    code = 0
    for island in range(_N):
        code += (control[island] + 1) * _POWERS[island]
    return _LINE_OWNER[code]


@njit(cache=True, nogil=True)
def _play(board, action, mover, place_opponent, out):
    """``out``: ``board`` after ``mover`` moves a peg by ``action`` (the vacated hole takes the
    other colour's peg while ``place_opponent``)."""
    out[:] = board
    source, destination = action // _HOLES, action % _HOLES
    out[destination] = mover + 1
    out[source] = (2 - mover) if place_opponent else _EMPTY


@njit(cache=True, nogil=True)
def score_moves(board, actions, me, place_opponent, score, loses):
    """Each move's static score into ``score``: 10 x (islands held - the opponent's) +
    uncontrolled islands with an open line of two; ``loses``: the move hands the opponent an
    island line.  Returns the index of the first move that wins at once (the rest then unscored),
    or -1."""
    after = np.empty(_HOLES, dtype=board.dtype)
    control = np.empty(_N, dtype=np.int8)
    for i in range(actions.shape[0]):
        _play(board, actions[i], me, place_opponent, after)
        _island_control(after, control)
        winner = _winner(control)
        if winner == me:
            return i
        held = 0
        open_twos = 0
        for island in range(_N):
            if control[island] == me:
                held += 1
            elif control[island] == 1 - me:
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
def opponent_can_win(board, action, me, place_opponent, supply_left):
    """Whether, after ``me`` plays ``action``, some reply of the opponent (its pegs placing ours
    in the holes they leave while ``supply_left``) wins at once."""
    after = np.empty(_HOLES, dtype=board.dtype)
    reply = np.empty(_HOLES, dtype=board.dtype)
    control = np.empty(_N, dtype=np.int8)
    _play(board, action, me, place_opponent, after)
    opponent = 1 - me
    for source in range(_HOLES):
        if after[source] != opponent + 1:
            continue
        for k in range(_DESTINATIONS.shape[1]):
            destination = _DESTINATIONS[source, k]
            if after[destination] != _EMPTY:
                continue
            _play(after, source * _HOLES + destination, opponent, supply_left, reply)
            _island_control(reply, control)
            if _winner(control) == opponent:
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
        place_opponent = bool(state.supply[1 - me] > 0)
        score, loses = np.empty(len(actions)), np.empty(len(actions), dtype=np.bool_)
        winning = score_moves(state.board, actions, me, place_opponent, score, loses)
        if winning >= 0:
            return int(actions[winning])
        score += 0.1 * rng.random(len(actions))  # ties broken at random (no draw when a move wins)
        score[loses] = -np.inf  # never hand the opponent the game
        # numpy's argsort, as the order of equal scores (-inf) decides the last resort below
        order = np.argsort(-score)
        supply_left = bool(state.supply[me] > 0)  # the opponent's replies place our pegs
        for index in order[: self.reply_checks]:
            if np.isfinite(score[index]) and not opponent_can_win(state.board, actions[index], me, place_opponent, supply_left):
                return int(actions[index])
        return int(actions[order[0]])
