"""Thin Ice game layer: calls, supply, add-turn order, pending and in-hand pieces,
reorganising, eliminations, points and the end of the game.

It decides nothing physical: placing and picking up go through a physics backend (one
:class:`~polarzoo.envs.thin_ice.physics.PilePhysics` per player, or a stub in tests) that reports which
elimination rule (T, A, N), if any, fired while the pile moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

#: Piece sizes, index 0 S, 1 M, 2 L (one letter each: ``SIZE_LETTERS[size]``).
SIZE_LETTERS = "SML"
SIZE_NAMES = tuple(SIZE_LETTERS)
CALLS = ("S", "M", "L", "SS", "MM", "LL", "SM", "SL", "ML")
CALL_SIZES: tuple[tuple[int, ...], ...] = ((0,), (1,), (2,), (0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
NUM_CALLS = len(CALLS)
PIECES_PER_SIZE = 5
MAX_SLOTS = 3 * PIECES_PER_SIZE
CALL, ADD, OVER = 0, 1, 2
PHASE_NAMES = ("call", "add", "over")


class PhysicsBackend(Protocol):
    def place(self, player: int, size: int, target: int, piece_slot: int | None, rng: np.random.Generator | None) -> str | None:
        """Place a piece (a new one of ``size``, or the one in ``piece_slot``); the rule that fired, if any."""

    def pick_up(self, player: int, piece_slot: int) -> str | None:
        """Take the piece in ``piece_slot`` out of the pile; the rule that fired, if any."""


@dataclass
class ThinIceState:
    num_players: int
    max_rearrangements: int = 2
    supply: NDArray[np.int64] = field(default_factory=lambda: np.full(3, PIECES_PER_SIZE))
    phase: int = CALL
    caller: int = 0
    adder: int = -1
    current_call: int = -1
    pending: list[int] = field(default_factory=list)  # sizes the adder still has to place
    in_hand: int = -1  # slot of the piece the adder holds
    rearrangements: int = 0
    round_order: list[int] = field(default_factory=list)  # adders of this round, caller first
    calls_made: int = 0
    slot_sizes: list[list[int]] = field(default_factory=list)  # per player: size of each slot
    slot_in_pile: list[list[bool]] = field(default_factory=list)
    out_round: list[int] = field(default_factory=list)  # call index of the round they went out, -1 if in
    out_rule: list[str] = field(default_factory=list)
    last_call: list[int] = field(default_factory=list)  # call index of each player's latest call, -1 never
    points: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.num_players
        if not self.slot_sizes:
            self.slot_sizes = [[] for _ in range(n)]
            self.slot_in_pile = [[] for _ in range(n)]
            self.out_round = [-1] * n
            self.out_rule = [""] * n
            self.last_call = [-1] * n

    @property
    def current_player(self) -> int:
        return self.caller if self.phase == CALL else self.adder

    def still_in(self) -> list[int]:
        return [p for p in range(self.num_players) if self.out_round[p] < 0]

    def legal_calls(self) -> list[int]:
        return [c for c, sizes in enumerate(CALL_SIZES) if all((np.array(sizes) == s).sum() <= self.supply[s] for s in range(3))]


class ThinIceGame:
    """The game layer over a physics backend.  Action indices follow the public encoding."""

    def __init__(self, num_players: int, physics: PhysicsBackend, num_targets: int, max_rearrangements: int = 2) -> None:
        self.state = ThinIceState(num_players, max_rearrangements)
        self.physics = physics
        self.num_targets = num_targets
        self.place_base = NUM_CALLS
        self.pick_base = NUM_CALLS + 3 * num_targets
        self.done_action = self.pick_base + MAX_SLOTS
        self.num_actions = self.done_action + 1

    # ---- encoding ---------------------------------------------------------------------------
    def describe(self, action: int) -> str:
        if action < NUM_CALLS:
            return f"call {CALLS[action]}"
        if action < self.pick_base:
            size, target = divmod(action - self.place_base, self.num_targets)
            return f"place {SIZE_LETTERS[size]} at target {target}"
        if action < self.done_action:
            return f"pick up slot {action - self.pick_base}"
        return "done"

    def legal_action_mask(self) -> NDArray[np.int8]:
        s = self.state
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if s.phase == CALL:
            mask[s.legal_calls()] = 1
        elif s.phase == ADD:
            player = s.adder
            if s.in_hand >= 0:
                size = s.slot_sizes[player][s.in_hand]
                mask[self.place_base + size * self.num_targets : self.place_base + (size + 1) * self.num_targets] = 1
            else:
                for size in set(s.pending):
                    mask[self.place_base + size * self.num_targets : self.place_base + (size + 1) * self.num_targets] = 1
                if s.rearrangements < s.max_rearrangements:
                    for slot, in_pile in enumerate(s.slot_in_pile[player]):
                        if in_pile:
                            mask[self.pick_base + slot] = 1
                if not s.pending:
                    mask[self.done_action] = 1
        return mask

    def explain_illegal(self, action: int) -> str:
        s = self.state
        who = f"player_{s.current_player}"
        if s.phase == OVER:
            return "the game is over"
        if not 0 <= action < self.num_actions:
            return f"action {action} is out of range 0..{self.num_actions - 1}"
        what = self.describe(action)
        if s.phase == CALL:
            if action >= NUM_CALLS:
                why = "it is the calling phase: only calls 0..8 are legal"
            else:
                why = f"not enough pieces left for {CALLS[action]} (supply S/M/L = {s.supply.tolist()})"
        elif action < NUM_CALLS:
            why = "it is the adding phase: calls are not legal now"
        elif s.in_hand >= 0:
            why = f"the piece in hand (slot {s.in_hand}, size {SIZE_LETTERS[s.slot_sizes[s.adder][s.in_hand]]}) must be placed first"
        elif action < self.pick_base:
            why = f"no pending piece of that size (pending: {''.join(SIZE_LETTERS[x] for x in s.pending) or 'none'})"
        elif action < self.done_action:
            slot = action - self.pick_base
            if s.rearrangements >= s.max_rearrangements:
                why = f"no rearrangements left this add-turn (max_rearrangements={s.max_rearrangements})"
            else:
                why = f"slot {slot} holds no piece in the pile"
        else:
            why = f"pieces are still pending ({''.join(SIZE_LETTERS[x] for x in s.pending)})"
        return f"illegal action {action} ({what}) for {who}: {why}"

    # ---- transitions ------------------------------------------------------------------------
    def apply(self, action: int, rng: np.random.Generator | None) -> None:
        """Play a legal action (the caller checks legality with the mask)."""
        s = self.state
        if s.phase == CALL:
            for size in CALL_SIZES[action]:
                s.supply[size] -= 1
            s.current_call = action
            s.last_call[s.caller] = s.calls_made
            s.calls_made += 1
            n = s.num_players
            s.round_order = [p for p in ((s.caller + k) % n for k in range(n)) if s.out_round[p] < 0]
            self._start_add(s.round_order[0])
            return
        player = s.adder
        if action < self.pick_base:
            size, target = divmod(action - self.place_base, self.num_targets)
            if s.in_hand >= 0:
                slot = s.in_hand
                s.in_hand = -1
            else:
                s.pending.remove(size)
                slot = len(s.slot_sizes[player])
                s.slot_sizes[player].append(size)
                s.slot_in_pile[player].append(False)
            rule = self.physics.place(player, size, target, slot, rng)
            s.slot_in_pile[player][slot] = True
        elif action < self.done_action:
            slot = action - self.pick_base
            s.slot_in_pile[player][slot] = False
            s.in_hand = slot
            s.rearrangements += 1
            rule = self.physics.pick_up(player, slot)
        else:
            rule = None
            self._next_adder()
            return
        if rule is not None:
            s.out_round[player] = s.calls_made - 1
            s.out_rule[player] = rule
            s.in_hand = -1
            s.pending = []
            if len(s.still_in()) <= 1:
                self._finish()
            else:
                self._next_adder()

    def _start_add(self, player: int) -> None:
        s = self.state
        s.phase = ADD
        s.adder = player
        s.pending = list(CALL_SIZES[s.current_call])
        s.in_hand = -1
        s.rearrangements = 0

    def _next_adder(self) -> None:
        s = self.state
        position = s.round_order.index(s.adder)
        for player in s.round_order[position + 1 :]:
            if s.out_round[player] < 0:
                self._start_add(player)
                return
        # Round over: the call passes left to the next player still in.
        still_in = s.still_in()
        if len(still_in) <= 1 or not s.legal_calls():
            self._finish()
            return
        n = s.num_players
        s.caller = next(p for p in ((s.caller + k) % n for k in range(1, n + 1)) if s.out_round[p] < 0)
        s.phase = CALL
        s.adder = -1
        s.current_call = -1
        s.pending = []

    def _finish(self) -> None:
        s = self.state
        s.phase = OVER
        s.points = final_points(s.out_round, s.last_call)

    def rewards(self) -> NDArray[np.float32]:
        n = self.state.num_players
        points = np.asarray(self.state.points, dtype=np.float32)
        return (2 * (points - 1) / (n - 1) - 1).astype(np.float32)


def final_points(out_round: list[int], last_call: list[int]) -> list[float]:
    """First out scores 1, the next 2, ...; players out in the same round are ordered by calling
    turn (whoever called more recently scores lower; exact ties share); players still in share
    the remaining top points."""
    n = len(out_round)
    out = [p for p in range(n) if out_round[p] >= 0]
    # Lower key = lower points: earlier round, then the more recent caller.
    key = {p: (out_round[p], -last_call[p]) for p in out}
    ordered = sorted(out, key=lambda p: key[p])
    points = [0.0] * n
    rank = 1
    i = 0
    while i < len(ordered):
        tied = [p for p in ordered[i:] if key[p] == key[ordered[i]]]
        share = sum(range(rank, rank + len(tied))) / len(tied)
        for p in tied:
            points[p] = share
        rank += len(tied)
        i += len(tied)
    survivors = [p for p in range(n) if out_round[p] < 0]
    if survivors:
        share = sum(range(rank, n + 1)) / len(survivors)
        for p in survivors:
            points[p] = share
    return points
