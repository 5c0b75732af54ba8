"""Is a faster physics setting the same game?  A statistical equivalence check for Thin Ice.

A fixed set of scripted piles (:data:`SCENARIOS`: single pieces, stacks, a nest, four on the
table, and near-topples whose outcome depends on the hand tremor) is built under two
:class:`~polarzoo.envs.thin_ice.physics.PhysicsConfig` settings with the same seeds (the same
tremor draws).  For each scenario the outcome of its last placement - ``stands``, ``T``, ``A`` or
``N`` (or the rule that fired on an earlier placement, which ends the script) - is counted over
the seeds, and the two settings are equivalent when, for every scenario and outcome, their 95%
Wilson intervals overlap.  ``tests/test_thin_ice_physics.py`` runs it on every change;
``python -m benchmarks.thin_ice_physics --equivalence-seeds N`` reports it with more seeds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from polarzoo.envs._common.outcome import wilson_interval
from polarzoo.envs.thin_ice.physics import PhysicsConfig, PilePhysics

#: One placement: (size 0 S / 1 M / 2 L, (x, y) in lattice cells of PITCH metres, orientation index).
Placement = tuple[int, tuple[float, float], int]
PITCH = 0.007
OUTCOMES = ("stands", "T", "A", "N")

UPRIGHT, INVERTED, LYING_PX, LYING_MX, LYING_PY, LYING_MY = range(6)
S, M, L = range(3)

#: name -> placements.  The first four have one outcome whatever the tremor; the others were
#: picked from random scripts near the pile centre for outcomes that vary with it.
SCENARIOS: dict[str, list[Placement]] = {
    "L upright alone": [(L, (0, 0), UPRIGHT)],
    "S upright in M upright (nest)": [(M, (0, 0), UPRIGHT), (S, (0, 0), UPRIGHT)],
    "four S on the table": [(S, (-2, -2), LYING_PX), (S, (2, -2), LYING_PX), (S, (-2, 2), LYING_PX), (S, (2, 2), LYING_PX)],
    "three lying at the centre": [(L, (0, 0), LYING_PX), (M, (0, 0), LYING_PY), (S, (0, 0), LYING_MX)],
    "mixed 1": [(L, (1, -1), LYING_MX), (M, (-1, 0), LYING_PX), (M, (0, 1), INVERTED), (L, (-1, 0), UPRIGHT)],
    "mixed 2": [(M, (1, -1), LYING_PX), (M, (0, 1), LYING_MX), (M, (1, 0), LYING_MX), (M, (1, 0), UPRIGHT)],
    "mixed 3": [(M, (0, 0), LYING_MY), (M, (0, 1), LYING_MX), (M, (0, 0), LYING_MX), (L, (-1, 1), LYING_PY)],
    "mixed 4": [(S, (1, -1), LYING_PX), (M, (0, 0), LYING_PY), (S, (0, 0), LYING_PY), (L, (-1, 0), LYING_MX)],
    "mixed 5": [
        (L, (1, 1), LYING_MX),
        (S, (1, -1), LYING_PY),
        (M, (0, -1), LYING_MY),
        (M, (0, 0), LYING_PY),
        (L, (1, -1), LYING_MY),
    ],
    "mixed 6": [(S, (0, 0), LYING_MX), (M, (0, 0), LYING_PY), (S, (-1, -1), LYING_PX), (L, (1, 1), LYING_PX)],
    "mixed 7": [
        (S, (-1, 0), LYING_MX),
        (L, (1, 0), LYING_MX),
        (L, (1, -1), LYING_MY),
        (L, (-1, -1), LYING_MY),
        (L, (1, -1), UPRIGHT),
    ],
    "mixed 8": [(L, (0, -1), LYING_MX), (M, (0, 1), LYING_MX), (M, (1, -1), LYING_MY), (M, (1, 1), LYING_MY)],
    "mixed 9": [
        (L, (-1, 0), LYING_PY),
        (S, (0, 1), LYING_MX),
        (L, (1, 1), LYING_PY),
        (M, (1, -1), LYING_MX),
        (L, (0, 0), LYING_PX),
    ],
    "mixed 10": [(L, (-1, 1), LYING_PY), (M, (0, 0), LYING_MX), (M, (-1, -1), UPRIGHT), (L, (0, 1), UPRIGHT)],
    "mixed 11": [(L, (1, 0), LYING_MY), (M, (0, -1), LYING_MX), (S, (0, 1), LYING_PY), (M, (0, 0), LYING_PY)],
    "mixed 12": [
        (L, (0, 0), LYING_MX),
        (S, (1, 0), UPRIGHT),
        (L, (1, 0), LYING_PY),
        (S, (1, -1), LYING_MX),
        (L, (0, 0), LYING_MX),
    ],
}


def run_scenario(placements: Sequence[Placement], config: PhysicsConfig, seed: int) -> str:
    """The outcome of one scripted pile: ``"stands"`` or the rule that fired (which ends it)."""
    rng = np.random.default_rng(seed)
    pile = PilePhysics(config)
    for size, (x, y), orientation in placements:
        outcome = pile.place(size, (x * PITCH, y * PITCH), orientation, rng)
        if outcome.eliminated:
            return outcome.eliminated
    return "stands"


@dataclass
class Comparison:
    """Outcome counts of every scenario under two settings, and whether they agree."""

    seeds: int
    reference: dict[str, Counter]
    candidate: dict[str, Counter]

    def disagreements(self) -> list[str]:
        """One line per (scenario, outcome) whose two 95% Wilson intervals do not overlap."""
        lines = []
        for name in self.reference:
            for outcome in OUTCOMES:
                a, b = self.reference[name][outcome], self.candidate[name][outcome]
                (a_low, a_high), (b_low, b_high) = wilson_interval(a, self.seeds), wilson_interval(b, self.seeds)
                if a_high < b_low or b_high < a_low:
                    lines.append(f"{name}: {outcome} {a}/{self.seeds} vs {b}/{self.seeds}")
        return lines

    def table(self) -> str:
        """Markdown: per scenario, the outcome counts under both settings."""
        lines = ["| scenario | reference stands / T / A / N | candidate stands / T / A / N |", "|---|---|---|"]
        for name in self.reference:
            ref = " / ".join(str(self.reference[name][o]) for o in OUTCOMES)
            new = " / ".join(str(self.candidate[name][o]) for o in OUTCOMES)
            lines.append(f"| {name} | {ref} | {new} |")
        return "\n".join(lines)


def compare(
    reference: PhysicsConfig, candidate: PhysicsConfig, seeds: int, scenarios: dict[str, list[Placement]] | None = None
) -> Comparison:
    """Every scenario under both settings with seeds ``0..seeds-1`` (the same tremor draws)."""
    scenarios = scenarios or SCENARIOS
    counts: tuple[dict[str, Counter], dict[str, Counter]] = ({}, {})
    for name, placements in scenarios.items():
        for table, config in zip(counts, (reference, candidate)):
            table[name] = Counter(run_scenario(placements, config, seed) for seed in range(seeds))
    return Comparison(seeds, *counts)
