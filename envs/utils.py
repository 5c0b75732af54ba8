"""What the layers above ``envs/`` (and users writing a game of their own) use from the envs'
shared pieces, under public names: the turn-based AEC base class and its checks, render helpers,
the optional-extras check, outcome helpers, the winners after a node's moves (for searches),
bounded readers of data from outside (JSON with limits, regular files under a size cap), object
state as data (checkpoints without pickle) and seeding helpers.
``polarzoo.envs._common`` holds their implementations and may change; these names stay.

>>> from polarzoo.envs.utils import TurnBasedAECEnv, check_choice, wilson_interval
>>> check_choice("seat", "fire", ("fire", "ice"))
'fire'
"""

from __future__ import annotations

from polarzoo.envs._common.aec import (
    TurnBasedAECEnv,
    check_choice,
    check_int_action,
    check_number,
    default_wrappers,
    turn_based_parallel,
)
from polarzoo.envs._common.board_rules import winners_after
from polarzoo.envs._common.extras import MissingExtra, require
from polarzoo.envs._common.outcome import wilson_interval, zero_sum_returns
from polarzoo.envs._common.render import HumanWindow, no_display_reason, require_pygame
from polarzoo.envs._common.safe_io import (
    MAX_MODEL_BYTES,
    MAX_SMALL_FILE_BYTES,
    DataError,
    check_regular_file,
    loads_json,
    read_bounded,
    read_json_file,
)
from polarzoo.envs._common.seeding import global_random_state_kept
from polarzoo.envs._common.spaces import LegalDiscrete
from polarzoo.envs._common.state_codec import encode_state, restore_state

__all__ = [
    "MAX_MODEL_BYTES",
    "MAX_SMALL_FILE_BYTES",
    "DataError",
    "encode_state",
    "restore_state",
    "check_regular_file",
    "loads_json",
    "read_bounded",
    "read_json_file",
    "HumanWindow",
    "LegalDiscrete",
    "MissingExtra",
    "TurnBasedAECEnv",
    "check_choice",
    "check_int_action",
    "check_number",
    "default_wrappers",
    "global_random_state_kept",
    "no_display_reason",
    "require",
    "require_pygame",
    "turn_based_parallel",
    "wilson_interval",
    "winners_after",
    "zero_sum_returns",
]
