"""Packaging: everything installs and imports as ``polarzoo.*``, never as top-level ``envs`` etc.

The slow part (build the wheel, install it into a brand-new venv, import it from a folder that has
its own ``envs/``, ``wrappers/`` and ``baselines/`` packages, ``pip check``) runs once per session.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
import tomllib

from tests.helpers import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OLD_TOP_LEVEL = {"envs", "wrappers", "baselines", "benchmarks"}
PACKAGE_FOLDERS = {
    "polarzoo": "polarzoo",
    "polarzoo.envs": "envs",
    "polarzoo.wrappers": "wrappers",
    "polarzoo.baselines": "baselines",
}
#: folders of data, no code, listed as packages so that setuptools installs them without a warning
DATA_PACKAGES = {"polarzoo.baselines.leagues", "polarzoo.baselines.pretrained", "polarzoo.baselines.play.web_static"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_package_list_names_every_package_folder() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert setuptools["package-dir"] == PACKAGE_FOLDERS
    expected = set()
    for package, folder in PACKAGE_FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            expected.add(".".join((package, *relative)))
    assert set(setuptools["packages"]) == expected | DATA_PACKAGES


def test_console_scripts_point_at_real_mains() -> None:
    import importlib

    scripts = _pyproject()["project"]["scripts"]
    assert {"polarzoo-train", "polarzoo-evaluate", "polarzoo-play", "polarzoo-solve"} <= set(scripts)
    for target in scripts.values():
        module, function = target.split(":")
        assert module.startswith("polarzoo.baselines.")
        assert callable(getattr(importlib.import_module(module), function))


def test_one_pygame_distribution() -> None:
    """pettingzoo[classic] brings pygame-ce; a second distribution (pygame) would share its
    pygame/ folder, and uninstalling either would break the other."""
    project = _pyproject()["project"]
    requirements = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    names = {r.split(">")[0].split("=")[0].split("[")[0].split(";")[0].strip().lower() for r in requirements}
    assert "pygame" not in names and "pygame-ce" in names


def _python_files() -> list[Path]:
    folders = ["polarzoo", "envs", "wrappers", "baselines", "benchmarks", "tests", "docs"]
    return [path for folder in folders for path in (ROOT / folder).rglob("*.py")]


def test_nothing_imports_the_old_top_level_names() -> None:
    offenders = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            # benchmarks/ is a folder of repo scripts (python -m benchmarks.X), not installed: only
            # the repository's own scripts and tests may import it.
            bad = [n for n in names if n.split(".")[0] in OLD_TOP_LEVEL - {"benchmarks"}]
            bad += [
                n
                for n in names
                if n.split(".")[0] == "benchmarks" and path.relative_to(ROOT).parts[0] not in ("benchmarks", "tests")
            ]
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in bad]
    assert not offenders, "\n".join(offenders)


def test_entry_points_and_module_strings_use_the_namespace() -> None:
    text = (ROOT / "envs" / "__init__.py").read_text()
    assert 'entry_point="polarzoo.envs.' in text
    for path in _python_files():
        if path.name == "test_packaging.py":  # names the old strings on purpose
            continue
        source = path.read_text()
        for old in ("`from envs import", '"-m", "baselines.', "python -m baselines.", 'entry_point="envs.'):
            assert old not in source, f"{path.relative_to(ROOT)} still says {old}"
    readme = (ROOT / "README.md").read_text()
    assert "python -m baselines." not in readme and "from envs " not in readme


USER_SCRIPT = textwrap.dedent(
    """
    import importlib.util, json, sys
    import envs, wrappers, baselines            # the user's own packages, from this folder
    assert envs.MINE and wrappers.MINE and baselines.MINE, "user packages shadowed"
    import gymnasium, pettingzoo
    import polarzoo
    from polarzoo.envs import fire_and_ice_v0, go_with_the_floe_v0, thin_ice_v0
    from polarzoo.wrappers import SingleAgentEnv
    assert envs.MINE, "polarzoo replaced the user's envs"
    env = fire_and_ice_v0.env()
    env.reset(seed=0)
    go_with_the_floe_v0.env().reset(seed=0)
    gym_env = gymnasium.make("polarzoo/FireAndIceSolitaire-v0")
    gym_env.reset(seed=1)
    site = [p for p in sys.path if p.endswith("site-packages")][0]
    top = sorted(m for m in ("envs", "wrappers", "baselines", "benchmarks")
                 if importlib.util.find_spec(m) is not None and site in (importlib.util.find_spec(m).origin or ""))
    print(json.dumps({"version": polarzoo.__version__, "envs": sorted(polarzoo.ENVIRONMENTS),
                      "installed_top_level": top, "polarzoo_file": polarzoo.__file__}))
    """
)


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A brand-new venv with the wheel built from this checkout (dependencies from the index)."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work / "dist"), str(ROOT)],
        check=True,
    )
    wheels = list((work / "dist").glob("polarzoo-*.whl"))
    assert len(wheels) == 1
    venv.EnvBuilder(with_pip=True).create(work / "venv")
    python = work / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheels[0])], check=True)
    return python


@pytest.mark.slow  # builds a wheel into a new venv
def test_wheel_contents_have_no_top_level_packages(installed_wheel: Path) -> None:
    import zipfile

    wheel = next((installed_wheel.parents[2] / "dist").glob("polarzoo-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top <= {"polarzoo", *(n for n in top if n.endswith(".dist-info"))}, top
    assert {f"polarzoo/baselines/kits/{game}.py" for game in ("fire_and_ice", "go_with_the_floe", "thin_ice")} <= set(names)
    for model in ("fire_and_ice_v0", "go_with_the_floe_v0", "fire_and_ice_solitaire_v0"):
        assert f"polarzoo/baselines/pretrained/{model}.safetensors" in names
    for page in ("layout.html", "play.html", "play.js", "replay.html", "replay.js", "style.css"):  # polarzoo-web's pages
        assert f"polarzoo/baselines/play/web_static/{page}" in names


@pytest.mark.slow  # builds a wheel into a new venv
def test_fresh_venv_imports_beside_users_own_packages(installed_wheel: Path, tmp_path: Path) -> None:
    project = tmp_path / "myproject"
    for name in ("envs", "wrappers", "baselines"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text("MINE = True\n")
    (project / "check.py").write_text(USER_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run([str(installed_wheel), "check.py"], cwd=project, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    import json

    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["envs"] == ["fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"]
    assert report["installed_top_level"] == []
    assert "site-packages" in report["polarzoo_file"]
    bin_dir = installed_wheel.parent
    assert (bin_dir / "polarzoo-play").exists() and (bin_dir / "polarzoo-train").exists()
    played = subprocess.run(
        [str(bin_dir / "polarzoo-play"), "--env", "fire_and_ice_v0", "--seed", "3"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
    )
    assert played.returncode == 0, played.stderr
    check = subprocess.run([str(installed_wheel), "-m", "pip", "check"], capture_output=True, text=True, env=env)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    "statement",
    [
        "from polarzoo.baselines.tournament import head_to_head",
        "from polarzoo.baselines.rllib_train import build_config",
        "from polarzoo.baselines.training.ppo import main",
        "from polarzoo.baselines.evaluation.evaluate import main",
        "from polarzoo.baselines.evaluation.league import rate",
    ],
)
def test_the_names_moved_in_0_3_are_gone(statement: str) -> None:
    """The shims of the 0.3 moves kept the old names through 0.3 and are removed in 0.4 (the
    CHANGELOG's "Removed" says where each name is now)."""
    result = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, timeout=scaled(120))
    assert result.returncode != 0 and ("ImportError" in result.stderr or "ModuleNotFoundError" in result.stderr)


def test_each_games_facts_are_the_ones_its_forms_use() -> None:
    """A ``GameInfo`` field and the table that serves it say the same: the batch cores, the JAX
    twins, the OpenSpiel names, the steps/s table (one place per fact; the tables follow it)."""
    from polarzoo.envs import GAMES, jax_envs
    from polarzoo.envs.batch import BATCH_CORES

    assert {env_id for env_id, info in GAMES.items() if info.batch_core} == set(BATCH_CORES)
    assert {info.jax_twin for info in GAMES.values() if info.jax_twin} == set(jax_envs.TWINS)
    if importlib.util.find_spec("pyspiel") is not None:
        from polarzoo.wrappers import openspiel

        assert {info.openspiel for info in GAMES.values() if info.openspiel} == {
            openspiel.FIRE_AND_ICE,
            openspiel.GO_WITH_THE_FLOE,
        }
    from benchmarks.env_steps import candidates

    timed = {name.split(".")[0] for name in candidates()}
    assert timed - {"connect_four_v3"} == {env_id for env_id, info in GAMES.items() if info.benchmark_steps}
