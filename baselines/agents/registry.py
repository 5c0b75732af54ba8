"""``make_agent(spec, env_id)``: every agent by its spec (the names the CLIs take), and
``model_files(spec, env_id)``: the files a spec plays from (what a league's fingerprint hashes)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents.alphazero_jax import AlphaZeroJaxAgent
from polarzoo.baselines.agents.base import RandomAgent
from polarzoo.baselines.agents.mcts import MCTSAgent
from polarzoo.baselines.agents.oracle import Oracle, ScoreOracle
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.agents.pretrained import pretrained_az_jax_path, pretrained_path
from polarzoo.baselines.agents.process import ProcessAgent, isolated
from polarzoo.baselines.agents.spec import AgentSpec, Trust, parse_spec, trust_of
from polarzoo.baselines.kits import games_with, kit_of, load
from polarzoo.envs import GAMES
from polarzoo.envs.utils import check_regular_file


def model_path(path: str) -> str:
    """``path`` if it is a regular file under the model size limit, else one clear error naming it."""
    check_regular_file(path, "model file", hint="give the path of a model.safetensors or a saved model.zip")
    return path


def _random(spec: AgentSpec, env_id: str) -> Any:
    return RandomAgent()


def _proc(spec: AgentSpec, env_id: str) -> Any:  # any executable, in its own process, over JSON lines (docs/arena.md)
    assert spec.command is not None
    return ProcessAgent(spec.command)


def _module(spec: AgentSpec, env_id: str) -> Any:
    assert spec.module is not None and spec.attribute is not None
    return user_agent(spec.module, spec.attribute, env_id)


def heuristic_class(env_id: str) -> Any:
    """The class of ``env_id``'s heuristic agent (its kit's); ``ValueError`` naming the games
    that have one otherwise."""
    ref = kit_of(env_id).heuristic
    if ref is None:
        raise ValueError(f"no heuristic agent for {env_id} (its kit declares none); games with one: {games_with('heuristic')}")
    return load(ref)


def _heuristic(spec: AgentSpec, env_id: str) -> Any:
    heuristic = heuristic_class(env_id)
    if spec.budget is None:
        return heuristic()
    # heuristic:K: K candidates to try (Thin Ice's placements, default 6)
    if "candidates" not in inspect.signature(heuristic).parameters:
        raise ValueError(f"heuristic:K (candidates to try) needs a heuristic that takes candidates; {env_id}'s takes no argument")
    agent = heuristic(spec.budget)
    agent.name = f"heuristic:{agent.candidates}"
    return agent


def _mcts(spec: AgentSpec, env_id: str) -> Any:
    if env_id not in GAMES or not GAMES[env_id].rules_core:
        raise ValueError(f"MCTS needs a two-player rules core; {env_id} has none")
    return MCTSAgent(spec.budget or 200)


def _model(spec: AgentSpec, env_id: str) -> Any:
    assert spec.path is not None
    return PolicyAgent(model_path(spec.path)).check_fits(env_id)


def _pretrained(spec: AgentSpec, env_id: str) -> Any:
    return PolicyAgent(pretrained_path(env_id), name="pretrained")


def _policy_of(spec: AgentSpec, env_id: str) -> Any:
    """The policy a search plays from: the spec's file, or the shipped one."""
    return PolicyAgent(model_path(spec.path)).check_fits(env_id) if spec.path else _pretrained(spec, env_id)


def _search(spec: AgentSpec, env_id: str) -> Any:
    """A search over a policy, as the game's kit builds it (the Floe's endgame search
    ``search:D``, Thin Ice's look-aheads ``search:K`` / ``vsearch:K``)."""
    searches = kit_of(env_id).searches
    if spec.kind not in searches:
        elsewhere = [game for game in GAMES if spec.kind in kit_of(game).searches]
        theirs = "".join(f"{kind}:N, " for kind in searches)
        raise ValueError(
            f"{spec.kind}:N is a search of {', '.join(elsewhere) or 'no game'}, not of {env_id}; for {env_id} use {theirs}az:N or mcts:N"
        )
    label = f":{Path(spec.path).parent.name}" if spec.path else ""
    return load(searches[spec.kind])(_policy_of(spec, env_id), spec.kind, spec.budget, label)


def _oracle(spec: AgentSpec, env_id: str) -> Any:  # perfect play where the game's exact search proves the position
    kit = kit_of(env_id)
    if kit.solver is None:
        raise ValueError(f"oracle needs a game with an exact search: {games_with('solver')}; {env_id} has none")
    fallback = spec.inner if spec.inner is not None else parse_spec(kit.oracle_fallback)
    return Oracle(env_id, make_agent(fallback, env_id), name="oracle" if spec.inner is None else spec.text)


def _score_oracle(spec: AgentSpec, env_id: str) -> Any:  # perfect play for the match score
    fallback = spec.inner if spec.inner is not None else parse_spec(kit_of(env_id).oracle_fallback)
    return ScoreOracle(env_id, make_agent(fallback, env_id), name="score-oracle" if spec.inner is None else spec.text)


def _az_jax(spec: AgentSpec, env_id: str) -> Any:
    path = spec.path if spec.path is not None else str(pretrained_az_jax_path(env_id))
    return AlphaZeroJaxAgent(path, env_id, spec.budget)


def _az(spec: AgentSpec, env_id: str) -> Any:
    from polarzoo.baselines.agents.alphazero import AlphaZeroAgent

    path = model_path(spec.path) if spec.path else str(pretrained_path(env_id))
    return AlphaZeroAgent.from_path(path, env_id, spec.budget or 100)


#: How each kind of the grammar (:data:`polarzoo.baselines.agents.spec.KINDS`, and ``module``)
#: is built: a new kind is its grammar entry and its builder here.
BUILDERS: dict[str, Callable[[AgentSpec, str], Any]] = {
    "random": _random,
    "proc": _proc,
    "module": _module,
    "heuristic": _heuristic,
    "mcts": _mcts,
    "model": _model,
    "pretrained": _pretrained,
    "search": _search,
    "vsearch": _search,
    "oracle": _oracle,
    "score-oracle": _score_oracle,
    "az-jax": _az_jax,
    "az": _az,
}


def make_agent(spec: str | AgentSpec, env_id: str) -> Any:
    """``"random"``, ``"heuristic"``, ``"mcts"`` / ``"mcts:N"``, ``"model:PATH"``, ``"pretrained"``,
    ``"az:N"`` / ``"az:N:PATH"``, ``"az-jax:PATH"`` / ``"az-jax:N:PATH"`` (AlphaZero trained on the JAX
    twins), ``"search:K"`` / ``"search:K:PATH"`` and ``"vsearch:K"`` / ``"vsearch:K:PATH"`` (Thin Ice: K placements
    tried), ``"search:D"`` / ``"search:D:PATH"`` (Go with the Floe: the endgame searched D White moves),
    ``"oracle"`` / ``"oracle:SPEC"`` (perfect play where the exact search proves the position, SPEC
    elsewhere), ``"score-oracle"`` / ``"score-oracle:SPEC"`` (perfect play for the match score), ``"proc:COMMAND"``, ``"module:callable"`` -> agent.  The spec is parsed by the one
    grammar (:mod:`polarzoo.baselines.agents.spec`); this builds what it says, code included: the
    callers that take specs from data check its trust class first."""
    parsed = spec if isinstance(spec, AgentSpec) else parse_spec(spec)
    return BUILDERS[parsed.kind](parsed, env_id)


def names_code_or_file(spec: str) -> bool:
    """Whether ``spec`` (or a spec nested in it) imports a module, runs a command or reads a file
    it names: the agents ``--isolate`` plays in a process of their own.  A string the grammar
    refuses counts as code."""
    return trust_of(spec) >= Trust.READS_FILE


def agent_or_exit(parser: Any, option: str, spec: str, env_id: str, isolate: bool = False) -> Any:
    """A command line's agent: ``spec`` made for ``env_id`` (with ``isolate``, an agent that names
    code or a file plays in a process of its own, never loaded here), or ``parser.error`` with one
    line naming ``option`` and the spec (a corrupt model file named, not the library's internals)."""
    try:
        if isolate and names_code_or_file(spec):
            return isolated(spec, env_id)
        return make_agent(spec, env_id)
    except (ValueError, FileNotFoundError, ImportError) as error:
        parser.error(f"{option} {spec}: {error}")
    except Exception as error:  # a corrupt model file, e.g.
        parser.error(f"{option} {spec}: cannot load it ({type(error).__name__}: {error})")


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
            agent.name = spec  # type: ignore[attr-defined]
        except AttributeError:
            raise ValueError(f"{spec}: the agent has no name attribute and cannot be given one") from None
    return agent


def model_files(spec: str | AgentSpec, env_id: str) -> list[Path]:
    """The model files ``spec`` plays from (none for random, heuristic, mcts or a user's agent):
    the files it names and the shipped files its built-in parts play."""
    parsed = spec if isinstance(spec, AgentSpec) else parse_spec(spec)
    if parsed.kind in ("oracle", "score-oracle") and parsed.inner is None:
        parsed = AgentSpec(parsed.text, parsed.kind, inner=parse_spec(kit_of(env_id).oracle_fallback))
    files: list[Path] = []
    for part in parsed.parts():
        if part.kind == "az-jax":
            path = part.path if part.path is not None else str(pretrained_az_jax_path(env_id))
            files += [Path(path), Path(path).with_suffix(".json")]
        elif part.path is not None:
            files.append(Path(part.path))
        elif part.plays_network:
            files.append(pretrained_path(env_id))
    return files


def score_oracle(env_id: str) -> ScoreOracle:
    """``score-oracle`` (also ``polarzoo.baselines.agents.registry:score_oracle``, a module spec):
    perfect play for the match score (:class:`~polarzoo.baselines.agents.oracle.ScoreOracle`), the
    kit's fallback (``az:100`` for the Floe) where its search does not finish."""
    return _score_oracle(parse_spec("score-oracle"), env_id)
