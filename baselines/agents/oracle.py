"""``oracle``: perfect play where the game's exact search proves the position, the strongest agent
otherwise.

* Go with the Floe: :class:`~polarzoo.envs.go_with_the_floe.solver.FloeSolver` on every position
  (the standard start is a win for Black in 5 plies, so as Black the oracle always knows).
* Fire & Ice: :class:`~polarzoo.envs.fire_and_ice.endgame.EndgameSolver` on every position (it
  decides the late game: a forced win found within the budget is exact; ``MAX_EMPTY_HOLES`` can
  restrict it to fuller boards).

In a position it proves won, the oracle plays a move that keeps the win, so it never loses such
a position.  In a position it proves lost or cannot decide within its node budget (per move),
the fallback agent moves: the kit's ``oracle_fallback`` (``az:20`` for Fire & Ice and ``az:100``
for the Floe, the top of their leagues), or ``oracle:SPEC`` for another.  The table of proofs lives as long as the agent (it is
not pickled: a worker process builds its own; 2**20 entries, 21 MB for Fire & Ice, 37 MB for
the Floe).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polarzoo.baselines.kits import games_with, kit_of, load

#: Where the game's kit limits its search (Fire & Ice: to boards with this many empty holes or
#: fewer; 49: always).
MAX_EMPTY_HOLES = 49
#: Nodes a move's search may spend before the fallback agent moves (about a second).
NODE_LIMIT = 200_000


def make_solver(env_id: str, table_bits: int = 20) -> Any:
    """The game's exact search (its kit's ``solver``), or ``ValueError`` for a game without one."""
    solver = kit_of(env_id).solver
    if solver is None:
        raise ValueError(f"no exact search for {env_id}: oracle plays {games_with('solver')}")
    return load(solver)(table_bits)


def in_reach(env_id: str, state: Any, max_empty: int = MAX_EMPTY_HOLES) -> bool:
    """Whether the oracle searches ``state`` (its kit's ``solver_reach``; everywhere without one)."""
    reach = kit_of(env_id).solver_reach
    return True if reach is None else bool(load(reach)(state, max_empty))


class Oracle:
    """Perfect play where :func:`make_solver`'s search proves the position; ``fallback`` elsewhere."""

    def __init__(
        self,
        env_id: str,
        fallback: Any,
        node_limit: int = NODE_LIMIT,
        max_empty: int = MAX_EMPTY_HOLES,
        table_bits: int = 20,
        name: str | None = None,
    ) -> None:
        make_solver(env_id, table_bits=10)  # a game without a solver is refused now, not at the first move
        self.env_id = env_id
        self.table_bits = table_bits
        self.fallback = fallback
        self.node_limit = node_limit
        self.max_empty = max_empty
        self.name = name or f"oracle:{fallback.name}"
        self._solver: Any = None
        #: moves played from a proof / by the fallback (what the accuracy table reads)
        self.proven_moves = 0
        self.fallback_moves = 0

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_solver"] = None  # hundreds of MB; a worker builds its own
        return state

    def proven_move(self, state: Any) -> int | None:
        """A move that keeps a proven win, or ``None`` (lost, undecided or out of reach)."""
        if not in_reach(self.env_id, state, self.max_empty):
            return None
        if self._solver is None:
            self._solver = make_solver(self.env_id, self.table_bits)
        proof = self._solver.solve(state, node_limit=self.node_limit)
        if proof.value == 1 and proof.move >= 0:
            return int(proof.move)
        return None

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        move = self.proven_move(env.state)
        if move is not None and env.observe(agent)["action_mask"][move]:
            self.proven_moves += 1
            return move
        self.fallback_moves += 1
        return int(self.fallback.act(env, agent, rng))


class ScoreOracle(Oracle):
    """Perfect play for the match score where the game's kit has a score search
    (``Kit.score_search``: Go with the Floe's :func:`~polarzoo.envs.go_with_the_floe.solver.match_value`):
    as Black the win that leaves the most empty squares, as White the defence that leaves Black the
    fewest (``oracle`` keeps any proven win and moves as its fallback elsewhere).  Where the score
    search does not finish within ``node_limit`` nodes, it plays as :class:`Oracle`.  The spec
    ``score-oracle`` (``score-oracle:SPEC``: SPEC its fallback) names it."""

    def __init__(self, env_id: str, fallback: Any, node_limit: int = NODE_LIMIT, name: str | None = None) -> None:
        search = kit_of(env_id).score_search
        if search is None:
            raise ValueError(f"no match-score search for {env_id}: games with one: {games_with('score_search')}")
        super().__init__(env_id, fallback, node_limit=node_limit, name=name or "score-oracle")
        self._score_search = load(search)
        #: moves played from an exact score (the rest: as the oracle)
        self.scored_moves = 0

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_score_search"] = None  # a worker loads its own
        return state

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        if self._score_search is None:
            self._score_search = load(kit_of(self.env_id).score_search)
        value = self._score_search(env.state, node_limit=self.node_limit)
        if value.exact and value.move >= 0 and env.observe(agent)["action_mask"][value.move]:
            self.scored_moves += 1
            return int(value.move)
        return super().act(env, agent, rng)
