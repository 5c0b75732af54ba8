"""Deprecated: the tournament helpers are in :mod:`polarzoo.baselines.evaluation.tournament`
(``from polarzoo.baselines.tournament import head_to_head`` works, with a warning, until 0.4)."""

from polarzoo.baselines.cli.moved import moved_names

__getattr__ = moved_names("polarzoo.baselines.tournament", "polarzoo.baselines.evaluation.tournament")
