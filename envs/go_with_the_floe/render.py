"""Go with the Floe renderers: ``ansi`` text like the spec's diagram, and an ``rgb_array`` image.

Text symbols: ``s`` seal, ``b`` bear, ``o`` ring (a hole in the ice), ``.`` empty ice,
``X`` off the board.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.render import svg_colour
from polarzoo.envs.go_with_the_floe import rules


def render_ansi(state: rules.State, header: str) -> str:
    lines = [header]
    for row in range(rules.SIZE - 1, -1, -1):
        cells = []
        for col in range(rules.SIZE):
            sq = row * rules.SIZE + col
            if not rules.ON_BOARD[sq]:
                cells.append("X")
            elif state.board[sq] == rules.SEAL:
                cells.append("s")
            elif state.board[sq] == rules.BEAR:
                cells.append("b")
            elif state.rings[sq]:
                cells.append("o")
            else:
                cells.append(".")
        lines.append(f"{row + 1}  " + " ".join(cells))
    lines.append("   " + " ".join(rules.COLUMNS))
    lines.append("s = seal (black), b = bear (white), o = ring, . = ice, X = off the board")
    return "\n".join(lines) + "\n"


CELL = 60
MARGIN = 30
WIDTH = HEIGHT_BOARD = 2 * MARGIN + rules.SIZE * CELL
HEIGHT = HEIGHT_BOARD + 40
_WATER = (24, 60, 105)
_ICE = (225, 238, 246)
_ICE_EDGE = (160, 190, 210)
_RING = (40, 80, 130)


def square_centre(sq: int) -> tuple[int, int]:
    """Pixel centre of square ``sq`` in :func:`render_rgb`'s picture (rank 1 at the bottom)."""
    row, col = divmod(sq, rules.SIZE)
    return MARGIN + col * CELL + CELL // 2, MARGIN + (rules.SIZE - 1 - row) * CELL + CELL // 2


def square_at(x: float, y: float) -> int:
    """The square under pixel ``(x, y)`` of :func:`render_rgb`'s picture, or -1."""
    col, row_from_top = int((x - MARGIN) // CELL), int((y - MARGIN) // CELL)
    if not (0 <= col < rules.SIZE and 0 <= row_from_top < rules.SIZE):
        return -1
    return (rules.SIZE - 1 - row_from_top) * rules.SIZE + col


def render_rgb(state: rules.State, status: str) -> NDArray[np.uint8]:
    """uint8 (HEIGHT, WIDTH, 3) image: ice squares, holes as rings, seals dark, bears white."""
    from polarzoo.envs._common.render import require_pygame, surface_to_array

    pygame = require_pygame()
    if not pygame.font.get_init():
        pygame.font.init()
    surface = pygame.Surface((WIDTH, HEIGHT))
    surface.fill(_WATER)
    font = pygame.font.Font(None, 24)
    last_from = -1
    if 0 <= state.last_action < rules.PASS:
        last_from = rules.decode_action(state.last_action)[0]
    for sq in range(rules.NUM_SQUARES):
        col, row = sq % rules.SIZE, sq // rules.SIZE
        x, y = MARGIN + col * CELL, MARGIN + (rules.SIZE - 1 - row) * CELL
        centre = (x + CELL // 2, y + CELL // 2)
        if not rules.ON_BOARD[sq]:
            continue
        pygame.draw.rect(surface, _ICE, (x, y, CELL, CELL))
        pygame.draw.rect(surface, _ICE_EDGE, (x, y, CELL, CELL), width=1)
        if state.rings[sq]:
            pygame.draw.circle(surface, _WATER, centre, CELL // 3)
            pygame.draw.circle(surface, _RING, centre, CELL // 3, width=4)
        if sq == last_from:
            pygame.draw.rect(surface, (240, 180, 40), (x + 2, y + 2, CELL - 4, CELL - 4), width=3)
        if state.board[sq] == rules.SEAL:
            pygame.draw.ellipse(surface, (45, 45, 55), (x + 10, y + 18, CELL - 20, CELL - 30))
            pygame.draw.circle(surface, (45, 45, 55), (x + CELL - 14, y + 22), 8)
        elif state.board[sq] == rules.BEAR:
            pygame.draw.circle(surface, (250, 250, 250), centre, CELL // 3)
            pygame.draw.circle(surface, (90, 90, 90), centre, CELL // 3, width=2)
            for dx in (-11, 11):
                pygame.draw.circle(surface, (250, 250, 250), (centre[0] + dx, centre[1] - 15), 6)
                pygame.draw.circle(surface, (90, 90, 90), (centre[0] + dx, centre[1] - 15), 6, width=2)
            pygame.draw.circle(surface, (20, 20, 20), centre[:1] + (centre[1] + 4,), 4)
    for i in range(rules.SIZE):
        surface.blit(
            font.render(rules.COLUMNS[i], True, (230, 230, 230)), (MARGIN + i * CELL + CELL // 2 - 5, HEIGHT_BOARD - MARGIN + 6)
        )
        surface.blit(font.render(str(i + 1), True, (230, 230, 230)), (8, MARGIN + (rules.SIZE - 1 - i) * CELL + CELL // 2 - 8))
    surface.blit(font.render(status, True, (240, 240, 240)), (12, HEIGHT - 32))
    return surface_to_array(surface)


# ------------------------------------------------------------------------------ svg drawing
def square_name(sq: int) -> str:
    """``"B2"``: the column letter and the rank (1 at the bottom) of square ``sq``."""
    row, col = divmod(sq, rules.SIZE)
    return f"{rules.COLUMNS[col]}{row + 1}"


def render_svg(state: rules.State) -> str:
    """The board as an SVG picture (the layout of :func:`render_rgb` without its status line).

    Made for the browser (:mod:`polarzoo.baselines.play.web`): every square on the board is a
    ``<g class="cell" data-cell="SQ" data-name="B2" data-piece="seal|bear|" data-ring="0|1">``
    with a ring a page's CSS can light up (``class="ring"``); the last move's squares carry
    ``last-from`` / ``last-to``."""
    last_from = last_to = -1
    if 0 <= state.last_action < rules.PASS:
        last_from, last_to = rules.decode_action(state.last_action)[0], rules.action_destination(state.last_action)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT_BOARD}" class="board go-with-the-floe">',
        f'<rect width="{WIDTH}" height="{HEIGHT_BOARD}" fill="{svg_colour(_WATER)}"/>',
    ]
    half = CELL // 2
    for sq in range(rules.NUM_SQUARES):
        if not rules.ON_BOARD[sq]:
            continue
        x, y = square_centre(sq)
        piece = {rules.SEAL: "seal", rules.BEAR: "bear"}.get(int(state.board[sq]), "")
        ring = int(bool(state.rings[sq]))
        extra = " last-from" if sq == last_from else (" last-to" if sq == last_to else "")
        inner = [
            f'<rect x="{-half}" y="{-half}" width="{CELL}" height="{CELL}" fill="{svg_colour(_ICE)}" stroke="{svg_colour(_ICE_EDGE)}"/>'
        ]
        if ring:
            inner.append(f'<circle r="{CELL // 3}" fill="{svg_colour(_WATER)}" stroke="{svg_colour(_RING)}" stroke-width="4"/>')
        if piece == "seal":
            inner.append(
                '<g class="piece seal" fill="#2d2d37"><ellipse cx="-4" cy="3" rx="20" ry="15"/><circle cx="16" cy="-8" r="8"/></g>'
            )
        elif piece == "bear":
            inner.append(
                '<g class="piece bear" fill="#fafafa" stroke="#5a5a5a" stroke-width="2"><circle cx="-11" cy="-15" r="6"/>'
                f'<circle cx="11" cy="-15" r="6"/><circle r="{CELL // 3}"/><circle cy="4" r="4" fill="#141414" stroke="none"/></g>'
            )
        inner.append(
            f'<rect class="ring" x="{-half + 3}" y="{-half + 3}" width="{CELL - 6}" height="{CELL - 6}" fill="none" stroke-width="4"/>'
        )
        parts.append(
            f'<g class="cell{extra}" data-cell="{sq}" data-name="{square_name(sq)}" data-piece="{piece}" data-ring="{ring}" '
            f'transform="translate({x},{y})">{"".join(inner)}<title>{square_name(sq)}</title></g>'
        )
    for i in range(rules.SIZE):
        parts.append(
            f'<text x="{MARGIN + i * CELL + half}" y="{HEIGHT_BOARD - 8}" fill="#e6e6e6" font-size="18" '
            f'font-family="sans-serif" text-anchor="middle">{rules.COLUMNS[i]}</text>'
        )
        parts.append(
            f'<text x="14" y="{MARGIN + (rules.SIZE - 1 - i) * CELL + half + 6}" fill="#e6e6e6" font-size="18" '
            f'font-family="sans-serif" text-anchor="middle">{i + 1}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
