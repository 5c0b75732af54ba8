"""The JAX twins (pgx's API): lockstep with the numba batch cores over >= 1,000 random games per
game, pgx's own api_test, pgx's step semantics, the handicap variant against the readable
rules, hand-built positions, and the random-action samplers.  Skipped without the jax extra."""

from __future__ import annotations

import importlib
import typing

import numpy as np
import pytest

from tests.helpers import scaled

jax = pytest.importorskip("jax")
pytest.importorskip("pgx")
jnp = jax.numpy

from polarzoo.envs import jax_envs  # noqa: E402
from polarzoo.envs._common.jax_env import sample_legal_action  # noqa: E402
from polarzoo.envs.fire_and_ice import jax_env as fire_jax  # noqa: E402
from polarzoo.envs.fire_and_ice import rules as fire_rules  # noqa: E402
from polarzoo.envs.fire_and_ice.encoding import reference_observation_tensor as fire_observation  # noqa: E402
from polarzoo.envs.go_with_the_floe import jax_env as floe_jax  # noqa: E402
from polarzoo.envs.go_with_the_floe import rules as floe_rules  # noqa: E402
from polarzoo.envs.go_with_the_floe.encoding import reference_observation_tensor as floe_observation  # noqa: E402

GAMES = ["fire_and_ice", "go_with_the_floe"]


@pytest.mark.slow
@pytest.mark.parametrize("name", GAMES)
def test_lockstep_with_the_numba_core(name: str) -> None:
    """Every state array, mask, observation (both players), final observation, reward, winner
    and termination equal at every step of more than 1,000 random games."""
    report = jax_envs.lockstep(name, games=1000, batch_size=256, seed=3)
    assert report.games >= 1000 and report.steps > 50
    assert report.ok, (report.mismatches, report.first_mismatch)


def test_lockstep_finds_a_broken_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check has power: a twin that forgets to refill the vacated hole is caught."""
    original = fire_jax.play

    def forgetful(x, action):  # type: ignore[no-untyped-def]
        out = original(x, action)
        source = jnp.where(action == fire_rules.PASS, 0, action // fire_rules.NUM_HOLES)
        return out.replace(board=out.board.at[source].set(jnp.int8(0)))

    monkeypatch.setattr(fire_jax.FireAndIce, "game_play", staticmethod(forgetful))
    report = jax_envs.lockstep("fire_and_ice", games=20, batch_size=16, seed=0)
    assert not report.ok and "state.board" in report.mismatches


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, kwargs",
    [("fire_and_ice", {}), ("fire_and_ice", {"handicap": 3}), ("go_with_the_floe", {})],
    ids=["fire_and_ice", "fire_and_ice-handicap", "go_with_the_floe"],
)
def test_pgx_api_test(name: str, kwargs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """pgx's own ``api_test`` with two adaptations: our env ids added to the ids it accepts,
    and its random actor given ``axis=-1`` (pgx 2.6's ``act_randomly`` takes ``axis=1``, which
    fails on one unbatched state with current JAX, for pgx's own games too)."""
    from pgx._src import api_test

    monkeypatch.setattr(
        api_test, "EnvId", typing.Literal[typing.get_args(api_test.EnvId) + tuple("polarzoo/" + game for game in GAMES)]
    )
    monkeypatch.setattr(
        api_test,
        "act_randomly",
        jax.jit(lambda key, mask: jax.random.categorical(key, jnp.log(mask.astype(jnp.float32)), axis=-1)),
    )
    env = jax_envs.make(name, **kwargs)
    api_test.api_test(env, num=1)
    if name == "fire_and_ice" and not kwargs:
        api_test.api_test(env, num=1, use_key=False)


@pytest.mark.parametrize("name", GAMES)
def test_pgx_step_semantics(name: str) -> None:
    """Illegal action: the game ends, -1 to the mover, +1 to the other; a finished game: every
    action legal, a further step changes nothing and pays nothing; seats drawn from the key."""
    env = jax_envs.make(name)
    init, step = jax.jit(env.init), jax.jit(env.step)
    firsts = {int(init(jax.random.PRNGKey(i)).current_player) for i in range(16)}
    assert firsts == {0, 1}
    state = init(jax.random.PRNGKey(0))
    illegal = int(np.flatnonzero(~np.asarray(state.legal_action_mask))[0])
    mover = int(state.current_player)
    ended = step(state, illegal)
    assert bool(ended.terminated) and ended.rewards[mover] == -1 and ended.rewards[1 - mover] == 1
    assert bool(ended.legal_action_mask.all())
    again = step(ended, 0)
    assert not np.asarray(again.rewards).any()
    for a, b in zip(jax.tree.leaves(again.replace(rewards=ended.rewards)), jax.tree.leaves(ended)):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert env.observation_shape == state.observation.shape and env.num_actions == state.legal_action_mask.shape[0]


def test_jax_envs_registry() -> None:
    assert jax_envs.available_envs() == ("fire_and_ice", "go_with_the_floe")
    assert isinstance(jax_envs.make("fire_and_ice_v0"), fire_jax.FireAndIce)
    assert isinstance(jax_envs.make("polarzoo/go_with_the_floe"), floe_jax.GoWithTheFloe)
    with pytest.raises(ValueError, match="no JAX twin for 'thin_ice_v0'"):
        jax_envs.make("thin_ice_v0")
    with pytest.raises(ValueError, match="handicap must be an integer 0..6"):
        fire_jax.FireAndIce(handicap=7)
    with pytest.raises(ValueError, match="handicap_player"):
        fire_jax.FireAndIce(handicap=1, handicap_player="water")


# ---------------------------------------------------------------------------------- Fire & Ice
def _rules_state(x, index: int) -> fire_rules.State:  # type: ignore[no-untyped-def]
    state = fire_rules.State()
    state.board[:] = np.asarray(x.board[index])
    state.supply[:] = np.asarray(x.supply[index])
    state.to_move = int(x.to_move[index])
    return state


@pytest.mark.slow
@pytest.mark.parametrize("player", ["ice", "fire"])
def test_handicap_starts_and_games_follow_the_rules(player: str) -> None:
    """Handicap pegs on distinct islands, never on D4, every island drawn; then random games
    from those starts in lockstep with the readable rules (masks, observations, winners)."""
    colour = fire_rules.COLOUR_NAMES.index(player)
    env = fire_jax.FireAndIce(handicap=4, handicap_player=player)
    batch = 64
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(7), batch))
    boards = np.asarray(state._x.board)
    islands_seen = set()
    for board in boards:
        holes = [h for h in np.flatnonzero(board == colour + 1) if h != fire_rules.CENTRE_HOLE]
        assert len(holes) == 4 and len({h // 7 for h in holes}) == 4
        assert board[fire_rules.CENTRE_HOLE] == fire_rules.FIRE + 1
        islands_seen |= {h // 7 for h in holes}
    assert islands_seen == set(range(7))
    assert (np.asarray(state._x.supply)[:, colour] == 25 - 4 - (colour == fire_rules.FIRE)).all()
    singles = [_rules_state(state._x, i) for i in range(batch)]
    step = jax.jit(jax.vmap(env.step))
    rng = np.random.default_rng(0)
    for _ in range(400):
        masks = np.asarray(state.legal_action_mask)
        observations = np.asarray(state.observation)
        actions = np.zeros(batch, dtype=np.int32)
        for i, single in enumerate(singles):
            if single.winner >= 0:
                continue
            assert np.array_equal(masks[i], fire_rules.legal_action_mask(single).astype(bool))
            assert np.array_equal(observations[i], fire_observation(single, single.to_move))
            actions[i] = rng.choice(fire_rules.legal_actions(single))
            fire_rules.apply_inplace(single, int(actions[i]))
        state = step(state, actions)
        for i, single in enumerate(singles):
            assert bool(state.terminated[i]) == (single.winner >= 0)
        if all(s.winner >= 0 for s in singles):
            break
    assert all(s.winner >= 0 for s in singles)


def test_fire_and_ice_hand_built_position() -> None:
    """From the rule text: Fire completes a line on three islands of an island-line and wins,
    even though the move also refills the vacated hole with an Ice peg."""
    x = fire_jax.GameState()
    board = np.zeros(49, dtype=np.int8)
    # Fire holds line {1,2,5} on islands A and B; on island E (A, B, E form an island-line) it has
    # E1, E2 and moves D5 -> E5 to complete it.
    for island in (0, 1):
        for position in (0, 1, 4):
            board[island * 7 + position] = fire_rules.FIRE + 1
    board[4 * 7 + 0] = board[4 * 7 + 1] = fire_rules.FIRE + 1
    board[3 * 7 + 4] = fire_rules.FIRE + 1
    x = x.replace(board=jnp.asarray(board), control=fire_jax.island_control(jnp.asarray(board)))
    action = fire_rules.notation_to_action("D5-E5")
    assert bool(fire_jax.legal_action_mask(x)[action])
    after = fire_jax.play(x, jnp.int32(action))
    assert int(after.winner) == fire_rules.FIRE and int(after.board[3 * 7 + 4]) == fire_rules.ICE + 1
    reference = fire_rules.State(board=board.copy())
    fire_rules.apply_inplace(reference, action)
    assert reference.winner == fire_rules.FIRE and np.array_equal(np.asarray(after.board), reference.board)


def test_fire_and_ice_random_action_is_the_mask_draw() -> None:
    """The board-based sampler gives the same action as the generic mask sampler for the same
    key, on every live game of random play; and a pass where nothing else is legal."""
    env = fire_jax.FireAndIce()
    batch = 128
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    step, draw = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.random_action))
    generic = jax.jit(jax.vmap(sample_legal_action))
    key = jax.random.PRNGKey(1)
    for _ in range(80):
        key, sub = jax.random.split(key)
        keys = jax.random.split(sub, batch)
        ours, theirs = np.asarray(draw(state, keys)), np.asarray(generic(keys, state.legal_action_mask))
        live = ~np.asarray(state.terminated)
        assert np.array_equal(ours[live], theirs[live])
        assert np.asarray(state.legal_action_mask)[np.arange(batch), ours].all()
        state = step(state, ours)
    blocked = fire_jax.GameState().replace(board=jnp.full(49, fire_rules.ICE + 1, jnp.int8).at[24].set(1))
    assert int(fire_jax.random_legal_action(jax.random.PRNGKey(0), blocked)) == fire_rules.PASS


# ---------------------------------------------------------------------------- Go with the Floe
def test_floe_isolation_and_capture_hand_built() -> None:
    """From the rule text: a seal walled in by rings is isolated (Black wins); a bear that
    captures the last seal wins for White; two passes in a row end the game for Black."""
    rings = np.zeros(64, dtype=bool)
    board = np.zeros(64, dtype=np.int8)
    seal = floe_rules.square_from_name("B2")
    board[seal] = floe_rules.SEAL
    board[floe_rules.square_from_name("G7")] = floe_rules.BEAR
    for name in ("A3", "B3", "C3", "C2", "C1", "A2", "B1"):  # every on-board neighbour of B2
        rings[floe_rules.square_from_name(name)] = True
    winner = floe_jax.decide(jnp.asarray(board), jnp.asarray(rings), jnp.int32(0))
    reference = floe_rules.State(board=board.copy(), rings=rings.copy())
    assert int(winner) == floe_rules.BLACK == floe_rules._decide_winner(reference)
    rings[floe_rules.square_from_name("C3")] = False  # a way in: not isolated
    assert int(floe_jax.decide(jnp.asarray(board), jnp.asarray(rings), jnp.int32(0))) == -1
    assert int(floe_jax.decide(jnp.asarray(board), jnp.asarray(rings), jnp.int32(2))) == floe_rules.BLACK
    board = np.zeros(64, dtype=np.int8)
    board[floe_rules.square_from_name("D4")] = floe_rules.SEAL
    board[floe_rules.square_from_name("E5")] = floe_rules.BEAR
    x = floe_jax.GameState(board=jnp.asarray(board), rings=jnp.zeros(64, bool), to_move=jnp.int32(floe_rules.WHITE))
    capture = floe_rules.notation_to_action("E5xD4")
    assert bool(floe_jax.legal_action_mask(x)[capture])
    after = floe_jax.play(x, jnp.int32(capture))
    assert int(after.winner) == floe_rules.WHITE and not np.asarray(after.board).any()
    assert bool(after.rings[floe_rules.square_from_name("E5")])


def test_floe_observation_and_random_action() -> None:
    env = floe_jax.GoWithTheFloe()
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    reference = floe_rules.initial_state()
    colour = int(state.current_player ^ state.first_player)
    assert np.array_equal(np.asarray(state.observation), floe_observation(reference, colour))
    assert np.array_equal(np.asarray(env.observe(state, 1 - state.current_player)), floe_observation(reference, 1 - colour))
    for i in range(20):
        action = int(env.random_action(state, jax.random.PRNGKey(i)))
        assert bool(state.legal_action_mask[action])
    assert "Go with the Floe" in state.to_svg() and state.to_svg().startswith("<svg")


@pytest.mark.slow
# --------------------------------------------------------------------------------- docs page
@pytest.mark.slow
def test_the_docs_page_snippets_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every Python snippet of docs/jax.md runs and prints its line."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "jax.md"
    snippets = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    assert len(snippets) == 2
    for snippet, (label, claim) in zip(snippets, (("jax:", "zero-sum: True"), ("mctx:", "all legal: True"))):
        script = tmp_path / "snippet.py"
        script.write_text(snippet)
        result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=scaled(600))
        assert result.returncode == 0, result.stderr[-3000:]
        assert label in result.stdout and claim in result.stdout, result.stdout


@pytest.mark.parametrize("name, rules_module", [("fire_and_ice", fire_rules), ("go_with_the_floe", floe_rules)])
def test_from_rules_is_the_twin_state(name: str, rules_module) -> None:  # type: ignore[no-untyped-def]
    """A readable-rules position converted (what az-jax agents search from) equals the twin's own
    state after the same moves: mask, observation, player to move."""
    twin = importlib.import_module(f"polarzoo.envs.{name}.jax_env")
    env = jax_envs.make(name)
    state = env.init(jax.random.PRNGKey(0))
    reference = rules_module.initial_state()
    rng = np.random.default_rng(0)
    step = jax.jit(env.step)
    for _ in range(12):
        action = int(rng.choice(rules_module.legal_actions(reference)))
        rules_module.apply_inplace(reference, action)
        state = step(state, action)
        converted = twin.from_rules(reference, int(state.first_player))
        assert np.array_equal(np.asarray(converted.legal_action_mask), np.asarray(state.legal_action_mask))
        assert np.array_equal(np.asarray(converted.observation), np.asarray(state.observation))
        assert int(converted.current_player) == int(state.current_player)
        if reference.winner >= 0:
            break


@pytest.mark.parametrize("game", ["fire_and_ice", "go_with_the_floe"])
def test_bad_actions_and_players_are_refused(game: str) -> None:
    env = jax_envs.make(game)
    state = env.init(jax.random.PRNGKey(0))
    for action in (3.7, True, jnp.float32(3)):
        with pytest.raises(TypeError, match="an action is an integer"):
            env.step(state, action)
    for player, error in ((2, ValueError), (-1, ValueError), (1.0, TypeError), (True, TypeError)):
        with pytest.raises(error, match="player_id"):
            env.observe(state, player)
    legal = int(jnp.flatnonzero(state.legal_action_mask)[0])
    assert int(jax.jit(env.step)(state, legal)._step_count) == 1
    assert env.observe(state, 1).shape == jax.jit(env.observe)(state, 1).shape
