"""SVG pictures for the JAX twins' ``State.to_svg`` / ``save_svg`` (pgx's own visualiser knows
only pgx's games): the env's ``ansi`` board as monospace text in an SVG."""

from __future__ import annotations

from xml.sax.saxutils import escape


def text_svg(text: str, scale: float = 1.0) -> str:
    """``text`` (lines) drawn in a monospace font on a light background."""
    lines = text.rstrip("\n").split("\n")
    size = 14.0 * scale
    width = int(size * 0.62 * max(len(line) for line in lines) + 2 * size)
    height = int(size * 1.25 * len(lines) + 2 * size)
    rows = "".join(
        f'<text x="{size:.1f}" y="{size * (1.5 + 1.25 * i):.1f}" xml:space="preserve">{escape(line)}</text>'
        for i, line in enumerate(lines))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="monospace" font-size="{size:.1f}">'
            f'<rect width="100%" height="100%" fill="#f4f6f8"/>{rows}</svg>')
