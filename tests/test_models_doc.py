"""docs/models.md: its plain-PyTorch loader plays the shipped agents' moves, its tensor tables are
the shipped files' tensors, and every shipped model has a model card."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "models.md"
PRETRAINED = ROOT / "baselines" / "pretrained"
GAMES = ("fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0")


def loader() -> dict:
    text = PAGE.read_text()
    section = text[text.index("## A loader in plain PyTorch") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict = {}
    exec(compile(code.group(1), str(PAGE), "exec"), namespace)  # the page's own code
    return namespace


def test_the_loader_is_short() -> None:
    code = re.search(r"```python\n(.*?)```", PAGE.read_text().split("## A loader in plain PyTorch")[1], re.S)
    assert code is not None and len([line for line in code.group(1).splitlines() if line.strip()]) <= 40


@pytest.mark.parametrize("env_id", GAMES)
def test_the_pages_loader_plays_the_shipped_agents_moves(env_id: str) -> None:
    from polarzoo.baselines.agents import make_agent
    from polarzoo.envs import ENVIRONMENTS

    act = loader()["load_board_policy"](str(PRETRAINED / f"{env_id}.safetensors"))
    agent = make_agent("pretrained", env_id)
    checked = 0
    for seed in range(3):
        env = ENVIRONMENTS[env_id].raw_env()
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(12):
            seat = env.agent_selection
            if env.terminations[seat] or env.truncations[seat]:
                break
            observation = env.observe(seat)
            mine, value = act(observation["observation"], observation["action_mask"], env.observation_space(seat)["observation"])
            assert mine == agent.act(env, seat, rng) and math.isfinite(value)
            checked += 1
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert checked >= 12


def test_the_tensor_tables_are_the_shipped_files() -> None:
    from safetensors import safe_open

    text = PAGE.read_text()
    sections = re.findall(r"### `([\w.]+)`\n\n(.*?)</details>", text, re.S)
    assert {name for name, _ in sections} == {p.name for p in PRETRAINED.glob("*.safetensors")}
    for name, body in sections:
        rows = re.findall(r"^\| `([^`]+)` \| ([\dx]+|scalar) \| (\w+) \|$", body, re.M)
        with safe_open(PRETRAINED / name, "np") as handle:
            settings = json.loads(handle.metadata()["settings"])
            found = [
                (k, "x".join(map(str, handle.get_slice(k).get_shape())), handle.get_slice(k).get_dtype())
                for k in sorted(handle.keys())
            ]
        assert rows == found, name
        total = sum(math.prod(int(d) for d in shape.split("x")) for _, shape, _ in found if shape != "scalar")
        assert (
            f"{len(found)} tensors, {total:,} numbers" in body and json.dumps(settings["policy_kwargs"], sort_keys=True) in body
        )


def test_every_shipped_model_has_a_model_card() -> None:
    models = [p for p in PRETRAINED.iterdir() if p.suffix in (".safetensors", ".npz")]
    assert models
    for model in models:
        card = model.with_suffix(".md")
        assert card.exists(), f"{model.name} has no model card ({card.name})"
        text = card.read_text()
        assert all(word in text for word in ("**What**", "**Command", "**Figures**")), card.name
