"""What a browser needs to show a position: the env's own description (``env.describe()``: the
board as SVG for a board game, the piles' state for Thin Ice), its picture (``env.render_picture()``
for games drawn as pictures) and the legal moves in parts a page can click (``env.move_parts``).
Shared by the live web game (:mod:`polarzoo.baselines.play.web`) and the replay viewer
(:mod:`polarzoo.baselines.play.replay`); which games there are and how each is shown comes from
:data:`polarzoo.envs.GAMES`."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from polarzoo.envs import GAMES


def web_games() -> tuple[str, ...]:
    """The games a browser can play: every registered multi-agent game."""
    return tuple(GAMES)


def position(env: Any) -> dict[str, Any]:
    """The position as JSON-ready data (:meth:`describe` of the env)."""
    return env.describe()


def legal_moves(env: Any) -> list[dict[str, Any]]:
    """Every legal move of the agent to act, in parts (:meth:`move_parts` of the env)."""
    return [env.move_parts(action) for action in map(int, np.flatnonzero(env.legal_action_mask()))]


def picture(env: Any) -> np.ndarray:
    """The position's picture (``env.render_picture()``)."""
    return env.render_picture()


def picture_png(env: Any) -> bytes:
    """:func:`picture` as PNG."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(picture(env)).save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def picture_jpeg(env: Any, quality: int = 80) -> bytes:
    """:func:`picture` as a smaller JPEG (the documentation site's static replays)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(picture(env)).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
