"""UCT with random rollouts over a two-player rules core (``mcts:N``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.utils import zero_sum_returns


class MCTSAgent:
    """UCT over a two-player rules core with uniformly random rollouts.

    Works with any rules module exposing ``legal_action_mask``, ``apply_inplace``, ``returns``
    and states with ``copy()``, ``to_move`` and ``winner`` (Fire & Ice, Go with the Floe).
    """

    def __init__(
        self, simulations: int = 200, exploration: float = 1.4, rollout_limit: int = 200, compiled_rollouts: bool = True
    ) -> None:
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
            climbing: _Node | None = node
            while climbing is not None:  # backpropagation
                climbing.visits += 1
                if climbing.mover >= 0:
                    climbing.value += outcome[climbing.mover]
                climbing = climbing.parent
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

    def __init__(self, state: Any, parent: _Node | None, action: int, rules: Any, rng: np.random.Generator) -> None:
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
