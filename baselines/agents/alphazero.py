"""AlphaZero-style search guided by a trained policy: ``az:N`` in :func:`make_agent`.

PUCT over the pure rules core (Fire & Ice, Go with the Floe): the trained policy's masked
softmax is the prior, its value head scores the leaves, terminal positions score exactly, and the
move with the most visits is played.  Each expanded node also looks at its children's outcomes,
so a win in one is always seen (the node is then worth +1 to its mover without asking the
network), and a reply that wins for the opponent makes the move that allows it worth -1 after a
single visit.  No noise is added: with the same model and position the choice is deterministic
(ties are broken by the seeded generator passed to ``act``).  ``act_batch`` searches several
games in lock step, one forward pass a simulation for all their new leaves (what
:class:`~polarzoo.wrappers.opponent_batching.OpponentBatchingVecEnv` calls in training).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import unpickled
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.kits import games_with, kit_of, load
from polarzoo.baselines.policies.weights import load_policy
from polarzoo.envs import GAMES
from polarzoo.envs.utils import require, winners_after

torch = require("torch", "the az:N search")


def observation_encoder(env_id: str) -> Callable[[Any, int], np.ndarray]:
    """``(state, colour) -> observation array`` of the env's public encoding (its kit's
    ``encoder``: the search evaluates its leaves with it)."""
    encoder = kit_of(env_id).encoder if env_id in GAMES else None
    if encoder is None:
        raise ValueError(f"az search needs a two-player rules core; {env_id} has none (use {' or '.join(games_with('encoder'))})")
    return load(encoder)


class PolicyValue:
    """A MaskablePPO model as a function ``state -> (prior over actions, value for the mover)``."""

    def __init__(self, model: Any, env_id: str, raw_space: Any) -> None:
        from polarzoo.wrappers.single_agent import observation_scale

        self.policy = model.policy
        self.encode = observation_encoder(env_id)
        self.flat = len(model.observation_space.shape) == 1
        self.scale = observation_scale(raw_space)

    def __call__(self, state: Any, mask: np.ndarray) -> tuple[np.ndarray, float]:
        priors, values = self.batch([state], [mask])
        return priors[0], values[0]

    @torch.no_grad()
    def batch(self, states: Sequence[Any], masks: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[float]]:
        """Priors and values of several positions in one forward pass (a batch of one is the
        same computation as :meth:`__call__`'s)."""
        observations = np.stack([self.encode(state, state.to_move) for state in states])
        if self.flat:
            observations = observations.reshape(len(states), -1).astype(np.float32) * self.scale
        tensor = torch.as_tensor(observations, dtype=torch.float32)
        policy = self.policy
        features = policy.extract_features(tensor)
        latent_pi, latent_vf = policy.mlp_extractor(features)
        all_logits = policy.action_net(latent_pi).numpy().astype(np.float64)
        all_values = policy.value_net(latent_vf)[:, 0].numpy()
        priors, values = [], []
        for logits, value, mask in zip(all_logits, all_values, masks):
            logits = np.where(mask.astype(bool), logits, -np.inf)
            prior = np.exp(logits - logits.max())
            priors.append(prior / prior.sum())
            values.append(max(-1.0, min(1.0, float(value))))
        return priors, values


class _Node:
    __slots__ = ("state", "actions", "prior", "visits", "value_sum", "lost", "children", "terminal_value", "mover")

    def __init__(self, state: Any) -> None:
        self.state = state
        self.mover = int(state.to_move)
        self.children: dict[int, _Node] = {}
        # arrays over the legal actions, set on expansion
        self.actions: Any = None
        self.prior: Any = None
        self.visits: Any = None
        self.value_sum: Any = None
        self.lost: Any = None
        self.terminal_value: float | None = None  # exact value for the mover, when known


class AlphaZeroAgent:
    """PUCT search with ``simulations`` network evaluations per move (see the module docstring).

    Args:
        model: a MaskablePPO model (or use :meth:`from_path`).
        env_id: ``fire_and_ice_v0`` or ``go_with_the_floe_v0``.
        simulations: simulations per move (``az:N``).
        c_puct: exploration constant.
    """

    def __init__(self, model: Any, env_id: str, simulations: int = 100, c_puct: float = 1.5, name: str | None = None) -> None:
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        from polarzoo.envs import ENVIRONMENTS

        observation_encoder(env_id)  # fails early for a game without a rules core
        self.model = model
        self.env_id = env_id
        self.simulations = simulations
        self.c_puct = c_puct
        self.name = name or f"az{simulations}"
        self.path: str | None = None  # set by from_path: a subprocess then reloads the file
        probe = ENVIRONMENTS[env_id].raw_env()
        self.evaluate = PolicyValue(model, env_id, probe.observation_space(probe.possible_agents[0])["observation"])

    def __getstate__(self) -> dict[str, Any]:
        # Pickled for a worker process once per game: the model's tensors would travel as
        # shared file descriptors, one set a game, until the process runs out of them
        # (a league build with --workers 2 stopped after about 1,200 games).  The file instead.
        if self.path is None:
            return self.__dict__
        return {
            "path": self.path,
            "env_id": self.env_id,
            "simulations": self.simulations,
            "c_puct": self.c_puct,
            "name": self.name,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "model" in state:
            self.__dict__.update(state)
            return
        settings = (state["env_id"], state["simulations"])
        self.__dict__.update(unpickled(state["path"], settings, lambda: type(self).from_path(state["path"], *settings)))
        self.name, self.c_puct = state["name"], state["c_puct"]

    @property
    def batch_key(self) -> tuple[Any, ...] | None:
        """What makes two searches play the same (their model file and settings): agents with equal
        keys search in lock step with one forward pass a simulation
        (:class:`polarzoo.wrappers.opponent_batching.OpponentBatchingVecEnv`); ``None`` for an
        in-memory model (then only the object itself)."""
        if self.path is None:
            return None
        return ("AlphaZeroAgent", self.path, self.env_id, self.simulations, self.c_puct)

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        return self.act_batch([env], [agent], [rng])[0]

    def act_batch(self, envs: Sequence[Any], agents: Sequence[str], rngs: Sequence[np.random.Generator]) -> list[int]:
        """One move in each of several games: their searches run in lock step, every simulation's
        new leaves evaluated in one forward pass.  Each tree's simulations follow one another as
        in a search of its own, so a game's move is the one :meth:`act` chooses, up to the float
        rounding of a larger batch."""
        rules = [env.rules for env in envs]
        roots = [_Node(env.state.copy()) for env in envs]
        self._expand_all(roots, rules)
        moves = [-1] * len(envs)
        searching = []
        for game, root in enumerate(roots):
            if root.terminal_value is not None and root.terminal_value > 0:
                moves[game] = int(root.actions[self._winning_child(root)])
            elif len(root.actions) == 1:
                moves[game] = int(root.actions[0])
            else:
                searching.append(game)
        for _ in range(self.simulations):
            leaves: list[tuple[list[tuple[_Node, int]], _Node, int]] = []
            for game in searching:
                path, leaf, value = self._descend(roots[game], rules[game])
                if leaf is None:
                    self._back_up(path, value)
                else:
                    leaves.append((path, leaf, game))
            values = self._expand_all([leaf for _, leaf, _ in leaves], [rules[game] for _, _, game in leaves])
            for (path, _, _), value in zip(leaves, values):
                self._back_up(path, value)
        for game in searching:
            root = roots[game]
            # The most visited move not proven to lose (then the best prior), seeded tie-break.
            score = root.visits + root.prior * 1e-3 + 1e-9 * rngs[game].random(len(root.visits))
            if not root.lost.all():
                score = np.where(root.lost, -np.inf, score)
            moves[game] = int(root.actions[int(np.argmax(score))])
        return moves

    # ---- search --------------------------------------------------------------------------
    def _expand_all(self, nodes: Sequence[_Node], rules: Sequence[Any]) -> list[float]:
        """Expand ``nodes`` (one forward pass for those the network must score); return each
        one's value for its mover."""
        values = [0.0] * len(nodes)
        scored: list[tuple[int, np.ndarray]] = []
        for index, (node, node_rules) in enumerate(zip(nodes, rules)):
            mask = self._expand_children(node, node_rules)
            if node.terminal_value is not None:
                values[index] = node.terminal_value
            else:
                scored.append((index, mask))
        if scored:
            priors, network_values = self.evaluate.batch(
                [nodes[index].state for index, _ in scored], [mask for _, mask in scored]
            )
            for (index, _), prior, value in zip(scored, priors, network_values):
                nodes[index].prior = prior[nodes[index].actions]
                values[index] = value
        return values

    def _expand_children(self, node: _Node, rules: Any) -> np.ndarray:
        """Set up ``node``'s edges and return its legal-action mask.  A win in one child is
        certain (no network needed): the node is then worth +1 to its mover and its prior is on
        the winning moves; otherwise its prior is left to the network.  The children themselves
        are made when a simulation first takes their edge (:meth:`_child`)."""
        state = node.state
        mask = rules.legal_action_mask(state)
        node.actions = np.flatnonzero(mask)
        count = len(node.actions)
        node.visits = np.zeros(count)
        node.value_sum = np.zeros(count)
        node.lost = np.zeros(count, dtype=bool)  # edges proven to lose for this node's mover
        winning = np.flatnonzero(winners_after(rules, state, node.actions) == node.mover)
        if len(winning):
            node.terminal_value = 1.0
            node.prior = np.zeros(count)
            node.prior[winning] = 1.0 / len(winning)
        return mask

    @staticmethod
    def _child(node: _Node, index: int, rules: Any) -> _Node:
        """The position after ``node``'s edge ``index``, made on first use."""
        child = node.children.get(index)
        if child is None:
            child = _Node(rules.apply_inplace(node.state.copy(), int(node.actions[index])))  # legal by the mask
            if child.state.winner >= 0:
                child.terminal_value = float(rules.returns(child.state)[child.mover])
            node.children[index] = child
        return child

    @staticmethod
    def _winning_child(node: _Node) -> int:
        return int(np.argmax(node.prior))

    def _child_value(self, parent: _Node, child: _Node, child_value: float) -> float:
        """A value for the child's mover, seen by the parent's mover (zero-sum, two players)."""
        return child_value if child.mover == parent.mover else -child_value

    def _descend(self, root: _Node, rules: Any) -> tuple[list[tuple[_Node, int]], _Node | None, float]:
        """One simulation's way down by PUCT: the edges taken, and the leaf the network must
        expand (``None`` where the way ends in a known value, then given)."""
        path: list[tuple[_Node, int]] = []
        node = root
        while True:
            if node.terminal_value is not None and node.actions is not None and node.terminal_value > 0:
                return path, None, node.terminal_value  # proven win for this node's mover
            if node.actions is None:
                if node.terminal_value is not None:
                    return path, None, node.terminal_value
                return path, node, 0.0
            total = node.visits.sum()
            q = np.where(node.visits > 0, node.value_sum / np.maximum(node.visits, 1), 0.0)
            score = q + self.c_puct * node.prior * math.sqrt(total + 1) / (1 + node.visits)
            if not node.lost.all():
                score[node.lost] = -np.inf
            index = int(np.argmax(score))
            path.append((node, index))
            node = self._child(node, index, rules)
            if node.terminal_value is not None and node.actions is None:  # game over here
                return path, None, node.terminal_value

    def _back_up(self, path: list[tuple[_Node, int]], value: float) -> None:
        """Each edge stores the value for the mover at its parent."""
        for parent, index in reversed(path):
            child = parent.children[index]
            value = self._child_value(parent, child, value)
            parent.visits[index] += 1
            parent.value_sum[index] += value  # ``value`` is now for ``parent``'s mover, one level up
            if child.terminal_value is not None and child.mover != parent.mover and child.terminal_value > 0:
                parent.lost[index] = True  # the opponent wins there for certain

    @classmethod
    def from_path(cls, path: str, env_id: str, simulations: int = 100, name: str | None = None) -> AlphaZeroAgent:
        model = load_policy(path)  # data only: nothing in the file runs
        PolicyAgent(path, model=model).check_fits(env_id)
        agent = cls(model, env_id, simulations, name=name)
        agent.path = str(path)
        return agent
