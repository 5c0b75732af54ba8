"""A person plays an agent: in the terminal (:mod:`.terminal`, ``python -m
polarzoo.baselines.play``), in a pygame window (:mod:`.window`, ``--window``), both on one turn
loop (:mod:`.turns`).  Imports agents and the CLI helpers, never training or evaluation."""

from polarzoo.baselines.play.terminal import HumanGame, format_moves, main, play

__all__ = ["HumanGame", "format_moves", "main", "play"]
