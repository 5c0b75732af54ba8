"""The agent-spec grammar: a spec string (what ``--agents``, a league file, a web request, an MCP
call or a run folder's saved command names) parsed once into an :class:`AgentSpec` that knows
its kind, budget, file, nested spec and **trust class**, nested specs included.

Every place that decides what a spec may do asks this module (never the first word of the
string): the registry that builds agents, ``--isolate``, league files (:func:`member_problem` in
:mod:`polarzoo.baselines.evaluation.league`), the web page and the MCP server, ``--resume`` of a run
folder, fingerprints.  A new kind is one entry of :data:`KINDS`.

========== ============================= ============================================
trust       meaning                       specs
========== ============================= ============================================
built-in    plays polarzoo's own code     ``random``, ``heuristic[:K]``, ``mcts[:N]``,
            and shipped files only        ``pretrained``, ``az[:N]``, ``search[:K]``,
                                          ``vsearch[:K]``, ``az-jax:[N:]pretrained``,
                                          ``oracle[:SPEC]`` over a built-in SPEC
reads-file  reads a file the spec names   ``model:PATH``, ``az:N:PATH``, ``search:K:PATH``,
            (as data: no code runs)       ``vsearch:K:PATH``, ``az-jax:[N:]PATH``
runs-code   imports a module or runs a    ``module:callable``, ``proc:COMMAND``, and any
            command                       spec nesting one (``oracle:proc:...``)
========== ============================= ============================================
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: the longest spec accepted anywhere (a league file, a request, a command line)
MAX_SPEC = 1000
#: the largest budget a spec may write (12 digits): no 4,300-digit int() from data
MAX_BUDGET_DIGITS = 12
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_ATTRIBUTE = _MODULE


class Trust(enum.IntEnum):
    """What a spec may do, in increasing order: a spec's class is the highest of its parts."""

    BUILTIN = 0
    READS_FILE = 1
    RUNS_CODE = 2


class SpecError(ValueError):
    """A spec that the grammar does not accept (one line saying why)."""


@dataclass(frozen=True)
class Kind:
    """One entry of the grammar: ``budget`` (the name of its optional count, or ``None``),
    ``path`` (``"none"``, ``"optional"`` after the budget, or ``"required"``), ``nests`` (it
    takes a whole spec as its argument), ``default``: the budget when none is written;
    ``network``: it plays a MaskablePPO policy network (the file its path names, else the game's
    shipped ``pretrained``), so that network's file and training record are its own."""

    name: str
    budget: str | None = None
    default: int | None = None
    path: str = "none"
    nests: bool = False
    runs_code: bool = False
    network: bool = False


#: The grammar: one entry a kind.
KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("random"),
        Kind("pretrained", network=True),
        Kind("heuristic", budget="placements to try", default=6),
        Kind("mcts", budget="simulations", default=200),
        Kind("az", budget="simulations", default=100, path="optional", network=True),
        Kind(
            "search",
            budget="placements to try (Go with the Floe: White moves to search)",
            default=None,
            path="optional",
            network=True,
        ),
        Kind("vsearch", budget="placements to try", default=4, path="optional", network=True),
        Kind("az-jax", budget="simulations", default=None, path="required"),
        Kind("model", path="required", network=True),
        Kind("oracle", nests=True),
        Kind("score-oracle", nests=True),
        Kind("proc", runs_code=True),
    )
}
#: what an ``az-jax`` spec writes for the shipped network
PRETRAINED_WORD = "pretrained"


@dataclass(frozen=True)
class AgentSpec:
    """A parsed spec.  ``kind`` is a key of :data:`KINDS` or ``"module"`` (a user's
    ``module:callable``); ``budget`` the written count (``None``: the kind's default); ``path`` the
    file it names (``None``: none, or the shipped one); ``inner`` the nested spec (``oracle:SPEC``);
    ``command`` a ``proc:`` command line; ``module`` / ``attribute`` a user's agent."""

    text: str
    kind: str
    budget: int | None = None
    path: str | None = None
    inner: AgentSpec | None = None
    command: str | None = None
    module: str | None = None
    attribute: str | None = None

    @property
    def own_trust(self) -> Trust:
        if self.kind in ("module", "proc"):
            return Trust.RUNS_CODE
        return Trust.READS_FILE if self.path is not None else Trust.BUILTIN

    @property
    def plays_network(self) -> bool:
        """Whether this part plays a policy network (:attr:`Kind.network`): ``path``'s, or the
        shipped one where ``path`` is ``None``."""
        kind = KINDS.get(self.kind)
        return kind is not None and kind.network

    @property
    def trust(self) -> Trust:
        """The highest trust class of this spec and every spec nested in it."""
        return max(part.own_trust for part in self.parts())

    def parts(self) -> list[AgentSpec]:
        """This spec and the specs nested in it, outermost first."""
        return [self] + (self.inner.parts() if self.inner is not None else [])

    def code_parts(self) -> list[AgentSpec]:
        """The parts that import a module or run a command."""
        return [part for part in self.parts() if part.own_trust is Trust.RUNS_CODE]

    def __str__(self) -> str:
        return self.text


def _budget(text: str, spec: str, kind: Kind) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_BUDGET_DIGITS or int(text) < 1:
        example = f"{kind.name}:{kind.default or 4}"
        raise SpecError(f"{kind.name} needs a positive whole number of {kind.budget}, e.g. {example}; got {text[:20]!r}")
    return int(text)


def parse_spec(text: object) -> AgentSpec:
    """``text`` parsed by the grammar; :class:`SpecError` (one line) when it is not a spec."""
    if not isinstance(text, str):
        raise SpecError(f"an agent spec is a string, got {type(text).__name__}")
    if not text or len(text) > MAX_SPEC:
        raise SpecError(f"an agent spec has 1 to {MAX_SPEC} characters, got {len(text)}")
    if not text.isprintable():
        raise SpecError(f"{text[:60]!r}: an agent spec holds no control characters")
    name, colon, argument = text.partition(":")
    kind = KINDS.get(name)
    if kind is None:
        if colon and _MODULE.match(name) and _ATTRIBUTE.match(argument):
            return AgentSpec(text, "module", module=name, attribute=argument)
        raise SpecError(
            f"unknown agent spec {text[:80]!r}: use random, heuristic, mcts[:N], model:PATH, pretrained, az[:N[:PATH]], "
            "az-jax:[N:]PATH, (Thin Ice) search[:K[:PATH]], vsearch[:K[:PATH]] or heuristic:K, (Go with the Floe) "
            "search[:D[:PATH]], oracle[:SPEC] (Fire & Ice, Go with the Floe), proc:COMMAND, or your own module:callable"
        )
    if kind.runs_code:
        if not argument.strip():
            raise SpecError(f"{name}:COMMAND needs a command, e.g. {name}:python my_agent.py")
        return AgentSpec(text, name, command=argument)
    if kind.nests:
        if not argument:
            return AgentSpec(text, name)
        inner = parse_spec(argument)
        if inner.kind == name:
            raise SpecError(
                f"{text[:80]!r}: {name}:SPEC names the agent that moves where the search does not decide; it cannot be an {name}"
            )
        return AgentSpec(text, name, inner=inner)
    if kind.path == "required" and kind.budget is None:  # model:PATH
        if not argument:
            raise SpecError(f"{name} agents need a path: {name}:runs/.../model.safetensors")
        return AgentSpec(text, name, path=argument)
    if kind.name == "az-jax":  # az-jax:PATH, az-jax:N:PATH, az-jax:[N:]pretrained
        count, _, rest = argument.partition(":")
        if not (count.isascii() and count.isdigit()) or not rest:
            count, rest = "", argument
        if not rest:
            raise SpecError("az-jax agents need a model: az-jax:PATH, az-jax:N:PATH (runs/az-.../model.npz) or az-jax:pretrained")
        budget = _budget(count, text, kind) if count else None
        return AgentSpec(text, name, budget=budget, path=None if rest == PRETRAINED_WORD else rest)
    if kind.budget is None:  # random, pretrained
        if argument or colon:
            raise SpecError(f"{text[:80]!r}: {name} takes no argument")
        return AgentSpec(text, name)
    count, colon2, path = argument.partition(":")
    if colon2 and kind.path == "none":
        raise SpecError(f"{text[:80]!r}: {name} takes one number, not a file")
    if colon and not count:
        raise SpecError(f"{text[:80]!r}: {name}: is missing its number")
    budget = _budget(count, text, kind) if count else None
    if colon2 and not path:
        raise SpecError(f"{text[:80]!r}: {name}:N: is missing its file")
    return AgentSpec(text, name, budget=budget, path=path or None)


def map_paths(spec: AgentSpec, rename: Callable[[str], str]) -> str:
    """The text of ``spec`` with each file it names (nested specs included) replaced by
    ``rename(path)``; a spec that names no file is its own text."""

    def rebuild(part: AgentSpec) -> str:
        if part.inner is not None:
            return f"{part.kind}:{rebuild(part.inner)}"
        if part.path is None:
            return part.text
        path = rename(part.path)
        if part.kind == "model":
            return f"model:{path}"
        if part.kind == "az-jax":
            return f"az-jax:{part.budget}:{path}" if part.budget is not None else f"az-jax:{path}"
        return f"{part.kind}:{part.budget}:{path}"

    return rebuild(spec)


def with_absolute_paths(spec: AgentSpec, base: str | Path) -> str:
    """The text of ``spec`` with each file it names made absolute from ``base`` (for an agent that
    runs in a folder of its own: ``--isolate``)."""
    return map_paths(spec, lambda path: path if Path(path).is_absolute() else str(Path(base) / path))


def trust_of(text: str) -> Trust:
    """The trust class of a spec; a string the grammar refuses is refused by every entry point
    as if it ran code."""
    try:
        return parse_spec(text).trust
    except SpecError:
        return Trust.RUNS_CODE


def runs_code(text: str) -> bool:
    """Whether a spec (or a spec nested in it) imports a module or runs a command; a string the
    grammar refuses is said in one line where it is made, not here."""
    try:
        return parse_spec(text).trust is Trust.RUNS_CODE
    except SpecError:
        return False
