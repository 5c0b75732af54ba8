"""Every bad input to the Python API gets one clear error naming it (table-driven), and a seeded
fuzz of legal, illegal and malformed actions keeps the envs' invariants: a rejected action
changes nothing, each game ends once, rewards are zero-sum, the mover always has a legal
action, observations stay in their spaces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from polarzoo.envs import fire_and_ice_v0, go_with_the_floe_v0, thin_ice_v0
from polarzoo.wrappers import SingleAgentEnv
from tests.helpers import scaled  # noqa: E402


def _after_reset(make: Callable[[], Any]) -> Any:
    env = make()
    env.reset(seed=0)
    return env


def _finished_raw() -> Any:
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not any(env.terminations.values()):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    while env.agents:
        env.step(None)
    return env


CASES: list[tuple[str, Callable[[], Any], type, str]] = [
    ("env step True", lambda: _after_reset(fire_and_ice_v0.env).step(True), TypeError, "action must be an integer"),
    ("env step 2.0", lambda: _after_reset(fire_and_ice_v0.env).step(2.0), TypeError, "action must be an integer"),
    ("env step out of range", lambda: _after_reset(fire_and_ice_v0.env).step(9999), AssertionError, "Discrete(2402)"),
    ("raw step before reset", lambda: fire_and_ice_v0.raw_env().step(1179), RuntimeError, "call reset() before step()"),
    ("raw observe before reset", lambda: go_with_the_floe_v0.raw_env().observe("black"), RuntimeError, "call reset()"),
    ("raw step after everyone left", lambda: _finished_raw().step(None), RuntimeError, "every agent has left"),
    ("parallel step before reset", lambda: fire_and_ice_v0.parallel_env().step({}), RuntimeError, "call reset() before step()"),
    (
        "parallel unknown agent",
        lambda: _after_reset(fire_and_ice_v0.parallel_env).step({"water": 1}),
        ValueError,
        "unknown agents ['water']",
    ),
    (
        "parallel no mover",
        lambda: _after_reset(fire_and_ice_v0.parallel_env).step({"ice": 1}),
        ValueError,
        "no action for 'fire'",
    ),
    ("parallel not a dict", lambda: _after_reset(fire_and_ice_v0.parallel_env).step([1]), TypeError, "takes a dict"),
    ("handicap=3.0", lambda: fire_and_ice_v0.env(handicap=3.0), ValueError, "handicap must be a whole number in 0..6"),
    ("handicap_holes=[3.7]", lambda: fire_and_ice_v0.env(handicap=1, handicap_holes=[3.7]), ValueError, "each of handicap_holes"),
    ("handicap_holes='A1'", lambda: fire_and_ice_v0.env(handicap=2, handicap_holes="A1"), ValueError, "must be a list of holes"),
    ("num_players=2.0", lambda: thin_ice_v0.env(num_players=2.0), ValueError, "num_players must be a whole number in 2..6"),
    ("grid=2.0", lambda: thin_ice_v0.env(grid=2.0), ValueError, "grid must be a whole number"),
    (
        "max_rearrangements=2.0",
        lambda: thin_ice_v0.env(max_rearrangements=2.0),
        ValueError,
        "max_rearrangements must be a whole number",
    ),
    ("tremor_mm=6", lambda: thin_ice_v0.env(tremor_mm=6), ValueError, "tremor_mm must be a number in [0, 5] mm; got 6"),
    ("pitch_mm='7'", lambda: thin_ice_v0.env(pitch_mm="7"), ValueError, "pitch_mm must be a number in [0.5, 30] mm"),
    ("opponent_weights=[0]", lambda: SingleAgentEnv("fire_and_ice_v0", opponent_weights=[0]), ValueError, "not all 0"),
    ("opponent_weights=[-1]", lambda: SingleAgentEnv("fire_and_ice_v0", opponent_weights=[-1]), ValueError, "number(s) >= 0"),
    (
        "opponent_weights=[1, 1]",
        lambda: SingleAgentEnv("fire_and_ice_v0", opponent_weights=[1, 1]),
        ValueError,
        "must be 1 number(s) >= 0",
    ),
]


@pytest.mark.parametrize("make, error, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_error(make: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


def test_batch_vec_env_arguments() -> None:
    pytest.importorskip("stable_baselines3")
    from polarzoo.wrappers import BatchVecEnv

    with pytest.raises(ValueError, match="num_envs must be a positive whole number; got 0"):
        BatchVecEnv("fire_and_ice_v0", num_envs=0)
    with pytest.raises(ValueError, match="opponent must be 'random' or a model object"):
        BatchVecEnv("fire_and_ice_v0", num_envs=2, opponent="mcts")


def test_numpy_integers_are_actions_everywhere() -> None:
    """Any NumPy integer type (and a 0-d integer array) is an action for env() as for raw_env()."""
    for value in (np.uint64(1179), np.int16(1179), np.int32(1179), np.array(1179)):
        env = _after_reset(fire_and_ice_v0.env)
        env.step(value)
        assert env.agent_selection == "ice" and not any(env.terminations.values())
    assert fire_and_ice_v0.env(handicap=np.int64(2)) is not None


# ---------------------------------------------------------------------------------------- fuzz
def _snapshot(env: Any) -> tuple:
    agent = env.agent_selection
    observation = env.observe(agent)
    return (
        agent,
        observation["observation"].tobytes(),
        observation["action_mask"].tobytes(),
        tuple(env.unwrapped.rewards.values()),
    )


MALFORMED = [True, 2.5, None, "D4-A4", np.array([1, 2]), -1, 10**6]


@pytest.mark.parametrize(
    "module, steps",
    [(fire_and_ice_v0, 10000), (go_with_the_floe_v0, 10000), (thin_ice_v0, 300)],
    ids=["fire_and_ice", "go_with_the_floe", "thin_ice"],
)
@pytest.mark.parametrize("kind", ["raw_env", "env"])
def test_fuzz_keeps_the_invariants(module: Any, steps: int, kind: str) -> None:
    """Seeded interleavings: 80% legal actions, 10% malformed ones (bool, float, None, str,
    arrays, out of range), 10% in-range illegal ones (env(): the game ends, -1 for the mover)."""
    rng = np.random.default_rng(11)
    env = getattr(module, kind)()
    env.reset(seed=3)
    space = env.observation_space(env.possible_agents[0])["observation"]
    starts, ends = 1, 0
    for _ in range(steps):
        if not env.agents:
            env.reset(seed=int(rng.integers(1000)))
            starts += 1
            continue
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        observation = env.observe(agent)
        mask = observation["action_mask"]
        assert mask.any(), "the agent to act has no legal action"
        assert space.contains(observation["observation"])
        roll = rng.random()
        illegal = roll >= 0.9
        if roll < 0.8:
            action = int(rng.choice(np.flatnonzero(mask)))
        elif not illegal:
            action = MALFORMED[int(rng.integers(len(MALFORMED)))]
        else:
            action = int(rng.choice(np.flatnonzero(mask == 0)))
        before = _snapshot(env)
        try:
            env.step(action)
        except (TypeError, ValueError, AssertionError) as error:
            assert str(error), "an error with no message"
            assert kind == "raw_env" or not illegal, "env() ends the game on an in-range illegal action"
            assert _snapshot(env) == before, f"a rejected action {action!r} changed the state"
            continue
        if any(env.terminations.values()) or any(env.truncations.values()):
            ends += 1
            rewards = env.unwrapped.rewards
            if illegal:
                assert rewards[agent] == -1.0
            elif module is not thin_ice_v0 and any(env.terminations.values()):
                assert sum(rewards.values()) == 0.0 and sorted(rewards.values()) == [-1.0, 1.0]
            # every agent then leaves with dead steps; the next loop turns reset
            while env.agents:
                env.step(None)
    assert ends >= starts - 1 and (ends >= 5 or module is thin_ice_v0)


def test_a_board_game_model_given_to_thin_ice_is_refused_at_load() -> None:
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.agents import make_agent, pretrained_path

    for spec in (f"model:{pretrained_path('fire_and_ice_v0')}", f"search:2:{pretrained_path('go_with_the_floe_v0')}"):
        with pytest.raises(ValueError, match="model .* actions.*not a thin_ice_v0 one"):
            make_agent(spec, "thin_ice_v0")


def test_thin_ice_refuses_action_ids_outside_its_layout_and_fractional_settle_steps() -> None:
    pytest.importorskip("mujoco")
    from polarzoo.envs import thin_ice_v0

    env = thin_ice_v0.raw_env()
    env.reset(seed=0)
    done = env.action_space(env.possible_agents[0]).n - 1
    assert env.action_to_notation(done) == "done"
    for action in (-1, done + 1, True):
        with pytest.raises(ValueError, match="whole number in 0.."):
            env.action_to_notation(action)
    with pytest.raises(ValueError, match="settle_steps must be a whole number in 1..1000; got 10.0"):
        thin_ice_v0.raw_env(settle_steps=10.0)


@pytest.mark.parametrize(
    "module, args",
    [
        ("polarzoo.baselines.solitaire_solver", ["--deals", "1000000", "--no-progress"]),
        ("polarzoo.baselines.solitaire_train", ["--quick", "--no-progress"]),
    ],
)
def test_solitaire_tools_on_ctrl_c_are_one_line_and_130(module: str, args: list[str], tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    extra = ["--out", str(tmp_path / "out")] if "train" in module else []
    process = subprocess.Popen(
        [sys.executable, "-m", module, *args, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(4)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=scaled(120))
    assert process.returncode == 130 and "interrupted" in err and "Traceback" not in err, (process.returncode, err[-2000:])


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"])
def test_what_reset_sets_read_before_reset_says_so(env_id: str) -> None:
    """``raw_env().agent_selection`` before ``reset()`` was a bare AttributeError; it says what to
    do, as PettingZoo's order-enforcing wrapper does for ``env()``; other names are untouched."""
    from polarzoo.envs import ENVIRONMENTS

    env = ENVIRONMENTS[env_id].raw_env()
    for name in ("agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match=r"cannot be accessed before reset\(\)"):
            getattr(env, name)
    assert not hasattr(env, "no_such_attribute")
    env.reset(seed=0)
    assert env.agent_selection in env.possible_agents
