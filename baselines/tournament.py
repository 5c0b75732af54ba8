"""Deprecated: the tournament helpers are in :mod:`polarzoo.baselines.evaluation.tournament`
(``from polarzoo.baselines.tournament import head_to_head`` keeps working, with a
``DeprecationWarning``, until 0.4)."""

from polarzoo.baselines._moved import moved_names

__getattr__ = moved_names(
    "polarzoo.baselines.tournament",
    dict.fromkeys(
        [
            "GamePool",
            "GameRecord",
            "PairResult",
            "SeatStats",
            "SeatTally",
            "elo_ratings",
            "game_key",
            "head_to_head",
            "markdown_table",
            "mean_interval",
            "multiplayer_markdown",
            "multiplayer_table",
            "play_game",
            "play_games",
            "ranks_of",
            "round_robin",
            "seat_names",
            "wilson_interval",
        ],
        "polarzoo.baselines.evaluation.tournament",
    ),
    "0.4",
)
