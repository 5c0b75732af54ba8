"""The Go with the Floe heuristic (``heuristic`` for ``go_with_the_floe_v0``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.go_with_the_floe import rules


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
            for _score, action, after in scored[: self.reply_checks]:
                if not any(rules.apply_inplace(after.copy(), int(r)).winner == rules.BLACK for r in rules.legal_actions(after)):
                    return action
        return scored[0][1]
