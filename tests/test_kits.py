"""Each game's kit (``polarzoo.baselines.kits``): declared once, found through the game's
registration, every reference loads; and above ``envs/`` no table is keyed by a game and no branch
tests a game id (the benchmark's published protocol excepted)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from polarzoo.baselines.kits import EMPTY, Kit, kit_of, load
from polarzoo.envs import GAMES, GameInfo, register_game, unregister_game

ROOT = Path(__file__).resolve().parents[1]
#: modules above envs/ allowed to name games: the kits themselves, the benchmark's published
#: protocol (budgets and pinned settings by game), the OpenSpiel adapter's per-game classes
ALLOWED = ("baselines/kits/", "baselines/benchmark/protocol.py")


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_every_reference_of_a_kit_loads(env_id: str) -> None:
    kit = kit_of(env_id)
    assert isinstance(kit, Kit)
    for ref in [kit.heuristic, kit.encoder, kit.solver, kit.solver_reach, *kit.searches.values()]:
        if ref is not None:
            assert callable(load(ref)), ref
    if kit.pretrained:
        from polarzoo.baselines.agents import pretrained_path

        assert pretrained_path(env_id).is_file()
    if kit.network:
        from polarzoo.baselines.policies.networks import BOARDS

        assert kit.network in BOARDS


def test_a_kit_is_frozen_and_checks_its_references() -> None:
    kit = kit_of("fire_and_ice_v0")
    with pytest.raises(TypeError):
        kit.hyperparams["n_envs"] = 1  # type: ignore[index]
    with pytest.raises(ValueError, match="package.module:attribute"):
        Kit(heuristic="no_colon_here")
    with pytest.raises(ValueError, match="does not load"):
        load("polarzoo.nowhere:Thing")


def test_a_game_without_a_kit_gets_the_empty_one() -> None:
    info = GameInfo(id="kitless_v0", title="Kitless", module=GAMES["fire_and_ice_v0"].module)
    register_game(info)
    try:
        assert kit_of("kitless_v0") is EMPTY
        from polarzoo.baselines.agents import make_agent

        with pytest.raises(ValueError, match="no heuristic agent for kitless_v0"):
            make_agent("heuristic", "kitless_v0")
        from polarzoo.baselines.training.config import load_config

        assert "heuristic" not in load_config("kitless_v0")["opponents"]
    finally:
        unregister_game("kitless_v0")
    with pytest.raises(ValueError, match="unknown game"):
        kit_of("kitless_v0")


def game_names(files: dict[str, str], ids: set[str]) -> list[str]:
    """Where a module keys a table by a game id or compares with one (``x == "fire_and_ice_v0"``,
    ``x in ("thin_ice_v0", ...)``)."""
    found = []
    for relative, source in files.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                if set(keys) & ids:
                    found.append(f"{relative}:{node.lineno} a table keyed by {sorted(set(keys) & ids)}")
            elif isinstance(node, ast.Compare):
                names = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value in ids]
                if names:
                    found.append(f"{relative}:{node.lineno} a branch on {names}")
    return found


def test_no_table_or_branch_above_envs_names_a_game() -> None:
    files = {
        str(path.relative_to(ROOT)): path.read_text()
        for folder in ("baselines", "wrappers")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not str(path.relative_to(ROOT)).startswith(ALLOWED)
    }
    assert game_names(files, set(GAMES)) == []
    planted = {"baselines/x.py": 'CAPS = {"thin_ice_v0": 3}\nif env_id == "fire_and_ice_v0":\n    pass\n'}
    assert len(game_names(planted, set(GAMES))) == 2
