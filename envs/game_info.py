"""What a game is, declared once: :class:`GameInfo`.

Each game package states its facts in its ``__init__`` (``GAME = GameInfo(...)``, as OpenSpiel's
``_GAME_INFO``); :data:`polarzoo.envs.GAMES` collects them, and every layer above ``envs/`` (the
agents, the web page, the league, the benchmark) asks it instead of naming a game.  A fourth game
is one package with a rules core, an AEC env built on :class:`polarzoo.envs.utils.TurnBasedAECEnv`
and a ``GameInfo``, registered with :func:`polarzoo.envs.register_game` (or the ``polarzoo.games``
entry point of the package that ships it).

>>> from polarzoo.envs import GAMES
>>> info = GAMES["thin_ice_v0"]
>>> info.title, info.players, info.env_kwargs(4)
('Thin Ice', (2, 6), {'num_players': 4})
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: How a page shows a position: ``"board"`` (an SVG from ``env.describe()["svg"]`` whose cells a
#: move joins: ``move_parts`` gives ``from`` / ``to``, or ``to`` alone for a placement) or
#: ``"piles"`` (a picture from ``env.render_picture()`` and the move's parts as buttons).
VIEWS = ("board", "piles")


@dataclass(frozen=True)
class GameInfo:
    """The facts of one multi-agent game.

    ``id``: the env id (``"fire_and_ice_v0"``); ``title``: its name for people; ``module``: the
    import path of the module with ``env`` / ``raw_env`` / ``parallel_env``; ``players``: the
    smallest and largest table (a game with a range takes ``num_players=``); ``notation_example``:
    what a person types for a move; ``rules``: the rules page in the repository;
    ``pettingzoo_id``: its id in PettingZoo's registry; ``view``: one of :data:`VIEWS`;
    ``window``: whether it plays in a pygame window (``env.cell_centres()`` / ``env.cell_at``);
    ``rules_core``: whether the env exposes ``rules`` (a module with ``legal_action_mask``,
    ``apply_inplace`` and ``returns``) and ``state`` (with ``copy()``, ``to_move``, ``winner``) for
    tree searches such as ``mcts:N``;
    ``batch_core``: a numba batch core in :mod:`polarzoo.envs.batch`; ``jax_twin``: its name in
    :mod:`polarzoo.envs.jax_envs`; ``openspiel``: its OpenSpiel short name; ``benchmark_steps``:
    whether the steps/s table times it (Thin Ice's physics has a table of its own); ``kit``:
    where the game's kit is (``"package.module:KIT"``, a :class:`polarzoo.baselines.kits.Kit`:
    its heuristic, networks, shipped models, hyperparameters and tool budgets), read above
    ``envs/`` and never imported here; ``None``: random play and the default settings."""

    id: str
    title: str
    module: str
    players: tuple[int, int] = (2, 2)
    notation_example: str = ""
    rules: str = ""
    pettingzoo_id: str | None = None
    view: str = "board"
    window: bool = False
    rules_core: bool = False
    batch_core: bool = False
    jax_twin: str | None = None
    openspiel: str | None = None
    benchmark_steps: bool = True
    kit: str | None = None

    def __post_init__(self) -> None:
        if not self.id.isidentifier():
            raise ValueError(f"GameInfo.id must be a Python identifier (e.g. 'my_game_v0'), got {self.id!r}")
        low, high = self.players
        if not 1 <= low <= high:
            raise ValueError(f"GameInfo.players must be (smallest, largest) with 1 <= smallest <= largest, got {self.players!r}")
        if self.view not in VIEWS:
            raise ValueError(f"GameInfo.view must be one of {VIEWS}, got {self.view!r}")

    @property
    def variable_players(self) -> bool:
        """Whether the table size is an argument (``num_players=``)."""
        return self.players[0] != self.players[1]

    def player_counts(self) -> range:
        return range(self.players[0], self.players[1] + 1)

    def check_players(self, count: Any) -> int:
        """``count`` as an int when this game plays at that table size; ``ValueError`` saying the
        sizes otherwise."""
        low, high = self.players
        if isinstance(count, bool) or not isinstance(count, int) or not low <= count <= high:
            sizes = f"{low}" if low == high else f"{low}..{high}"
            raise ValueError(f"players must be {sizes} for {self.id}, got {count!r}")
        return count

    def env_kwargs(self, num_players: int | None = None) -> dict[str, Any] | None:
        """The constructor arguments for a table of ``num_players`` (``None`` when there are none:
        the game's only size, or its default)."""
        if num_players is None:
            return None
        self.check_players(num_players)
        return {"num_players": num_players} if self.variable_players else None

    def load(self) -> ModuleType:
        """The module with ``env`` / ``raw_env`` / ``parallel_env``."""
        return importlib.import_module(self.module)

    def raw_env(self, **kwargs: Any) -> Any:
        return self.load().raw_env(**kwargs)

    def observation_padding(self) -> tuple[Any, Any]:
        """``(pad_observation, players_of_size)`` of the game module (Thin Ice's): a flat
        observation of a smaller table laid out as one of ``players`` seats, one shape for tables
        of several sizes as a vectorised trainer needs, and the table size of an observation of
        ``size`` numbers.  Ask once, outside a step loop; ``ValueError`` for a game without them."""
        module = self.load()
        functions = tuple(getattr(module, name, None) for name in ("pad_observation", "players_of_size"))
        if not all(callable(function) for function in functions):
            raise ValueError(f"{self.id} lays out no observation for another table size (its module has no pad_observation)")
        return functions  # type: ignore[return-value]
