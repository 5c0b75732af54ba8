"""baselines/evaluation/ratings.py: known strengths recovered from synthetic tournaments (2 and
4 players, draws), intervals that cover them, an agent rated against a fixed league."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("choix")

from polarzoo.baselines.evaluation import ratings  # noqa: E402
from polarzoo.baselines.evaluation.ratings import Game  # noqa: E402

TRUE = {"a": 1200.0, "b": 1400.0, "c": 1500.0, "d": 1600.0, "e": 1800.0}


def _two_player(rng: np.random.Generator, strengths: dict[str, float], games: int, draw: float = 0.0) -> list[Game]:
    out = []
    names = list(strengths)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            p = ratings.expected_score(strengths[x], strengths[y])
            for _ in range(games):
                u = rng.random()
                if u < draw:
                    points = (0.5, 0.5)
                else:
                    points = (1.0, 0.0) if rng.random() < p else (0.0, 1.0)
                out.append(Game((x, y), points, (x, y)))
    return out


def _plackett_luce(rng: np.random.Generator, strengths: dict[str, float], lineup: list[str]) -> tuple[float, ...]:
    weights = np.array([10 ** (strengths[n] / 400) for n in lineup])
    left, points = list(range(len(lineup))), [0.0] * len(lineup)
    for rank in range(len(lineup)):
        pick = left.pop(int(rng.choice(len(left), p=weights[left] / weights[left].sum())))
        points[pick] = float(len(lineup) - rank)
    return tuple(points)


def test_two_player_ratings_recover_known_strengths_within_their_intervals() -> None:
    games = _two_player(np.random.default_rng(1), TRUE, 200)
    fitted = ratings.fit_ratings(games, list(TRUE))
    intervals = ratings.bootstrap_ratings(games, list(TRUE), samples=200, seed=0)
    assert abs(np.mean(list(fitted.values())) - 1500) < 1e-6
    for name, true in TRUE.items():
        assert abs(fitted[name] - true) < 30, (name, fitted[name])
        low, high = intervals[name]
        assert low <= true <= high and high - low < 80, (name, low, high)


def test_draws_count_half_and_the_same_seed_gives_the_same_intervals() -> None:
    names = ["x", "y"]
    games = [Game(("x", "y"), (0.5, 0.5), ("x", "y"))] * 50 + [Game(("x", "y"), (1.0, 0.0), ("x", "y"))] * 50
    fitted = ratings.fit_ratings(games, names)
    # x scores 75 of 100 (plus 2 virtual draws): 76/102 -> logit 1.08 -> ~187 Elo apart
    assert fitted["x"] - fitted["y"] == pytest.approx(ratings.ELO_PER_LOGIT * np.log(76 / 26), abs=1.0)
    assert ratings.bootstrap_ratings(games, names, 50, seed=3) == ratings.bootstrap_ratings(games, names, 50, seed=3)


def test_four_player_games_rate_on_the_same_scale_as_two_player_games() -> None:
    rng = np.random.default_rng(2)
    names = list(TRUE)
    games = [
        Game(tuple(lineup), _plackett_luce(rng, TRUE, list(lineup)), tuple(sorted(lineup)))
        for lineup in (rng.choice(names, 4, replace=False) for _ in range(2500))
    ]
    fitted = ratings.fit_ratings(games, names)
    for name, true in TRUE.items():
        assert abs(fitted[name] - true) < 35, (name, fitted[name])


def test_ties_and_repeated_agents_in_one_game() -> None:
    game = Game(("a", "b", "a", "c"), (3.0, 3.0, 1.0, 0.0))
    pairs = ratings.pairwise(game)
    assert ("a", "b", 0.5) in pairs and ("b", "a", 1.0) in pairs and ("a", "c", 1.0) in pairs
    assert not any(x == y for x, y, _ in pairs)  # two seats of one agent tell nothing


def test_a_member_that_never_lost_is_finite_and_named() -> None:
    games = [Game(("top", "low"), (1.0, 0.0), ("top", "low"))] * 30 + _two_player(
        np.random.default_rng(0), {"low": 1500, "mid": 1500}, 30
    )
    names = ["top", "low", "mid"]
    fitted = ratings.fit_ratings(games, names)
    assert np.isfinite(fitted["top"]) and fitted["top"] > fitted["low"]
    assert ratings.separated(games, names) == {"top": "never lost"}


def _candidate_games(rng: np.random.Generator, candidate: float, per_seat: int) -> list[Game]:
    games = []
    for name, strength in TRUE.items():
        p = ratings.expected_score(candidate, strength)
        for seat in range(2):
            for _ in range(per_seat):
                won = rng.random() < p
                seats = ("new", name) if seat == 0 else (name, "new")
                points = (1.0, 0.0) if won == (seat == 0) else (0.0, 1.0)
                games.append(Game(seats, points, seats))
    return games


def test_one_agent_against_a_fixed_league() -> None:
    candidate = 1550.0
    games = _candidate_games(np.random.default_rng(4), candidate, 80)
    estimate = ratings.fit_one(games, "new", TRUE)
    low, high = ratings.bootstrap_one(games, "new", TRUE, samples=300, seed=0)
    assert abs(estimate - candidate) < 40 and low < estimate < high and high - low < 120
    assert ratings.bootstrap_one(games, "new", TRUE, samples=300, seed=0) == (low, high)


def test_the_one_agent_interval_covers_the_truth_about_95_times_in_100() -> None:
    covered = 0
    for replication in range(20):
        games = _candidate_games(np.random.default_rng(100 + replication), 1650.0, 30)
        low, high = ratings.bootstrap_one(games, "new", TRUE, samples=200, seed=replication)
        covered += low <= 1650.0 <= high
    assert covered >= 16, covered  # 95% nominal; P(<= 15 of 20) < 2% when the coverage is 95%
