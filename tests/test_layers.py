"""Imports only point down: rules -> adapters (envs) -> wrappers -> baselines, and inside
baselines/ cli | kits -> policies -> agents -> evaluation | play -> training -> benchmark; never back up, no circle.

The checks read the sources (``ast``), so they see function-level imports too; each one is a
function of ``{relative path: source}`` so a test can plant an upward import and watch it fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: top-level folder -> package prefixes it must never import
FORBIDDEN = {"envs": ("polarzoo.wrappers", "polarzoo.baselines"), "wrappers": ("polarzoo.baselines",)}
#: baselines/ rooms, bottom (0) to top; a room imports only rooms of a lower rank (and itself)
BASELINE_ROOMS = {
    "cli": 0,
    "kits": 0,
    "policies": 1,
    "agents": 2,
    "evaluation": 3,
    "play": 3,
    "training": 4,
    "arena": 4,
    "benchmark": 5,
}
#: packages of the optional extras: a module that imports one at its top may be imported lazily
OPTIONAL = ("torch", "stable_baselines3", "sb3_contrib", "jax", "mctx", "optax", "ray", "mujoco", "pygame", "matplotlib")
#: envs/<game>/ modules of the rules layer (state, compiled kernels, geometry, encodings, solvers, physics)
RULES_LAYER = {"rules", "solitaire_rules", "kernels", "symmetry", "encoding", "solitaire_solver", "physics", "equivalence"}
#: the modules above the rules layer inside envs/ (adapters, pictures, JAX twins)
ADAPTERS = {"env", "solitaire_env", "render", "jax_env", "aec", "spaces"}


def sources(folder: str) -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text() for path in sorted((ROOT / folder).rglob("*.py"))}


def module_name(relative: str) -> str:
    """``baselines/agents/policy.py`` -> ``polarzoo.baselines.agents.policy``."""
    parts = list(Path(relative).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["polarzoo", *parts]) if parts[0] != "polarzoo" else ".".join(parts)


def imports(source: str) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import in ``source``; ``from X import
    a`` yields ``X.a`` too (``a`` may be a submodule)."""
    tree = ast.parse(source)
    top = {id(node) for node in tree.body}
    top |= {id(child) for node in tree.body if isinstance(node, (ast.If, ast.Try)) for child in ast.walk(node)}
    for node in ast.walk(tree):
        at_top = id(node) in top
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, at_top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno, at_top
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno, at_top


def layer_violations(files: dict[str, str]) -> list[str]:
    """Imports between the top-level folders that point up."""
    offenders = []
    for relative, source in files.items():
        forbidden = FORBIDDEN.get(Path(relative).parts[0], ())
        offenders += [f"{relative}:{line} imports {name}" for name, line, _ in imports(source) if name.startswith(forbidden)]
    return offenders


def envs_violations(files: dict[str, str]) -> list[str]:
    """Inside envs/: the rules layer and the batch cores never import an adapter, a picture or a
    twin; pictures and twins never import the env adapters."""
    offenders = []
    for relative, source in files.items():
        parts = Path(relative).with_suffix("").parts
        if parts[0] != "envs":
            continue
        stem = parts[-1]
        if stem in RULES_LAYER or parts[1] == "batch":
            banned = ADAPTERS
        elif stem in ("render", "jax_env"):
            banned = {"env", "solitaire_env"}
        else:
            continue
        for name, line, _ in imports(source):
            pieces = name.split(".")
            if pieces[:2] == ["polarzoo", "envs"] and set(pieces[2:]) & banned:
                offenders.append(f"{relative}:{line} imports {name} (above the {'batch core' if parts[1] == 'batch' else stem})")
            if stem in RULES_LAYER and pieces[0] in ("pettingzoo", "gymnasium"):
                offenders.append(f"{relative}:{line} imports {name} (the rules layer knows no RL API)")
    return offenders


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["polarzoo", "baselines"] and parts[2] in BASELINE_ROOMS else None


def _needs_extra(source: str) -> bool:
    """Whether a module imports an optional extra at its top (or asks for one with ``require``)."""
    if any(at_top and name.split(".")[0] in OPTIONAL for name, _, at_top in imports(source)):
        return True
    return any(
        isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "require"
        for node in ast.parse(source).body
    )


def baselines_violations(files: dict[str, str]) -> list[str]:
    """Inside baselines/: rooms import only lower rooms; no room imports the command modules
    beside the rooms; function-level imports of baselines modules only for optional extras;
    no import circle."""
    modules = {
        module_name(relative): (relative, source) for relative, source in files.items() if Path(relative).parts[0] == "baselines"
    }
    offenders, graph = [], {}
    for module, (relative, source) in modules.items():
        room = _room(module)
        targets = set()
        for name, line, at_top in imports(source):
            if not name.startswith("polarzoo.baselines"):
                continue
            target = name if name in modules else name.rpartition(".")[0]
            if target not in modules or target == module:
                continue
            targets.add(target)
            target_room = _room(target)
            if room is not None:
                if target_room is None:
                    offenders.append(f"{relative}:{line} imports {name}, a command module beside the rooms")
                elif target_room != room and BASELINE_ROOMS[target_room] >= BASELINE_ROOMS[room]:
                    offenders.append(
                        f"{relative}:{line} imports {name}: {room} may import only "
                        f"{sorted(r for r, k in BASELINE_ROOMS.items() if k < BASELINE_ROOMS[room])}"
                    )
            # (a package's __init__ may re-export its own room's names lazily, from __getattr__)
            lazy_export = relative.endswith("__init__.py") and target_room == room
            if not at_top and not _needs_extra(modules[target][1]) and not lazy_export:
                offenders.append(f"{relative}:{line} imports {name} inside a function, but it needs no optional extra")
        graph[module] = targets
    offenders += [" -> ".join(cycle) for cycle in _cycles(graph)]
    return offenders


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_lower_layers_never_import_higher_ones(layer: str) -> None:
    offenders = layer_violations(sources(layer))
    assert not offenders, "\n".join(offenders)


def test_the_rules_layer_and_batch_cores_never_import_the_adapters() -> None:
    offenders = envs_violations(sources("envs"))
    assert not offenders, "\n".join(offenders)


def test_baselines_rooms_point_down_with_no_circle() -> None:
    offenders = baselines_violations(sources("baselines"))
    assert not offenders, "\n".join(offenders)


def test_every_baselines_module_is_in_a_room_or_is_a_command() -> None:
    """The floor of baselines/ holds the rooms, the package's ``__init__`` and the documented
    ``python -m`` commands, each a few lines that call its room's ``main``."""
    for path in (ROOT / "baselines").glob("*.py"):
        if path.name == "__init__.py":
            continue
        source = path.read_text()
        assert len(source.splitlines()) <= 12 and "import main" in source, f"{path.name}: code belongs in a room"


@pytest.mark.parametrize(
    "relative, planted, expected",
    [
        ("envs/batch/fire_and_ice.py", "from polarzoo.envs.fire_and_ice.env import NUM_CHANNELS", "above the batch core"),
        ("envs/fire_and_ice/kernels.py", "from polarzoo.envs.fire_and_ice import env", "above the kernels"),
        ("envs/go_with_the_floe/rules.py", "import gymnasium", "knows no RL API"),
    ],
)
def test_a_planted_upward_import_in_envs_is_caught(relative: str, planted: str, expected: str) -> None:
    files = sources("envs")
    files[relative] = planted + "\n" + files[relative]
    assert any(expected in line for line in envs_violations(files))


@pytest.mark.parametrize(
    "relative, planted, expected",
    [
        (
            "baselines/agents/mcts.py",
            "from polarzoo.baselines.evaluation.tournament import head_to_head",
            "agents may import only",
        ),
        (
            "baselines/evaluation/tournament.py",
            "from polarzoo.baselines.play.turns import outcome_line",
            "evaluation may import only",
        ),
        ("baselines/cli/runs.py", "from polarzoo.baselines import train", "a command module beside the rooms"),
        (
            "baselines/agents/base.py",
            "def f():\n    from polarzoo.baselines.agents.mcts import MCTSAgent",
            "needs no optional extra",
        ),
        (
            "baselines/agents/base.py",
            "from polarzoo.baselines.agents.registry import make_agent",
            "polarzoo.baselines.agents.base",
        ),
    ],
)
def test_a_planted_upward_import_or_circle_in_baselines_is_caught(relative: str, planted: str, expected: str) -> None:
    files = sources("baselines")
    files[relative] = planted + "\n" + files[relative]
    assert any(expected in line for line in baselines_violations(files)), baselines_violations(files)


def test_a_planted_import_of_baselines_from_wrappers_is_caught() -> None:
    files = sources("wrappers")
    files["wrappers/shaping.py"] = "from polarzoo.baselines.agents import RandomAgent\n" + files["wrappers/shaping.py"]
    assert layer_violations(files)
