"""
# Fire & Ice

| Import | `from polarzoo.envs import fire_and_ice_v0` |
|---|---|
| Agents | `agents = ["fire", "ice"]` (`"fire"` acts first) |
| Action Shape | `Discrete(2402)` |
| Action Values | `49 * from_hole + to_hole` (0..2400), `2401` = PASS |
| Observation Shape | `{"observation": (7, 7, 9) int8, "action_mask": (2402,) int8}` |
| Observation Values | channels 0-6 in {0, 1}; channels 7-8 in 0..25 |
| Rewards | +1 win, -1 loss, on the step that ends the game |

Two players on seven triangular islands of seven holes; holes and islands both form a Fano
plane.  On your turn you move one of your pegs to an empty hole on the same island, or to the
same position on another island, and then put one of your opponent's pegs into the hole you
left.  Three of your pegs on a line of an island control it; control three islands on an
island-line and you win, even when the peg your opponent placed completes it for you.
The full rules as implemented, with every ambiguity and its resolution, are in the repository's
`docs/rules/fire_and_ice.md`.

### Observation Space
`observation[island, position, channel]` with islands A..G on axis 0 and positions 1..7 on axis 1,
for the observing agent X:

| channel | meaning |
|---|---|
| 0 | X's pegs |
| 1 | the opponent's pegs |
| 2 | empty holes |
| 3 | islands X controls (all 7 holes of the island set) |
| 4 | islands the opponent controls |
| 5 | all ones when it is X's turn |
| 6 | all ones when X is Fire |
| 7 | pegs left in X's supply (same value everywhere, 0..25) |
| 8 | pegs left in the opponent's supply (0..25) |

`action_mask` marks exactly the legal actions of the agent to act (all zeros for the other one).

### Action Space
`action = 49 * from_hole + to_hole` with `hole = 7 * island + (position - 1)`; `2401` = PASS,
legal only when the mover has no move.  Conversions: `rules.action_to_notation`,
`rules.notation_to_action`.

>>> from polarzoo.envs.fire_and_ice import rules
>>> rules.notation_to_action("D4-A4"), rules.action_to_notation(1179)
(1179, 'D4-A4')

### Rewards
Winner +1, loser -1, given on the step that ends the game; 0 otherwise.  The game cannot draw.
With `env()`, an illegal action ends the game with -1 for the mover (PettingZoo's
`TerminateIllegalWrapper`); `raw_env().step` raises `ValueError` instead.

### Infos
Numbers only, the same keys on every step: `winner` (-1 while the game goes on, then 0 = fire,
1 = ice) and `moves` (moves made, set when the game ends).  `env.unwrapped.result()` gives the
same in words (`{"winner": "fire", "moves": 31}`).

### Arguments
| Parameter | Type | Default | Description |
|---|---|---|---|
| `render_mode` | `str \\| None` | `None` | `"ansi"`, `"rgb_array"` or `"human"` |
| `handicap` | `int` | `0` | 0..6 pegs of the weaker player placed before play, on distinct islands, never on D4 |
| `handicap_player` | `str` | `"ice"` | `"ice"` or `"fire"`: who gets the handicap pegs |
| `render_hole_labels` | `bool` | `False` | the `rgb_array` / `human` picture numbers each hole's position 1-7 (a hole is its island's letter + position: `D4`); the attribute may be switched at any time |
| `handicap_holes` | `list[str \\| int] \\| None` | `None` | fixed holes for the handicap pegs (e.g. `["A1", "C7"]`); otherwise drawn from the seeded generator at each reset |

### Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.aec import TurnBasedAECEnv, check_choice, default_wrappers, env_metadata, turn_based_parallel
from polarzoo.envs.fire_and_ice import kernels, render, rules
from polarzoo.envs.fire_and_ice.encoding import NUM_CHANNELS, observation_high, observation_tensor, reference_observation_tensor  # noqa: F401 (public here too)


class raw_env(TurnBasedAECEnv):
    """Fire & Ice AEC environment (see the module docstring)."""

    metadata = env_metadata("fire_and_ice_v0")
    rules = rules
    kernels = kernels
    # A standard game ends within 48 moves; the cap only guards pathological handicap games.
    max_plies = 400

    def __init__(
        self,
        render_mode: str | None = None,
        handicap: int = 0,
        handicap_player: str = "ice",
        handicap_holes: list[str | int] | None = None,
        render_hole_labels: bool = False,
    ) -> None:
        if not isinstance(render_hole_labels, (bool, np.bool_)):
            raise ValueError(f"render_hole_labels must be True or False; got {render_hole_labels!r}")
        #: the picture numbers every hole's position (1-7); may be switched at any time
        self.render_hole_labels = bool(render_hole_labels)
        handicap = check_choice("handicap", handicap, range(0, rules.NUM_ISLANDS))
        check_choice("handicap_player", handicap_player, rules.COLOUR_NAMES)
        self.handicap = handicap
        self.handicap_player = handicap_player
        self.handicap_holes = None
        if handicap_holes is not None:
            if isinstance(handicap_holes, (str, bytes)) or not isinstance(handicap_holes, (list, tuple, np.ndarray)):
                raise ValueError(
                    f"handicap_holes must be a list of holes such as ['A1', 'C7'] (or indices 0..48); got {handicap_holes!r}"
                )
            holes = [
                rules.hole_from_name(h)
                if isinstance(h, str)
                else check_choice("each of handicap_holes", h, range(rules.NUM_HOLES))
                for h in handicap_holes
            ]
            # Validate now so a bad list fails at construction, not at the first reset.
            rules.initial_state(handicap, rules.COLOUR_NAMES.index(handicap_player), handicap_holes=holes)
            self.handicap_holes = holes
        self.possible_agents = list(rules.COLOUR_NAMES)
        self._init_spaces(observation_high())
        super().__init__(render_mode)
        self.state = rules.initial_state()
        self._control: NDArray[np.int8] | None = None

    def action_to_notation(self, action: int) -> str:
        return rules.action_to_notation(action)

    def notation_to_action(self, text: str) -> int:
        return rules.notation_to_action(text)

    # ---- hooks ------------------------------------------------------------------------------
    def _new_game(self, options: dict[str, Any] | None) -> None:
        self.state = rules.initial_state(
            self.handicap,
            rules.COLOUR_NAMES.index(self.handicap_player),
            rng=self.np_random,
            handicap_holes=self.handicap_holes,
        )
        self._control = None
        self._scratch = np.empty(rules.NUM_HOLES, dtype=np.int8)

    def _current_seat(self) -> int:
        return self.state.to_move

    def _legal_mask(self) -> NDArray[np.int8]:
        # The compiled twin of rules.legal_action_mask (tests/test_batch.py holds them in lockstep).
        mask = np.empty(rules.NUM_ACTIONS, dtype=np.int8)
        state = self.state
        kernels.write_mask(state.board, state.to_move, state.winner, mask, self._scratch)
        return mask

    def _explain_illegal(self, action: int) -> str:
        try:
            rules.check_action(self.state, action)
        except ValueError as error:
            return str(error)
        return f"illegal action {action}"  # pragma: no cover

    def _apply(self, action: int) -> None:
        control = rules.apply_inplace_with_control(self.state, action)
        if control is not None:
            self._control = control

    def _outcome(self) -> NDArray[np.float32] | None:
        return rules.returns(self.state) if self.state.winner >= 0 else None

    def _plies(self) -> int:
        return self.state.plies

    def _initial_info(self) -> dict[str, Any]:
        return {"winner": -1, "moves": 0}

    def _end_infos(self) -> dict[str, dict[str, Any]]:
        return {agent: {"winner": int(self.state.winner), "moves": int(self.state.moves_made)} for agent in self.agents}

    def result(self) -> dict[str, Any]:
        """``{"winner": "fire" | "ice" | None, "moves": moves made}``."""
        state = self.state
        return {"winner": rules.COLOUR_NAMES[state.winner] if state.winner >= 0 else None, "moves": int(state.moves_made)}

    def _observation(self, seat: int) -> NDArray[np.int8]:
        if self._control is None:
            self._control = rules.island_control(self.state.board)
        return observation_tensor(self.state, seat, self._control)

    # ---- what the env says about itself --------------------------------------------------------
    def describe(self, pictures: bool = True) -> dict[str, Any]:
        """``status``, ``board`` (per hole 0..48: -1 empty, else the colour of its peg), ``supply``
        and, with ``pictures``, ``svg``: the board, its holes numbered ``data-cell`` 0..48."""
        state = self.state
        board = [int(v) - 1 for v in state.board]  # EMPTY is 0, a peg its colour + 1
        view: dict[str, Any] = {
            "status": self.status(),
            "board": board,
            "supply": [int(x) for x in state.supply],
            "to_move": rules.COLOUR_NAMES[state.to_move],
        }
        if pictures:
            view["svg"] = render.render_svg(state.board, int(state.last_action))
        return view

    def move_parts(self, action: int) -> dict[str, Any]:
        """``action``, ``notation`` and the ``from`` / ``to`` holes (none for a pass)."""
        parts = super().move_parts(action)
        if action != rules.PASS:
            parts["from"], parts["to"] = divmod(int(action), rules.NUM_HOLES)
        return parts

    def cell_centres(self) -> NDArray[np.int64]:
        """(49, 2) pixel centres of the holes on :meth:`render_picture` (x, y)."""
        return render.HOLE_CENTRES.astype(np.int64)

    def cell_at(self, x: float, y: float) -> int:
        """The hole under pixel (x, y) of :meth:`render_picture`, -1 if none."""
        return int(render.hole_at(x, y))

    # ---- rendering --------------------------------------------------------------------------
    def status(self) -> str:
        state = self.state
        if state.winner >= 0:
            return f"{rules.COLOUR_NAMES[state.winner].capitalize()} wins after {state.moves_made} moves"
        last = "" if state.last_action < 0 else f", last {rules.action_to_notation(state.last_action)}"
        return (
            f"{rules.COLOUR_NAMES[state.to_move].capitalize()} to move (move {state.moves_made + 1}{last}); "
            f"supply F {state.supply[0]} I {state.supply[1]}"
        )

    def _render_ansi(self) -> str:
        return render.render_ansi(self.state.board, self.status())

    def _render_rgb(self) -> NDArray[np.uint8]:
        last = self.state.last_action
        highlight = last % rules.NUM_HOLES if 0 <= last < rules.PASS else -1
        return render.render_rgb(self.state.board, self.status(), highlight, hole_labels=self.render_hole_labels)


def env(**kwargs: Any) -> Any:
    """Fire & Ice with PettingZoo's standard wrappers (an illegal move loses with -1)."""
    return default_wrappers(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> Any:
    """Fire & Ice through PettingZoo's parallel API (turn-based conversion of ``env()``)."""
    return turn_based_parallel(env(**kwargs))
