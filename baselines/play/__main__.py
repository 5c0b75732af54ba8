"""``python -m polarzoo.baselines.play`` (console script ``polarzoo-play``)."""

from polarzoo.baselines.play.terminal import main

main()
