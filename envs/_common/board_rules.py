"""What the two-player board games' rules cores share: the state's equality and end test, the
returns, the legal-move mask, the winners after a node's moves and move text (pure numpy)."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.outcome import zero_sum_returns


class BoardState:
    """What the two-player rules states share (dataclasses declared with ``eq=False``): the end
    test and equality field by field, arrays by value."""

    winner: int

    @property
    def is_terminal(self) -> bool:
        return self.winner >= 0

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for item in fields(self):  # type: ignore[arg-type]
            mine, theirs = getattr(self, item.name), getattr(other, item.name)
            if not (np.array_equal(mine, theirs) if isinstance(mine, np.ndarray) else mine == theirs):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable


def winner_returns(state: Any) -> NDArray[np.float32]:
    """Per-colour returns of a two-player state with a ``winner`` (-1 while the game goes on): +1
    winner, -1 loser, zeros while the game goes on (a rules module's ``returns``)."""
    return zero_sum_returns(state.winner)


def winners_after(rules: Any, state: Any, actions: Any) -> NDArray[np.int8]:
    """The winner (or -1) after each of ``actions`` (legal in ``state``): a search's look at all
    of a node's children.  The rules module's own ``winners_after(state, actions)`` where it has
    one (Fire & Ice: one stack of boards), else each action played on a copy of ``state`` with
    its ``apply_inplace``."""
    own = getattr(rules, "winners_after", None)
    if own is not None:
        return np.asarray(own(state, actions), dtype=np.int8)
    return np.array([rules.apply_inplace(state.copy(), int(action)).winner for action in actions], dtype=np.int8)


def move_mask(state: Any, moves: Any, num_actions: int, pass_action: int) -> NDArray[np.int8]:
    """int8 mask of the legal actions given the moves of the side to move: those, or the pass
    when there is none; nothing once the game is over."""
    mask = np.zeros(num_actions, dtype=np.int8)
    if state.winner >= 0:
        return mask
    if len(moves):
        mask[moves] = 1
    else:
        mask[pass_action] = 1
    return mask


def split_move(text: str, examples: str) -> tuple[str, str] | None:
    """A move's two square names (``"D4-A4"`` / ``"G2xF3"``: ``-`` or ``x`` between them, any
    case), or ``None`` for ``"pass"``; ``ValueError`` naming ``examples`` for anything else."""
    cleaned = text.strip()
    if cleaned.lower() == "pass":
        return None
    parts = re.split(r"[-xX]", cleaned)
    if len(parts) != 2:
        raise ValueError(f"{text!r} is not a move: expected e.g. {examples} or 'pass'")
    return parts[0], parts[1]
