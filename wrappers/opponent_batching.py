"""An SB3 ``DummyVecEnv`` that batches the opponents' moves across its envs.

Each env of a ``DummyVecEnv`` of :class:`~polarzoo.wrappers.SingleAgentEnv` plays its opponents'
moves one env at a time; an opponent that runs a network (a frozen snapshot of the learner, in
self-play) then runs it on one board per call, which costs nearly as much as a batch of 16
(PyTorch's per-operation overhead dominates at that size), and a search (``az:N``) runs a
network pass a simulation.  ``OpponentBatchingVecEnv`` steps all
envs together: it asks every env for its step through
:meth:`SingleAgentEnv.step_requests <polarzoo.wrappers.SingleAgentEnv.step_requests>`, which pauses
whenever an opponent with ``act_batch(envs, agents, rngs)`` must move, answers all paused envs
with one ``act_batch`` call per opponent, and repeats until every env is back at the learner's
turn.  The wrappers above each env (``Monitor``, :class:`~polarzoo.wrappers.shaping.PotentialShaping`,
anything that passes the action through) then receive the finished step as usual.

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv
    venv = OpponentBatchingVecEnv([lambda: Monitor(SingleAgentEnv("fire_and_ice_v0", opponents=[snapshot]))] * 16)

With opponents that have no ``act_batch`` (random, the heuristics) it behaves exactly like
``DummyVecEnv``; with a network opponent it gives the same games as ``DummyVecEnv`` up to the
opponent's sampling order (one batched draw instead of one draw per env).  Resets (an opponent
may open the game) still ask the opponents one env at a time: one move per episode.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import gymnasium as gym
from stable_baselines3.common.vec_env import DummyVecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from polarzoo.wrappers.single_agent import SingleAgentEnv


class OpponentBatchingVecEnv(DummyVecEnv):
    """``DummyVecEnv`` over envs whose ``unwrapped`` is a :class:`SingleAgentEnv`, batching the
    opponents' ``act_batch`` calls across them (see the module docstring)."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]]) -> None:
        super().__init__(list(env_fns))
        self._bases: list[SingleAgentEnv] = []
        for index, env in enumerate(self.envs):
            base = env.unwrapped
            if not isinstance(base, SingleAgentEnv):
                raise TypeError(f"env {index} is a {type(base).__name__}; OpponentBatchingVecEnv needs SingleAgentEnv underneath")
            self._bases.append(base)

    def step_wait(self) -> VecEnvStepReturn:
        pending: dict[int, tuple[Generator[Any, int, Any], Any, str]] = {}

        def advance(index: int, requests: Generator[Any, int, Any], answer: int | None) -> None:
            try:
                opponent, agent = next(requests) if answer is None else requests.send(answer)
                pending[index] = (requests, opponent, agent)
            except StopIteration as stop:
                self._bases[index].replay_step(self.actions[index], stop.value)

        for index, base in enumerate(self._bases):
            advance(index, base.step_requests(self.actions[index]), None)
        while pending:
            groups: dict[Any, list[int]] = {}
            for index, (_, opponent, _) in pending.items():
                # Opponents that play the same (a saved model's copies in several envs, e.g. after
                # a resume unpickled each env's) share a pass: the batch, and so the float
                # rounding of every row, is the same whether the envs hold one object or copies.
                groups.setdefault(getattr(opponent, "batch_key", None) or id(opponent), []).append(index)
            for indices in groups.values():
                opponent = pending[indices[0]][1]
                envs = [self._bases[i].aec for i in indices]
                agents = [pending[i][2] for i in indices]
                answers = opponent.act_batch(envs, agents, [self._bases[i].np_random for i in indices])
                for index, answer in zip(indices, answers):
                    requests = pending.pop(index)[0]
                    advance(index, requests, int(answer))
        # The wrappers' own step (Monitor, shaping, ...) and the auto-reset, as in DummyVecEnv.
        return super().step_wait()
