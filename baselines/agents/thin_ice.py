"""Thin Ice agents that try placements on the physics snapshot: the heuristic, ``search:K`` and
``vsearch:K``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from polarzoo.baselines.agents.base import legal_actions
from polarzoo.envs.thin_ice import rules

if TYPE_CHECKING:
    from polarzoo.baselines.agents.policy import PolicyAgent


class ThinIceHeuristic:
    """Calls the smallest single piece left.  Places by trying ``candidates`` legal placements
    on a snapshot of the env (the physics decides) and keeping the one that does not put the
    player out, with the fewest pieces on the table, then the highest pile; never picks up."""

    name = "heuristic"

    def __init__(self, candidates: int = 6) -> None:
        self.candidates = candidates

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
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


def look_ahead(env: Any, action: int, evaluate: Callable[[Any], float]) -> float:
    """``evaluate(env)`` after playing ``action`` on a snapshot of ``env`` (the physics of the try
    and of the real move are the same: the env's generator is restored with the snapshot); the
    live game is restored whatever happens."""
    snapshot = env.snapshot()
    try:
        env.step(int(action))
        return evaluate(env)
    finally:  # the live game never keeps a look-ahead, whatever happened in it
        env.restore(snapshot)


def placement_score(env: Any, player: int, action: int) -> float:
    """Try a Thin Ice placement on a snapshot of ``env`` (:func:`look_ahead`) and score the pile it
    leaves: -2000 if the simulation failed, -1000 if the player is out, else ``-pieces on the
    table + 10 * height (m)``."""

    def score(env: Any) -> float:
        pile = env.piles.piles[player]
        if env.physics_error is not None:
            return -2000.0  # the simulation failed on this placement: try the others first
        if env.game.state.out_round[player] >= 0:
            return -1000.0
        on_table = int((pile.contacts().on_table & pile.in_play).sum())
        height = float(pile.positions()[pile.in_play][:, 2].max()) if pile.in_play.any() else 0.0
        return -on_table + 10.0 * height

    return look_ahead(env, action, score)


#: :func:`placement_value` of a placement whose simulation failed, and of one that puts the player
#: out: below every value the critic gives (about -1 .. 1), the failure below being out.
FAILED_VALUE, OUT_VALUE = -3.0, -2.0


def placement_value(env: Any, agent: str, action: int, policy: PolicyAgent) -> float:
    """The value of a Thin Ice placement to ``agent``, tried on a snapshot (:func:`look_ahead`):
    the game's reward if it ended, :data:`OUT_VALUE` / :data:`FAILED_VALUE` if the player is out
    or the simulation failed, else ``policy``'s critic on ``agent``'s observation of the pile it
    leaves."""
    player = env.possible_agents.index(agent)

    def value(env: Any) -> float:
        if env.physics_error is not None:
            return FAILED_VALUE
        if env.game.state.out_round[player] >= 0:
            return OUT_VALUE
        if env.terminations[agent] or env.truncations[agent]:
            return float(env.rewards[agent])
        return policy.value(env, agent)

    return look_ahead(env, action, value)


class ThinIceSearch:
    """A policy with a physics look-ahead (``search:K`` / ``search:K:PATH`` and ``vsearch:K`` /
    ``vsearch:K:PATH``; Thin Ice).

    Calls, pick-ups and DONE are the policy's greedy moves.  For a placement it tries the policy's
    ``k`` most probable placements on a snapshot of the env (the physics of the try and of the real
    move are the same: the env's generator is restored with the snapshot).  ``scoring="safe"``
    (``search:K``) plays the most probable that does not put the player out, and the most probable
    if all do.  ``scoring="value"`` (``vsearch:K``) plays the one whose resulting position the
    policy's own critic values most (:func:`placement_value`: a finished game counts its reward,
    being out less than any value), the most probable first at ties.
    """

    SCORINGS = ("safe", "value")

    def __init__(self, policy: PolicyAgent, k: int = 4, name: str | None = None, scoring: str = "safe") -> None:
        if k < 1:
            raise ValueError(f"search needs k >= 1 placements to try, got {k}")
        if scoring not in self.SCORINGS:
            raise ValueError(f"scoring must be one of {self.SCORINGS}, got {scoring!r}")
        self.policy, self.k, self.scoring = policy, k, scoring
        self.name = name or ("search" if scoring == "safe" else "vsearch") + f":{k}"

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
        if self.scoring == "value":
            values = [placement_value(env, agent, action, self.policy) for action in candidates]
            return candidates[int(np.argmax(values))]  # the first of the best: the most probable at ties
        player = env.possible_agents.index(agent)
        for action in candidates:
            if placement_score(env, player, action) > -1000.0:
                return action
        return candidates[0]


def build_search(policy: PolicyAgent, kind: str, budget: int | None, label: str = "") -> ThinIceSearch:
    """``search:K`` (the safe placement) or ``vsearch:K`` (the critic's best), K placements tried
    (default 4), as Thin Ice's kit builds them; ``label`` names the policy's file after the spec."""
    k = budget or 4
    return ThinIceSearch(policy, k, name=f"{kind}:{k}{label}", scoring="value" if kind == "vsearch" else "safe")
