"""Ratings on an Elo scale from games of 2 to 6 players: one Bradley-Terry model for every player count.

A game of N players is broken into its N(N-1)/2 pairs of seats (*full rank-breaking*, a
consistent estimator of the Plackett-Luce model; Azari Soufiani et al., 2014): the seat with
more points beats the other, equal points are a draw (half a win each), two seats of the same
agent tell nothing.  A two-player game is its one pair.  So a 2-player and a 4-player rating sit
on the same scale: the strength in logits of the Bradley-Terry / Plackett-Luce model.

* :func:`fit_ratings`: the league's strengths, the Bradley-Terry maximum-likelihood estimate of
  ``choix.ilsr_pairwise_dense`` on the games plus a prior of ``PRIOR_DRAWS`` virtual draws
  between every two members (as BayesElo does; it keeps an agent that never lost finite), on the
  Elo scale (``400 / ln 10`` points per logit) with the members' mean at 1500.  Why choix: a batch maximum-likelihood fit, so the ratings do not depend
  on the order the games finished in (an online system such as openskill's Weng-Lin does), and
  the same Bradley-Terry / Plackett-Luce model for 2 and N players.
* :func:`fit_one`: one new agent's strength with the league's held fixed (a one-dimensional fit
  with ``scipy.optimize``, the same likelihood and the same virtual draws against each member).
* Intervals: percentile bootstrap, resampling the games within each pairing or lineup
  (stratified), the same seeded resamples every time (:func:`bootstrap_ratings`,
  :func:`bootstrap_one`).  A member that won (or lost) every game it played has a rating bounded
  only by the prior: :func:`separated` names it, and its interval is reported as open.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from polarzoo.envs.utils import require

#: Elo points per logit of strength (a 400-point gap is 10:1 odds).
ELO_PER_LOGIT = 400.0 / math.log(10.0)
#: The league's mean rating.
MEAN_RATING = 1500.0
#: The prior: this many virtual draws between every two agents (BayesElo's choice of prior, 2);
#: it keeps the rating of an agent that never lost (or never won) finite and moves the others little.
PRIOR_DRAWS = 2.0


@dataclass(frozen=True)
class Game:
    """One game for the ratings: the agent of each seat and each seat's points (more is better)."""

    agents: tuple[str, ...]
    points: tuple[float, ...]
    stratum: tuple = ()  # what the bootstrap resamples within (a pairing or lineup)


def pairwise(game: Game) -> list[tuple[str, str, float]]:
    """``(a, b, score of a)`` for every pair of seats of different agents: 1, 0.5 (equal points) or 0."""
    out = []
    n = len(game.agents)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = game.agents[i], game.agents[j]
            if a == b:
                continue
            pi, pj = game.points[i], game.points[j]
            out.append((a, b, 1.0 if pi > pj else (0.5 if pi == pj else 0.0)))
    return out


def _weight(game: Game) -> float:
    """Each game counts once whatever its number of players: ``1 / (N - 1)`` per pair of seats
    (each seat is in N - 1 pairs), so a 2-player game's one pair weighs 1."""
    return 1.0 / max(1, len(game.agents) - 1)


def score_matrix(games: Sequence[Game], names: Sequence[str], prior_draws: float = PRIOR_DRAWS) -> np.ndarray:
    """``W[i, j]``: the weighted wins of ``names[i]`` over ``names[j]`` (a draw half each way), plus
    ``prior_draws`` virtual draws between every two members (the prior)."""
    index = {name: i for i, name in enumerate(names)}
    wins = np.full((len(names), len(names)), prior_draws / 2.0)
    np.fill_diagonal(wins, 0.0)
    for game in games:
        weight = _weight(game)
        for a, b, score in pairwise(game):
            i, j = index[a], index[b]
            wins[i, j] += weight * score
            wins[j, i] += weight * (1.0 - score)
    return wins


def fit_strengths(games: Sequence[Game], names: Sequence[str], prior_draws: float = PRIOR_DRAWS) -> np.ndarray:
    """Strengths in logits (mean 0) of ``names``: the Bradley-Terry maximum-likelihood estimate of
    the games plus the prior's virtual draws (``choix.ilsr_pairwise_dense``, run to convergence)."""
    choix = require("choix", "the league's ratings")
    strengths = choix.ilsr_pairwise_dense(score_matrix(games, names, prior_draws), alpha=0.0, max_iter=100_000, tol=1e-10)
    return strengths - strengths.mean()


def to_elo(strengths: np.ndarray) -> np.ndarray:
    return MEAN_RATING + ELO_PER_LOGIT * (np.asarray(strengths) - np.mean(strengths))


def fit_ratings(games: Sequence[Game], names: Sequence[str], prior_draws: float = PRIOR_DRAWS) -> dict[str, float]:
    """Elo-scale ratings (mean 1500) of ``names`` from ``games``."""
    return dict(zip(names, (float(r) for r in to_elo(fit_strengths(games, names, prior_draws)))))


def _strata(games: Sequence[Game], key: Callable[[Game], tuple] | None = None) -> list[np.ndarray]:
    groups: dict[tuple, list[int]] = {}
    for i, game in enumerate(games):
        groups.setdefault(game.stratum if key is None else key(game), []).append(i)
    return [np.asarray(v) for _, v in sorted(groups.items(), key=lambda kv: repr(kv[0]))]


def _resample(games: Sequence[Game], strata: list[np.ndarray], rng: np.random.Generator) -> list[Game]:
    return [games[i] for group in strata for i in rng.choice(group, size=len(group), replace=True)]


def bootstrap_ratings(
    games: Sequence[Game], names: Sequence[str], samples: int = 200, seed: int = 0, prior_draws: float = PRIOR_DRAWS
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of :func:`fit_ratings` over ``samples`` stratified resamples of the games."""
    rng = np.random.default_rng(seed)
    strata = _strata(games)
    draws = np.array([to_elo(fit_strengths(_resample(games, strata, rng), names, prior_draws)) for _ in range(samples)])
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    return {name: (float(low[i]), float(high[i])) for i, name in enumerate(names)}


def separated(games: Sequence[Game], names: Sequence[str]) -> dict[str, str]:
    """``{name: "never lost" | "never won"}`` for members whose every pair went one way: their
    rating is bounded only by the prior, so its interval is open on that side."""
    scores: dict[str, list[float]] = {name: [] for name in names}
    for game in games:
        for a, b, score in pairwise(game):
            scores[a].append(score)
            scores[b].append(1.0 - score)
    out = {}
    for name, values in scores.items():
        if values and min(values) == 1.0:
            out[name] = "never lost"
        elif values and max(values) == 0.0:
            out[name] = "never won"
    return out


# ------------------------------------------------------------------------------ one agent against a fixed league
def _one_terms(games: Sequence[Game], candidate: str, fixed: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(opponent strength, score, weight) of every pair of the candidate's seats against a league member."""
    opponents, scores, weights = [], [], []
    for game in games:
        for a, b, score in pairwise(game):
            if a == candidate and b in fixed:
                opponents.append(fixed[b])
                scores.append(score)
            elif b == candidate and a in fixed:
                opponents.append(fixed[a])
                scores.append(1.0 - score)
            else:
                continue
            weights.append(_weight(game))
    return np.asarray(opponents), np.asarray(scores), np.asarray(weights)


def _fit_terms(
    opponents: np.ndarray, scores: np.ndarray, weights: np.ndarray, fixed: dict[str, float], prior_draws: float
) -> float:
    minimize_scalar = require("scipy.optimize", "an agent's rating").minimize_scalar
    members = np.asarray(list(fixed.values()))
    opponents = np.concatenate([opponents, members])
    scores = np.concatenate([scores, np.full(len(members), 0.5)])
    weights = np.concatenate([weights, np.full(len(members), prior_draws)])

    def loss(x: float) -> float:
        d = x - opponents
        # -log likelihood of a Bradley-Terry score s (draws half): s log sigma(d) + (1 - s) log sigma(-d)
        return float(np.sum(weights * (np.logaddexp(0.0, -d) * scores + np.logaddexp(0.0, d) * (1.0 - scores))))

    return float(minimize_scalar(loss, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-7}).x)


def fit_one(games: Sequence[Game], candidate: str, league: dict[str, float], prior_draws: float = PRIOR_DRAWS) -> float:
    """The Elo-scale rating of ``candidate`` from its games against members of ``league``
    (``{name: Elo rating}``, held fixed)."""
    fixed = {name: (rating - MEAN_RATING) / ELO_PER_LOGIT for name, rating in league.items()}
    return MEAN_RATING + ELO_PER_LOGIT * _fit_terms(*_one_terms(games, candidate, fixed), fixed, prior_draws)


def bootstrap_one(
    games: Sequence[Game],
    candidate: str,
    league: dict[str, float],
    samples: int = 400,
    seed: int = 0,
    prior_draws: float = PRIOR_DRAWS,
) -> tuple[float, float]:
    """95% percentile interval of :func:`fit_one` over resamples of the candidate's games within
    each set of opponents, every seat order together (the league's ratings held fixed, so their
    own uncertainty is not in it).  Resampling within each seat order instead made an interval
    too narrow to hold another seed's estimate where one seat nearly always wins (Go with the
    Floe: that stratum has no variance), and of width 0 from one game per seat order."""
    rng = np.random.default_rng(seed)
    strata = _strata(games, key=lambda game: tuple(sorted(a for a in game.agents if a != candidate)))
    fixed = {name: (rating - MEAN_RATING) / ELO_PER_LOGIT for name, rating in league.items()}
    per_game = [_one_terms([game], candidate, fixed) for game in games]
    draws = []
    for _ in range(samples):
        picked = [per_game[i] for group in strata for i in rng.choice(group, size=len(group), replace=True)]
        terms = [np.concatenate([p[k] for p in picked]) for k in range(3)]
        draws.append(MEAN_RATING + ELO_PER_LOGIT * _fit_terms(terms[0], terms[1], terms[2], fixed, prior_draws))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def expected_score(rating: float, opponent: float) -> float:
    """The Bradley-Terry expected score of ``rating`` against ``opponent`` (Elo scale)."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))
