"""``make_agent(spec, env_id)``: every agent by its spec (the names the CLIs take), and
``model_files(spec, env_id)``: the files a spec plays from (what a league's fingerprint hashes)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents.alphazero_jax import AlphaZeroJaxAgent
from polarzoo.baselines.agents.base import RandomAgent
from polarzoo.baselines.agents.fire_and_ice import FireAndIceHeuristic
from polarzoo.baselines.agents.floe_search import FloeSearch
from polarzoo.baselines.agents.go_with_the_floe import FloeHeuristic
from polarzoo.baselines.agents.mcts import MCTSAgent
from polarzoo.baselines.agents.oracle import FALLBACKS, Oracle
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.agents.pretrained import PRETRAINED_AZ_JAX, PRETRAINED_DIR, pretrained_path
from polarzoo.baselines.agents.process import ProcessAgent
from polarzoo.baselines.agents.thin_ice import ThinIceHeuristic, ThinIceSearch
from polarzoo.envs import GAMES

HEURISTICS: dict[str, type] = {
    "fire_and_ice_v0": FireAndIceHeuristic,
    "go_with_the_floe_v0": FloeHeuristic,
    "thin_ice_v0": ThinIceHeuristic,
}

#: The policy searches by game: Go with the Floe's endgame search (``search:D``), Thin Ice's
#: look-ahead over placements (``search:K``, ``vsearch:K``).
SEARCHES: dict[str, type] = {"go_with_the_floe_v0": FloeSearch, "thin_ice_v0": ThinIceSearch}


def _count(argument: str, kind: str, default: int, what: str = "simulations") -> int:
    if not argument:
        return default
    if not (argument.isascii() and argument.isdigit()) or len(argument) > 12 or int(argument) < 1:
        raise ValueError(f"{kind} needs a positive whole number of {what}, e.g. {kind}:{default}; got {argument!r}")
    return int(argument)


def model_path(path: str) -> str:
    """``path`` if it is a file, else ``FileNotFoundError`` naming it."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no model file {path} (give the path of a model.safetensors or a saved model.zip)")
    return path


def make_agent(spec: str, env_id: str) -> Any:
    """``"random"``, ``"heuristic"``, ``"mcts"`` / ``"mcts:N"``, ``"model:PATH"``, ``"pretrained"``,
    ``"az:N"`` / ``"az:N:PATH"``, ``"az-jax:PATH"`` / ``"az-jax:N:PATH"`` (AlphaZero trained on the JAX
    twins), ``"search:K"`` / ``"search:K:PATH"`` and ``"vsearch:K"`` / ``"vsearch:K:PATH"`` (Thin Ice: K placements
    tried), ``"search:D"`` / ``"search:D:PATH"`` (Go with the Floe: the endgame searched D White moves),
    ``"oracle"`` / ``"oracle:SPEC"`` (perfect play where the exact search proves the position, SPEC
    elsewhere) -> agent."""
    kind, _, argument = spec.partition(":")
    if kind == "random":
        return RandomAgent()
    if kind == "proc":  # any executable, in its own process, over JSON lines (docs/arena.md)
        return ProcessAgent(argument)
    if kind == "heuristic":
        if env_id not in HEURISTICS:
            raise ValueError(f"no heuristic agent for {env_id}; known: {sorted(HEURISTICS)}")
        if argument:  # Thin Ice: heuristic:K tries K placements (default 6)
            if "candidates" not in inspect.signature(HEURISTICS[env_id]).parameters:
                raise ValueError(f"heuristic:K (placements to try) is Thin Ice's; {env_id}'s heuristic takes no argument")
            agent = HEURISTICS[env_id](_count(argument, "heuristic", 6, "placements to try"))
            agent.name = f"heuristic:{agent.candidates}"
            return agent
        return HEURISTICS[env_id]()
    if kind == "mcts":
        if env_id not in GAMES or not GAMES[env_id].rules_core:
            raise ValueError(f"MCTS needs a two-player rules core; {env_id} has none")
        return MCTSAgent(_count(argument, "mcts", 200))
    if kind == "model":
        if not argument:
            raise ValueError("model agents need a path: model:runs/.../model.zip")
        return PolicyAgent(model_path(argument)).check_fits(env_id)
    if kind == "pretrained":
        return PolicyAgent(pretrained_path(env_id), name="pretrained")
    if kind == "search" and SEARCHES.get(env_id) is FloeSearch:
        count, _, path = argument.partition(":")
        depth = _count(count, "search", 3, "White moves to search")
        policy = (
            PolicyAgent(model_path(path)).check_fits(env_id) if path else PolicyAgent(pretrained_path(env_id), name="pretrained")
        )
        return FloeSearch(policy, depth, name=f"search:{depth}" + (f":{Path(path).parent.name}" if path else ""))
    if kind in ("search", "vsearch"):
        if SEARCHES.get(env_id) is not ThinIceSearch:
            hint = "search:D for the Floe's endgame search, " if env_id in SEARCHES else ""
            raise ValueError(f"{kind}:K is the Thin Ice policy look-ahead; for {env_id} use {hint}az:N or mcts:N")
        count, _, path = argument.partition(":")
        k = _count(count, kind, 4, "placements to try")
        policy = (
            PolicyAgent(model_path(path)).check_fits(env_id) if path else PolicyAgent(pretrained_path(env_id), name="pretrained")
        )
        return ThinIceSearch(
            policy,
            k,
            name=f"{kind}:{k}" + (f":{Path(path).parent.name}" if path else ""),
            scoring="value" if kind == "vsearch" else "safe",
        )
    if kind == "oracle":  # perfect play where the game's exact search proves the position
        if env_id not in FALLBACKS:
            raise ValueError(f"oracle needs a game with an exact search: {sorted(FALLBACKS)}; {env_id} has none")
        fallback = argument or FALLBACKS[env_id]
        if fallback.partition(":")[0] == "oracle":
            raise ValueError("oracle:SPEC names the agent that moves where the search does not decide; it cannot be an oracle")
        return Oracle(env_id, make_agent(fallback, env_id), name="oracle" if not argument else f"oracle:{argument}")
    if kind == "az-jax":
        count, _, path = argument.partition(":")
        if not count.isdigit():  # az-jax:PATH
            count, path = "", argument
        if not path:
            raise ValueError(
                "az-jax agents need a model: az-jax:PATH, az-jax:N:PATH (runs/az-.../model.npz) or az-jax:pretrained"
            )
        if path == "pretrained":
            if env_id not in PRETRAINED_AZ_JAX:
                raise ValueError(f"no pretrained az-jax model for {env_id}; available: {sorted(PRETRAINED_AZ_JAX)}")
            path = str(PRETRAINED_DIR / PRETRAINED_AZ_JAX[env_id])
        return AlphaZeroJaxAgent(path, env_id, _count(count, "az-jax", 1) if count else None)
    if kind == "az":
        from polarzoo.baselines.agents.alphazero import AlphaZeroAgent

        count, _, path = argument.partition(":")
        simulations = _count(count, "az", 100)
        if path:
            return AlphaZeroAgent.from_path(model_path(path), env_id, simulations)
        return AlphaZeroAgent.from_path(str(pretrained_path(env_id)), env_id, simulations)
    if argument and kind not in KINDS:
        return user_agent(kind, argument, env_id)
    raise ValueError(
        f"unknown agent spec {spec!r}: use random, heuristic, mcts[:N], model:PATH, pretrained, az[:N[:PATH]], "
        "az-jax:[N:]PATH, (Thin Ice) search[:K[:PATH]], vsearch[:K[:PATH]] or heuristic:K, (Go with the Floe) "
        "search[:D[:PATH]], oracle[:SPEC] (Fire & Ice, Go with the Floe), or your own module:callable"
    )


#: The spec kinds :func:`make_agent` knows; any other ``a.b:c`` is a user's ``module:callable``.
KINDS = ("random", "heuristic", "mcts", "model", "pretrained", "search", "vsearch", "az-jax", "az", "proc", "oracle")


def names_code_or_file(spec: str) -> bool:
    """Whether ``spec`` imports a module (``module:callable``) or reads a file it names
    (``model:PATH``, ``az:N:PATH``, ``search:K:PATH``, ``vsearch:K:PATH``, ``az-jax:PATH``): the
    agents ``--isolate`` plays in a process of their own."""
    kind, _, argument = spec.partition(":")
    parts = argument.split(":") if argument else []
    if kind not in KINDS or kind == "model":
        return True
    if kind == "oracle":
        return bool(argument) and names_code_or_file(argument)
    if kind == "az-jax":
        return bool(parts) and parts[-1] != "pretrained"
    return kind in ("az", "search", "vsearch") and len(parts) > 1


def user_agent(module_name: str, attribute: str, env_id: str) -> Any:
    """A user's own agent, ``module:callable``: ``callable`` is an agent (it has ``act(env, agent,
    rng)``), or a class or function that makes one, called with ``env_id`` if it takes an argument.
    The agent is named by its ``name`` attribute, else by the spec."""
    spec = f"{module_name}:{attribute}"
    # `python -m` puts the working directory on sys.path, a console script (polarzoo-league, ...)
    # does not: the user's module is looked for there too (after the installed packages).
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"{spec}: cannot import module {module_name!r} ({error}); run from the folder that holds it or put it on PYTHONPATH"
        ) from None
    target = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"{spec}: module {module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    agent = target
    if not callable(getattr(agent, "act", None)) or inspect.isclass(agent):
        if not callable(agent):
            raise ValueError(f"{spec}: {attribute} is neither an agent (an object with act(env, agent, rng)) nor callable")
        try:
            takes_argument = bool(inspect.signature(agent).parameters)
        except (TypeError, ValueError):
            takes_argument = False
        agent = agent(env_id) if takes_argument else agent()
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"{spec}: {attribute} made a {type(agent).__name__}, which has no act(env, agent, rng) method")
    if not isinstance(getattr(agent, "name", None), str):
        try:
            agent.name = spec
        except AttributeError:
            raise ValueError(f"{spec}: the agent has no name attribute and cannot be given one") from None
    return agent


def model_files(spec: str, env_id: str) -> list[Path]:
    """The model files ``spec`` plays from (none for random, heuristic, mcts or a user's agent)."""
    kind, _, argument = spec.partition(":")
    count, _, path = argument.partition(":")
    if kind == "model":
        return [Path(argument)]
    if kind == "oracle":
        return model_files(argument or FALLBACKS.get(env_id, "random"), env_id)
    if kind == "pretrained" or (kind in ("az", "search", "vsearch") and not path):
        return [pretrained_path(env_id)]
    if kind in ("az", "search", "vsearch"):
        return [Path(path)]
    if kind == "az-jax":
        path = argument if not count.isdigit() else path
        if path == "pretrained":
            path = str(PRETRAINED_DIR / PRETRAINED_AZ_JAX[env_id])
        return [Path(path), Path(path).with_suffix(".json")]
    return []
