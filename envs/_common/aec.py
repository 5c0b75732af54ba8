"""A PettingZoo AEC base class for turn-based games backed by a pure rules core.

Everything that is the same for every turn-based game lives here once: seeding, the
agent/seat bookkeeping, reward accumulation, PettingZoo's ``_was_dead_step`` after the end,
validation of the action's type and legality, cached spaces and masks, and render dispatch.
A game supplies a handful of hooks (``_new_game``, ``_current_seat``, ``_legal_mask``,
``_explain_illegal``, ``_apply``, ``_outcome``, ``_observation``) and its spaces.

Above the PettingZoo API, an env describes itself through public methods that the layers above
read (the terminal, the web page, the replay viewer, agents): :meth:`~TurnBasedAECEnv.status`,
:meth:`~TurnBasedAECEnv.describe`, :meth:`~TurnBasedAECEnv.move_parts`,
:meth:`~TurnBasedAECEnv.explain_illegal`, :meth:`~TurnBasedAECEnv.render_text`,
:meth:`~TurnBasedAECEnv.render_picture`, :meth:`~TurnBasedAECEnv.snapshot` /
:meth:`~TurnBasedAECEnv.restore`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numpy.typing import NDArray
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger


def check_int_action(action: Any, num_actions: int) -> int:
    """Return ``action`` as a Python int; ``TypeError`` if not an integer, ``ValueError`` if out of range."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            action = action.item()
        else:
            raise TypeError(f"action must be an integer in 0..{num_actions - 1}, got {action!r} of type {type(action).__name__}")
    action = int(action)
    if not 0 <= action < num_actions:
        raise ValueError(f"action {action} is out of range 0..{num_actions - 1}")
    return action


def check_choice(name: str, value: Any, valid: tuple | list | range) -> Any:
    """Raise ``ValueError`` listing the valid values when ``value`` is not one of them; a range
    takes whole numbers only (``3.0`` is refused, NumPy integers are accepted).  Returns the
    value (a plain ``int`` for a range)."""
    if isinstance(valid, range):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or int(value) not in valid:
            raise ValueError(f"{name} must be a whole number in {valid[0]}..{valid[-1]}; got {value!r}")
        return int(value)
    if isinstance(value, (bool, np.bool_)) or value not in valid:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, valid))}; got {value!r}")
    return value


def check_number(name: str, value: Any, low: float, high: float, unit: str = "") -> float:
    """``value`` as a float when it is a real number in [low, high] (NumPy scalars included);
    otherwise ``ValueError`` naming ``name``, the range and its unit."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not np.isfinite(value)
        or not low <= float(value) <= high
    ):
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}]{' ' + unit if unit else ''}; got {value!r}")
    return float(value)


def pettingzoo_wrappers(env: AECEnv, illegal_reward: float = -1.0) -> AECEnv:
    """PettingZoo's three standard wrappers for classic games, stacked as PettingZoo does."""
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def _fast_attribute(name: str) -> property:
    def getter(self: StandardWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(getter)


class StandardWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` + ``AssertOutOfBoundsWrapper`` +
    ``OrderEnforcingWrapper`` folded into one layer with the same behaviour.

    The stack of three costs about half the step rate of a cheap game, mostly in attribute
    look-ups that travel down the chain through ``__getattr__``; here the attributes an AEC loop
    reads are properties that go straight to the env.  It is still an ``OrderEnforcingWrapper``
    (``agent_iter`` and ``isinstance`` checks work as usual).
    ``tests/test_wrappers_equivalence.py`` plays both side by side.
    """

    agent_selection = _fast_attribute("agent_selection")
    terminations = _fast_attribute("terminations")
    truncations = _fast_attribute("truncations")
    rewards = _fast_attribute("rewards")
    infos = _fast_attribute("infos")
    agents = _fast_attribute("agents")

    def __init__(self, env: AECEnv, illegal_reward: float = -1.0) -> None:
        super().__init__(env)
        self._illegal_value = illegal_reward
        self._prev_obs: Any = None
        self._terminated = False

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._terminated = False
        self._prev_obs = None
        super().reset(seed=seed, options=options)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        # Observed through self.observe, as PettingZoo's wrappers do, so that step() reuses the
        # mask of this observation instead of computing the observation again.
        _, reward, terminated, truncated, info = self.env.last(observe=False)
        return (self.observe(self.env.agent_selection) if observe else None), reward, terminated, truncated, info

    def observe(self, agent: str) -> Any:
        observation = super().observe(agent)
        if agent == self.env.agent_selection:
            self._prev_obs = observation
        return observation

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
            return
        raw = self.env
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        # AssertOutOfBoundsWrapper, after reading any integer (NumPy scalars of every integer
        # type, 0-d arrays) as a Python int; a bool, float or array is a TypeError that says so.
        if type(action) is not int and not (action is None and dead):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = action.item()
            elif isinstance(action, np.integer):
                action = int(action)
            else:
                check_int_action(action, raw.action_space(agent).n)  # raises the TypeError
        if not (action is None and dead):
            n = raw.action_space(agent).n
            assert 0 <= action < n, f"action {action} is not in action space Discrete({n})"
        # TerminateIllegalWrapper
        if self._prev_obs is None:
            self.observe(agent)
        mask = self._prev_obs["action_mask"]
        self._prev_obs = None
        if self._terminated and dead:
            raw.unwrapped._was_dead_step(action)
        elif not dead and not mask[action]:
            EnvLogger.warn_on_illegal_move()
            unwrapped = raw.unwrapped
            unwrapped._cumulative_rewards[agent] = 0
            unwrapped.terminations = dict.fromkeys(unwrapped.agents, True)
            unwrapped.truncations = dict.fromkeys(unwrapped.agents, True)
            unwrapped.rewards = dict.fromkeys(unwrapped.truncations, 0)
            unwrapped.rewards[agent] = float(self._illegal_value)
            unwrapped._accumulate_rewards()
            unwrapped._deads_step_first()
            self._terminated = True
        else:
            raw.step(action)


def default_wrappers(env: AECEnv, illegal_reward: float = -1.0) -> AECEnv:
    """The standard wrappers for ``env()`` (illegal move -> game over, -1 for the mover)."""
    return StandardWrapper(env, illegal_reward)


def turn_based_parallel(env: AECEnv) -> Any:
    """The parallel API over a turn-based AEC env: every agent submits an action each step and
    only the one whose turn it is counts (PettingZoo's ``turn_based_aec_to_parallel``, with
    its bad inputs named: a step before ``reset``, actions that are not a dict, unknown agents,
    no action for the agent to act)."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

    class TurnBasedParallel(turn_based_aec_to_parallel_wrapper):
        def step(self, actions: Any) -> Any:
            if not hasattr(self, "agents"):
                raise RuntimeError("parallel_env: call reset() before step()")
            if not isinstance(actions, dict):
                raise TypeError(f"parallel_env.step takes a dict {{agent: action}}; got {type(actions).__name__}")
            if self.agents:
                unknown = sorted(set(actions) - set(self.possible_agents), key=str)
                if unknown:
                    raise ValueError(f"unknown agents {unknown} in actions; the agents are {self.agents}")
                mover = self.aec_env.agent_selection
                if mover not in actions:
                    raise ValueError(
                        f"actions has no action for {mover!r}, the agent to act "
                        f"(give every live agent one; only the mover's counts)"
                    )
            return super().step(actions)

    return TurnBasedParallel(env)


def env_metadata(name: str, render_fps: int = 2) -> dict[str, Any]:
    """An env class's PettingZoo ``metadata``: its name, the three render modes, turn-based."""
    return {"name": name, **TurnBasedAECEnv.metadata, "render_fps": render_fps}


class TurnBasedAECEnv(AECEnv):
    """Base AEC env: one agent acts at a time, chosen by the rules core.

    Subclasses set ``metadata``, ``possible_agents`` and ``num_actions`` (by default their
    ``rules.NUM_ACTIONS``) and build ``self.observation_spaces`` / ``self.action_spaces`` in
    ``__init__`` (:meth:`_init_spaces`) before calling ``super().__init__``.
    """

    # Turn-based games are not "parallelizable" in PettingZoo's sense (aec_to_parallel needs every
    # agent to act each step); parallel_env() uses the turn-based conversion instead.
    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array", "human"], "is_parallelizable": False}
    num_actions: int
    #: The pure rules module of a board game (search agents play on ``self.state`` with it).
    rules: ModuleType
    #: Its compiled kernels (random playouts for search agents: ``kernels.playout_winner``).
    kernels: ModuleType
    #: Safety cap on actions per game; reaching it truncates (no rewards).
    max_plies: int = 10_000

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the action count is the rules' fact: a game whose rules state it need not repeat it
        if "num_actions" not in cls.__dict__ and hasattr(cls.__dict__.get("rules"), "NUM_ACTIONS"):
            cls.num_actions = int(cls.rules.NUM_ACTIONS)

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__()
        valid_modes = [None, *self.metadata["render_modes"]]
        check_choice("render_mode", render_mode, valid_modes)
        self.render_mode = render_mode
        self.np_random, _ = seeding.np_random(None)
        self._window: Any = None
        self._mask: NDArray[np.int8] = np.zeros(self.num_actions, dtype=np.int8)  # set by reset
        self._no_mask = np.zeros(self.num_actions, dtype=np.int8)
        self.agents: list[str] = []

    #: What ``reset()`` sets: read before it, each is an AttributeError that says so (as
    #: PettingZoo's order-enforcing wrapper says it for ``env()``).
    SET_BY_RESET = frozenset(("agent_selection", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards"))

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes not found: the ones reset() sets get a message that says why.
        if name in TurnBasedAECEnv.SET_BY_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset(): call env.reset() first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _init_spaces(self, observation: spaces.Space | NDArray[np.int8]) -> None:
        """The same Dict(observation, action_mask) and Discrete space objects for every agent
        (PettingZoo's api_test wants the very same object on every call); ``observation`` is a
        space, or the upper bounds of a board's int8 planes (a ``Box`` from 0 to them)."""
        if isinstance(observation, np.ndarray):
            observation = spaces.Box(low=0, high=observation, dtype=np.int8)
        obs_space = spaces.Dict({"observation": observation, "action_mask": spaces.Box(0, 1, (self.num_actions,), dtype=np.int8)})
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(self.num_actions) for agent in self.possible_agents}

    # ---- hooks ------------------------------------------------------------------------------
    def _new_game(self, options: dict[str, Any] | None) -> None:
        raise NotImplementedError

    def _current_seat(self) -> int:
        raise NotImplementedError

    def _legal_mask(self) -> NDArray[np.int8]:
        raise NotImplementedError

    def _explain_illegal(self, action: int) -> str:
        """Say why a masked-out action is illegal (message for the ``ValueError``)."""
        return f"illegal action {action}"

    def _apply(self, action: int) -> None:
        raise NotImplementedError

    def _outcome(self) -> NDArray[np.float32] | None:
        """Per-seat rewards when the game has just ended, else ``None``."""
        raise NotImplementedError

    def _plies(self) -> int:
        raise NotImplementedError

    def _observation(self, seat: int) -> NDArray:
        raise NotImplementedError

    def action_to_notation(self, action: int) -> str:
        """Human-readable form of an action (e.g. ``"D4-A4"``)."""
        return str(action)

    def colour_of(self, agent: str) -> int:
        """The rules core's colour (seat) that ``agent`` plays in the current game."""
        return self._seat_of(agent)

    def _seat_of(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _agent_of(self, seat: int) -> str:
        return self.possible_agents[seat]

    def _initial_info(self) -> dict[str, Any]:
        """Every key of this env's infos with its value before the game ends.  Infos hold only
        numbers (and numpy arrays), with the same keys on every step, so that libraries that
        stack infos into arrays (Tianshou, RLlib) can; readable results are in :meth:`result`."""
        return {}

    def _end_infos(self) -> dict[str, dict[str, Any]]:
        """Updated info values per agent when the game ends (the keys of :meth:`_initial_info`)."""
        return {}

    def result(self) -> dict[str, Any]:
        """The game's result in readable form (winner names, rules, per-game results)."""
        return {}

    # ---- what the env says about itself --------------------------------------------------------
    def status(self) -> str:
        """One line: whose move it is and the last move, or the result once over."""
        return self._render_ansi().splitlines()[0]

    def describe(self, pictures: bool = True) -> dict[str, Any]:
        """The position as JSON-ready data for boards and pages: ``status`` always; a board game
        (``GameInfo.view == "board"``) adds ``svg``, whose cells carry ``data-cell`` numbers
        (``pictures=False``: without it, for a program that reads the position)."""
        return {"status": self.status()}

    def move_parts(self, action: int) -> dict[str, Any]:
        """``action`` in parts a page can click: ``action`` and ``notation`` always; a board game
        adds ``from`` / ``to`` cells (``to`` alone for a placement, neither for a pass)."""
        return {"action": int(action), "notation": self.action_to_notation(action)}

    def explain_illegal(self, action: int) -> str:
        """Why ``action`` is not legal for the agent to act (one line), whatever the action."""
        self._require_reset("explain_illegal")
        try:
            action = check_int_action(action, self.num_actions)
        except (TypeError, ValueError) as error:
            return str(error)
        return "it is legal" if self._mask[action] else self._explain_illegal(action)

    def render_text(self) -> str:
        """The ``ansi`` picture, whatever ``render_mode`` the env was made with."""
        return self._render_ansi()

    def render_picture(self) -> NDArray[np.uint8]:
        """The ``rgb_array`` picture, whatever ``render_mode`` the env was made with."""
        return self._render_rgb()

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to continue this game exactly (for undo and searches); give it back
        to :meth:`restore`.  The default copies the env's whole state."""
        import copy

        return {"state": copy.deepcopy(self.__getstate__())}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Put back a :meth:`snapshot` of this env; ``ValueError`` for anything else."""
        import copy

        if not isinstance(snapshot, dict) or not isinstance(snapshot.get("state"), dict):
            raise ValueError("restore() takes a dict from this env's snapshot()")
        window = self._window
        self.__dict__.update(copy.deepcopy(snapshot["state"]))
        self._window = window

    # ---- PettingZoo API ---------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: self._initial_info() for agent in self.agents}
        self._departed: dict[str, tuple[bool, bool, dict[str, Any]]] = {}
        self._new_game(options)
        self._mask = self._legal_mask()
        self.agent_selection = self._agent_of(self._current_seat())
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, NDArray]:
        """The observation of any possible agent at any time after ``reset``, also after it has
        left the game (as PettingZoo's classic games do): an all-zero mask unless it is to act."""
        self._require_reset("observe")
        seat = self._seat_of(agent)
        if (
            agent == self.agent_selection
            and agent in self.agents
            and not (self.terminations.get(agent, True) or self.truncations.get(agent, True))
        ):
            mask = self._mask.copy()
        else:
            mask = self._no_mask.copy()
        return {"observation": self._observation(seat), "action_mask": mask}

    def _was_dead_step(self, action: Any) -> None:
        agent = self.agent_selection
        # Kept so that last() still answers after the agent has left (PettingZoo deletes it).
        self._departed[agent] = (bool(self.terminations[agent]), bool(self.truncations[agent]), self.infos[agent])
        super()._was_dead_step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As PettingZoo's ``last()``, and still valid after the game: an agent that has left
        gets its final observation (all-zero mask), reward 0 and its final flags and infos."""
        self._require_reset("last")
        agent = self.agent_selection
        if agent in self.terminations:
            return super().last(observe)
        terminated, truncated, info = self._departed.get(agent, (True, False, {}))
        return (self.observe(agent) if observe else None), 0.0, terminated, truncated, info

    def _truncated(self) -> bool:
        """Whether the episode stops here without an outcome (the ply cap; Thin Ice adds physics
        failures)."""
        return self._plies() >= self.max_plies

    def legal_action_mask(self) -> NDArray[np.int8]:
        """The int8 mask of the agent to act (a copy)."""
        return self._mask.copy()

    def _require_reset(self, what: str) -> None:
        if not hasattr(self, "agent_selection"):
            raise RuntimeError(f"{self.metadata.get('name', 'env')}: call reset() before {what}()")

    def step(self, action: Any) -> None:
        self._require_reset("step")
        agent = self.agent_selection
        if agent not in self.terminations:
            raise RuntimeError(f"{self.metadata.get('name', 'env')}: the game is over and every agent has left; call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = check_int_action(action, self.num_actions)
        if not self._mask[action]:
            raise ValueError(self._explain_illegal(action))
        self._cumulative_rewards[agent] = 0.0
        self._apply(action)
        self._mask = self._legal_mask()
        self.rewards = {name: 0.0 for name in self.agents}
        outcome = self._outcome()
        if outcome is not None:
            for seat, reward in enumerate(outcome):
                self.rewards[self._agent_of(seat)] = float(reward)
            self.terminations = {name: True for name in self.agents}
            for name, extra in self._end_infos().items():
                self.infos[name] = {**self.infos[name], **extra}
        elif self._truncated():
            self.truncations = {name: True for name in self.agents}
        self.agent_selection = self._agent_of(self._current_seat())
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ---- rendering --------------------------------------------------------------------------
    def _render_ansi(self) -> str:
        raise NotImplementedError

    def _render_rgb(self) -> NDArray[np.uint8]:
        raise NotImplementedError

    def render(self) -> str | NDArray[np.uint8] | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to the constructor")
            return None
        if self.render_mode == "ansi":
            return self._render_ansi()
        frame = self._render_rgb()
        if self.render_mode == "rgb_array":
            return frame
        from polarzoo.envs._common.render import HumanWindow

        if self._window is None:
            self._window = HumanWindow(self.metadata["name"], frame.shape[1], frame.shape[0])
        self._window.show(frame, self.metadata.get("render_fps", 4))
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_window"] = None  # a window cannot be pickled; it reopens on the next render
        return state
