"""
# Fire & Ice Solitaire

| Import | `gymnasium.make("polarzoo/FireAndIceSolitaire-v0")` after `import polarzoo`, or `from polarzoo.envs import fire_and_ice_solitaire_v0` |
|---|---|
| Action Space | `Discrete(2401)`: `49 * from_hole + to_hole` (a capture) |
| Observation Space | `Box(0, 1, (7, 7, 2), int8)` |
| Reward | +1 on reaching one peg, else 0 (`reward="shaped"` adds 1/27 per capture) |
| Action mask | `env.action_masks()` (sb3-contrib) and `info["action_mask"]` |

A single-agent puzzle on the Fire & Ice board: 14 Fire and 14 Ice pegs on 28 random holes.
Colours alternate (Fire first); the colour to move moves one of its pegs, by the Fire & Ice
movement rule (same island, or same position on another island), onto a peg of the other
colour and captures it.  Bring the board down to one peg (27 captures) to win; if the colour to
move has no capture before that, the episode ends lost.

### Observation Space
`observation[island, position, channel]`: channel 0 = pegs of the colour to move, channel 1 =
pegs of the other colour (which colour moves follows from the counts: Fire when they are equal).

### Rewards
`reward="sparse"` (default): +1 on the capture that leaves one peg, 0 otherwise.
`reward="shaped"`: also 1/27 for every capture, so a won episode returns 2.

### Episode end
`terminated` on a win or when the colour to move has no capture; never truncated (at most 27
steps).  `info`: `action_mask`, `pegs_left`, `is_success`.  Stepping after the end raises
`RuntimeError`: call `reset()`.

### Arguments
| Parameter | Type | Default | Description |
|---|---|---|---|
| `render_mode` | `str \\| None` | `None` | `"ansi"`, `"rgb_array"` or `"human"` |
| `reward` | `str` | `"sparse"` | `"sparse"` or `"shaped"` |
| `solvable_only` | `bool` | `False` | deal only boards the exact solver proves winnable |
| `render_hole_labels` | `bool` | `False` | the `rgb_array` / `human` picture numbers each hole's position 1-7 (a hole is its island's letter + position: `D4`); the attribute may be switched at any time |
| `illegal_action` | `str` | `"lose"` | `"lose"`: the episode ends with reward -1 and `info["illegal_action"]` = True (as `env()` does for the AEC envs; Gymnasium's `check_env` passes: its determinism check steps an action sampled before a reset); `"raise"`: `ValueError` naming the action |

### Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from polarzoo.envs._common.aec import check_choice, check_int_action
from polarzoo.envs._common.spaces import LegalDiscrete
from polarzoo.envs.fire_and_ice import render, solitaire_rules
from polarzoo.envs.fire_and_ice.rules import NUM_ISLANDS, NUM_POSITIONS, action_to_notation
from polarzoo.envs.fire_and_ice.solitaire_rules import FIRE, TOTAL_CAPTURES

#: Re-deals allowed when ``solvable_only`` is set (every one of 1,000 measured deals was solvable).
MAX_DEALS = 100


def deal_from(rng: np.random.Generator, solvable_only: bool = False) -> solitaire_rules.SolitaireState:
    """The deal ``reset`` makes with the env's generator (re-dealt until solvable if asked)."""
    for _ in range(MAX_DEALS):
        state = solitaire_rules.deal(rng)
        if not solvable_only:
            return state
        from polarzoo.envs.fire_and_ice.solitaire_solver import is_solvable

        if is_solvable(state):
            return state
    raise RuntimeError(f"no solvable deal in {MAX_DEALS} tries")  # pragma: no cover - never observed


def observation_tensor(state: solitaire_rules.SolitaireState) -> NDArray[np.int8]:
    """The (7, 7, 2) observation: the pegs of the colour to move, then the other colour's."""
    board = state.board.reshape(NUM_ISLANDS, NUM_POSITIONS)
    obs = np.empty((NUM_ISLANDS, NUM_POSITIONS, 2), dtype=np.int8)
    obs[:, :, 0] = board == state.to_move + 1
    obs[:, :, 1] = board == (1 - state.to_move) + 1
    return obs


class FireAndIceSolitaireEnv(gym.Env):
    """Fire & Ice Solitaire (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2, "name": "fire_and_ice_solitaire_v0"}

    def __init__(
        self,
        render_mode: str | None = None,
        reward: str = "sparse",
        solvable_only: bool = False,
        illegal_action: str = "lose",
        render_hole_labels: bool = False,
    ) -> None:
        check_choice("render_mode", render_mode, [None, *self.metadata["render_modes"]])
        if not isinstance(render_hole_labels, (bool, np.bool_)):
            raise ValueError(f"render_hole_labels must be True or False; got {render_hole_labels!r}")
        #: the picture numbers every hole's position (1-7); may be switched at any time
        self.render_hole_labels = bool(render_hole_labels)
        check_choice("reward", reward, ("sparse", "shaped"))
        check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.illegal_action = illegal_action
        if not isinstance(solvable_only, (bool, np.bool_)):
            raise ValueError(f"solvable_only must be True or False; got {solvable_only!r}")
        self.render_mode = render_mode
        self.reward_mode = reward
        self.solvable_only = bool(solvable_only)
        self.observation_space = spaces.Box(0, 1, (NUM_ISLANDS, NUM_POSITIONS, 2), dtype=np.int8)
        self.action_space = LegalDiscrete(solitaire_rules.NUM_ACTIONS, self._legal_mask_or_none)
        self.state: solitaire_rules.SolitaireState | None = None
        self._mask = np.zeros(solitaire_rules.NUM_ACTIONS, dtype=np.int8)
        self._done = True
        self._last_action = -1
        self._window: Any = None

    def _legal_mask_or_none(self) -> NDArray[np.int8] | None:
        return None if self._done else self._mask

    def _observation(self) -> NDArray[np.int8]:
        assert self.state is not None
        return observation_tensor(self.state)

    def _info(self) -> dict[str, Any]:
        assert self.state is not None
        return {
            "action_mask": self._mask.copy(),
            "pegs_left": self.state.pegs_left,
            "is_success": solitaire_rules.is_won(self.state),
            "illegal_action": False,
        }

    def action_masks(self) -> NDArray[np.bool_]:
        """Legal actions as booleans (what sb3-contrib's MaskablePPO asks for)."""
        return self._mask.astype(bool)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[NDArray[np.int8], dict[str, Any]]:
        super().reset(seed=seed)
        self.state = deal_from(self.np_random, self.solvable_only)
        self._mask = solitaire_rules.legal_action_mask(self.state)
        self._done = not self._mask.any()
        self._last_action = -1
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[NDArray[np.int8], float, bool, bool, dict[str, Any]]:
        """One capture (``49 * from_hole + to_hole``); Gymnasium's ``(observation, reward,
        terminated, truncated, info)``.  An illegal action ends the episode lost with reward -1
        (``illegal_action="raise"``: ``ValueError``)."""
        if self.state is None or self._done:
            raise RuntimeError("the episode has ended (or never started): call reset() before step()")
        action = check_int_action(action, solitaire_rules.NUM_ACTIONS)
        if not self._mask[action]:
            if self.illegal_action == "raise":
                raise ValueError(solitaire_rules.explain_illegal(self.state, action))
            self._done = True  # "lose": the episode ends lost, board unchanged
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        solitaire_rules.apply_inplace(self.state, action)
        self._last_action = action
        self._mask = solitaire_rules.legal_action_mask(self.state)
        won = solitaire_rules.is_won(self.state)
        self._done = won or not self._mask.any()
        reward = 1.0 if won else 0.0
        if self.reward_mode == "shaped":
            reward += 1.0 / TOTAL_CAPTURES
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self._done, False, self._info()

    def _status(self) -> str:
        assert self.state is not None
        colour = "Fire" if self.state.to_move == FIRE else "Ice"
        if solitaire_rules.is_won(self.state):
            return "Solved: one peg left"
        last = "" if self._last_action < 0 else f", last {action_to_notation(self._last_action)}"
        if self._done:
            return f"Lost: {colour} has no capture, {self.state.pegs_left} pegs left{last}"
        return f"{colour} to capture, {self.state.pegs_left} pegs left{last}"

    def render(self) -> str | NDArray[np.uint8] | None:
        if self.state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to the constructor")
            return None
        if self.render_mode == "ansi":
            return render.render_ansi(self.state.board, self._status(), show_control=False)
        highlight = self._last_action % 49 if self._last_action >= 0 else -1
        frame = render.render_rgb(
            self.state.board, self._status(), highlight, show_control=False, hole_labels=self.render_hole_labels
        )
        if self.render_mode == "rgb_array":
            return frame
        from polarzoo.envs._common.render import HumanWindow

        if self._window is None:
            self._window = HumanWindow(self.metadata["name"], frame.shape[1], frame.shape[0])
        self._window.show(frame, self.metadata["render_fps"])
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
