"""polarzoo.wrappers.openspiel: the games inside OpenSpiel, held to OpenSpiel's own checks and in lockstep
with the PettingZoo / Gymnasium envs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers import scaled

pyspiel = pytest.importorskip("pyspiel")

import polarzoo.wrappers.openspiel  # noqa: E402,F401  (registers the games)
from polarzoo.envs import fire_and_ice_v0, go_with_the_floe_v0  # noqa: E402

PLAYTHROUGHS = Path(__file__).with_name("playthroughs") / "openspiel"
GAMES = [
    "polarzoo_fire_and_ice",
    "polarzoo_fire_and_ice(handicap=2,seed=5)",
    "polarzoo_go_with_the_floe",
    "polarzoo_fire_and_ice_solitaire(seed=3)",
]


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test_with_serialization(name: str) -> None:
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)
    state = game.new_initial_state()
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert state.history() == [] and len(clone.history()) == 1  # a clone is independent
    again = game.deserialize_state(clone.serialize())
    assert str(again) == str(clone) and again.history() == clone.history()


def _lockstep(game: object, env: object, seed: int, rng: np.random.Generator, check_observations: bool) -> int:
    env.reset(seed=seed)
    state = game.new_initial_state()
    agents = env.possible_agents
    steps = 0
    while not state.is_terminal():
        agent = env.agent_selection
        player = state.current_player()
        assert agents[player] == agent
        mask = env.observe(agent)["action_mask"]
        legal = state.legal_actions()
        assert np.flatnonzero(mask).tolist() == legal
        if check_observations:
            for p, name in enumerate(agents):
                expected = env.observe(name)["observation"].astype(np.float32).ravel()
                assert np.array_equal(np.asarray(state.observation_tensor(p)), expected)
        action = int(rng.choice(legal))
        assert state.action_to_string(player, action) == env.unwrapped.action_to_notation(action)
        state.apply_action(action)
        env.step(action)
        steps += 1
    assert all(env.terminations.values()) or all(env.truncations.values())
    assert state.returns() == [float(env._cumulative_rewards[a]) for a in agents]
    return steps


@pytest.mark.parametrize(
    "module, name, games",
    [
        (fire_and_ice_v0, "polarzoo_fire_and_ice", 300),
        (go_with_the_floe_v0, "polarzoo_go_with_the_floe", 200),
    ],
)
def test_lockstep_with_the_pettingzoo_env(module: object, name: str, games: int) -> None:
    """Same legal actions (ids), notation, observations (every 2nd game, both players, every
    step) and returns as the PettingZoo env, game after game; with the handicap games below,
    500 games per board game."""
    game = pyspiel.load_game(name)
    env = module.raw_env()
    rng = np.random.default_rng(0)
    for seed in range(games):
        _lockstep(game, env, seed, rng, check_observations=seed % 2 == 0)


def test_lockstep_handicap_games_draw_the_envs_random_pegs() -> None:
    env = fire_and_ice_v0.raw_env(handicap=3)
    rng = np.random.default_rng(1)
    for seed in range(200):
        _lockstep(
            pyspiel.load_game(f"polarzoo_fire_and_ice(handicap=3,seed={seed})"), env, seed, rng, check_observations=seed % 20 == 0
        )
    env = go_with_the_floe_v0.raw_env()
    for seed in range(300, 600):
        _lockstep(pyspiel.load_game("polarzoo_go_with_the_floe"), env, seed, rng, check_observations=False)


def test_solitaire_lockstep_with_the_gymnasium_env() -> None:
    import gymnasium as gym

    env = gym.make("polarzoo/FireAndIceSolitaire-v0").unwrapped
    rng = np.random.default_rng(0)
    for seed in range(100):
        observation, info = env.reset(seed=seed)
        state = pyspiel.load_game(f"polarzoo_fire_and_ice_solitaire(seed={seed})").new_initial_state()
        total = 0.0
        while not state.is_terminal():
            assert np.flatnonzero(info["action_mask"]).tolist() == state.legal_actions()
            assert np.array_equal(np.asarray(state.observation_tensor(0)), observation.astype(np.float32).ravel())
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            observation, reward, terminated, truncated, info = env.step(action)
            total += reward
        assert terminated and state.returns() == [total]


@pytest.mark.parametrize("name", GAMES)
def test_playthrough_matches_the_golden_file(name: str) -> None:
    """OpenSpiel's own playthrough format (open_spiel.python.algorithms.generate_playthrough),
    seeded: regenerate with ``python -m tests.test_openspiel``."""
    from open_spiel.python.algorithms import generate_playthrough

    text = generate_playthrough.playthrough(name, None, seed=1)
    golden = PLAYTHROUGHS / _file_name(name)
    assert golden.read_text() == text


def _file_name(name: str) -> str:
    return name.replace("(", "_").replace(")", "").replace(",", "_").replace("=", "-") + ".txt"


def test_mcts_bot_and_rl_environment_play_whole_games() -> None:
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("polarzoo_fire_and_ice")
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, 2.0, 20, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    opponent = pyspiel.make_uniform_random_bot(1, 0)
    state = game.new_initial_state()
    while not state.is_terminal():
        action = (bot if state.current_player() == 0 else opponent).step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    assert sorted(state.returns()) == [-1.0, 1.0]
    env = rl_environment.Environment("polarzoo_go_with_the_floe")
    step = env.reset()
    plies = 0
    while not step.last():
        player = step.observations["current_player"]
        legal = step.observations["legal_actions"][player]
        assert len(step.observations["info_state"][player]) == 704
        step = env.step([int(rng.choice(legal))])
        plies += 1
    assert plies > 0 and sorted(step.rewards) == [-1.0, 1.0]


def test_parameters_parse_and_bad_ones_name_themselves() -> None:
    game = pyspiel.load_game("polarzoo_fire_and_ice(handicap=2,handicap_player=fire,seed=4)")
    assert game.get_parameters() == {"handicap": 2, "handicap_player": "fire", "seed": 4}
    board = np.asarray(game.new_initial_state().observation_tensor(0)).reshape(7, 7, 9)
    assert board[:, :, 0].sum() == 3  # fire's own pegs: D4 and the two handicap pegs
    with pytest.raises(ValueError, match="handicap must be 0..6, got 9"):
        pyspiel.load_game("polarzoo_fire_and_ice(handicap=9)")
    with pytest.raises(ValueError, match="handicap_player must be 'fire' or 'ice'"):
        pyspiel.load_game("polarzoo_fire_and_ice(handicap_player=water)")
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'colour'"):
        pyspiel.load_game("polarzoo_fire_and_ice(colour=2)")


if __name__ == "__main__":  # regenerate the golden playthroughs
    from open_spiel.python.algorithms import generate_playthrough

    PLAYTHROUGHS.mkdir(parents=True, exist_ok=True)
    for game_name in GAMES:
        (PLAYTHROUGHS / _file_name(game_name)).write_text(generate_playthrough.playthrough(game_name, None, seed=1))
        print("wrote", PLAYTHROUGHS / _file_name(game_name))


def test_the_docs_page_snippet_runs(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys

    page = Path(__file__).resolve().parents[1] / "docs" / "openspiel.md"
    (snippet,) = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=scaled(600))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "openspiel: MCTS (100 simulations) as fire against random:" in result.stdout


@pytest.mark.parametrize("name", ["polarzoo_fire_and_ice", "polarzoo_go_with_the_floe", "polarzoo_fire_and_ice_solitaire"])
def test_an_illegal_or_out_of_range_action_is_refused_and_changes_nothing(name: str) -> None:
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    legal = state.legal_actions()
    illegal = next(a for a in range(game.num_distinct_actions()) if a not in legal)
    before, history = str(state), list(state.history())
    for action in (illegal, game.num_distinct_actions() + 5):
        with pytest.raises(ValueError, match="is not legal"):
            state.apply_action(action)
        assert str(state) == before and state.history() == history
    state.apply_action(legal[0])
    assert state.history() == [legal[0]]
