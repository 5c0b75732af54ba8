"""Baseline agents for every environment.

An agent answers ``act(env, agent, rng) -> action`` where ``env`` is the *unwrapped* AEC env at
the moment ``agent`` must act.  It may read ``env.observe(agent)`` (every agent does, for the
mask) and, for search, the rules state ``env.state`` with the pure rules module ``env.rules``.

* :class:`RandomAgent`: uniform over legal actions.
* :class:`FireAndIceHeuristic`: win now; never hand the opponent a win (checks its replies);
  otherwise build island control (islands held, then lines of two of ours with the third free).
* :class:`FloeHeuristic`: seals take an isolating move, keep away from bears and dig in next to
  rings; bears capture when they can, never allow an isolating reply they can see, and close in.
* :class:`ThinIceHeuristic`: calls the smallest single piece; places by trying a few random
  placements on a snapshot (the physics decides) and keeping the one that leaves the player in
  with the fewest pieces on the table, then the highest pile.
* :class:`ThinIceSearch`: a trained Thin Ice policy whose most probable placements are tried on a
  snapshot first (``search:K``).
* :class:`MCTSAgent`: UCT with random rollouts over the rules core (Fire & Ice, Go with the Floe).
* :class:`PolicyAgent`: a saved MaskablePPO model, acting greedily on its masked policy.

* :class:`~polarzoo.baselines.search.AlphaZeroAgent`: PUCT guided by a trained policy (``az:N``).

``make_agent(spec, env_id)`` builds one from a spec: ``random``, ``heuristic``, ``mcts:N``,
``model:PATH``, ``pretrained`` (the model shipped in the package for that env), ``az:N`` (PUCT with
N simulations guided by the pretrained model) or ``az:N:PATH`` (guided by a saved model), and for
Thin Ice ``search:K`` / ``search:K:PATH`` (the pretrained or a saved policy with a K-placement
physics look-ahead).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from polarzoo.envs._common.outcome import zero_sum_returns


class Agent(Protocol):
    name: str

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int: ...


def legal_actions(env: Any, agent: str) -> np.ndarray:
    return np.flatnonzero(env.observe(agent)["action_mask"])


class RandomAgent:
    """Uniformly random legal actions."""

    name = "random"

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        return int(rng.choice(legal_actions(env, agent)))


# ------------------------------------------------------------------------------ Fire & Ice
class FireAndIceHeuristic:
    """Win now; avoid moves after which the opponent wins (itself, or by its best reply);
    otherwise maximise control: 10 x (islands held - opponent's) + open lines of two.
    Every candidate move is scored at once on a stack of boards (numpy)."""

    name = "heuristic"
    #: Only the best few moves by static score get the check of the opponent's replies.
    reply_checks = 6

    @staticmethod
    def _boards_after(board: np.ndarray, actions: np.ndarray, mover: int, place_opponent: bool) -> np.ndarray:
        from polarzoo.envs.fire_and_ice import rules

        boards = np.repeat(board[None, :], len(actions), axis=0)
        rows = np.arange(len(actions))
        source, destination = np.divmod(actions, rules.NUM_HOLES)
        boards[rows, destination] = mover + 1
        boards[rows, source] = (2 - mover) if place_opponent else rules.EMPTY
        return boards

    @staticmethod
    def _control(boards: np.ndarray) -> np.ndarray:
        from polarzoo.envs.fire_and_ice import rules

        return rules.island_control(boards)

    def _opponent_can_win(self, board: np.ndarray, opponent: int, supply_left: bool) -> bool:
        from polarzoo.envs.fire_and_ice import rules

        own = board == opponent + 1
        legal = own[:, None] & (board == rules.EMPTY)[rules.MOVE_DESTINATIONS]
        replies = rules.MOVE_ACTIONS[legal]
        if replies.size == 0:
            return False
        control = self._control(self._boards_after(board, replies, opponent, supply_left))
        return bool((rules.winners_from_control(control) == opponent).any())

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        from polarzoo.envs.fire_and_ice import rules

        state, me = env.state, env.colour_of(agent)
        actions = legal_actions(env, agent)
        if len(actions) == 1:
            return int(actions[0])
        boards = self._boards_after(state.board, actions, me, state.supply[1 - me] > 0)
        control = self._control(boards)  # (n, 7)
        winners = rules.winners_from_control(control)
        if (winners == me).any():
            return int(actions[np.flatnonzero(winners == me)[0]])
        line_values = boards[:, rules.HOLE_LINES]  # (n, 7 islands, 7 lines, 3)
        open_twos = (((line_values == me + 1).sum(axis=3) == 2) & ((line_values == rules.EMPTY).sum(axis=3) == 1))
        open_twos = (open_twos.any(axis=2) & (control < 0)).sum(axis=1)
        held = (control == me).sum(axis=1) - (control == 1 - me).sum(axis=1)
        score = 10.0 * held + open_twos + 0.1 * rng.random(len(actions))
        score[winners == 1 - me] = -np.inf  # never hand the opponent the game
        order = np.argsort(-score)
        supply_left = state.supply[me] > 0  # the opponent's replies place our pegs
        for index in order[: self.reply_checks]:
            if np.isfinite(score[index]) and not self._opponent_can_win(boards[index], 1 - me, supply_left):
                return int(actions[index])
        return int(actions[order[0]])


# ------------------------------------------------------------------------------ Go with the Floe
class FloeHeuristic:
    """Seals: isolate a seal if possible; never step next to a bear; prefer squares far from
    bears with many ring or off-board neighbours.  Bears: capture; refuse moves after which a
    seal can isolate itself at once; close in on the nearest seal."""

    name = "heuristic"
    reply_checks = 3

    @staticmethod
    def _distance(a: int, b: int) -> int:
        return max(abs(a % 8 - b % 8), abs(a // 8 - b // 8))

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        return self.choose(env.state, legal_actions(env, agent), rng)

    def choose(self, state: Any, actions: np.ndarray, rng: np.random.Generator) -> int:
        """The move for the side to move in ``state`` (a rules ``State``), among ``actions``."""
        from polarzoo.envs.go_with_the_floe import rules

        me = int(state.to_move)
        if len(actions) == 1:
            return int(actions[0])
        scored = []
        for action in actions:
            action = int(action)
            after = rules.apply_inplace(state.copy(), action)
            if after.winner == me:
                return action
            seals = np.flatnonzero(after.board == rules.SEAL).tolist()
            bears = np.flatnonzero(after.board == rules.BEAR).tolist()
            if me == rules.BLACK:
                score = 0.0
                for seal in seals:
                    nearest = min((self._distance(seal, bear) for bear in bears), default=8)
                    score += -50.0 if nearest <= 1 else min(nearest, 4)
                    blocked = sum(1 for t in rules.TARGET[seal, :, 0] if t < 0 or after.rings[t])
                    score += 0.5 * blocked
            else:
                captured = len(seals) < int((state.board == rules.SEAL).sum())
                score = 100.0 if captured else 0.0
                score -= sum(min((self._distance(s, b) for s in seals), default=0) for b in bears)
            scored.append((score + rng.random() * 0.01, action, after))
        scored.sort(reverse=True)
        if me == rules.WHITE:  # check Black's replies for the best few bear moves only
            for score, action, after in scored[: self.reply_checks]:
                if not any(rules.apply_inplace(after.copy(), int(r)).winner == rules.BLACK for r in rules.legal_actions(after)):
                    return action
        return scored[0][1]


# ------------------------------------------------------------------------------ Thin Ice
class ThinIceHeuristic:
    """Calls the smallest single piece left.  Places by trying ``candidates`` legal placements
    on a snapshot of the env (the physics decides) and keeping the one that does not put the
    player out, with the fewest pieces on the table, then the highest pile; never picks up."""

    name = "heuristic"

    def __init__(self, candidates: int = 6) -> None:
        self.candidates = candidates

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        from polarzoo.envs.thin_ice import rules

        actions = legal_actions(env, agent)
        state = env.game.state
        if state.phase == rules.CALL:
            for call in ("S", "M", "L", "SS", "SM", "MM", "SL", "ML", "LL"):
                if rules.CALLS.index(call) in actions:
                    return rules.CALLS.index(call)
        done = env.game.done_action
        if done in actions:
            return done
        places = actions[(actions >= env.game.place_base) & (actions < env.game.pick_base)]
        if len(places) == 0:
            return int(actions[0])
        tried = rng.choice(places, size=min(self.candidates, len(places)), replace=False)
        player = env.possible_agents.index(agent)
        best, best_score = int(tried[0]), -np.inf
        for action in tried:
            score = placement_score(env, player, int(action))
            if score > best_score:
                best, best_score = int(action), score
        return best


def placement_score(env: Any, player: int, action: int) -> float:
    """Try a Thin Ice placement on a snapshot of ``env`` (the physics decides, with the env's own
    generator, so playing it for real gives the same pile) and score the pile it leaves:
    -2000 if the simulation failed, -1000 if the player is out, else ``-pieces on the table + 10 *
    height (m)``.  The live game is restored whatever happens."""
    snapshot = env.snapshot()
    try:
        env.step(int(action))
        pile = env.piles.piles[player]
        if env.physics_error is not None:
            return -2000.0  # the simulation failed on this placement: try the others first
        if env.game.state.out_round[player] >= 0:
            return -1000.0
        on_table = int((pile.contacts().on_table & pile.in_play).sum())
        height = float(pile.positions()[pile.in_play][:, 2].max()) if pile.in_play.any() else 0.0
        return -on_table + 10.0 * height
    finally:  # the live game never keeps a look-ahead, whatever happened in it
        env.restore(snapshot)


class ThinIceSearch:
    """A policy with a physics look-ahead (``search:K`` / ``search:K:PATH``; Thin Ice).

    Calls, pick-ups and DONE are the policy's greedy moves.  For a placement it tries the policy's
    ``k`` most probable placements on a snapshot of the env, most probable first, and plays the
    first that does not put the player out (the physics of the try and of the real move are the
    same: the env's generator is restored with the snapshot); if all ``k`` do, the most probable.
    """

    def __init__(self, policy: "PolicyAgent", k: int = 4, name: str | None = None) -> None:
        if k < 1:
            raise ValueError(f"search needs k >= 1 placements to try, got {k}")
        self.policy, self.k = policy, k
        self.name = name or f"search:{k}"

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        game = env.game
        places = game.place_base + np.flatnonzero(env.observe(agent)["action_mask"][game.place_base : game.pick_base])
        if len(places) == 0:
            return self.policy.act(env, agent, rng)
        probs = self.policy.action_probabilities(env, agent)
        greedy = int(np.argmax(probs))
        if not game.place_base <= greedy < game.pick_base:
            return greedy  # the policy prefers a pick-up: play it
        candidates = [int(a) for a in places[np.argsort(-probs[places], kind="stable")[: self.k]]]
        player = env.possible_agents.index(agent)
        for action in candidates:
            if placement_score(env, player, action) > -1000.0:
                return action
        return candidates[0]


# ------------------------------------------------------------------------------ MCTS
class MCTSAgent:
    """UCT over a two-player rules core with uniformly random rollouts.

    Works with any rules module exposing ``legal_action_mask``, ``apply_inplace``, ``returns``
    and states with ``copy()``, ``to_move`` and ``winner`` (Fire & Ice, Go with the Floe).
    """

    def __init__(self, simulations: int = 200, exploration: float = 1.4, rollout_limit: int = 200,
                 compiled_rollouts: bool = True) -> None:
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        self.simulations = simulations
        self.exploration = exploration
        self.rollout_limit = rollout_limit
        self.compiled_rollouts = compiled_rollouts
        self.name = f"mcts{simulations}"

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        rules = env.rules
        kernels = getattr(env, "kernels", None) if self.compiled_rollouts else None
        actions = legal_actions(env, agent)
        if len(actions) == 1:
            return int(actions[0])
        root = _Node(env.state.copy(), None, -1, rules, rng)
        for _ in range(self.simulations):
            node = root
            while not node.untried and node.children:  # selection
                node = max(node.children, key=lambda c: c.ucb(self.exploration))
            if node.untried:  # expansion
                action = node.untried.pop()
                child_state = rules.apply_inplace(node.state.copy(), action)
                child = _Node(child_state, node, action, rules, rng)
                node.children.append(child)
                node = child
            if kernels is not None:  # the whole random playout in one compiled call
                outcome = zero_sum_returns(kernels.playout_winner(node.state, rng, self.rollout_limit))
            else:
                outcome = self._rollout(node.state, rules, rng)
            while node is not None:  # backpropagation
                node.visits += 1
                if node.mover >= 0:
                    node.value += outcome[node.mover]
                node = node.parent
        return int(max(root.children, key=lambda c: c.visits).action)

    def _rollout(self, state: Any, rules: Any, rng: np.random.Generator) -> np.ndarray:
        state = state.copy()
        for _ in range(self.rollout_limit):
            if state.winner >= 0:
                break
            actions = np.flatnonzero(rules.legal_action_mask(state))
            rules.apply_inplace(state, int(actions[rng.integers(len(actions))]))
        return rules.returns(state)


class _Node:
    __slots__ = ("state", "parent", "action", "children", "untried", "visits", "value", "mover")

    def __init__(self, state: Any, parent: "_Node | None", action: int, rules: Any, rng: np.random.Generator) -> None:
        self.state = state
        self.parent = parent
        self.action = action
        self.children: list[_Node] = []
        untried = np.flatnonzero(rules.legal_action_mask(state)) if state.winner < 0 else np.array([], dtype=int)
        self.untried = [int(a) for a in rng.permutation(untried)]
        self.visits = 0
        self.value = 0.0
        self.mover = parent.state.to_move if parent is not None else -1  # who chose this node's action

    def ucb(self, exploration: float) -> float:
        if self.visits == 0:
            return math.inf
        assert self.parent is not None
        return self.value / self.visits + exploration * math.sqrt(math.log(self.parent.visits) / self.visits)


# ------------------------------------------------------------------------------ trained policies
class PolicyAgent:
    """A MaskablePPO model (saved at ``path``, or given as ``model``), acting on its masked policy
    (greedy unless ``deterministic=False``).  Observations are normalised the way
    :class:`polarzoo.wrappers.SingleAgentEnv` normalised them in training."""

    def __init__(self, path: str | Path | None = None, deterministic: bool = True, name: str | None = None, model: Any = None) -> None:
        if model is None:
            if path is None:
                raise ValueError("PolicyAgent needs a path or a model")
            from polarzoo.envs._common.extras import require

            model = require("sb3_contrib", "a saved model (model:PATH, pretrained)").MaskablePPO.load(str(path), device="cpu")
        self.path = None if path is None else str(path)
        self.model = model
        self.deterministic = deterministic
        self.name = name or (f"model:{Path(self.path).parent.name}/{Path(self.path).stem}" if self.path else "model")
        self._scales: dict[int, np.ndarray] = {}

    def check_fits(self, env_id: str) -> "PolicyAgent":
        """``ValueError`` when the model was trained on another game (its action or observation
        size differs from ``env_id``'s default env): said at load time, not at the first move."""
        from polarzoo.envs import ENVIRONMENTS

        if env_id not in ENVIRONMENTS or env_id == "thin_ice_v0":  # Thin Ice: sizes vary with its arguments
            return self
        probe = ENVIRONMENTS[env_id].raw_env()
        agent = probe.possible_agents[0]
        actions = probe.action_space(agent).n
        size = int(np.prod(probe.observation_space(agent)["observation"].shape))
        model_actions = getattr(self.model.action_space, "n", None)
        model_size = int(np.prod(self.model.observation_space.shape))
        if model_actions != actions or model_size != size:
            games = {2402: "fire_and_ice_v0", 1025: "go_with_the_floe_v0"}
            hint = f" (it looks like a {games[model_actions]} model)" if model_actions in games else ""
            raise ValueError(f"{self.path or 'the model'} does not fit {env_id}: it takes {model_size} observation values "
                             f"and {model_actions} actions, {env_id} has {size} and {actions}{hint}")
        return self

    def _model_input(self, env: Any, agent: str) -> tuple[np.ndarray, np.ndarray]:
        from polarzoo.wrappers.single_agent import normalize, observation_scale

        observation = env.observe(agent)
        raw = observation["observation"]
        if len(self.model.observation_space.shape) == 1 and raw.ndim > 1:
            space = env.observation_space(agent)["observation"]
            scale = self._scales.get(id(space))
            if scale is None:
                scale = self._scales[id(space)] = observation_scale(space)
            raw = normalize(raw, scale)
        return raw, observation["action_mask"].astype(bool)

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        raw, mask = self._model_input(env, agent)
        if not self.deterministic:
            return self._sample(self._distribution(raw[None], mask[None]), [rng])[0]
        if raw.shape != self.model.observation_space.shape:
            return int(self._distribution(raw[None], mask[None]).get_actions(deterministic=True)[0])
        action, _ = self.model.predict(raw, action_masks=mask, deterministic=True)
        return int(action)

    @staticmethod
    def _sample(distribution: Any, rngs: Sequence[np.random.Generator]) -> list[int]:
        """One action per row, drawn with the game's own generator (not torch's global one: the
        draws are then reproducible in any process, and a checkpoint of the envs holds them)."""
        probabilities = distribution.distribution.probs.cpu().numpy().astype(np.float64)
        actions = []
        for row, rng in zip(probabilities, rngs):
            cumulative = np.cumsum(row)
            actions.append(int(min(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"), len(row) - 1)))
        return actions

    def _distribution(self, raw: np.ndarray, masks: np.ndarray) -> Any:
        """The masked action distribution of a batch of observations of any size the network
        reads (SB3's ``predict`` accepts only the training size; the Thin Ice pile policy plays
        any number of players)."""
        import torch

        policy = self.model.policy
        with torch.no_grad():
            observation = torch.as_tensor(np.asarray(raw, dtype=np.float32), device=policy.device)
            return policy.get_distribution(observation, action_masks=masks)

    def action_probabilities(self, env: Any, agent: str) -> np.ndarray:
        """The masked policy's probability of every action (zero for illegal ones)."""
        raw, mask = self._model_input(env, agent)
        return self._distribution(raw[None], mask[None]).distribution.probs.cpu().numpy().reshape(-1)

    def act_batch(self, envs: Sequence[Any], agents: Sequence[str], rngs: Sequence[np.random.Generator]) -> list[int]:
        """One move in each of several games with one forward pass of the network (what
        :class:`polarzoo.wrappers.opponent_batching.OpponentBatchingVecEnv` calls)."""
        inputs = [self._model_input(env, agent) for env, agent in zip(envs, agents)]
        raws, masks = np.stack([raw for raw, _ in inputs]), np.stack([mask for _, mask in inputs])
        if not self.deterministic:
            return self._sample(self._distribution(raws, masks), rngs)
        if raws.shape[1:] != self.model.observation_space.shape:
            return [int(a) for a in self._distribution(raws, masks).get_actions(deterministic=True)]
        actions, _ = self.model.predict(raws, action_masks=masks, deterministic=True)
        return [int(action) for action in np.asarray(actions).reshape(-1)]

    def __getstate__(self) -> dict[str, Any]:  # subprocesses reload the model from disk
        if self.path is None:
            raise TypeError("a PolicyAgent built from an in-memory model cannot be pickled; save the model first")
        return {"path": self.path, "deterministic": self.deterministic, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["deterministic"], state["name"])  # type: ignore[misc]


HEURISTICS: dict[str, type] = {
    "fire_and_ice_v0": FireAndIceHeuristic,
    "go_with_the_floe_v0": FloeHeuristic,
    "thin_ice_v0": ThinIceHeuristic,
}


PRETRAINED_DIR = Path(__file__).with_name("pretrained")
#: env id -> file in ``baselines/pretrained/`` (package data; baselines/pretrained/README.md says how each was made)
PRETRAINED: dict[str, str] = {
    "fire_and_ice_v0": "fire_and_ice_v0.zip",
    "go_with_the_floe_v0": "go_with_the_floe_v0.zip",
    "thin_ice_v0": "thin_ice_v0.zip",
    "polarzoo/FireAndIceSolitaire-v0": "fire_and_ice_solitaire_v0.zip",
}


#: env id -> the AlphaZero-on-JAX network shipped for it (``az-jax:pretrained``; a ``.json`` beside it)
PRETRAINED_AZ_JAX: dict[str, str] = {"fire_and_ice_v0": "fire_and_ice_v0_az_jax.npz"}


def pretrained_path(env_id: str) -> Path:
    """The shipped model for ``env_id`` (works from any working directory after ``pip install``)."""
    if env_id not in PRETRAINED:
        raise ValueError(f"no pretrained model for {env_id}; available: {sorted(PRETRAINED)}")
    path = PRETRAINED_DIR / PRETRAINED[env_id]
    if not path.exists():
        raise FileNotFoundError(f"the pretrained model file {path} is missing from this installation")
    return path


def _count(argument: str, kind: str, default: int) -> int:
    if not argument:
        return default
    if not argument.isdigit() or int(argument) < 1:
        what = "placements to try" if kind == "search" else "simulations"
        raise ValueError(f"{kind} needs a positive whole number of {what}, e.g. {kind}:{default}; got {argument!r}")
    return int(argument)


def _model_path(path: str) -> str:
    if not Path(path).is_file():
        raise FileNotFoundError(f"no model file {path} (give the path of a saved model.zip)")
    return path


def make_agent(spec: str, env_id: str) -> Any:
    """``"random"``, ``"heuristic"``, ``"mcts"`` / ``"mcts:N"``, ``"model:PATH"``, ``"pretrained"``,
    ``"az:N"`` / ``"az:N:PATH"``, ``"az-jax:PATH"`` / ``"az-jax:N:PATH"`` (AlphaZero trained on the JAX
    twins), ``"search:K"`` / ``"search:K:PATH"`` (Thin Ice) -> agent."""
    kind, _, argument = spec.partition(":")
    if kind == "random":
        return RandomAgent()
    if kind == "heuristic":
        if env_id not in HEURISTICS:
            raise ValueError(f"no heuristic agent for {env_id}; known: {sorted(HEURISTICS)}")
        return HEURISTICS[env_id]()
    if kind == "mcts":
        if env_id not in ("fire_and_ice_v0", "go_with_the_floe_v0"):
            raise ValueError(f"MCTS needs a two-player rules core; {env_id} has none")
        return MCTSAgent(_count(argument, "mcts", 200))
    if kind == "model":
        if not argument:
            raise ValueError("model agents need a path: model:runs/.../model.zip")
        return PolicyAgent(_model_path(argument)).check_fits(env_id)
    if kind == "pretrained":
        return PolicyAgent(pretrained_path(env_id), name="pretrained")
    if kind == "search":
        if env_id != "thin_ice_v0":
            raise ValueError(f"search:K is the Thin Ice policy look-ahead; for {env_id} use az:N or mcts:N")
        count, _, path = argument.partition(":")
        k = _count(count, "search", 4)
        policy = PolicyAgent(_model_path(path)) if path else PolicyAgent(pretrained_path(env_id), name="pretrained")
        return ThinIceSearch(policy, k, name=f"search:{k}" + (f":{Path(path).parent.name}" if path else ""))
    if kind == "az-jax":
        from polarzoo.baselines.alphazero_jax import AlphaZeroJaxAgent

        count, _, path = argument.partition(":")
        if not count.isdigit():  # az-jax:PATH
            count, path = "", argument
        if not path:
            raise ValueError("az-jax agents need a model: az-jax:PATH, az-jax:N:PATH (runs/az-.../model.npz) or az-jax:pretrained")
        if path == "pretrained":
            if env_id not in PRETRAINED_AZ_JAX:
                raise ValueError(f"no pretrained az-jax model for {env_id}; available: {sorted(PRETRAINED_AZ_JAX)}")
            path = str(PRETRAINED_DIR / PRETRAINED_AZ_JAX[env_id])
        return AlphaZeroJaxAgent(path, env_id, _count(count, "az-jax", 1) if count else None)
    if kind == "az":
        from polarzoo.baselines.search import AlphaZeroAgent

        count, _, path = argument.partition(":")
        simulations = _count(count, "az", 100)
        if path:
            return AlphaZeroAgent.from_path(_model_path(path), env_id, simulations)
        return AlphaZeroAgent.from_path(str(pretrained_path(env_id)), env_id, simulations)
    raise ValueError(f"unknown agent spec {spec!r}: use random, heuristic, mcts[:N], model:PATH, pretrained, az[:N[:PATH]], "
                     "az-jax:[N:]PATH or (Thin Ice) search[:K[:PATH]]")
