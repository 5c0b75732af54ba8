"""AlphaZero-style search guided by a trained policy: ``az:N`` in :func:`make_agent`.

PUCT over the pure rules core (Fire & Ice, Go with the Floe): the trained policy's masked
softmax is the prior, its value head scores the leaves, terminal positions score exactly, and the
move with the most visits is played.  Each expanded node also looks at its children's outcomes,
so a win in one is always seen (the node is then worth +1 to its mover without asking the
network), and a reply that wins for the opponent makes the move that allows it worth -1 after a
single visit.  No noise is added: with the same model and position the choice is deterministic
(ties are broken by the seeded generator passed to ``act``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import unpickled
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.kits import games_with, kit_of, load
from polarzoo.baselines.policies.weights import load_policy
from polarzoo.envs import GAMES
from polarzoo.envs.utils import require

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

    @torch.no_grad()
    def __call__(self, state: Any, mask: np.ndarray) -> tuple[np.ndarray, float]:
        observation = self.encode(state, state.to_move)
        if self.flat:
            observation = observation.ravel().astype(np.float32) * self.scale
        tensor = torch.as_tensor(observation[None], dtype=torch.float32)
        policy = self.policy
        features = policy.extract_features(tensor)
        latent_pi, latent_vf = policy.mlp_extractor(features)
        logits = policy.action_net(latent_pi)[0].numpy().astype(np.float64)
        value = float(policy.value_net(latent_vf)[0, 0])
        legal = mask.astype(bool)
        logits = np.where(legal, logits, -np.inf)
        prior = np.exp(logits - logits.max())
        return prior / prior.sum(), max(-1.0, min(1.0, value))


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

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        rules = env.rules
        root = _Node(env.state.copy())
        self._expand(root, rules)
        if root.terminal_value is not None and root.terminal_value > 0:
            return int(root.actions[self._winning_child(root)])
        if len(root.actions) == 1:
            return int(root.actions[0])
        for _ in range(self.simulations):
            self._simulate(root, rules)
        # The most visited move not proven to lose (then the best prior), seeded tie-break.
        score = root.visits + root.prior * 1e-3 + 1e-9 * rng.random(len(root.visits))
        if not root.lost.all():
            score = np.where(root.lost, -np.inf, score)
        return int(root.actions[int(np.argmax(score))])

    # ---- search --------------------------------------------------------------------------
    def _expand(self, node: _Node, rules: Any) -> float:
        """Expand ``node``; return its value for its mover."""
        state = node.state
        mask = rules.legal_action_mask(state)
        node.actions = np.flatnonzero(mask)
        count = len(node.actions)
        node.visits = np.zeros(count)
        node.value_sum = np.zeros(count)
        node.lost = np.zeros(count, dtype=bool)  # edges proven to lose for this node's mover
        # Children's outcomes: a win in one is certain (no network needed).
        winning = []
        for i, action in enumerate(node.actions):
            child = _Node(rules.apply_inplace(state.copy(), int(action)))  # legal by the mask: no re-check
            if child.state.winner >= 0:
                child.terminal_value = float(rules.returns(child.state)[child.mover])
                if child.state.winner == node.mover:
                    winning.append(i)
            node.children[i] = child
        if winning:
            node.terminal_value = 1.0
            node.prior = np.zeros(count)
            node.prior[winning] = 1.0 / len(winning)
            return 1.0
        prior, value = self.evaluate(state, mask)
        node.prior = prior[node.actions]
        return value

    @staticmethod
    def _winning_child(node: _Node) -> int:
        return int(np.argmax(node.prior))

    def _child_value(self, parent: _Node, child: _Node, child_value: float) -> float:
        """A value for the child's mover, seen by the parent's mover (zero-sum, two players)."""
        return child_value if child.mover == parent.mover else -child_value

    def _simulate(self, root: _Node, rules: Any) -> None:
        path: list[tuple[_Node, int]] = []
        node = root
        while True:
            if node.terminal_value is not None and node.actions is not None and node.terminal_value > 0:
                value = node.terminal_value  # proven win for this node's mover
                break
            if node.actions is None:
                value = node.terminal_value if node.terminal_value is not None else self._expand(node, rules)
                break
            total = node.visits.sum()
            q = np.where(node.visits > 0, node.value_sum / np.maximum(node.visits, 1), 0.0)
            score = q + self.c_puct * node.prior * math.sqrt(total + 1) / (1 + node.visits)
            if not node.lost.all():
                score[node.lost] = -np.inf
            index = int(np.argmax(score))
            path.append((node, index))
            node = node.children[index]
            if node.terminal_value is not None and node.actions is None:  # game over here
                value = node.terminal_value
                break
        # Back up: each edge stores the value for the mover at its parent.
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
