"""The turn loop that the terminal game (:mod:`~polarzoo.baselines.play`) and the window game
(:mod:`~polarzoo.baselines.play.window`) share: one module below both, so neither imports the
other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def next_live_agent(env: Any, totals: dict[str, float]) -> str | None:
    """Step the agents that have left (PettingZoo's ``None`` steps), adding their final rewards
    to ``totals``; return the agent to act next, or ``None`` once the game is over."""
    while env.agents:
        agent = env.agent_selection
        if not (env.terminations[agent] or env.truncations[agent]):
            return agent
        totals[agent] += env.last(observe=False)[1]  # its reward since it last acted
        env.step(None)
    return None


def play_to_the_end(
    env: Any,
    human: str,
    human_move: Callable[[], int | None],
    agent_move: Callable[[str], int],
    after_step: Callable[[], None] = lambda: None,
) -> dict[str, float]:
    """Play ``env`` to its end: ``human_move()`` for the person's seat (``None``: ask again, the
    position changed by an undo), ``agent_move(agent)`` for the others; ``after_step()`` after
    each move.  Returns each agent's total reward."""
    totals = {agent: 0.0 for agent in env.possible_agents}
    while (agent := next_live_agent(env, totals)) is not None:
        action = human_move() if agent == human else agent_move(agent)
        if action is not None:
            env.step(action)
            after_step()
    return totals


def outcome_line(env: Any, totals: dict[str, float]) -> str:
    """``"fire wins"`` / ``"draw"`` / a ranking line for more than two players."""
    best = max(totals.values())
    winners = [agent for agent, total in totals.items() if total == best]
    if len(winners) == len(totals):
        return "draw"
    if len(winners) == 1:
        return f"{winners[0]} wins"
    return f"{' and '.join(winners)} share the win"
