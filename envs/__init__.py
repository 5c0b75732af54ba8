"""polarzoo environments.

``GAMES`` maps each multi-agent env id to its facts (:class:`~polarzoo.envs.game_info.GameInfo`:
title, player range, notation, which forms exist), ``ENVIRONMENTS`` to its module (each with
``env``, ``raw_env`` and ``parallel_env``), so tests, scripts and the layers above iterate over
them instead of naming games.  :func:`register_game` adds a game (a package's ``polarzoo.games``
entry point is registered on import).  Importing this package also registers the single-agent
Gymnasium envs under the ``polarzoo/`` namespace and the games' ids in PettingZoo's registry.
"""

from __future__ import annotations

import warnings
from importlib import metadata
from types import ModuleType
from typing import Any

import gymnasium

from polarzoo.envs import (
    fire_and_ice,
    fire_and_ice_solitaire_v0,
    fire_and_ice_v0,
    go_with_the_floe,
    go_with_the_floe_v0,
    thin_ice,
    thin_ice_v0,
)
from polarzoo.envs.game_info import GameInfo

#: Every multi-agent game's facts, by env id.
GAMES: dict[str, GameInfo] = {info.id: info for info in (fire_and_ice.GAME, go_with_the_floe.GAME, thin_ice.GAME)}

#: Every multi-agent game's module (``env`` / ``raw_env`` / ``parallel_env``), by env id: derived
#: from :data:`GAMES` (``GameInfo.module``), never kept beside it.
ENVIRONMENTS: dict[str, ModuleType] = {info.id: info.load() for info in GAMES.values()}

#: Single-agent Gymnasium envs: id -> module.
GYMNASIUM_ENVIRONMENTS: dict[str, ModuleType] = {
    fire_and_ice_solitaire_v0.GYMNASIUM_ID: fire_and_ice_solitaire_v0,
}

if fire_and_ice_solitaire_v0.GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(
        id=fire_and_ice_solitaire_v0.GYMNASIUM_ID,
        entry_point="polarzoo.envs.fire_and_ice.solitaire_env:FireAndIceSolitaireEnv",
        max_episode_steps=None,
    )

#: Our env id -> its id in PettingZoo's registry (``pettingzoo.make("aec" | "parallel", id)``).
PETTINGZOO_IDS: dict[str, str] = {info.id: info.pettingzoo_id for info in GAMES.values() if info.pettingzoo_id}


def _register_with_pettingzoo(info: GameInfo) -> None:
    import pettingzoo

    if not hasattr(pettingzoo, "register") or not info.pettingzoo_id:  # PettingZoo < 1.27 has no registry
        return
    for kind, registry, function in (
        ("aec", pettingzoo.aec_registry, "env"),
        ("parallel", pettingzoo.parallel_registry, "parallel_env"),
    ):
        if info.pettingzoo_id not in registry:
            pettingzoo.register(kind, info.pettingzoo_id, entry_point=f"{info.module}:{function}")


def game_info(env_id: str) -> GameInfo:
    """The facts of ``env_id``; ``ValueError`` naming the known games otherwise."""
    info = GAMES.get(env_id) if isinstance(env_id, str) else None
    if info is None:
        raise ValueError(f"unknown game {env_id!r}; the games: {', '.join(GAMES)}")
    return info


def games_with_player_range() -> list[str]:
    """The games whose table size is an argument (``num_players=``)."""
    return [env_id for env_id, info in GAMES.items() if info.variable_players]


def table_kwargs(env_id: str, players: int | None) -> dict[str, Any]:
    """The env's constructor arguments for a table of ``players`` (none for ``None``);
    ``ValueError`` ("players ...") for a game of one size or a count it is not played by."""
    if players is None:
        return {}
    if not GAMES[env_id].variable_players:
        raise ValueError(f"players is for {', '.join(games_with_player_range())} only")
    return GAMES[env_id].env_kwargs(players) or {}


def check_env_kwargs(env_id: str, env_kwargs: Any) -> dict[str, Any]:
    """``env_kwargs`` (from a command line or a file) as constructor arguments of ``env_id``'s env
    for games that are played to be scored: an object whose names the env takes (checked by
    building it once), no ``render_mode``; ``ValueError`` with one line otherwise."""
    if not isinstance(env_kwargs, dict) or not all(isinstance(name, str) for name in env_kwargs):
        raise ValueError("must be a JSON object, e.g. '{\"num_players\": 3}'")
    if "render_mode" in env_kwargs:
        raise ValueError(
            "render_mode is not for games played to be scored (they draw nothing; games.jsonl records every game); "
            "watch a game with python -m polarzoo.baselines.play"
        )
    try:
        ENVIRONMENTS[env_id].raw_env(**env_kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(str(error).splitlines()[0] if str(error) else type(error).__name__) from None
    return env_kwargs


def register_game(info: GameInfo, module: ModuleType | None = None) -> None:
    """Add a game: its facts to :data:`GAMES`, its module (``info.module`` imported unless given)
    to :data:`ENVIRONMENTS`, its id to PettingZoo's registry.  Every tool (``evaluate``, the
    league, the terminal and web play, the replay viewer) then plays it."""
    if not isinstance(info, GameInfo):
        raise TypeError(f"register_game takes a GameInfo, got {type(info).__name__}")
    known = GAMES.get(info.id)
    if known is not None and known != info:
        raise ValueError(f"a different game is already registered as {info.id!r}")
    module = module if module is not None else info.load()
    for name in ("env", "raw_env", "parallel_env"):
        if not callable(getattr(module, name, None)):
            raise ValueError(f"{info.module} has no {name}(): a game module defines env, raw_env and parallel_env")
    GAMES[info.id] = info
    ENVIRONMENTS[info.id] = module
    if info.pettingzoo_id:
        PETTINGZOO_IDS[info.id] = info.pettingzoo_id
        _register_with_pettingzoo(info)


def unregister_game(env_id: str) -> None:
    """Remove a game :func:`register_game` added (tests); PettingZoo's registry keeps its id."""
    GAMES.pop(env_id, None)
    ENVIRONMENTS.pop(env_id, None)
    PETTINGZOO_IDS.pop(env_id, None)


def _register_entry_points() -> None:
    """Games that installed packages declare (``[project.entry-points."polarzoo.games"]``, each
    naming a ``GameInfo``); one that fails to load is skipped with a warning naming it."""
    for point in metadata.entry_points(group="polarzoo.games"):
        try:
            register_game(point.load())
        except Exception as error:  # a broken plugin must not break polarzoo
            warnings.warn(f"polarzoo.games entry point {point.name!r} ({point.value}) was not registered: {error}", stacklevel=2)


for _info in GAMES.values():
    _register_with_pettingzoo(_info)
_register_entry_points()

__all__ = [
    "GAMES",
    "GameInfo",
    "game_info",
    "games_with_player_range",
    "check_env_kwargs",
    "table_kwargs",
    "register_game",
    "unregister_game",
    "PETTINGZOO_IDS",
    "GYMNASIUM_ENVIRONMENTS",
    "fire_and_ice_solitaire_v0",
    "ENVIRONMENTS",
    "fire_and_ice_v0",
    "go_with_the_floe_v0",
    "thin_ice_v0",
]
