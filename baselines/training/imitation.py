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
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher's normalised observations, masks and actions in ``games`` seeded games.
    ``show_progress``: a bar on a terminal, else a line every ``log_every`` seconds."""
    from polarzoo.envs import ENVIRONMENTS
    from polarzoo.wrappers.single_agent import normalize, observation_scale

    rng = np.random.default_rng(seed)
    observations, masks, actions = [], [], []
    bar = progress(games, "teacher games", "game", enabled=show_progress, interval=log_every)
    for game in range(games):
        env = ENVIRONMENTS[env_id].raw_env(**(env_kwargs or {}))
        env.reset(seed=seed + game)
        scale = observation_scale(env.observation_space(env.possible_agents[0])["observation"])
        teacher_seat = game % len(env.possible_agents)
        opponent = RandomAgent() if rng.random() < random_opponent_share else teacher
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            if seat == teacher_seat:
                observation = env.observe(agent)
                action = teacher.act(env, agent, rng)
                observations.append(normalize(observation["observation"], scale))
                masks.append(observation["action_mask"].astype(bool))
                actions.append(action)
            else:
                action = opponent.act(env, agent, rng)
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
            distribution = policy.get_distribution(obs, action_masks=masks[index])
            loss = -distribution.log_prob(torch.as_tensor(actions[index])).mean()
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
