"""The Fire & Ice heuristic: its compiled scoring against the readable numpy statement of the same
rules (the implementation up to 0.4), move for move and draw for draw, and hand-built positions."""

from __future__ import annotations

from typing import Any

import numpy as np

from polarzoo.baselines.agents import RandomAgent
from polarzoo.baselines.agents.base import legal_actions
from polarzoo.baselines.agents.fire_and_ice import FireAndIceHeuristic
from polarzoo.envs import fire_and_ice_v0
from polarzoo.envs.fire_and_ice import rules


class NumpyHeuristic:
    """The heuristic stated on stacks of boards with numpy (the reference)."""

    reply_checks = 6

    @staticmethod
    def boards_after(board: np.ndarray, actions: np.ndarray, mover: int, place_opponent: bool) -> np.ndarray:
        boards = np.repeat(board[None, :], len(actions), axis=0)
        rows = np.arange(len(actions))
        source, destination = np.divmod(actions, rules.NUM_HOLES)
        boards[rows, destination] = mover + 1
        boards[rows, source] = (2 - mover) if place_opponent else rules.EMPTY
        return boards

    def opponent_can_win(self, board: np.ndarray, opponent: int, supply_left: bool) -> bool:
        own = board == opponent + 1
        replies = rules.MOVE_ACTIONS[own[:, None] & (board == rules.EMPTY)[rules.MOVE_DESTINATIONS]]
        if replies.size == 0:
            return False
        control = rules.island_control(self.boards_after(board, replies, opponent, supply_left))
        return bool((rules.winners_from_control(control) == opponent).any())

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        state, me = env.state, env.colour_of(agent)
        actions = legal_actions(env, agent)
        if len(actions) == 1:
            return int(actions[0])
        boards = self.boards_after(state.board, actions, me, state.supply[1 - me] > 0)
        control = rules.island_control(boards)
        winners = rules.winners_from_control(control)
        if (winners == me).any():
            return int(actions[np.flatnonzero(winners == me)[0]])
        line_values = boards[:, rules.HOLE_LINES]
        open_twos = ((line_values == me + 1).sum(axis=3) == 2) & ((line_values == rules.EMPTY).sum(axis=3) == 1)
        open_twos = (open_twos.any(axis=2) & (control < 0)).sum(axis=1)
        held = (control == me).sum(axis=1) - (control == 1 - me).sum(axis=1)
        score = 10.0 * held + open_twos + 0.1 * rng.random(len(actions))
        score[winners == 1 - me] = -np.inf
        order = np.argsort(-score)
        supply_left = state.supply[me] > 0
        for index in order[: self.reply_checks]:
            if np.isfinite(score[index]) and not self.opponent_can_win(boards[index], 1 - me, supply_left):
                return int(actions[index])
        return int(actions[order[0]])


def test_the_compiled_heuristic_plays_the_numpy_statement_move_for_move() -> None:
    compiled, reference, random_agent = FireAndIceHeuristic(), NumpyHeuristic(), RandomAgent()
    positions = 0
    for game in range(40):
        env = fire_and_ice_v0.raw_env(handicap=game % 3)
        env.reset(seed=game)
        rng = np.random.default_rng(game)
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            twin = np.random.default_rng()
            twin.bit_generator.state = rng.bit_generator.state
            action = compiled.act(env, agent, rng)
            assert action == reference.act(env, agent, twin), (game, env.state.moves_made)
            assert rng.bit_generator.state == twin.bit_generator.state  # the same draws
            positions += 1
            env.step(action if rng.random() < 0.6 else random_agent.act(env, agent, rng))
    assert positions > 1000


class _Position:
    """A hand-built position with what the heuristic reads of an env."""

    def __init__(self, fire: list[str], ice: list[str], to_move: int, supply: tuple[int, int]) -> None:
        board = np.zeros(rules.NUM_HOLES, dtype=np.int8)
        for names, colour in ((fire, rules.FIRE), (ice, rules.ICE)):
            for name in names:
                board[rules.hole_from_name(name)] = colour + 1
        self.state = rules.State(board=board, to_move=to_move, supply=np.array(supply, dtype=np.int16), moves_made=20)

    def colour_of(self, agent: str) -> int:
        return self.state.to_move

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return {"action_mask": rules.legal_action_mask(self.state)}


def test_it_takes_a_win_at_once() -> None:
    # Fire holds islands A and B (positions 1-2-5 are a line) and moves E4 -> E5 to take E: A, B,
    # E are a line of islands.
    position = _Position(["A1", "A2", "A5", "B1", "B2", "B5", "E1", "E2", "E4"], ["C3", "D6", "F7"], rules.FIRE, (0, 0))
    for seed in range(5):
        action = FireAndIceHeuristic().act(position, "fire", np.random.default_rng(seed))
        assert rules.apply(position.state, action).winner == rules.FIRE


def test_it_never_hands_the_opponent_a_win() -> None:
    # Ice holds A and B and has E1, E2; Fire's peg on E5 blocks the line.  With Ice's supply left,
    # the hole a Fire peg leaves takes an Ice peg: moving E5 away gives Ice island E and the game.
    position = _Position(["E5", "C3", "D6", "G7"], ["A1", "A2", "A5", "B1", "B2", "B5", "E1", "E2"], rules.FIRE, (5, 5))
    legal = rules.legal_actions(position.state)
    losing = [a for a in legal if rules.apply(position.state, int(a)).winner == rules.ICE]
    assert losing and len(losing) < len(legal)
    for seed in range(20):
        action = FireAndIceHeuristic().act(position, "fire", np.random.default_rng(seed))
        assert action not in losing
