"""``oracle``: perfect play where the exact search proves the position, the fallback elsewhere."""

from __future__ import annotations

import pytest

from polarzoo.baselines.agents.oracle import Oracle
from polarzoo.baselines.agents.registry import make_agent, model_files, names_code_or_file
from polarzoo.baselines.evaluation.tournament import play_game
from polarzoo.baselines.play.web_game import page_agent_problem


def test_oracle_as_black_never_loses_the_floe() -> None:
    # the start is proven won for Black: every game must be won, whatever White does
    oracle = make_agent("oracle:random", "go_with_the_floe_v0")
    assert isinstance(oracle, Oracle) and oracle.name == "oracle:random"
    for seed, opponent in enumerate(["random", "heuristic", "pretrained"]):
        record = play_game("go_with_the_floe_v0", [oracle, make_agent(opponent, "go_with_the_floe_v0")], seed)
        assert record.scores == [1.0, 0.0], (opponent, record)
    assert oracle.proven_moves >= 3 and oracle.fallback_moves == 0


def test_oracle_wins_a_won_fire_and_ice_endgame_from_its_proof() -> None:
    # Fire & Ice: against random play the oracle's proofs take over before the end
    oracle = Oracle("fire_and_ice_v0", make_agent("heuristic", "fire_and_ice_v0"), node_limit=20_000)
    for seed in range(2):
        lineup = [oracle, make_agent("random", "fire_and_ice_v0")]
        record = play_game("fire_and_ice_v0", lineup if seed == 0 else lineup[::-1], seed)
        assert record.scores[0 if seed == 0 else 1] == 1.0
    assert oracle.proven_moves >= 1


def test_oracle_specs_are_checked() -> None:
    with pytest.raises(ValueError, match="exact search"):
        make_agent("oracle", "thin_ice_v0")
    with pytest.raises(ValueError, match="cannot be an oracle"):
        make_agent("oracle:oracle", "fire_and_ice_v0")
    default = make_agent("oracle", "go_with_the_floe_v0")
    assert default.name == "oracle" and default.fallback.name.startswith("az")
    assert make_agent("oracle:mcts:50", "fire_and_ice_v0").name == "oracle:mcts:50"
    assert not names_code_or_file("oracle") and names_code_or_file("oracle:model:x.zip")
    assert model_files("oracle", "fire_and_ice_v0") == model_files("az:20", "fire_and_ice_v0")
    # the page may name the oracle, with its fallback under the page's own rule
    assert page_agent_problem("oracle", "go_with_the_floe_v0") is None
    assert page_agent_problem("oracle:mcts:100", "fire_and_ice_v0") is None
    assert page_agent_problem("oracle:model:/etc/passwd", "fire_and_ice_v0") is not None
    assert page_agent_problem("oracle:os:system", "fire_and_ice_v0") is not None


def test_the_score_oracle_plays_the_match_score_of_the_floe() -> None:
    """As Black it opens with a move worth the start's 40 empty squares and wins; as White it
    leaves a perfect Black no more than 40."""
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.agents.registry import score_oracle
    from polarzoo.baselines.evaluation.tournament import play_game
    from polarzoo.envs.go_with_the_floe import rules

    black = score_oracle("go_with_the_floe_v0")
    record = play_game("go_with_the_floe_v0", [black, make_agent("random", "go_with_the_floe_v0")], seed=0)
    assert record.scores[0] > record.scores[1] and black.scored_moves >= 1
    assert rules.action_to_notation(record.actions[0], rules.initial_state()) in ("B2-B4", "B7-B5")
    perfect = play_game("go_with_the_floe_v0", [score_oracle("go_with_the_floe_v0"), score_oracle("go_with_the_floe_v0")], seed=0)
    state = rules.initial_state()
    for action in perfect.actions:
        state = rules.apply(state, action)
    assert state.winner == rules.BLACK and rules.empty_squares(state) == 40 and len(perfect.actions) == 5
    with pytest.raises(ValueError, match="no match-score search for fire_and_ice_v0"):
        score_oracle("fire_and_ice_v0")
    # the spec names it too, with its fallback written or the kit's
    assert make_agent("score-oracle", "go_with_the_floe_v0").name == "score-oracle"
    nested = make_agent("score-oracle:heuristic", "go_with_the_floe_v0")
    assert nested.name == "score-oracle:heuristic" and nested.fallback.name == "heuristic"
