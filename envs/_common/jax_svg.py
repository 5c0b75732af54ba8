"""SVG pictures for the JAX twins' ``State.to_svg`` / ``save_svg`` (pgx's own visualiser knows
only pgx's games): the single envs' board pictures (``render_svg``) side by side."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape


def boards_svg(boards: list[str], title: str, scale: float = 1.0, width: float = 520.0, per_row: int = 4) -> str:
    """Board pictures (each a whole ``<svg viewBox=...>`` of the envs' ``render_svg``) side by
    side, ``per_row`` in a row (a batched state: one board per game), under a ``<title>``."""
    placed = []
    height = width
    for i, board in enumerate(boards):
        view = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', board)
        w, h = (float(view.group(1)), float(view.group(2))) if view else (width, width)
        height = h * width / w
        row, column = divmod(i, per_row)
        placed.append(
            board.replace(
                "<svg ", f'<svg x="{column * width:.0f}" y="{row * height:.0f}" width="{width:.0f}" height="{height:.0f}" ', 1
            )
        )
    columns, rows = min(len(boards), per_row), -(-len(boards) // per_row)
    total_w, total_h = columns * width, rows * height
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w * scale:.0f}" height="{total_h * scale:.0f}" '
        f'viewBox="0 0 {total_w:.0f} {total_h:.0f}"><title>{escape(title)}</title>{"".join(placed)}</svg>'
    )
