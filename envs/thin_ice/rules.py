"""Thin Ice rules: the state and the functions over it, in the shape of the other games' rules
(``initial_state``, ``legal_action_mask``, ``apply_inplace``, ``returns``, ``explain_illegal``,
``action_to_notation`` / ``notation_to_action``) - calls, supply, add-turn order, pending and
in-hand pieces, reorganising, eliminations, points and the end of the game.

It decides nothing physical: placing and picking up go through a physics backend
(:class:`PhysicsBackend`; :class:`~polarzoo.envs.thin_ice.physics.MuJoCoPiles` in the env, a stub
in tests) that reports which elimination rule (T, A, N), if any, fired while the pile moved.
An action goes env -> rules -> physics.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

#: Piece sizes, index 0 S, 1 M, 2 L (one letter each: ``SIZE_LETTERS[size]``).
SIZE_LETTERS = "SML"
#: How a placed piece lies (the last part of a placement's target).
ORIENTATIONS = ("upright", "inverted", "lying+x", "lying-x", "lying+y", "lying-y")
NUM_ORIENTATIONS = len(ORIENTATIONS)
CALLS = ("S", "M", "L", "SS", "MM", "LL", "SM", "SL", "ML")
CALL_SIZES: tuple[tuple[int, ...], ...] = ((0,), (1,), (2,), (0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
NUM_CALLS = len(CALLS)
PIECES_PER_SIZE = 5
MAX_SLOTS = 3 * PIECES_PER_SIZE
CALL, ADD, OVER = 0, 1, 2
PHASE_NAMES = ("call", "add", "over")
#: Observation encoding: numbers per piece slot, and per player block (15 slots + is_out, went_out_this_round).
SLOT_FEATURES = 12
PLAYER_FEATURES = MAX_SLOTS * SLOT_FEATURES + 2
#: Observation encoding: the global values after the player blocks are 22 + num_players.
GLOBAL_FEATURES = 22


#: Observation encoding: where whose-turn (one-hot, relative to the observer) starts in the globals.
TURN_OFFSET = 18
#: The two flags ``[is_out, went_out_this_round]`` of a seat added by :func:`pad_observation`: no
#: player of a game has them (the second flag is 0 or 1).
ABSENT_FLAGS = (1.0, -1.0)


def observation_size(num_players: int) -> int:
    """Length of the flat observation vector for ``num_players``."""
    return PLAYER_FEATURES * num_players + GLOBAL_FEATURES + num_players


def players_of_size(size: int) -> int:
    """The number of players whose observation has ``size`` numbers (``ValueError`` if none has)."""
    players, rest = divmod(size - GLOBAL_FEATURES, PLAYER_FEATURES + 1)
    if rest or not 2 <= players <= 6:
        raise ValueError(f"not a Thin Ice observation: {size} numbers")
    return players


def pad_observation(observation: NDArray[np.float32], players: int) -> NDArray[np.float32]:
    """An N-player observation laid out as one of ``players`` >= N (one shape for games of several
    sizes, as a vectorised trainer needs): the N player blocks, then ``players - N`` absent seats
    (empty piles, flags :data:`ABSENT_FLAGS`), then the globals with whose-turn widened to
    ``players`` entries (an absent seat never has the turn).  :func:`present_players` counts the
    seats that are not absent; a network that reads any number of players (the pile policy)
    drops the absent ones, so a padded observation means what the unpadded one does."""
    n = players_of_size(observation.shape[-1])
    if players < n:
        raise ValueError(f"cannot pad a {n}-player observation to {players} players")
    if players == n:
        return observation
    out = np.zeros(observation_size(players), dtype=np.float32)
    out[: n * PLAYER_FEATURES] = observation[: n * PLAYER_FEATURES]
    absent = out[n * PLAYER_FEATURES : players * PLAYER_FEATURES].reshape(players - n, PLAYER_FEATURES)
    absent[:, -2:] = ABSENT_FLAGS
    k, j = n * PLAYER_FEATURES, players * PLAYER_FEATURES
    out[j : j + TURN_OFFSET] = observation[k : k + TURN_OFFSET]
    out[j + TURN_OFFSET : j + TURN_OFFSET + n] = observation[k + TURN_OFFSET : k + TURN_OFFSET + n]
    out[j + TURN_OFFSET + players :] = observation[k + TURN_OFFSET + n :]
    return out


def present_players(observations: NDArray[np.float32]) -> NDArray[np.int64]:
    """Per row of a batch of flat observations (padded or not), the number of seats that are
    not absent (:func:`pad_observation`)."""
    batch = np.atleast_2d(observations)
    n = players_of_size(batch.shape[-1])
    flags = batch[:, : n * PLAYER_FEATURES].reshape(len(batch), n, PLAYER_FEATURES)[:, :, -1]
    return n - (flags < -0.5).sum(axis=1)


def present_indices(players: int, present: int) -> NDArray[np.int64]:
    """Where the numbers of a ``present``-player observation sit in one padded to ``players``
    (:func:`pad_observation`): indexing a padded observation with them drops its absent seats."""
    k = players * PLAYER_FEATURES
    return np.concatenate(
        [
            np.arange(present * PLAYER_FEATURES),
            np.arange(k, k + TURN_OFFSET + present),
            np.arange(k + TURN_OFFSET + players, observation_size(players)),
        ]
    )


def unpad_observation(observation: NDArray[np.float32]) -> NDArray[np.float32]:
    """The observation of :func:`pad_observation` without its absent seats."""
    n = players_of_size(observation.shape[-1])
    present = int(present_players(observation)[0])
    return observation if present == n else observation[present_indices(n, present)]


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

    def copy(self) -> ThinIceState:
        """An independent copy (what ``copy.deepcopy`` gives, without its per-object walk: the
        env takes one before every physical action to roll it back on a physics error)."""
        return replace(
            self,
            supply=self.supply.copy(),
            pending=list(self.pending),
            round_order=list(self.round_order),
            slot_sizes=[list(sizes) for sizes in self.slot_sizes],
            slot_in_pile=[list(flags) for flags in self.slot_in_pile],
            out_round=list(self.out_round),
            out_rule=list(self.out_rule),
            last_call=list(self.last_call),
            points=list(self.points),
        )

    @property
    def current_player(self) -> int:
        return self.caller if self.phase == CALL else self.adder

    def still_in(self) -> list[int]:
        return [p for p in range(self.num_players) if self.out_round[p] < 0]

    def legal_calls(self) -> list[int]:
        return [c for c, sizes in enumerate(CALL_SIZES) if all((np.array(sizes) == s).sum() <= self.supply[s] for s in range(3))]


@dataclass(frozen=True)
class ActionLayout:
    """The public action encoding for a ``grid x grid`` placement lattice: calls ``0..8``,
    placements ``place_base + T * size + target`` (``target = 6 * cell + orientation``,
    ``cell = row * grid + col``), pick-ups ``pick_base + slot``, then DONE."""

    grid: int

    @property
    def num_targets(self) -> int:
        return self.grid * self.grid * NUM_ORIENTATIONS

    @property
    def place_base(self) -> int:
        return NUM_CALLS

    @property
    def pick_base(self) -> int:
        return NUM_CALLS + 3 * self.num_targets

    @property
    def done_action(self) -> int:
        return self.pick_base + MAX_SLOTS

    @property
    def num_actions(self) -> int:
        return self.done_action + 1


def initial_state(num_players: int, max_rearrangements: int = 2) -> ThinIceState:
    """A new game: full supply, ``player_0`` to call."""
    return ThinIceState(num_players, max_rearrangements)


def legal_action_mask(state: ThinIceState, layout: ActionLayout) -> NDArray[np.int8]:
    """int8 mask over ``layout.num_actions``: calls the supply allows; then the pending sizes
    (or only the piece in hand), pick-ups while rearrangements are left, DONE once nothing is pending."""
    s, t = state, layout.num_targets
    mask = np.zeros(layout.num_actions, dtype=np.int8)
    if s.phase == CALL:
        mask[s.legal_calls()] = 1
    elif s.phase == ADD:
        player = s.adder
        if s.in_hand >= 0:
            size = s.slot_sizes[player][s.in_hand]
            mask[layout.place_base + size * t : layout.place_base + (size + 1) * t] = 1
        else:
            for size in set(s.pending):
                mask[layout.place_base + size * t : layout.place_base + (size + 1) * t] = 1
            if s.rearrangements < s.max_rearrangements:
                for slot, in_pile in enumerate(s.slot_in_pile[player]):
                    if in_pile:
                        mask[layout.pick_base + slot] = 1
            if not s.pending:
                mask[layout.done_action] = 1
    return mask


def action_parts(action: int, layout: ActionLayout) -> dict[str, object]:
    """``action``'s parts as numbers and words: ``kind`` (call, place, pickup, done); a call's
    ``call``; a placement's ``size`` (letter), ``cell`` (``"c2"``), ``row`` / ``col`` (0-based)
    and ``orientation``; a pick-up's ``slot``.  ``ValueError`` for an id outside the layout."""
    action_to_notation(action, layout)  # the range check, with its message
    if action < NUM_CALLS:
        return {"kind": "call", "call": CALLS[action]}
    if action < layout.pick_base:
        size, target = divmod(action - layout.place_base, layout.num_targets)
        cell, orientation = divmod(target, NUM_ORIENTATIONS)
        row, col = divmod(cell, layout.grid)
        return {
            "kind": "place",
            "size": SIZE_LETTERS[size],
            "cell": f"{chr(ord('a') + col)}{row + 1}",
            "row": row,
            "col": col,
            "orientation": ORIENTATIONS[orientation],
        }
    if action < layout.done_action:
        return {"kind": "pickup", "slot": int(action - layout.pick_base)}
    return {"kind": "done"}


def action_to_notation(action: int, layout: ActionLayout) -> str:
    """``"call SM"``, ``"place M c2 upright"`` (size, cell: column letter a.. and row 1..,
    orientation), ``"pickup 3"`` (slot) or ``"done"``; ``ValueError`` for an id outside the layout."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) or not 0 <= action <= layout.done_action:
        raise ValueError(
            f"action must be a whole number in 0..{layout.done_action}; got {action if isinstance(action, (int, np.integer)) else repr(action)}"
        )
    if action < NUM_CALLS:
        return f"call {CALLS[action]}"
    if action < layout.pick_base:
        size, target = divmod(action - layout.place_base, layout.num_targets)
        cell, orientation = divmod(target, NUM_ORIENTATIONS)
        row, col = divmod(cell, layout.grid)
        return f"place {SIZE_LETTERS[size]} {chr(ord('a') + col)}{row + 1} {ORIENTATIONS[orientation]}"
    if action < layout.done_action:
        return f"pickup {action - layout.pick_base}"
    return "done"


def notation_to_action(text: str, layout: ActionLayout) -> int:
    """The inverse of :func:`action_to_notation` (case and spacing free); ``ValueError`` otherwise."""
    words = text.strip().lower().split()
    grid = layout.grid
    if words == ["done"]:
        return layout.done_action
    if len(words) == 2 and words[0] == "call" and words[1].upper() in CALLS:
        return CALLS.index(words[1].upper())
    if len(words) == 2 and words[0] == "pickup" and words[1].isdigit() and int(words[1]) < MAX_SLOTS:
        return layout.pick_base + int(words[1])
    if len(words) == 4 and words[0] == "place" and words[1].upper() in SIZE_LETTERS and words[3] in ORIENTATIONS:
        cell = words[2]
        if len(cell) >= 2 and "a" <= cell[0] < chr(ord("a") + grid) and cell[1:].isdigit() and 1 <= int(cell[1:]) <= grid:
            target = ((int(cell[1:]) - 1) * grid + ord(cell[0]) - ord("a")) * NUM_ORIENTATIONS + ORIENTATIONS.index(words[3])
            return layout.place_base + SIZE_LETTERS.index(words[1].upper()) * layout.num_targets + target
    last_cell = f"{chr(ord('a') + grid - 1)}{grid}"
    # The word that is wrong, when the move's kind is clear (call / place / pickup).
    if words[:1] == ["call"] and len(words) == 2:
        raise ValueError(f"{words[1].upper()!r} is not a call: the calls are {', '.join(CALLS)}")
    if words[:1] == ["pickup"] and len(words) == 2:
        raise ValueError(f"{words[1]!r} is not a slot of your pile: pickup takes a slot number 0..{MAX_SLOTS - 1}")
    if words[:1] == ["place"] and len(words) == 4:
        if words[1].upper() not in SIZE_LETTERS:
            raise ValueError(f"{words[1].upper()!r} is not a size: S, M or L")
        if words[3] not in ORIENTATIONS:
            raise ValueError(f"{words[3]!r} is not an orientation: {', '.join(ORIENTATIONS)}")
        raise ValueError(f"{words[2]!r} is not a cell of the {grid}x{grid} lattice: a1..{last_cell} (column letter, row number)")
    raise ValueError(
        f"{text!r} is not a Thin Ice move: expected 'call SM', 'place M c2 upright' "
        f"(cells a1..{last_cell}; {', '.join(ORIENTATIONS)}), 'pickup 3' or 'done'"
    )


def explain_illegal(state: ThinIceState, action: int, layout: ActionLayout) -> str:
    """Why ``action`` is not legal in ``state`` (one line naming the action and the reason)."""
    s = state
    who = f"player_{s.current_player}"
    if s.phase == OVER:
        return "the game is over"
    if not 0 <= action < layout.num_actions:
        return f"action {action} is out of range 0..{layout.num_actions - 1}"
    what = action_to_notation(action, layout)
    if s.phase == CALL:
        if action >= NUM_CALLS:
            why = "it is the calling phase: only calls 0..8 are legal"
        else:
            why = f"not enough pieces left for {CALLS[action]} (supply S/M/L = {s.supply.tolist()})"
    elif action < NUM_CALLS:
        why = "it is the adding phase: calls are not legal now"
    elif s.in_hand >= 0:
        why = f"the piece in hand (slot {s.in_hand}, size {SIZE_LETTERS[s.slot_sizes[s.adder][s.in_hand]]}) must be placed first"
    elif action < layout.pick_base:
        why = f"no pending piece of that size (pending: {''.join(SIZE_LETTERS[x] for x in s.pending) or 'none'})"
    elif action < layout.done_action:
        slot = action - layout.pick_base
        if s.rearrangements >= s.max_rearrangements:
            why = f"no rearrangements left this add-turn (max_rearrangements={s.max_rearrangements})"
        else:
            why = f"slot {slot} holds no piece in the pile"
    else:
        why = f"pieces are still pending ({''.join(SIZE_LETTERS[x] for x in s.pending)})"
    return f"illegal action {action} ({what!r}) for {who}: {why}"


def apply_inplace(
    state: ThinIceState, action: int, layout: ActionLayout, physics: PhysicsBackend, rng: np.random.Generator | None
) -> ThinIceState:
    """Play a legal ``action`` (the caller checks the mask): the game layer decides turn order,
    supply, pending and in-hand pieces and points; ``physics`` moves the piece and reports the
    elimination rule (T, A, N) that fired, if any.  An exception from ``physics`` leaves
    ``state`` partly updated: callers that must survive one snapshot first (the env does)."""
    s = state
    if s.phase == CALL:
        for size in CALL_SIZES[action]:
            s.supply[size] -= 1
        s.current_call = action
        s.last_call[s.caller] = s.calls_made
        s.calls_made += 1
        n = s.num_players
        s.round_order = [p for p in ((s.caller + k) % n for k in range(n)) if s.out_round[p] < 0]
        _start_add(s, s.round_order[0])
        return s
    player = s.adder
    if action < layout.pick_base:
        size, target = divmod(action - layout.place_base, layout.num_targets)
        if s.in_hand >= 0:
            slot = s.in_hand
            s.in_hand = -1
        else:
            s.pending.remove(size)
            slot = len(s.slot_sizes[player])
            s.slot_sizes[player].append(size)
            s.slot_in_pile[player].append(False)
        rule = physics.place(player, size, target, slot, rng)
        s.slot_in_pile[player][slot] = True
    elif action < layout.done_action:
        slot = action - layout.pick_base
        s.slot_in_pile[player][slot] = False
        s.in_hand = slot
        s.rearrangements += 1
        rule = physics.pick_up(player, slot)
    else:
        _next_adder(s)
        return s
    if rule is not None:
        s.out_round[player] = s.calls_made - 1
        s.out_rule[player] = rule
        s.in_hand = -1
        s.pending = []
        if len(s.still_in()) <= 1:
            _finish(s)
        else:
            _next_adder(s)
    return s


def _start_add(s: ThinIceState, player: int) -> None:
    s.phase = ADD
    s.adder = player
    s.pending = list(CALL_SIZES[s.current_call])
    s.in_hand = -1
    s.rearrangements = 0


def _next_adder(s: ThinIceState) -> None:
    position = s.round_order.index(s.adder)
    for player in s.round_order[position + 1 :]:
        if s.out_round[player] < 0:
            _start_add(s, player)
            return
    # Round over: the call passes left to the next player still in.
    if len(s.still_in()) <= 1 or not s.legal_calls():
        _finish(s)
        return
    n = s.num_players
    s.caller = next(p for p in ((s.caller + k) % n for k in range(1, n + 1)) if s.out_round[p] < 0)
    s.phase = CALL
    s.adder = -1
    s.current_call = -1
    s.pending = []


def _finish(s: ThinIceState) -> None:
    s.phase = OVER
    s.points = final_points(s.out_round, s.last_call)


def returns(state: ThinIceState) -> NDArray[np.float32]:
    """Per-player rewards at the end: points scaled to [-1, 1], ``2 * (points - 1) / (N - 1) - 1``."""
    n = state.num_players
    points = np.asarray(state.points, dtype=np.float32)
    return (2 * (points - 1) / (n - 1) - 1).astype(np.float32)


class ThinIceGame:
    """A game in progress: its :class:`ThinIceState`, the physics backend and the action layout,
    with the rules functions above as methods (what the env and the agents hold)."""

    def __init__(self, num_players: int, physics: PhysicsBackend, num_targets: int, max_rearrangements: int = 2) -> None:
        grid = int(round((num_targets / NUM_ORIENTATIONS) ** 0.5))
        if grid * grid * NUM_ORIENTATIONS != num_targets:
            raise ValueError(f"num_targets must be grid * grid * {NUM_ORIENTATIONS}; got {num_targets}")
        self.state = initial_state(num_players, max_rearrangements)
        self.physics = physics
        self.layout = ActionLayout(grid)
        self.num_targets = num_targets
        self.place_base, self.pick_base = self.layout.place_base, self.layout.pick_base
        self.done_action, self.num_actions = self.layout.done_action, self.layout.num_actions

    def legal_action_mask(self) -> NDArray[np.int8]:
        return legal_action_mask(self.state, self.layout)

    def explain_illegal(self, action: int) -> str:
        return explain_illegal(self.state, action, self.layout)

    def apply(self, action: int, rng: np.random.Generator | None) -> None:
        apply_inplace(self.state, action, self.layout, self.physics, rng)

    def rewards(self) -> NDArray[np.float32]:
        return returns(self.state)


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
