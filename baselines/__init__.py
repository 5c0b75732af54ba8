"""Baseline agents and the scripts around them, in rooms; imports point down the list:

* ``training/``: trainers (PPO, AlphaZero on the JAX twins, solitaire, imitation, RLlib, export)
* ``evaluation/`` and ``play/``: games between agents, tournaments and ratings; a person plays
* ``agents/``: every agent (random, heuristics, MCTS, policies, search) and ``make_agent``
* ``policies/``: the networks trained agents are made of
* ``cli/``: run folders, argument types, progress lines

The modules beside the rooms (``train``, ``evaluate``, ...) are the documented ``python -m``
commands, each a few lines that call its room's ``main``; ``pretrained/`` holds the shipped models.
"""
