"""Each game's kit: what the agents, training and tools need of a game beyond its rules, declared
in one place (:class:`Kit`), found through the game's registration (``GameInfo.kit``).

The generic modules above ``envs/`` ask :func:`kit_of` instead of keeping tables keyed by game:
``heuristic`` asks for ``kit.heuristic``, ``train`` layers ``kit.hyperparams`` over
:class:`~polarzoo.baselines.training.config.TrainConfig`'s defaults, the league opens its games
with ``kit.opening_plies`` random plies, ``league exploit`` trains ``kit.exploit_timesteps``.
A game without a kit (``GameInfo.kit = None``) gets :data:`EMPTY`: random play, the default
hyperparameters, no pretrained model; everything plays it and ``train`` trains it.

Code is named by reference, ``"package.module:attribute"`` (as ``GameInfo.module`` and entry points
do), and imported by the module that uses it (:func:`load`): a kit is plain data, so every room of
``baselines/`` may read it without importing what it names (Thin Ice's kit does not start MuJoCo).

>>> kit_of("fire_and_ice_v0").opening_plies
2
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from polarzoo.envs import GAMES


def _frozen(mapping: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Kit:
    """One game's agents, models, training settings and tool budgets.

    ``heuristic``: the ``heuristic`` agent's class (no arguments, or ``candidates`` for
    ``heuristic:K``); ``searches``: spec kind -> a builder ``(policy, kind, budget, label) -> agent``
    of a search over a policy (``search:D``, ``vsearch:K``); ``network``: the board network's name
    in :data:`polarzoo.baselines.policies.BOARDS` (``policy: board``); ``pretrained``: the shipped
    board policy, a file in ``baselines/pretrained/`` (or an absolute path), and
    ``pretrained_timesteps`` its training (what ``league exploit`` sets a best response's budget
    beside); ``pretrained_az_jax``:
    the shipped ``az-jax`` network (``.npz``, a ``.json`` beside it); ``az_jax``: that network's
    input scale per channel and policy head (``"pairs"`` / ``"per_square"``); ``encoder``:
    ``(state, colour) -> observation`` of the rules state for ``az:N``'s leaves; ``solver``: the
    exact search class (``table_bits``) ``oracle`` plays, ``solver_reach`` ``(state, max_empty) ->
    bool`` where it searches (default: everywhere), ``oracle_fallback`` the spec that moves
    elsewhere, ``score_search`` ``(state, node_limit=) -> value`` of the match score under perfect
    play (``.exact``, ``.score``, ``.move``; the score oracle plays it); ``opening_plies``: the random plies that open league, exploit and accuracy games;
    ``exploit_timesteps``: ``league exploit``'s default budget; ``budget_caps``: spec kind -> the
    largest budget the web app and MCP server grant (over the page's own caps);
    ``hyperparams``: the game's MaskablePPO settings over ``TrainConfig``'s defaults;
    ``benchmark``: a game the published protocol does not name: its own budgets (budget ->
    trainer -> settings, as :data:`polarzoo.baselines.benchmark.protocol.BUDGETS`);
    ``match_env_kwargs``: the env arguments of the game's match play, where a game's score is more
    than its winner (the benchmark scores a run's matches against the heuristic too)."""

    heuristic: str | None = None
    searches: Mapping[str, str] = field(default_factory=_frozen)
    network: str | None = None
    pretrained: str | None = None
    pretrained_timesteps: int | None = None
    pretrained_az_jax: str | None = None
    az_jax: Mapping[str, Any] = field(default_factory=_frozen)
    encoder: str | None = None
    solver: str | None = None
    solver_reach: str | None = None
    score_search: str | None = None
    oracle_fallback: str = "random"
    opening_plies: int = 0
    exploit_timesteps: int = 100_000
    budget_caps: Mapping[str, int] = field(default_factory=_frozen)
    hyperparams: Mapping[str, Any] = field(default_factory=_frozen)
    benchmark: Mapping[str, Any] = field(default_factory=_frozen)
    match_env_kwargs: Mapping[str, Any] = field(default_factory=_frozen)

    def __post_init__(self) -> None:
        for name in ("searches", "az_jax", "budget_caps", "hyperparams", "benchmark", "match_env_kwargs"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        if isinstance(self.opening_plies, bool) or not isinstance(self.opening_plies, int) or self.opening_plies < 0:
            raise ValueError(f"Kit.opening_plies must be a whole number >= 0, got {self.opening_plies!r}")
        for name in (
            "heuristic",
            "encoder",
            "solver",
            "solver_reach",
            "score_search",
            *(f"searches[{k}]" for k in self.searches),
        ):
            ref = self.searches[name[9:-1]] if name.startswith("searches[") else getattr(self, name)
            if ref is not None and (not isinstance(ref, str) or ref.count(":") != 1):
                raise ValueError(f"Kit.{name} must be 'package.module:attribute', got {ref!r}")


#: The kit of a game that declares none: random play and the default hyperparameters, with no
#: heuristic to meet, so training plays random and its own snapshots.
EMPTY = Kit(hyperparams={"opponents": {"random": 0.5, "self": 0.5}})


def load(ref: str) -> Any:
    """The object ``"package.module:attribute"`` names; ``ValueError`` naming it otherwise."""
    module, _, attribute = ref.partition(":")
    try:
        target: Any = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"a game's kit names {ref!r}, which does not load: {error}") from None
    return target


def kit_of(env_id: str) -> Kit:
    """The kit of ``env_id`` (:data:`EMPTY` for a game that declares none); ``ValueError`` naming
    the known games for an unknown id, or the kit that does not load."""
    info = GAMES.get(env_id) if isinstance(env_id, str) else None
    if info is None:
        raise ValueError(f"unknown game {env_id!r}; the games: {', '.join(GAMES)}")
    if info.kit is None:
        return EMPTY
    kit = load(info.kit)
    if not isinstance(kit, Kit):
        raise ValueError(f"{env_id}'s GameInfo.kit {info.kit!r} is a {type(kit).__name__}, not a Kit")
    return kit


def games_with(attribute: str) -> list[str]:
    """The games whose kit declares ``attribute`` (a heuristic, a solver, ...), for messages and
    ``--env`` choices."""
    return [env_id for env_id in GAMES if getattr(kit_of(env_id), attribute)]


__all__ = ["EMPTY", "Kit", "games_with", "kit_of", "load"]
