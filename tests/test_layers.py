"""Imports only point down: rules/envs -> wrappers (adapters) -> baselines; never back up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"envs": ("polarzoo.wrappers", "polarzoo.baselines"), "wrappers": ("polarzoo.baselines",)}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_lower_layers_never_import_higher_ones(layer: str) -> None:
    offenders = []
    for path in (ROOT / layer).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                          if n.startswith(FORBIDDEN[layer])]
    assert not offenders, "\n".join(offenders)


def test_rules_modules_know_nothing_of_pettingzoo_or_gymnasium() -> None:
    for path in (ROOT / "envs").rglob("rules.py"):
        source = path.read_text()
        assert "import pettingzoo" not in source and "from pettingzoo" not in source, path
        assert "import gymnasium" not in source and "from gymnasium" not in source, path


def test_play_and_window_play_do_not_import_each_other() -> None:
    """The terminal and window games share their turn loop through baselines/game_loop.py."""
    def imports(name: str) -> set[str]:
        tree = ast.parse((ROOT / "baselines" / f"{name}.py").read_text())
        return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}

    assert "polarzoo.baselines.window_play" not in imports("game_loop") | imports("window_play")
    assert "polarzoo.baselines.play" not in imports("window_play") | imports("game_loop")
