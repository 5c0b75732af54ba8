"""``python -m polarzoo.baselines.benchmark`` (console script ``polarzoo-benchmark``)."""

from polarzoo.baselines.benchmark.runner import main

main()
