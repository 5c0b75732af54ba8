"""
# Go with the Floe

| Import | `from polarzoo.envs import go_with_the_floe_v0` |
|---|---|
| Agents | `["black", "white"]` (`"black"`, the seals, acts first); with `match=True`: `["player_0", "player_1"]` |
| Action Shape | `Discrete(1025)` |
| Action Values | `16 * from_sq + 2 * direction + (distance - 1)`, `1024` = PASS |
| Observation Shape | `{"observation": (8, 8, 11) int8, "action_mask": (1025,) int8}` |
| Observation Values | channels 0-8 in {0, 1}; channels 9-10 in 0..104 |
| Rewards | single game: +1 / -1; match: +1 / -1 / 0 by match totals |

Two seals (Black) against two polar bears (White) on an 8x8 board without its corners (52 ice
squares).  Either token steps one or slides two squares in a king direction, or jumps over one
ring; bears may capture an adjacent seal (both tokens leave the board).  Every move leaves a
ring (a hole in the ice) on the start square and on a slide's middle square.  White wins by
capturing both seals; Black wins when a seal is isolated (no bear can ever reach a square next
to it) or when both players pass in a row.  Full rules as implemented:
the repository's `docs/rules/go_with_the_floe.md`.

**Differences from Ludii** (deliberate, per the spec): isolation is decided by bear
reachability over the ring graph (Ludii instead declares a Black win when Black has no move and
no bear can capture at once), and White's win by capturing both seals is always checked
(Ludii's White-win test never fires once a ring exists).

### Observation Space
`observation[row, col, channel]`, absolute orientation (row 0 = rank 1, col 0 = file A), for
the observing agent X:

| channel | meaning |
|---|---|
| 0 | X's tokens |
| 1 | the opponent's tokens |
| 2 | rings |
| 3 | on-board squares |
| 4 | all ones if X plays White (bears) in the current game |
| 5 | all ones when it is X's turn |
| 6 | empty ice: on the board, no ring, no token |
| 7 | all ones if the previous action was a pass |
| 8 | all ones in the second game of a match |
| 9 | X's match score so far (0 outside match play) |
| 10 | the opponent's match score so far |

### Action Space
`action = 16 * from_sq + 2 * d + (distance - 1)` with `sq = 8 * row + col`, directions
`d` = N, NE, E, SE, S, SW, W, NW; distance 1 is a step or a capture, 2 a slide or a jump;
`1024` = PASS, legal only without any other action.

>>> from polarzoo.envs.go_with_the_floe import rules
>>> rules.notation_to_action("B2-C3"), rules.action_to_notation(145)
(146, 'B2-B4')

### Rewards
Single game: winner +1, loser -1 when it ends.  Match (`match=True`): two games with roles
swapped (`player_0` plays Black first); the winner of each game scores the empty squares left;
at the end of the second game each player gets +1 / -1 / 0 by match totals.  Each game's result
and scores are in `env.unwrapped.result()` (`"game_results"`, `"match_scores"`).

### Infos
Numbers only, the same keys on every step: `games_finished` (0, 1 or 2), `winner` (index into
`possible_agents` of the last finished game's winner, -1 before), `score` / `opponent_score`
(empty squares won so far by this agent / the other; match play).

### Arguments
| Parameter | Type | Default | Description |
|---|---|---|---|
| `render_mode` | `str \\| None` | `None` | `"ansi"`, `"rgb_array"` or `"human"` |
| `match` | `bool` | `False` | play a two-game match between `player_0` and `player_1` |

### Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.aec import TurnBasedAECEnv, default_wrappers, env_metadata, turn_based_parallel
from polarzoo.envs.go_with_the_floe import kernels, render, rules
from polarzoo.envs.go_with_the_floe.encoding import (  # noqa: F401 (public here too)
    MAX_MATCH_SCORE,
    NUM_CHANNELS,
    observation_high,
    observation_tensor,
    reference_observation_tensor,
)


class raw_env(TurnBasedAECEnv):
    """Go with the Floe AEC environment, optionally a two-game match (see the module docstring)."""

    metadata = env_metadata("go_with_the_floe_v0")
    rules = rules
    kernels = kernels
    # A game places a ring with every move (at most 50) and ends after two passes in a row.
    max_plies = 1000

    def __init__(self, render_mode: str | None = None, match: bool = False) -> None:
        if not isinstance(match, (bool, np.bool_)):
            raise ValueError(f"match must be True or False; got {match!r}")
        self.match = bool(match)
        self.possible_agents = ["player_0", "player_1"] if self.match else list(rules.COLOUR_NAMES)
        self._init_spaces(observation_high())
        super().__init__(render_mode)
        self.state = rules.initial_state()
        self._scratch = np.empty(64, dtype=np.int64)  # the mask kernel's move list
        self.game_index = 0
        self.match_scores = [0, 0]
        self.game_results: list[dict[str, Any]] = []
        self._total_plies = 0

    def action_to_notation(self, action: int) -> str:
        return rules.action_to_notation(action, self.state)

    def notation_to_action(self, text: str) -> int:
        return rules.notation_to_action(text)

    def colour_of(self, agent: str) -> int:
        """The colour ``agent`` plays in the current game (0 black/seals, 1 white/bears)."""
        return (self.possible_agents.index(agent) + self.game_index) % 2

    def shaping_potential(self, agent: str) -> float:
        """The rules' potential of the position for ``agent`` (:func:`rules.shaping_potential`:
        captures, the bear-seal distance), what ``polarzoo.wrappers.PotentialShaping`` shapes with."""
        return rules.shaping_potential(self.state, self.colour_of(agent))

    # ---- hooks ------------------------------------------------------------------------------
    def _new_game(self, options: dict[str, Any] | None) -> None:
        self.state = rules.initial_state()
        self.game_index = 0
        self.match_scores = [0, 0]
        self.game_results = []
        self._total_plies = 0

    def _agent_index_of_colour(self, colour: int) -> int:
        return (colour + self.game_index) % 2

    def _current_seat(self) -> int:
        return self._agent_index_of_colour(self.state.to_move)

    def _legal_mask(self) -> NDArray[np.int8]:
        # The compiled twin of rules.legal_action_mask (tests/test_batch.py holds them in lockstep).
        mask = np.empty(rules.NUM_ACTIONS, dtype=np.int8)
        kernels.write_mask(self.state.board, self.state.rings, self.state.to_move, self.state.winner, mask, self._scratch)
        return mask

    def _explain_illegal(self, action: int) -> str:
        return rules.explain_illegal(self.state, action)

    def _apply(self, action: int) -> None:
        rules.apply_inplace(self.state, action, decide=kernels.decide)
        self._total_plies += 1
        if self.state.winner < 0:
            return
        winner_index = self._agent_index_of_colour(self.state.winner)
        score = rules.empty_squares(self.state)
        self.match_scores[winner_index] += score
        result = {
            "game": self.game_index,
            "winner": self.possible_agents[winner_index],
            "winner_colour": rules.COLOUR_NAMES[self.state.winner],
            "score": score,
            "plies": self.state.plies,
        }
        self.game_results.append(result)
        for seat, agent in enumerate(self.possible_agents):
            if agent in self.infos:
                self.infos[agent] = {
                    "games_finished": len(self.game_results),
                    "winner": winner_index,
                    "score": self.match_scores[seat],
                    "opponent_score": self.match_scores[1 - seat],
                }
        if self.match and self.game_index == 0:
            self.game_index = 1
            self.state = rules.initial_state()

    def _initial_info(self) -> dict[str, Any]:
        return {"games_finished": 0, "winner": -1, "score": 0, "opponent_score": 0}

    def result(self) -> dict[str, Any]:
        """``{"game_results": [per finished game: game, winner, winner_colour, score, plies],
        "match_scores": {agent: empty squares won}}``."""
        return {
            "game_results": [dict(r) for r in self.game_results],
            "match_scores": dict(zip(self.possible_agents, self.match_scores)),
        }

    def _outcome(self) -> NDArray[np.float32] | None:
        if self.state.winner < 0:
            return None
        if not self.match:
            return rules.returns(self.state)
        difference = np.sign(self.match_scores[0] - self.match_scores[1])
        return np.array([difference, -difference], dtype=np.float32)

    def _plies(self) -> int:
        return self._total_plies

    def _observation(self, seat: int) -> NDArray[np.int8]:
        colour = self.colour_of(self.possible_agents[seat])
        scores = (self.match_scores[seat], self.match_scores[1 - seat])
        return observation_tensor(self.state, colour, self.game_index == 1, scores)

    # ---- what the env says about itself --------------------------------------------------------
    def describe(self, pictures: bool = True) -> dict[str, Any]:
        """``status``, ``board`` (per square 0..63: 0 empty, 1 a seal, 2 a bear), ``rings`` (1 where
        a ring lies) and, with ``pictures``, ``svg``: the board, its squares numbered ``data-cell``."""
        view: dict[str, Any] = {
            "status": self.status(),
            "board": [int(v) for v in self.state.board],
            "rings": [int(v) for v in self.state.rings],
        }
        if pictures:
            view["svg"] = render.render_svg(self.state)
        return view

    def move_parts(self, action: int) -> dict[str, Any]:
        """``action``, ``notation`` and the ``from`` / ``to`` squares (none for a pass)."""
        parts = super().move_parts(action)
        if action != rules.PASS:
            parts["from"], parts["to"] = int(action) // rules.ACTIONS_PER_SQUARE, int(rules.action_destination(action))
        return parts

    def cell_centres(self) -> NDArray[np.int64]:
        """(64, 2) pixel centres of the squares on :meth:`render_picture` (x, y)."""
        return np.array([render.square_centre(square) for square in range(rules.NUM_SQUARES)], dtype=np.int64)

    def cell_at(self, x: float, y: float) -> int:
        """The square under pixel (x, y) of :meth:`render_picture`, -1 if none."""
        return int(render.square_at(x, y))

    # ---- rendering --------------------------------------------------------------------------
    def status(self) -> str:
        state = self.state
        game = f"game {self.game_index + 1}/2, " if self.match else ""
        if state.winner >= 0:
            text = f"{game}{rules.COLOUR_NAMES[state.winner].capitalize()} wins, {rules.empty_squares(state)} empty squares"
        else:
            last = "" if state.last_action < 0 else f", last {rules.action_to_notation(state.last_action)}"
            text = f"{game}{rules.COLOUR_NAMES[state.to_move].capitalize()} to move (ply {state.plies + 1}{last})"
        if self.match:
            text += f"; match {self.match_scores[0]}-{self.match_scores[1]}"
        return text

    def _render_ansi(self) -> str:
        return render.render_ansi(self.state, self.status())

    def _render_rgb(self) -> NDArray[np.uint8]:
        return render.render_rgb(self.state, self.status())


def env(**kwargs: Any) -> Any:
    """Go with the Floe with PettingZoo's standard wrappers (an illegal move loses with -1)."""
    return default_wrappers(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> Any:
    """Go with the Floe through PettingZoo's parallel API (turn-based conversion of ``env()``)."""
    return turn_based_parallel(env(**kwargs))
