"""Helpers shared by the env tests: seeded random play and golden playthroughs."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

PLAYTHROUGH_DIR = Path(__file__).parent / "playthroughs"

#: Every subprocess / wait timeout of the suite is multiplied by this (a slow or busy machine:
#: ``POLARZOO_TEST_TIMEOUT_SCALE=3 python -m pytest``).  No test asserts how far a job got in a
#: given time: they wait for the event, up to the scaled timeout.
TIMEOUT_SCALE = float(os.environ.get("POLARZOO_TEST_TIMEOUT_SCALE", "1"))


def scaled(seconds: float) -> float:
    """``seconds`` times :data:`TIMEOUT_SCALE`."""
    return seconds * TIMEOUT_SCALE


def random_legal_action(observation: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def playthrough_text(env_fn: Callable[..., Any], seed: int, max_steps: int = 10_000, **kwargs: Any) -> str:
    """A seeded game between random agents, written step by step (ansi render after each step)."""
    env = env_fn(render_mode="ansi", **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [f"# {env.metadata['name']} seed={seed} kwargs={kwargs}", env.render()]
    for step, agent in enumerate(env.agent_iter(max_iter=max_steps)):
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            lines.append(f"{agent}: final reward {reward} info {info}")
            env.step(None)
            continue
        action = random_legal_action(observation, rng)
        env.step(action)
        notation = env.unwrapped.action_to_notation(action)
        lines.append(f"step {step}: {agent} plays {action} ({notation})")
        lines.append(env.render())
    env.close()
    return "\n".join(lines) + "\n"


def check_playthrough(name: str, text: str) -> None:
    """Compare against tests/playthroughs/<name>.txt; POLARZOO_REGENERATE=1 rewrites the file."""
    path = PLAYTHROUGH_DIR / f"{name}.txt"
    if os.environ.get("POLARZOO_REGENERATE") == "1":
        path.write_text(text)
    if not path.exists():
        raise AssertionError(f"missing golden playthrough {path}; create it with POLARZOO_REGENERATE=1")
    expected = path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "now", n=2))
        raise AssertionError(f"playthrough {name} changed (POLARZOO_REGENERATE=1 to accept):\n{diff[:4000]}")


def fast_render_fn(env_fn: Callable[..., Any], **fixed: Any) -> Callable[..., Any]:
    """``env_fn`` for ``render_test`` whose human window does not wait between frames."""

    def make(render_mode: str | None = None) -> Any:
        env = env_fn(render_mode=render_mode, **fixed)
        env.unwrapped.metadata = {**env.unwrapped.metadata, "render_fps": 1000}
        return env

    return make


def sb3_zip_of(env_id: str, path: Path, extra: dict[str, Any] | None = None) -> Path:
    """An SB3 ``MaskablePPO.save`` zip holding the shipped model's weights (what users bring), with
    ``extra`` attributes set on the model first (pickled into the zip's ``data`` by SB3)."""
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.policies.weights import load_policy
    from polarzoo.wrappers import SingleAgentEnv

    shipped = load_policy(pretrained_path(env_id))
    model = MaskablePPO(
        type(shipped.policy),
        SingleAgentEnv(env_id),
        policy_kwargs=dict(shipped.info["policy_kwargs"]),
        n_steps=64,
        batch_size=64,
        device="cpu",
    )
    model.policy.load_state_dict(shipped.policy.state_dict())
    for name, value in (extra or {}).items():
        setattr(model, name, value)
    model.save(str(path))
    return path


def minimax(rules: Any, state: Any, depth: int) -> int:
    """1 / -1 if the side to move wins / loses within ``depth`` plies by the readable rules
    (``rules.legal_actions`` and ``rules.apply`` of a two-player game), else 0: the reference the
    exact searches are checked against."""
    if depth == 0:
        return 0
    unknown = False
    for action in rules.legal_actions(state):
        child = rules.apply(state, int(action))
        if child.winner == state.to_move:
            return 1
        if child.winner >= 0:
            continue
        value = -minimax(rules, child, depth - 1)
        if value == 1:
            return 1
        unknown |= value == 0
    return 0 if unknown else -1


def forged_league(folder: Path, env_id: str, specs: list[str]) -> Path:
    """A league file of ``specs`` as a forger would write it: well-formed, its digest computed (a
    forger can), ratings made up; ``folder/forged.json``."""
    import json

    from polarzoo.baselines.evaluation import league as league_module

    forged: dict[str, Any] = {
        "format": league_module.LEAGUE_FORMAT,
        "env": env_id,
        "version": "1",
        "members": [{"name": s, "spec": s} for s in specs],
        "ratings": {s: 1000 for s in specs},
        "ci95": {s: [900, 1100] for s in specs},
        "fingerprint": "0" * 64,
    }
    forged["digest"] = league_module.content_digest(forged)
    path = folder / "forged.json"
    path.write_text(json.dumps(forged))
    return path
