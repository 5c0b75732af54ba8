"""A single-agent ``gymnasium.Env`` view of any of our AEC envs.

The learner plays one seat; every other seat is played *inside* the env by an opponent: any
object with ``act(env, agent, rng) -> action`` (the agents of :mod:`polarzoo.baselines.agents`)
or such a callable, drawn per episode from a pool (default: uniformly random legal moves).  Unlike PettingZoo's SB3 tutorial,
where one model plays both seats and only ever sees the mover's reward, the learner here
receives every reward addressed to its own agent, including the -1 that lands on it when an
opponent's move ends the game.

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.baselines.agents import RandomAgent
    env = SingleAgentEnv("fire_and_ice_v0", opponents=[RandomAgent()], learner_seat="alternate")
    model = MaskablePPO("MlpPolicy", env)          # finds env.action_masks()

Works in ``DummyVecEnv`` and ``SubprocVecEnv`` (opponents are pickled into the subprocess;
``add_opponent`` can be called through ``env_method``), and for Thin Ice's N seats.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from polarzoo.envs import ENVIRONMENTS, GAMES, games_with_player_range
from polarzoo.envs.utils import LegalDiscrete, check_choice


def observation_scale(raw_space: gym.spaces.Box) -> NDArray[np.float32]:
    """Per-element factors that map a raw observation into [0, 1] (flattened)."""
    high = np.asarray(raw_space.high, dtype=np.float32).ravel()
    return np.where(high > 0, 1.0 / np.maximum(high, 1e-12), 1.0).astype(np.float32)


def normalize(observation: NDArray, scale: NDArray[np.float32]) -> NDArray[np.float32]:
    return observation.ravel().astype(np.float32) * scale


def random_legal_opponent(env: Any, agent: str, rng: np.random.Generator) -> int:
    """The default opponent: a uniformly random legal action."""
    return int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))


def seat_odds(weights: Mapping[str, float], seats: Sequence[str]) -> NDArray[np.float64]:
    """Probabilities over ``seats`` from a ``{seat name: weight}`` mapping (missing seats 0);
    one clear ``ValueError`` for an unknown seat, a negative or non-numeric weight, or all zero."""
    odds = np.zeros(len(seats))
    for seat, weight in weights.items():
        if seat not in seats:
            raise ValueError(f"learner_seat: unknown seat {seat!r}; seats are {', '.join(map(repr, seats))}")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0:
            raise ValueError(f"learner_seat: the weight of {seat!r} must be a number >= 0, got {weight!r}")
        odds[seats.index(seat)] = float(weight)
    if odds.sum() <= 0:
        raise ValueError("learner_seat: the seat weights must not all be 0")
    return odds / odds.sum()


def check_weights(name: str, weights: Any, count: int) -> list[float]:
    """``weights`` as floats when it is ``count`` finite numbers >= 0, not all zero; otherwise
    ``ValueError`` naming ``name``."""
    try:
        values = [float(w) for w in weights]
        numeric = all(not isinstance(w, (bool, np.bool_, str)) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers >= 0 (one per opponent); got {weights!r}") from None
    if not numeric or len(values) != count or not all(np.isfinite(v) and v >= 0 for v in values) or (count and not any(values)):
        raise ValueError(f"{name} must be {count} number(s) >= 0, not all 0 (one per opponent); got {list(weights)!r}")
    return values


def player_counts(env_id: str, num_players: Any) -> list[int] | None:
    """``num_players`` as a list of player counts (a game with a range of table sizes, such as Thin
    Ice: each a whole number in its range), or None when it is not a list (one count, the env's
    own check); ``ValueError`` naming the problem."""
    if not isinstance(num_players, (list, tuple)):
        return None
    info = GAMES.get(env_id)
    if info is None or not info.variable_players:
        titles = " and ".join(f"{GAMES[game].title}'s" for game in games_with_player_range())
        raise ValueError(f"num_players as a list (a count drawn per episode) is {titles}; {env_id} takes one number")
    low, high = info.players
    if not num_players or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and low <= n <= high for n in num_players
    ):
        raise ValueError(f"num_players must be a list of whole numbers {low}..{high}, got {list(num_players)!r}")
    return [int(n) for n in num_players]


class SingleAgentEnv(gym.Env):
    """One learner seat against opponent agents inside the env.

    Args:
        env_id: an id of ``polarzoo.envs.ENVIRONMENTS`` (e.g. ``"fire_and_ice_v0"``).
        opponents: the pool; each episode draws one agent per opponent seat (uniformly, or by
            ``opponent_weights``): objects with ``act(env, agent, rng)`` or such callables.
            Default: uniformly random legal moves.
        learner_seat: ``"alternate"`` (seat 0, 1, ... in turn per episode), ``"random"``, a
            seat index / agent name to always play, or a mapping ``{agent name: weight}`` to draw
            the learner's seat each episode with those odds (e.g. ``{"white": 3, "black": 1}``
            for a seat whose reward is rarer); seats left out are never played.
        env_kwargs: constructor arguments of the AEC env (e.g. ``{"num_players": 3}``).  Thin Ice
            also takes a list, ``{"num_players": [3, 4, 5, 6]}``: each episode draws one of the
            counts, and the observations of smaller games are padded to the largest with absent
            seats (``GameInfo.observation_padding``, Thin Ice's; the pile policy reads them as the
            unpadded ones), so one vectorised trainer learns every player count.
        illegal_action: ``"lose"`` (default: the episode ends with reward -1 and
            ``info["illegal_action"]`` = True, as ``env()`` does for the AEC envs, so Gymnasium's
            ``check_env`` passes) or ``"raise"`` (``ValueError`` naming the action).
        render_mode: passed to the AEC env.
        normalize_observation: flatten the observation to float32 in [0, 1] (divided by the
            space's upper bounds), which is what an MLP policy wants; ``False`` keeps the AEC
            env's array as it is.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(
        self,
        env_id: str,
        opponents: Sequence[Any] | None = None,
        learner_seat: str | int = "alternate",
        env_kwargs: dict[str, Any] | None = None,
        opponent_weights: Sequence[float] | None = None,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        normalize_observation: bool = True,
    ) -> None:
        check_choice("env_id", env_id, sorted(ENVIRONMENTS))
        check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        #: Thin Ice with a list of player counts: one AEC env per count, one drawn per episode
        self.player_counts = player_counts(env_id, self.env_kwargs.get("num_players"))
        if self.player_counts is None:
            self._aecs = {0: ENVIRONMENTS[env_id].raw_env(render_mode=render_mode, **self.env_kwargs)}
        else:
            if isinstance(learner_seat, Mapping):
                raise ValueError("learner_seat: a mapping of seat weights needs one player count, not a list of them")
            self._aecs = {
                n: ENVIRONMENTS[env_id].raw_env(render_mode=render_mode, **{**self.env_kwargs, "num_players": n})
                for n in sorted(set(self.player_counts))
            }
        # The largest game gives the observation layout (smaller ones are padded to it).
        self.aec = self._aecs[max(self._aecs)]
        self._pad_to = None if self.player_counts is None else max(self.player_counts)
        self._pad = GAMES[env_id].observation_padding()[0] if self._pad_to is not None else None
        self.render_mode = render_mode
        self.seats = list(self.aec.possible_agents)
        self._seat_odds: NDArray[np.float64] | None = None
        if (
            self.player_counts is not None
            and isinstance(learner_seat, (int, np.integer, str))
            and not isinstance(learner_seat, bool)
            and learner_seat not in ("alternate", "random")
        ):
            seat = self.seats.index(learner_seat) if learner_seat in self.seats else learner_seat
            if not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) < min(self.player_counts):
                raise ValueError(f"learner_seat: {learner_seat!r} is not a seat of every game of {self.player_counts} players")
        if isinstance(learner_seat, Mapping):
            self._seat_odds = seat_odds(learner_seat, self.seats)
        else:
            if isinstance(learner_seat, str) and learner_seat in self.seats:
                learner_seat = self.seats.index(learner_seat)
            if isinstance(learner_seat, (int, np.integer)) and not isinstance(learner_seat, bool):
                check_choice("learner_seat", int(learner_seat), range(len(self.seats)))
            else:
                check_choice("learner_seat", learner_seat, ("alternate", "random", *self.seats))
        self.learner_seat = learner_seat
        if opponents is None:
            opponents = [random_legal_opponent]
        if len(opponents) == 0:
            raise ValueError("opponents must hold at least one agent")
        self.opponents = list(opponents)
        self.opponent_weights: list[float] | None = None
        self.set_opponent_weights(opponent_weights)
        self.illegal_action = illegal_action
        first = self.seats[0]
        raw_space = self.aec.observation_space(first)["observation"]
        self.normalize_observation = bool(normalize_observation)
        if self.normalize_observation:
            self._scale = observation_scale(raw_space)
            low = np.minimum(0.0, np.asarray(raw_space.low, dtype=np.float32).ravel() * self._scale)
            self.observation_space = gym.spaces.Box(low, np.ones_like(low), dtype=np.float32)
        else:
            self.observation_space = raw_space
        self.num_actions = int(self.aec.action_space(first).n)
        self.action_space = LegalDiscrete(self.num_actions, self._mask_or_none)
        self._episode = 0
        self._learner = first
        self._seat_agents: dict[str, Any] = {}
        self._done = True
        self._mask = np.zeros(self.num_actions, dtype=np.int8)
        self._replay: tuple[Any, Any] | None = None

    # ---- opponent pool ----------------------------------------------------------------------
    def add_opponent(self, opponent: Any, weight: float | None = None) -> int:
        """Add an agent (an object with ``act(env, agent, rng)``, or such a callable) to the
        pool; returns the pool size.  A saved model: ``PolicyAgent(path)`` from
        :mod:`polarzoo.baselines.agents`."""
        if not (hasattr(opponent, "act") or callable(opponent)):
            raise TypeError(f"an opponent must have act(env, agent, rng) or be such a callable, got {opponent!r}")
        checked = check_weights("weight", [1.0 if weight is None else weight], 1)[0] if self.opponent_weights is not None else 0.0
        self.opponents.append(opponent)
        if self.opponent_weights is not None:
            self.opponent_weights.append(checked)
        return len(self.opponents)

    def set_pool(self, opponents: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        """Replace the opponent pool (and its weights)."""
        if len(opponents) == 0:
            raise ValueError("opponents must hold at least one agent")
        self.opponents = list(opponents)
        self.opponent_weights = None
        self.set_opponent_weights(weights)

    def set_opponent_weights(self, weights: Sequence[float] | None) -> None:
        """Draw opponents in proportion to ``weights`` (one number >= 0 per opponent, not all 0;
        ``None``: uniformly)."""
        if weights is not None:
            weights = check_weights("opponent_weights", weights, len(self.opponents))
        self.opponent_weights = None if weights is None else list(weights)

    def _draw_opponent(self) -> Any:
        if self.opponent_weights is None:
            return self.opponents[int(self.np_random.integers(len(self.opponents)))]
        p = np.asarray(self.opponent_weights, dtype=float)
        return self.opponents[int(self.np_random.choice(len(self.opponents), p=p / p.sum()))]

    # ---- gymnasium API ----------------------------------------------------------------------
    def _mask_or_none(self) -> NDArray[np.int8] | None:
        return None if self._done else self._mask

    def action_masks(self) -> NDArray[np.bool_]:
        return self._mask.astype(bool)

    @property
    def learner(self) -> str:
        """The agent name the learner plays in the current episode."""
        return self._learner

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[NDArray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._episode = 0  # a seeded reset restarts the seat sequence, so it is reproducible
        if self.player_counts is not None:
            self.aec = self._aecs[self.player_counts[int(self.np_random.integers(len(self.player_counts)))]]
            self.seats = list(self.aec.possible_agents)
        if self._seat_odds is not None:
            seat = int(self.np_random.choice(len(self.seats), p=self._seat_odds))
        elif self.learner_seat == "alternate":
            seat = self._episode % len(self.seats)
        elif self.learner_seat == "random":
            seat = int(self.np_random.integers(len(self.seats)))
        else:
            seat = int(self.learner_seat)
        self._episode += 1
        self._learner = self.seats[seat]
        self._seat_agents = {agent: self._draw_opponent() for agent in self.seats if agent != self._learner}
        for _ in range(1000):
            # The AEC env draws its own randomness from a seed taken from our generator.
            self.aec.reset(seed=int(self.np_random.integers(2**31 - 1)))
            self._return = 0.0
            self._done = False
            self._advance()
            if not self._done:
                break
            # The game ended before the learner's first move (Thin Ice: an opponent's first pile
            # can nest and end a two-player game): nothing to learn from it, deal another.
        else:
            raise RuntimeError(f"{self.env_id}: 1000 games in a row ended before the learner ({self._learner}) could move")
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[NDArray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponents' moves until it is the learner's turn
        again or the game ends; Gymnasium's ``(observation, reward, terminated, truncated, info)``
        with the reward of the learner's seat (``info["action_mask"]``: the next legal actions)."""
        if self._replay is not None:
            # OpponentBatchingVecEnv already played this step (opponents' moves batched across
            # envs); the wrappers above now receive its result.
            replayed_action, result = self._replay
            self._replay = None
            if replayed_action != action:
                raise RuntimeError(
                    f"a wrapper changed the action from {replayed_action} to {action!r}: "
                    "OpponentBatchingVecEnv needs wrappers that pass actions through"
                )
            return result
        return self._run(self.step_requests(action))

    def step_requests(self, action: Any) -> Generator[tuple[Any, str], int, tuple[NDArray, float, bool, bool, dict[str, Any]]]:
        """:meth:`step` as a generator: it yields ``(opponent, agent)`` whenever an opponent with
        ``act_batch`` must move (expecting the action back through ``send``) and returns the step's
        result, so that a vectorised env can batch those moves across its envs."""
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        reward_before = self._return
        if self.illegal_action == "lose":
            from polarzoo.envs.utils import check_int_action

            index = check_int_action(action, self.num_actions)
            if not self._mask[index]:
                self._done = True
                return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        self.aec.step(action)  # raises ValueError / TypeError on bad input
        self._collect()
        yield from self._advance_requests()
        reward = self._return - reward_before
        terminated = self._done and any(self.aec.terminations.values())
        truncated = self._done and not terminated
        return self._observation(), float(reward), bool(terminated), bool(truncated), self._info()

    def replay_step(self, action: int, result: tuple[NDArray, float, bool, bool, dict[str, Any]]) -> None:
        """Make the next :meth:`step` (``action``) return ``result``, already computed by
        :meth:`step_requests` (the wrappers above then see an ordinary step)."""
        self._replay = (action, result)

    def _run(self, requests: Generator[tuple[Any, str], int, Any]) -> Any:
        """Run a :meth:`step_requests` generator alone: each opponent it asks acts by ``act``."""
        try:
            opponent, agent = next(requests)
            while True:
                opponent, agent = requests.send(opponent.act(self.aec, agent, self.np_random))
        except StopIteration as stop:
            return stop.value

    def _collect(self) -> None:
        self._return += float(self.aec.rewards.get(self._learner, 0.0))

    def _advance(self) -> None:
        self._run(self._advance_requests())

    def _advance_requests(self) -> Generator[tuple[Any, str], int, None]:
        """Let the opponents act until it is the learner's turn or the game is over; an opponent
        with ``act_batch`` is asked through the generator (see :meth:`step_requests`)."""
        aec = self.aec
        while True:
            if self._learner not in aec.agents or aec.terminations[self._learner] or aec.truncations[self._learner]:
                self._done = True
                self._mask = np.zeros_like(self._mask)
                return
            current = aec.agent_selection
            if aec.terminations[current] or aec.truncations[current]:
                aec.step(None)  # an opponent already out (Thin Ice): PettingZoo's dead step
                continue
            if current == self._learner:
                self._mask = aec.observe(current)["action_mask"]
                return
            opponent = self._seat_agents[current]
            if hasattr(opponent, "act_batch"):
                action = yield opponent, current
            else:
                action = (opponent.act if hasattr(opponent, "act") else opponent)(aec, current, self.np_random)
            aec.step(action)
            self._collect()

    def _observation(self) -> NDArray:
        observation = self.aec.observe(self._learner)["observation"]
        if self._pad is not None:
            observation = self._pad(observation, self._pad_to)
        if self.normalize_observation:
            return normalize(observation, self._scale)
        return observation

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"learner": self._learner, "action_mask": self._mask.copy()}
        if self._done:
            info["episode_return"] = self._return
            info["is_success"] = self._return > 0
            info["final_infos"] = self.aec.infos.get(self._learner, {})
        return info

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        for aec in self._aecs.values():
            aec.close()


def random_play_rows(env: SingleAgentEnv, count: int, seed: int) -> tuple[NDArray, NDArray[np.bool_], NDArray[np.int64]]:
    """``count`` rows of seeded random legal play of ``env`` (reset with ``seed``, actions drawn
    by ``np.random.default_rng(seed)``, a new episode where one ends): the observations, action
    masks and actions, stacked, as a policy's update or a benchmark reads them."""
    rng = np.random.default_rng(seed)
    observations: list[Any] = []
    masks: list[NDArray[np.bool_]] = []
    actions: list[int] = []
    observation, _ = env.reset(seed=seed)
    while len(observations) < count:
        mask = np.asarray(env.action_masks(), dtype=bool)
        observations.append(observation)
        masks.append(mask)
        actions.append(int(rng.choice(np.flatnonzero(mask))))
        observation, _, terminated, truncated, _ = env.step(actions[-1])
        if terminated or truncated:
            observation, _ = env.reset()
    return np.array(observations), np.array(masks), np.array(actions, dtype=np.int64)
