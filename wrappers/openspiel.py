"""The games inside OpenSpiel: importing this module registers them with ``pyspiel``.

    import pyspiel
    import polarzoo.wrappers.openspiel  # registers the games below
    game = pyspiel.load_game("polarzoo_fire_and_ice(handicap=2,seed=7)")

| OpenSpiel name | players | parameters | the PettingZoo / Gymnasium env it matches |
|---|---|---|---|
| `polarzoo_fire_and_ice` | 2 (0 fire, 1 ice) | `handicap` 0..6, `handicap_player` `"fire"` / `"ice"`, `seed` | `fire_and_ice_v0` after `reset(seed=seed)` |
| `polarzoo_go_with_the_floe` | 2 (0 black seals, 1 white bears) | none (a single game) | `go_with_the_floe_v0` (`match=False`) |
| `polarzoo_fire_and_ice_solitaire` | 1 | `seed`, `solvable_only` | `polarzoo/FireAndIceSolitaire-v0` after `reset(seed=seed)` |

Each is a Python ``pyspiel.Game`` on the project's rules layer (no copy of the rules): the legal
actions and action ids are the envs' (the mask's non-zero entries), ``action_to_string`` is the
games' notation (``"D4-A4"``, ``"G2xF3"``), ``returns`` the envs' final rewards (+1 / -1, 0 for
a draw; the solitaire +1 for one peg left), observation tensors the envs' encodings (through
OpenSpiel's observer API: ``make_observation(game)``, ``state.observation_tensor(player)``,
shape ``game.observation_tensor_shape()``), and ``str(state)`` the env's ``ansi`` board.  The
random handicap pegs and the solitaire's deal come from ``seed`` exactly as the env's
``reset(seed=seed)`` draws them, so the games are deterministic (no chance nodes).  The
information state is OpenSpiel's own for public-information games (the history); its tensor is
not provided.  Go with the Floe's two-game match play is not registered: its score needs the
empty squares of both games, which OpenSpiel's one-game returns would hide.

Needs the optional extra: ``pip install "polarzoo[openspiel]"``.  Thin Ice is not registered:
its moves are decided by a physics simulation with continuous hand tremor, which has no finite
set of chance outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('polarzoo.wrappers.openspiel needs OpenSpiel: pip install "polarzoo[openspiel]"') from error

from open_spiel.python.observation import IIGObserverForPublicInfoGame

from polarzoo.envs import GAMES
from polarzoo.envs.fire_and_ice import kernels as fire_kernels
from polarzoo.envs.fire_and_ice import render as fire_render
from polarzoo.envs.fire_and_ice import rules as fire_rules
from polarzoo.envs.fire_and_ice import solitaire_rules
from polarzoo.envs.fire_and_ice.encoding import OBSERVATION_SHAPE as FIRE_OBSERVATION_SHAPE
from polarzoo.envs.fire_and_ice.encoding import observation_tensor as fire_observation
from polarzoo.envs.fire_and_ice.env import raw_env as fire_env
from polarzoo.envs.fire_and_ice.solitaire_env import deal_from
from polarzoo.envs.fire_and_ice.solitaire_env import observation_tensor as solitaire_observation
from polarzoo.envs.go_with_the_floe import kernels as floe_kernels
from polarzoo.envs.go_with_the_floe import render as floe_render
from polarzoo.envs.go_with_the_floe import rules as floe_rules
from polarzoo.envs.go_with_the_floe.encoding import OBSERVATION_SHAPE as FLOE_OBSERVATION_SHAPE
from polarzoo.envs.go_with_the_floe.encoding import observation_tensor as floe_observation
from polarzoo.envs.go_with_the_floe.env import raw_env as floe_env

FIRE_AND_ICE = str(GAMES["fire_and_ice_v0"].openspiel)  # each game's fact, declared once in its GameInfo
GO_WITH_THE_FLOE = str(GAMES["go_with_the_floe_v0"].openspiel)
SOLITAIRE = "polarzoo_fire_and_ice_solitaire"


def _seeded_generator(seed: int) -> np.random.Generator:
    """The generator an env's ``reset(seed=seed)`` makes (Gymnasium's seeding)."""
    from gymnasium.utils import seeding

    return seeding.np_random(int(seed))[0]


def _game_type(short_name: str, long_name: str, players: int, parameters: dict[str, Any], zero_sum: bool) -> Any:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players,
        min_num_players=players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters,
    )


def _two_player_zero_sum_info(num_actions: int, max_game_length: int) -> Any:
    """A win-loss game's facts: +1 to the winner, -1 to the loser."""
    return pyspiel.GameInfo(
        num_distinct_actions=num_actions,
        max_chance_outcomes=0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=max_game_length,
    )


class _TensorObserver:
    """OpenSpiel's PyObserver for the envs' observation tensors (``observation`` view)."""

    def __init__(self, shape: tuple[int, ...], fill: Any, text: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}
        self._fill, self._text = fill, text

    def set_from(self, state: Any, player: int) -> None:
        self.dict["observation"][...] = self._fill(state, player)

    def string_from(self, state: Any, player: int) -> str:
        return self._text(state, player)


class _Game(pyspiel.Game):
    """What the three games share: the observer factory."""

    observation_shape: tuple[int, ...] = ()
    #: the game's ``pyspiel.State`` class, made from the game
    state_class: Callable[[Any], pyspiel.State]
    #: the observation tensor of (a rules state, a player)
    observe: Callable[[Any, int], np.ndarray]

    def new_initial_state(self) -> pyspiel.State:
        return self.state_class(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> Any:
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _TensorObserver(self.observation_shape, self._observation_of, lambda state, player: str(state), params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)

    def _observation_of(self, state: Any, player: int) -> np.ndarray:
        return type(self).observe(state.rules_state, player)


class _TwoPlayerState(pyspiel.State):
    """What the two board games' states share: a rules ``State`` with ``to_move``, ``winner`` and
    ``plies``, the env's ply cap (a draw), and the rules module's zero-sum ``returns``."""

    rules: Any = None

    def __init__(self, game: pyspiel.Game, rules_state: Any) -> None:
        super().__init__(game)
        self.rules_state = rules_state
        self._max_plies = game.max_game_length()

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self.is_terminal() else int(self.rules_state.to_move)

    def is_terminal(self) -> bool:
        return self.rules_state.winner >= 0 or self.rules_state.plies >= self._max_plies

    def returns(self) -> list[float]:
        return [float(r) for r in self.rules.returns(self.rules_state)]


def require_legal(state: Any, action: Any) -> int:
    """``action`` as an int if it is legal in ``state``; otherwise ``ValueError`` (``TypeError``
    for a non-integer) naming it, before anything changes: pyspiel applies whatever it is given."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"{state.get_game().get_type().short_name}: an action is an int, got {action!r}")
    legal = state.legal_actions()
    if int(action) not in legal:
        where = "the game is over" if state.is_terminal() else f"{len(legal)} legal actions here"
        raise ValueError(
            f"{state.get_game().get_type().short_name}: action {action} is not legal ({where}); state.legal_actions() lists them"
        )
    return int(action)


def _parameter_error(game: str, message: str) -> ValueError:
    return ValueError(f"{game}: {message}")


# ------------------------------------------------------------------------------ Fire & Ice
_FIRE_TYPE = _game_type(FIRE_AND_ICE, "polarzoo Fire & Ice", 2, {"handicap": 0, "handicap_player": "ice", "seed": 0}, True)
_FIRE_INFO = _two_player_zero_sum_info(fire_rules.NUM_ACTIONS, fire_env.max_plies)


class FireAndIceState(_TwoPlayerState):
    rules = fire_rules

    def __init__(self, game: FireAndIceGame) -> None:
        super().__init__(
            game,
            fire_rules.initial_state(
                game.handicap, fire_rules.COLOUR_NAMES.index(game.handicap_player), rng=_seeded_generator(game.seed)
            ),
        )
        self._scratch = np.empty(fire_rules.NUM_HOLES, dtype=np.int8)

    def _legal_actions(self, player: int) -> list[int]:
        mask = np.empty(fire_rules.NUM_ACTIONS, dtype=np.int8)
        state = self.rules_state
        fire_kernels.write_mask(state.board, state.to_move, state.winner, mask, self._scratch)
        return np.flatnonzero(mask).tolist()

    def _apply_action(self, action: int) -> None:
        fire_rules.apply_inplace(self.rules_state, require_legal(self, action))

    def _action_to_string(self, player: int, action: int) -> str:
        return fire_rules.action_to_notation(int(action))

    def __str__(self) -> str:
        state = self.rules_state
        if state.winner >= 0:
            status = f"{fire_rules.COLOUR_NAMES[state.winner].capitalize()} wins after {state.moves_made} moves"
        else:
            status = f"{fire_rules.COLOUR_NAMES[state.to_move].capitalize()} to move (move {state.moves_made + 1})"
        return fire_render.render_ansi(state.board, status)


class FireAndIceGame(_Game):
    """Fire & Ice (``fire_and_ice_v0``) in OpenSpiel; see the module docstring."""

    observation_shape = FIRE_OBSERVATION_SHAPE
    state_class = FireAndIceState
    observe = staticmethod(fire_observation)

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(_FIRE_TYPE, _FIRE_INFO, params or {})
        values = self.get_parameters()
        self.handicap, self.handicap_player, self.seed = (
            int(values["handicap"]),
            str(values["handicap_player"]),
            int(values["seed"]),
        )
        if not 0 <= self.handicap < fire_rules.NUM_ISLANDS:
            raise _parameter_error(FIRE_AND_ICE, f"handicap must be 0..{fire_rules.NUM_ISLANDS - 1}, got {self.handicap}")
        if self.handicap_player not in fire_rules.COLOUR_NAMES:
            raise _parameter_error(FIRE_AND_ICE, f"handicap_player must be 'fire' or 'ice', got {self.handicap_player!r}")
        if self.seed < 0:
            raise _parameter_error(FIRE_AND_ICE, f"seed must be >= 0, got {self.seed}")


# ------------------------------------------------------------------------------ Go with the Floe
_FLOE_TYPE = _game_type(GO_WITH_THE_FLOE, "polarzoo Go with the Floe", 2, {}, True)
_FLOE_INFO = _two_player_zero_sum_info(floe_rules.NUM_ACTIONS, floe_env.max_plies)


class GoWithTheFloeState(_TwoPlayerState):
    rules = floe_rules

    def __init__(self, game: GoWithTheFloeGame) -> None:
        super().__init__(game, floe_rules.initial_state())

    def _legal_actions(self, player: int) -> list[int]:
        return floe_rules.legal_actions(self.rules_state).tolist()

    def _apply_action(self, action: int) -> None:
        floe_rules.apply_inplace(self.rules_state, require_legal(self, action), decide=floe_kernels.decide)

    def _action_to_string(self, player: int, action: int) -> str:
        return floe_rules.action_to_notation(int(action), self.rules_state)

    def __str__(self) -> str:
        state = self.rules_state
        if state.winner >= 0:
            status = f"{floe_rules.COLOUR_NAMES[state.winner].capitalize()} wins, {floe_rules.empty_squares(state)} empty squares"
        else:
            status = f"{floe_rules.COLOUR_NAMES[state.to_move].capitalize()} to move (ply {state.plies + 1})"
        return floe_render.render_ansi(state, status)


class GoWithTheFloeGame(_Game):
    """Go with the Floe (``go_with_the_floe_v0``, one game) in OpenSpiel; player 0 is Black."""

    observation_shape = FLOE_OBSERVATION_SHAPE
    state_class = GoWithTheFloeState
    observe = staticmethod(floe_observation)

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(_FLOE_TYPE, _FLOE_INFO, params or {})


# ------------------------------------------------------------------------------ the solitaire
_SOLITAIRE_TYPE = _game_type(SOLITAIRE, "polarzoo Fire & Ice Solitaire", 1, {"seed": 0, "solvable_only": False}, False)
_SOLITAIRE_INFO = pyspiel.GameInfo(
    num_distinct_actions=solitaire_rules.NUM_ACTIONS,
    max_chance_outcomes=0,
    num_players=1,
    min_utility=0.0,
    max_utility=1.0,
    max_game_length=solitaire_rules.TOTAL_CAPTURES,
)


class SolitaireState(pyspiel.State):
    def __init__(self, game: SolitaireGame) -> None:
        super().__init__(game)
        self.rules_state = game._deal.copy()

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self.is_terminal() else 0

    def _legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(solitaire_rules.legal_action_mask(self.rules_state)).tolist()

    def _apply_action(self, action: int) -> None:
        solitaire_rules.apply_inplace(self.rules_state, require_legal(self, action))

    def _action_to_string(self, player: int, action: int) -> str:
        return solitaire_rules.action_to_notation(int(action))

    def is_terminal(self) -> bool:
        return solitaire_rules.is_over(self.rules_state)

    def returns(self) -> list[float]:
        return [1.0 if solitaire_rules.is_won(self.rules_state) else 0.0]

    def __str__(self) -> str:
        state = self.rules_state
        mover = fire_rules.COLOUR_NAMES[state.to_move].capitalize()
        return fire_render.render_ansi(state.board, f"{state.pegs_left} pegs, {mover} to capture", show_control=False)


class SolitaireGame(_Game):
    """Fire & Ice Solitaire (``polarzoo/FireAndIceSolitaire-v0``) in OpenSpiel: one player, the
    deal of ``reset(seed=seed)``; +1 for the capture that leaves one peg."""

    observation_shape = (fire_rules.NUM_ISLANDS, fire_rules.NUM_POSITIONS, 2)
    state_class = SolitaireState
    observe = staticmethod(lambda rules_state, player: solitaire_observation(rules_state))

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(_SOLITAIRE_TYPE, _SOLITAIRE_INFO, params or {})
        values = self.get_parameters()
        self.seed, self.solvable_only = int(values["seed"]), bool(values["solvable_only"])
        if self.seed < 0:
            raise _parameter_error(SOLITAIRE, f"seed must be >= 0, got {self.seed}")
        self._deal = deal_from(_seeded_generator(self.seed), self.solvable_only)


for _type, _class in ((_FIRE_TYPE, FireAndIceGame), (_FLOE_TYPE, GoWithTheFloeGame), (_SOLITAIRE_TYPE, SolitaireGame)):
    if _type.short_name not in pyspiel.registered_names():
        pyspiel.register_game(_type, _class)

__all__ = ["FIRE_AND_ICE", "GO_WITH_THE_FLOE", "SOLITAIRE", "FireAndIceGame", "GoWithTheFloeGame", "SolitaireGame"]
