"""Behaviour cloning: warm-start a MaskablePPO policy from a teacher agent's moves.

PPO from scratch on Fire & Ice's 2,402 actions learns slowly; copying the heuristic first gives
self-play a sensible starting point.  ``collect_demonstrations`` plays seeded games (teacher
against a mixture of random and teacher opponents, both seats) and records the teacher's
observations (normalised as :class:`polarzoo.wrappers.SingleAgentEnv` does), masks and actions;
``clone`` fits the policy to them with a masked cross-entropy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polarzoo.baselines.agents import RandomAgent
from polarzoo.baselines.agents.registry import make_agent
from polarzoo.baselines.cli.progress import progress


def collect_demonstrations(
    env_id: str,
    teacher: Any,
    games: int,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    random_opponent_share: float = 0.5,
    show_progress: bool = False,
    log_every: float = 30.0,
    opponents: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher's normalised observations, masks and actions in ``games`` seeded games.

    ``opponents``: each other seat's agent drawn per game from these weights (``"teacher"`` or an
    agent spec); the default is random with ``random_opponent_share``, else the teacher.  With
    ``env_kwargs["num_players"]`` a list (Thin Ice), the games go round the counts and the
    observations are padded to the largest (as the trainer's envs pad them).
    ``show_progress``: a bar on a terminal, else a line every ``log_every`` seconds."""
    from polarzoo.envs import ENVIRONMENTS, GAMES
    from polarzoo.wrappers.single_agent import normalize, observation_scale, player_counts

    kwargs = dict(env_kwargs or {})
    counts = player_counts(env_id, kwargs.get("num_players"))
    pad_to = None if counts is None else max(counts)
    pad = GAMES[env_id].observation_padding()[0] if pad_to is not None else None
    weights = opponents if opponents is not None else {"random": random_opponent_share, "teacher": 1 - random_opponent_share}
    names = list(weights)
    bounds = np.cumsum([float(weights[name]) for name in names])
    pool: dict[str, Any] = {"random": RandomAgent(), "teacher": teacher}
    padded_scale = None
    if pad_to is not None:  # the largest game's scale, as the trainer's padded envs use
        largest = ENVIRONMENTS[env_id].raw_env(**{**kwargs, "num_players": pad_to})
        padded_scale = observation_scale(largest.observation_space(largest.possible_agents[0])["observation"])

    def opponent_agent(u: float) -> Any:
        name = names[min(int(np.searchsorted(bounds / bounds[-1], u, side="right")), len(names) - 1)]
        if name not in pool:
            pool[name] = make_agent(name, env_id)
        return pool[name]

    rng = np.random.default_rng(seed)
    observations, masks, actions = [], [], []
    bar = progress(games, "teacher games", "game", enabled=show_progress, interval=log_every)
    for game in range(games):
        game_kwargs = kwargs if counts is None else {**kwargs, "num_players": counts[game % len(counts)]}
        env = ENVIRONMENTS[env_id].raw_env(**game_kwargs)
        env.reset(seed=seed + game)
        scale = observation_scale(env.observation_space(env.possible_agents[0])["observation"])
        seats = len(env.possible_agents)
        teacher_seat = game % seats if counts is None else (game // len(counts)) % seats
        # One draw per other seat, in seat order (two players: one draw a game, as before).
        seat_agents = {seat: opponent_agent(rng.random()) for seat in range(seats) if seat != teacher_seat}
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            if seat == teacher_seat:
                observation = env.observe(agent)
                action = teacher.act(env, agent, rng)
                features = observation["observation"]
                if pad is not None:
                    features = pad(features, pad_to)
                observations.append(normalize(features, scale if padded_scale is None else padded_scale))
                masks.append(observation["action_mask"].astype(bool))
                actions.append(action)
            else:
                action = seat_agents[seat].act(env, agent, rng)
            env.step(action)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return np.array(observations), np.array(masks), np.array(actions)


def clone(
    model: Any,
    observations: np.ndarray,
    masks: np.ndarray,
    actions: np.ndarray,
    epochs: int = 10,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
    on_epoch: Callable[[int, float], None] | None = None,
    show_progress: bool = False,
    log_every: float = 30.0,
) -> list[float]:
    """Fit ``model.policy`` to the demonstrations; returns the mean loss of each epoch.
    ``on_epoch(epoch, loss)`` runs after each epoch (the trainer saves a checkpoint there);
    ``show_progress``: a bar on a terminal, else a line every ``log_every`` seconds."""
    import torch

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    losses = []
    policy.set_training_mode(True)
    bar = progress(epochs, "behaviour cloning", "epoch", enabled=show_progress, interval=log_every)
    for epoch in range(epochs):
        order = rng.permutation(len(actions))
        epoch_losses = []
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            obs = torch.as_tensor(observations[index], dtype=torch.float32)
            # the update's own path: a board policy scores the legal actions only
            _, log_prob, _ = policy.evaluate_actions(obs, torch.as_tensor(actions[index]), torch.as_tensor(masks[index]))
            loss = -log_prob.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(float(loss.detach()))
        losses.append(float(np.mean(epoch_losses)))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if on_epoch is not None:
            policy.set_training_mode(False)
            on_epoch(epoch, losses[-1])
            policy.set_training_mode(True)
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    return losses
