"""
# Thin Ice

| Import | `from polarzoo.envs import thin_ice_v0` |
|---|---|
| Agents | `["player_0", ..., "player_{N-1}"]`, `num_players` 2..6 (`player_0` calls first) |
| Action Shape | `Discrete(9 + 3*T + 15 + 1)` with `T = grid * grid * 6` targets (907 for the default 7x7 grid) |
| Action Values | calls, placements, pick-ups, DONE (below) |
| Observation Shape | `{"observation": (183*N + 22,) float32, "action_mask": (907,) int8}` |
| Observation Values | [-1, 1] |
| Rewards | at the end, points scaled to [-1, 1]: `2 * (points - 1) / (N - 1) - 1` |

A dexterity game with Icehouse pyramids.  On your turn you *call* one or two piece sizes; every
player still in then adds those pieces to their own pile (caller first, going left) and may
reorganise it (pick a piece up and place it again).  You are out the moment your pile has four
pieces touching the table (T), three pieces touching nothing (A), or two pieces nested tip in
tip (N).  Whether a pile stands, topples or nests is decided by MuJoCo, at every physics step.
Full rules as implemented: the repository's `docs/rules/thin_ice.md`.

### Action Space
* `0..8`: calls S, M, L, SS, MM, LL, SM, SL, ML (legal when the supply has the pieces);
* `9 + T*size + target`: place a pending piece (or the piece in hand) of `size` (0 S, 1 M, 2 L)
  at `target = 6 * cell + orientation`; `cell = row * grid + col` on a `grid x grid` lattice of
  `pitch` spacing centred on the pile; orientations: upright, inverted (apex down), lying on a
  face with the apex toward +x, -x, +y, -y.  The piece is lowered above the point until it
  first touches the pile or table, lifted 1 mm and released with a seeded hand tremor;
* `9 + 3T + k`: pick up the piece in slot `k` of your pile (slots in order of first placement),
  at most `max_rearrangements` times per add-turn; the piece in hand must be placed next;
* `9 + 3T + 15`: DONE, legal when nothing is pending or in hand.

### Observation Space
A flat float32 vector.  For each player, the observer first and then the others in seat order
(`182` values each): for each of 15 slots `[in_pile, in_hand, is_S, is_M, is_L, x, y, z,
axis_x, axis_y, axis_z, on_table]` (positions in units of 0.25 m from the pile centre, clipped
to [-1, 1]; `axis` points from the base to the apex), then 2 values: `[is_out,
went_out_this_round]`.  Then 22 + N global values: the current call
(one-hot 9), pieces pending for the adder (3, per size / 2), the size in hand (one-hot 3),
the supply left (3, / 5), whose turn relative to the observer (one-hot N), the phase (one-hot
call / add / over), and rearrangements used (/ max, 1).

### Infos
Numbers only, the same keys on every step: `points` (set when the game ends), `out_rule` (the
rule that put the agent's pile out, as an index into `"TAN"`: 0 = four pieces on the table,
1 = three pieces touching nothing, 2 = tip in inner tip; -1 if none), `out_round` (-1 if
none) and `physics_error` (1 when the episode was truncated because the simulation went
unstable).  `env.unwrapped.result()` gives them in words.

### Physics failures
If MuJoCo goes unstable during an action (a `PhysicsError`: a bad state reset by MuJoCo, NaNs,
or a piece thrown out of the world), the env rolls back to the position before that action and
ends the episode *truncated* for every agent, with `infos[agent]["physics_error"] == 1` and the
reason in `env.unwrapped.physics_error` (None otherwise); `reset()` starts a fresh game.

### Symmetries
The lattice is centred on the pile and the hand tremor is isotropic, so the 8 rotations and
mirrors of the square map a game to an equally likely game: `polarzoo.envs.thin_ice.symmetry`
maps cells, orientations, actions and observations (`transform_action`, `transform_mask`,
`transform_observation`; tested against the physics on scripted piles).  The pile policy
(`baselines/policies/networks.py`, `ThinIceNet`) uses them.

### Speed
Random 2-player play runs at about 0.03-0.04x PettingZoo `connect_four_v3.env()` steps/s (MuJoCo
at every physics step: about 8 ms a placement, 125 placements/s on one core here; only the
pieces in play are simulated, `idle_pieces`); `python -m benchmarks.thin_ice_ab` measures it
against another commit in one run, and `envs/thin_ice/equivalence.py` tells whether a faster
physics setting is still the same game.

### Arguments
| Parameter | Type | Default | Description |
|---|---|---|---|
| `num_players` | `int` | `2` | 2..6 |
| `render_mode` | `str \\| None` | `None` | `"ansi"`, `"rgb_array"`, `"human"` |
| `max_rearrangements` | `int` | `2` | pick-ups allowed per add-turn (0..10) |
| `grid` | `int` | `7` | placement lattice is `grid x grid` (1..15) |
| `pitch_mm` | `float` | `7.0` | lattice spacing in mm (0.5..30) |
| `table_friction` | `float` | `1.0` | table friction (0.05..3) |
| `piece_friction` | `float` | `0.5` | piece-on-piece friction (0.05..3) |
| `tremor_mm` | `float` | `0.5` | hand tremor, position standard deviation (0..5 mm) |
| `tremor_degrees` | `float` | `1.0` | hand tremor, tilt standard deviation (0..10 degrees) |
| `settle_cap_seconds` | `float` | `3.0` | longest simulated settling per action (0.1..30 s) |
| `settle_steps` | `int` | `10` | physics steps in a row below 2 mm/s and 0.05 rad/s for "the pile is still" (1..1000; the spec's study used 25, the same game by `envs/thin_ice/equivalence.py`, 15 steps slower per action) |
| `idle_pieces` | `str` | `"removed"` | pieces not in play: `"removed"` simulates only the pieces in play (one compiled scene per count of S, M, L); `"parked"` is the spec's one scene of all 15 with the idle ones parked; the same game by `envs/thin_ice/equivalence.py`, about 1.2x slower |

### Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from polarzoo.envs._common.aec import (
    TurnBasedAECEnv,
    check_choice,
    check_number,
    default_wrappers,
    env_metadata,
    turn_based_parallel,
)
from polarzoo.envs.thin_ice import rules
from polarzoo.envs.thin_ice.physics import IDLE_PIECES, NUM_ORIENTATIONS, NUM_PIECES, MuJoCoPiles, PhysicsConfig, PhysicsError

SLOT_FEATURES, PLAYER_FEATURES = rules.SLOT_FEATURES, rules.PLAYER_FEATURES
POSITION_SCALE = 0.25


#: ``infos[agent]["out_rule"]`` is the index of the rule that put the pile out in this string
#: (T: four pieces on the table, A: three pieces touching nothing, N: tip in inner tip), -1 if none.
OUT_RULE_CODES = "TAN"


class raw_env(TurnBasedAECEnv):
    """Thin Ice AEC environment on MuJoCo physics (see the module docstring)."""

    metadata = env_metadata("thin_ice_v0")
    max_plies = 5000

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        max_rearrangements: int = 2,
        grid: int = 7,
        pitch_mm: float = 7.0,
        table_friction: float = 1.0,
        piece_friction: float = 0.5,
        tremor_mm: float = 0.5,
        tremor_degrees: float = 1.0,
        settle_cap_seconds: float = 3.0,
        settle_steps: int = 10,
        idle_pieces: str = "removed",
    ) -> None:
        num_players = check_choice("num_players", num_players, range(2, 7))
        max_rearrangements = check_choice("max_rearrangements", max_rearrangements, range(0, 11))
        grid = check_choice("grid", grid, range(1, 16))
        pitch_mm = check_number("pitch_mm", pitch_mm, 0.5, 30, "mm")
        # Checked in the units the caller used (mm, degrees), before the conversion to metres.
        tremor_mm = check_number("tremor_mm", tremor_mm, 0.0, 5.0, "mm")
        self.physics_config = PhysicsConfig(
            table_friction=check_number("table_friction", table_friction, 0.05, 3.0),
            piece_friction=check_number("piece_friction", piece_friction, 0.05, 3.0),
            tremor_position=tremor_mm / 1000,
            tremor_tilt_degrees=check_number("tremor_degrees", tremor_degrees, 0.0, 10.0, "degrees"),
            settle_cap_seconds=check_number("settle_cap_seconds", settle_cap_seconds, 0.1, 30.0, "seconds"),
            settle_steps=check_choice("settle_steps", settle_steps, range(1, 1001)),
            idle_pieces=check_choice("idle_pieces", idle_pieces, IDLE_PIECES),
        )
        self.physics_config.validate()
        self.num_players = num_players
        self.max_rearrangements = max_rearrangements
        self.grid = grid
        self.pitch = pitch_mm / 1000
        self.num_targets = grid * grid * NUM_ORIENTATIONS
        self.num_actions = rules.NUM_CALLS + 3 * self.num_targets + rules.MAX_SLOTS + 1
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        size = self._observation_size = rules.observation_size(num_players)
        self._init_spaces(spaces.Box(-1.0, 1.0, (size,), dtype=np.float32))
        super().__init__(render_mode)
        self._renderer: Any = None
        #: player -> (pile, pile.version, features): _pile_features
        self._feature_cache: dict[int, tuple[Any, int, NDArray[np.float32]]] = {}
        self._new_game(None)

    # ---- hooks ------------------------------------------------------------------------------
    def _new_game(self, options: dict[str, Any] | None) -> None:
        if getattr(self, "piles", None) is None:
            self.piles = MuJoCoPiles(self.num_players, self.physics_config, self.grid, self.pitch)
        else:  # the same piles, emptied: their compiled scenes are kept
            self.piles.reset()
        self.game = rules.ThinIceGame(self.num_players, self.piles, self.num_targets, self.max_rearrangements)
        self._plies_taken = 0
        #: Why the episode was truncated by a physics failure (``infos[agent]["physics_error"] == 1``), else None.
        self.physics_error: str | None = None

    @property
    def state(self) -> rules.ThinIceState:
        return self.game.state

    def _current_seat(self) -> int:
        s = self.game.state
        return s.current_player if s.phase != rules.OVER else max(s.caller, 0)

    def _legal_mask(self) -> NDArray[np.int8]:
        return self.game.legal_action_mask()

    def _explain_illegal(self, action: int) -> str:
        return self.game.explain_illegal(action)

    def _apply(self, action: int) -> None:
        # A PhysicsError (MuJoCo went unstable) must not leave a half-applied move: roll the
        # whole env back to the position before this action, then end the episode truncated.
        # Only placements and pick-ups run the physics, and only in the mover's pile.
        physical = self.game.place_base <= action < self.game.done_action
        before = self._move_snapshot(only=self.game.state.current_player) if physical else None
        try:
            self.game.apply(action, self.np_random)
        except PhysicsError as error:
            assert before is not None  # only placements and pick-ups run the physics
            self._restore_move(before)
            self.physics_error = f"{error} (during {self.action_to_notation(action)!r}; the game was rolled back to before it)"
        self._plies_taken += 1

    def _truncated(self) -> bool:
        if self.physics_error is not None:
            for agent in self.agents:
                self.infos[agent] = {**self.infos[agent], "physics_error": 1}
            return True
        return super()._truncated()

    def _outcome(self) -> NDArray[np.float32] | None:
        return self.game.rewards() if self.game.state.phase == rules.OVER else None

    def _initial_info(self) -> dict[str, Any]:
        return {"points": 0.0, "out_rule": -1, "out_round": -1, "physics_error": 0}

    def _end_infos(self) -> dict[str, dict[str, Any]]:
        s = self.game.state
        return {
            agent: {
                "points": float(s.points[i]),
                "out_rule": OUT_RULE_CODES.find(s.out_rule[i]) if s.out_rule[i] else -1,
                "out_round": int(s.out_round[i]),
            }
            for i, agent in enumerate(self.possible_agents)
        }

    def result(self) -> dict[str, Any]:
        """``{"points": {agent: points}, "out_rule": {agent: "T" | "A" | "N" | None}, "out_round": {agent: round or -1}}``
        (points are 0.0 until the game ends, as in ``infos``)."""
        s = self.game.state
        points = s.points if s.points else [0.0] * self.num_players
        return {
            "points": {a: float(points[i]) for i, a in enumerate(self.possible_agents)},
            "out_rule": {a: (s.out_rule[i] or None) for i, a in enumerate(self.possible_agents)},
            "out_round": {a: int(s.out_round[i]) for i, a in enumerate(self.possible_agents)},
        }

    def _plies(self) -> int:
        return self._plies_taken

    def action_to_notation(self, action: int) -> str:
        """``"call SM"``, ``"place M c2 upright"`` (size, grid cell: column letter a.. and row
        1.., orientation), ``"pickup 3"`` (slot) or ``"done"``; :meth:`notation_to_action` reads it
        back (both are :mod:`rules` functions of the grid's action layout)."""
        return rules.action_to_notation(action, self.game.layout)

    def notation_to_action(self, text: str) -> int:
        """The inverse of :meth:`action_to_notation` (case and spacing free); ``ValueError`` otherwise."""
        return rules.notation_to_action(text, self.game.layout)

    # ---- what the env says about itself --------------------------------------------------------
    def describe(self, pictures: bool = True) -> dict[str, Any]:
        """``status``; ``players`` (per pile: ``agent``, ``out``: the rule that put it out (T / A
        / N) or "", ``pieces`` in it as size letters, ``points`` once over); ``phase``, ``call``,
        ``pending`` sizes, the piece ``in_hand``, the ``supply`` by size and the ``grid``."""
        s = self.game.state
        players = []
        for i, agent in enumerate(self.possible_agents):
            pieces = "".join(rules.SIZE_LETTERS[size] for size, inside in zip(s.slot_sizes[i], s.slot_in_pile[i]) if inside)
            players.append(
                {
                    "agent": agent,
                    "out": s.out_rule[i] if s.out_round[i] >= 0 else "",
                    "pieces": pieces,
                    "points": float(s.points[i]) if s.points else None,
                }
            )
        return {
            "status": self.status(),
            "players": players,
            "phase": rules.PHASE_NAMES[s.phase],
            "call": rules.CALLS[s.current_call] if s.current_call >= 0 else None,
            "pending": "".join(rules.SIZE_LETTERS[x] for x in s.pending),
            "in_hand": rules.SIZE_LETTERS[s.slot_sizes[s.adder][s.in_hand]] if s.in_hand >= 0 else None,
            "supply": [int(x) for x in s.supply],
            "grid": int(self.grid),
        }

    def move_parts(self, action: int) -> dict[str, Any]:
        """``action``, ``notation`` and :func:`rules.action_parts` (a pick-up adds the ``size`` of
        the piece in that slot of the mover's pile)."""
        parts = {**super().move_parts(action), **rules.action_parts(action, self.game.layout)}
        if parts["kind"] == "pickup":
            sizes = self.game.state.slot_sizes[self.game.state.current_player]
            if parts["slot"] < len(sizes):
                parts["size"] = rules.SIZE_LETTERS[sizes[parts["slot"]]]
        return parts

    def render_picture(self) -> NDArray[np.uint8]:
        """Every pile's MuJoCo picture side by side, drawn by a renderer that belongs to the
        calling thread (an OpenGL context is bound to its thread), so any thread may ask."""
        from polarzoo.envs.thin_ice.render import thread_renderer

        return thread_renderer(self.grid, self.pitch, self.piles.piles[0].config).render(self.game.state, self.piles)

    def _pile_features(self, player: int) -> NDArray[np.float32]:
        """(15, 7) per piece of ``player``'s pile: position / POSITION_SCALE clipped to [-1, 1],
        axis, on the table; cached until the pile changes (``PilePhysics.version``)."""
        pile = self.piles.piles[player]
        cached = self._feature_cache.get(player)
        if cached is not None and cached[0] is pile and cached[1] == pile.version:
            return cached[2]
        features = pile.features(POSITION_SCALE, np.empty((NUM_PIECES, 7), dtype=np.float32))
        self._feature_cache[player] = (pile, pile.version, features)
        return features

    def _observation(self, seat: int) -> NDArray[np.float32]:
        # Written into one buffer: per player (seat first) MAX_SLOTS x SLOT_FEATURES and 2 flags,
        # then call, pending, in hand, supply, turn, phase, rearrangements used.
        s = self.game.state
        n = self.num_players
        out = np.zeros(self._observation_size, dtype=np.float32)
        slots_size = rules.MAX_SLOTS * SLOT_FEATURES
        for offset in range(n):
            player = (seat + offset) % n
            base = offset * PLAYER_FEATURES
            pieces = self.piles.slot_piece[player]
            if pieces:
                count = len(pieces)
                block = out[base : base + slots_size].reshape(rules.MAX_SLOTS, SLOT_FEATURES)
                flags = s.slot_in_pile[player]
                in_pile = np.array([bool(flags[slot]) if slot < len(flags) else False for slot in range(count)])
                block[:count, 0] = in_pile
                if s.phase == rules.ADD and s.adder == player and 0 <= s.in_hand < count:
                    block[s.in_hand, 1] = 1.0
                block[np.arange(count), 2 + np.asarray(s.slot_sizes[player][:count])] = 1.0
                block[:count, 5:12] = np.where(in_pile[:, None], self._pile_features(player)[pieces], 0.0)
            if s.out_round[player] >= 0:
                out[base + slots_size] = 1.0
                out[base + slots_size + 1] = s.out_round[player] == s.calls_made - 1
        k = n * PLAYER_FEATURES
        if s.current_call >= 0:
            out[k + s.current_call] = 1.0
        k += rules.NUM_CALLS
        for size in range(3):
            out[k + size] = s.pending.count(size) / 2
        k += 3
        if s.phase == rules.ADD and s.in_hand >= 0:
            out[k + s.slot_sizes[s.adder][s.in_hand]] = 1.0
        k += 3
        out[k : k + 3] = s.supply / rules.PIECES_PER_SIZE
        k += 3
        if s.phase != rules.OVER:
            out[k + (s.current_player - seat) % n] = 1.0
        k += n
        out[k + s.phase] = 1.0
        out[k + 3] = s.rearrangements / max(self.max_rearrangements, 1)
        return out

    # ---- snapshots (search agents) ----------------------------------------------------------
    def _move_snapshot(self, only: int | None = None) -> dict[str, Any]:
        """What an action can change: the piles (``only`` that player's, for one action), the
        slots, the game state and the generator."""
        return {
            "piles": [
                pile.snapshot() if only is None or player == only else None for player, pile in enumerate(self.piles.piles)
            ],
            "slot_piece": [list(pieces) for pieces in self.piles.slot_piece],
            "game": self.game.state.copy(),
            "rng": self.np_random.bit_generator.state,  # a new dict of ints at every read
        }

    def _restore_move(self, snapshot: dict[str, Any]) -> None:
        for pile, saved in zip(self.piles.piles, snapshot["piles"]):
            if saved is not None:
                pile.restore(saved)
        self.piles.slot_piece = [list(pieces) for pieces in snapshot["slot_piece"]]
        self.game.state = snapshot["game"].copy()
        self.np_random.bit_generator.state = snapshot["rng"]

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to continue this game exactly (physics, game layer, generator, the
        AEC bookkeeping)."""
        import copy

        return {
            **self._move_snapshot(),
            "config": self._configuration(),
            "env": copy.deepcopy(tuple(getattr(self, name) for name in self._BOOKKEEPING)),
        }

    #: the AEC bookkeeping a snapshot keeps beside the piles, in its order
    _BOOKKEEPING = (
        "rewards",
        "_cumulative_rewards",
        "terminations",
        "truncations",
        "infos",
        "agents",
        "agent_selection",
        "_plies_taken",
        "physics_error",
    )

    def _configuration(self) -> dict[str, Any]:
        """What a snapshot must match to be restored here (the piles' scenes and the game's sizes)."""
        return {
            "num_players": self.num_players,
            "grid": self.grid,
            "pitch": self.pitch,
            "max_rearrangements": self.max_rearrangements,
            "physics": self.physics_config,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Put back a :meth:`snapshot` of this env (or of an env of the same configuration);
        ``ValueError`` naming the difference otherwise, with nothing changed."""
        import copy

        if not isinstance(snapshot, dict) or "env" not in snapshot or "piles" not in snapshot:
            raise ValueError("restore() takes a dict from this env's snapshot()")
        saved = snapshot.get("config")
        if saved is None:
            raise ValueError("this snapshot has no configuration (it was not made by this version's snapshot())")
        mine = self._configuration()
        if saved != mine:
            differ = [f"{key}={saved[key]!r} (this env: {mine[key]!r})" for key in mine if saved.get(key) != mine[key]]
            raise ValueError("the snapshot is of a Thin Ice env of another configuration: " + "; ".join(differ))
        self._restore_move(snapshot)
        for name, value in zip(self._BOOKKEEPING, copy.deepcopy(snapshot["env"]), strict=True):
            setattr(self, name, value)
        self._mask = self._legal_mask()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_renderer"] = None
        state["_feature_cache"] = {}  # a copy's piles count their versions afresh
        return state

    # ---- rendering --------------------------------------------------------------------------
    def _render_ansi(self) -> str:
        from polarzoo.envs.thin_ice.render import render_ansi

        return render_ansi(self.game.state, self.piles)

    def _render_rgb(self) -> NDArray[np.uint8]:
        from polarzoo.envs.thin_ice.render import PileRenderer

        if self._renderer is None:
            self._renderer = PileRenderer()
        return self._renderer.render(self.game.state, self.piles)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        super().close()


def env(**kwargs: Any) -> Any:
    """Thin Ice with PettingZoo's standard wrappers (an illegal move loses with -1)."""
    return default_wrappers(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> Any:
    """Thin Ice through PettingZoo's parallel API (turn-based conversion of ``env()``)."""
    return turn_based_parallel(env(**kwargs))
