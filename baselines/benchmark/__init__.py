"""The benchmark: the protocol (:mod:`.protocol`: games, algorithms, budgets, seeds, the
evaluation of a run), the runner (:mod:`.runner`: ``python -m polarzoo.baselines.benchmark``,
local processes or Ray tasks, every run resumable) and the aggregate (:mod:`.aggregate`, with
rliable).  The top room of ``baselines/``: it drives training and evaluation."""

from polarzoo.baselines.benchmark.runner import main

__all__ = ["main"]
