"""Baseline agents and scripts: play, train, evaluate, solve."""
