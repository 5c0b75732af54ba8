"""The JAX twins of the board games (pgx's API), by id, and their lockstep check.

    from polarzoo.envs import jax_envs

    env = jax_envs.make("fire_and_ice")            # a pgx.Env: init / step / observe
    jax_envs.lockstep("fire_and_ice", games=1000)  # mismatches against the numba batch core: 0

Twins: ``fire_and_ice`` (:class:`~polarzoo.envs.fire_and_ice.jax_env.FireAndIce`, with the
handicap variant as arguments) and ``go_with_the_floe``
(:class:`~polarzoo.envs.go_with_the_floe.jax_env.GoWithTheFloe`, single games).  The ids with
``_v0`` (the PettingZoo ids) are accepted too.  Needs ``pip install "polarzoo[jax]"``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Our id -> (module, class) of its JAX twin.
TWINS: dict[str, tuple[str, str]] = {
    "fire_and_ice": ("polarzoo.envs.fire_and_ice.jax_env", "FireAndIce"),
    "go_with_the_floe": ("polarzoo.envs.go_with_the_floe.jax_env", "GoWithTheFloe"),
}


def canonical_id(env_id: str) -> str:
    """``"fire_and_ice_v0"`` / ``"polarzoo/fire_and_ice"`` -> ``"fire_and_ice"``; ValueError otherwise."""
    name = str(env_id).removeprefix("polarzoo/").removesuffix("_v0")
    if name not in TWINS:
        raise ValueError(f"no JAX twin for {env_id!r}; choose one of {sorted(TWINS)}")
    return name


def available_envs() -> tuple[str, ...]:
    return tuple(TWINS)


def make(env_id: str, **kwargs: Any) -> Any:
    """The JAX twin of ``env_id`` (a ``pgx.Env``); ``kwargs`` go to its constructor."""
    module, cls = TWINS[canonical_id(env_id)]
    return getattr(importlib.import_module(module), cls)(**kwargs)


def batch_core(env_id: str, batch_size: int, seed: int | None = None) -> Any:
    """The numba batch core that the twin of ``env_id`` is checked against."""
    from polarzoo.envs.batch import BATCH_CORES

    return BATCH_CORES[canonical_id(env_id) + "_v0"](batch_size, seed=seed)


@dataclass
class LockstepReport:
    """What :func:`lockstep` compared and what differed (``mismatches`` by kind; empty = equal)."""

    env_id: str
    games: int = 0
    steps: int = 0
    mismatches: dict[str, int] = field(default_factory=dict)
    first_mismatch: str = ""

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _auto_reset_step(env: Any):
    """One jitted, vmapped step with pgx-style auto reset that also returns what the batch core
    reports about the finished games (before their reset)."""
    import jax
    import jax.numpy as jnp

    def one(state, action, key):
        mover = state.current_player
        after = env.step(state, action)
        final = env.observe(after, mover)  # the finished position seen by the player who moved
        player_of_colour = jnp.stack([after._first_player, 1 - after._first_player])  # player of colour c
        rewards_by_colour = after.rewards[player_of_colour]
        winner = after._x.winner
        fresh = env.init(key)
        state = jax.tree.map(lambda a, b: jnp.where(after.terminated, a, b), fresh, after)
        return state, after.terminated, rewards_by_colour, winner, final

    return jax.jit(jax.vmap(one))


def lockstep(env_id: str, games: int = 1000, batch_size: int = 256, seed: int = 0, progress: Any = None) -> LockstepReport:
    """Random games played at once by the JAX twin and the numba batch core with the same
    actions: every state array, legal-action mask, observation (of the player to move and, at
    the end, of the mover), reward, winner and termination compared at every step, until
    ``games`` games have finished.  ``progress(report)`` is called every 100 steps."""
    import jax

    name = canonical_id(env_id)
    env = make(name)
    core = batch_core(name, batch_size, seed=seed)
    rng = np.random.default_rng(seed)
    keys = jax.random.split(jax.random.PRNGKey(seed), batch_size)
    state = jax.jit(jax.vmap(env.init))(keys)
    step = _auto_reset_step(env)
    observe_other = jax.jit(jax.vmap(lambda s: env.observe(s, 1 - s.current_player)))
    report = LockstepReport(name)
    key = jax.random.PRNGKey(seed + 1)

    def compare(kind: str, ours: Any, theirs: Any) -> None:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        bad = ours.reshape(batch_size, -1) != theirs.reshape(batch_size, -1)
        rows = np.flatnonzero(bad.any(axis=1))
        if rows.size:
            report.mismatches[kind] = report.mismatches.get(kind, 0) + int(rows.size)
            if not report.first_mismatch:
                report.first_mismatch = f"{kind} at step {report.steps}, game {rows[0]}"

    def compare_state() -> None:
        for array in core.state_layout:
            compare(f"state.{array}", getattr(state._x, array), getattr(core, array))
        compare("legal_action_mask", state.legal_action_mask, core.mask.astype(bool))
        compare("observation", state.observation, core.observe())
        compare("current_player", np.asarray(state.current_player) ^ np.asarray(state._first_player), core.to_move)
        compare("observation of the other player", observe_other(state), core.observe((1 - core.to_move).astype(np.int8)))

    compare_state()
    while report.games < games:
        actions = core.sample_actions(rng)
        key, sub = jax.random.split(key)
        state, terminated, rewards, winner, final = step(state, actions.astype(np.int32), jax.random.split(sub, batch_size))
        result = core.step(actions)
        terminated = np.asarray(terminated)
        compare("terminated", terminated, result.terminated)
        compare("rewards", rewards, result.rewards)
        compare("winner", np.where(terminated, np.asarray(winner), -1), result.winner)
        compare(
            "final_observation",
            np.where(terminated[:, None], np.asarray(final).reshape(batch_size, -1), 0),
            result.final_observation,
        )
        compare_state()
        report.steps += 1
        report.games += int(result.terminated.sum())
        if progress is not None and report.steps % 100 == 0:
            progress(report)
    return report
