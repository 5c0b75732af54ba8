"""Fire & Ice renderers (shared by the two-player env and the solitaire env).

``ansi``: the seven islands in their triangle layout, ``F`` / ``I`` / ``.`` per hole, and the
controller of each island next to its letter.  ``rgb_array``: triangular islands on water,
holes, red (Fire) and aqua (Ice) pegs, controlled islands outlined in the controller's colour,
and a status line.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.render import svg_colour
from polarzoo.envs.fire_and_ice import rules

SYMBOLS = {rules.EMPTY: ".", rules.FIRE + 1: "F", rules.ICE + 1: "I"}

# Where each island block starts (row, column) in the ansi layout; the same Fano pattern as holes.
_ANSI_ISLAND_ORIGIN = {0: (0, 12), 1: (5, 6), 2: (5, 18), 3: (10, 12), 4: (15, 0), 5: (15, 12), 6: (15, 24)}
# (row, column) of each position inside a 5-wide island block (row 0 is the label).
_ANSI_POSITION = {0: (1, 2), 1: (2, 1), 2: (2, 3), 3: (3, 2), 4: (4, 0), 5: (4, 2), 6: (4, 4)}


def render_ansi(board: NDArray[np.int8], header: str, show_control: bool = True) -> str:
    """The board as text, 29 columns wide, with ``header`` above it."""
    control = rules.island_control(board) if show_control else np.full(rules.NUM_ISLANDS, -1)
    grid = [[" "] * 31 for _ in range(20)]
    for island in range(rules.NUM_ISLANDS):
        top, left = _ANSI_ISLAND_ORIGIN[island]
        label = rules.ISLAND_LETTERS[island]
        if control[island] >= 0:
            label += ":" + "FI"[control[island]]
        for offset, char in enumerate(label):
            grid[top][left + 1 + offset] = char
        for position in range(rules.NUM_POSITIONS):
            row, column = _ANSI_POSITION[position]
            grid[top + row][left + column] = SYMBOLS[int(board[island * rules.NUM_POSITIONS + position])]
    lines = ["".join(row).rstrip() for row in grid]
    legend = "F = Fire peg, I = Ice peg, . = empty hole" + (", X:F / X:I = island controlled" if show_control else "")
    # how holes are named in moves (D4-A4): the island's letter and the position in this pattern
    key = "holes: island letter + position 1 / 2 3 / 4 (centre) / 5 6 7 (bottom), e.g. D4"
    return "\n".join([header, *lines, legend, key]) + "\n"


# ------------------------------------------------------------------------------ rgb drawing
WIDTH, HEIGHT = 520, 560
_WATER = (28, 64, 110)
_ISLAND = (214, 184, 128)
_HOLE = (70, 48, 26)
COLOURS = {rules.FIRE: (220, 45, 40), rules.ICE: (40, 205, 215)}

# The Fano pattern in the plane (y down): position 1 on top, 2/3 edge midpoints, 4 centre,
# 5/7 bottom corners, 6 bottom midpoint; circumradius 1 around the centroid.
_S3 = math.sqrt(3.0)
_PATTERN = np.array([[0, -1], [-_S3 / 4, -0.25], [_S3 / 4, -0.25], [0, 0], [-_S3 / 2, 0.5], [0, 0.5], [_S3 / 2, 0.5]])
_CENTRE = np.array([WIDTH / 2, 300.0])
_BIG_RADIUS = 220.0
_ISLAND_RADIUS = 0.3 * _BIG_RADIUS  # islands must not overlap: below a third of the big radius
_HOLE_SPREAD = 0.6 * _ISLAND_RADIUS
ISLAND_CENTRES = _CENTRE + _BIG_RADIUS * _PATTERN
HOLE_CENTRES = (ISLAND_CENTRES[:, None, :] + _HOLE_SPREAD * _PATTERN[None, :, :]).reshape(-1, 2)


# Where a hole's number goes (pixels from its centre): outward from the island's centre, so it
# never sits on the neighbouring hole.
_LABEL_OFFSET = {0: (8, -7), 1: (-15, -8), 2: (9, -8), 3: (8, 0), 4: (-15, 0), 5: (-3, 8), 6: (9, 0)}


def hole_at(x: float, y: float, radius: float = 14.0) -> int:
    """The hole under pixel ``(x, y)`` of :func:`render_rgb`'s picture (within ``radius``), or -1."""
    distances = np.hypot(HOLE_CENTRES[:, 0] - x, HOLE_CENTRES[:, 1] - y)
    hole = int(np.argmin(distances))
    return hole if distances[hole] <= radius else -1


def render_rgb(
    board: NDArray[np.int8], status: str, highlight_hole: int = -1, show_control: bool = True, hole_labels: bool = False
) -> NDArray[np.uint8]:
    """An image of the board, uint8 (560, 520, 3): a colour key at the top left, each island's
    letter beside its top corner (clear of the neighbouring islands), ``hole_labels`` the
    position number (1-7) of every hole (a hole is named island letter + position: ``D4``)."""
    from polarzoo.envs._common.render import require_pygame, surface_to_array

    pygame = require_pygame()
    if not pygame.font.get_init():
        pygame.font.init()
    surface = pygame.Surface((WIDTH, HEIGHT))
    surface.fill(_WATER)
    control = rules.island_control(board) if show_control else np.full(rules.NUM_ISLANDS, -1)
    for island, centre in enumerate(ISLAND_CENTRES):
        corners = [tuple(centre + _ISLAND_RADIUS * _PATTERN[p]) for p in (0, 4, 6)]
        pygame.draw.polygon(surface, _ISLAND, corners)
        if control[island] >= 0:
            pygame.draw.polygon(surface, COLOURS[int(control[island])], corners, width=6)
    for hole, (x, y) in enumerate(HOLE_CENTRES):
        centre = (int(round(x)), int(round(y)))
        value = int(board[hole])
        if value == rules.EMPTY:
            pygame.draw.circle(surface, _HOLE, centre, 5)
        else:
            pygame.draw.circle(surface, COLOURS[value - 1], centre, 9)
            pygame.draw.circle(surface, (20, 20, 20), centre, 9, width=1)
        if hole == highlight_hole:
            pygame.draw.circle(surface, (255, 255, 255), centre, 12, width=2)
    font = pygame.font.Font(None, 26)
    for letter, centre in zip(rules.ISLAND_LETTERS, ISLAND_CENTRES):
        # right of the island's top corner: the one place no neighbouring island reaches
        apex = centre + _ISLAND_RADIUS * _PATTERN[0]
        surface.blit(font.render(letter, True, (240, 240, 240)), (apex[0] + 9, apex[1] - 2))
    if hole_labels:
        small = pygame.font.Font(None, 17)
        for hole, (x, y) in enumerate(HOLE_CENTRES):
            position = hole % rules.NUM_POSITIONS
            text = small.render(str(position + 1), True, (25, 25, 25))
            dx, dy = _LABEL_OFFSET[position]
            surface.blit(text, (x + dx, y + dy))
    key = pygame.font.Font(None, 20)
    left = 10
    for colour, name in ((COLOURS[rules.FIRE], "Fire"), (COLOURS[rules.ICE], "Ice")):
        pygame.draw.circle(surface, colour, (left + 6, 16), 6)
        text = key.render(name, True, (240, 240, 240))
        surface.blit(text, (left + 16, 10))
        left += 26 + text.get_width()
    if show_control:
        surface.blit(key.render("outline: island controlled", True, (240, 240, 240)), (10, 30))
    surface.blit(font.render(status, True, (240, 240, 240)), (12, HEIGHT - 34))
    return surface_to_array(surface)


# ------------------------------------------------------------------------------ svg drawing
def hole_name(hole: int) -> str:
    """``"D4"``: the island's letter and the position (1-7) of ``hole``, as moves are written."""
    island, position = divmod(hole, rules.NUM_POSITIONS)
    return f"{rules.ISLAND_LETTERS[island]}{position + 1}"


def render_svg(board: NDArray[np.int8], last_action: int = -1, show_control: bool = True) -> str:
    """The board as an SVG picture (the same layout as :func:`render_rgb`, in a 520 x 520 view).

    Made for the browser (:mod:`polarzoo.baselines.play.web`): every hole is a ``<g
    class="cell" data-cell="H" data-name="D4">`` holding the hole, its peg if any (``class="peg
    fire"`` / ``"peg ice"``) and a ring that a page's CSS can light up (``class="ring"``); the
    last move's two holes carry ``class="cell last-from"`` / ``"cell last-to"``."""
    control = rules.island_control(board) if show_control else np.full(rules.NUM_ISLANDS, -1)
    last_from = last_to = -1
    if 0 <= last_action < rules.PASS:
        last_from, last_to = divmod(int(last_action), rules.NUM_HOLES)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} 520" class="board fire-and-ice">',
        f'<rect width="{WIDTH}" height="520" fill="{svg_colour(_WATER)}"/>',
    ]
    for island, centre in enumerate(ISLAND_CENTRES):
        corners = " ".join(f"{x:.1f},{y:.1f}" for x, y in (centre + _ISLAND_RADIUS * _PATTERN[p] for p in (0, 4, 6)))
        owner = int(control[island])
        stroke = f' stroke="{svg_colour(COLOURS[owner])}" stroke-width="6" stroke-linejoin="round"' if owner >= 0 else ""
        name = rules.COLOUR_NAMES[owner] if owner >= 0 else "none"
        parts.append(
            f'<polygon class="island" data-island="{rules.ISLAND_LETTERS[island]}" data-control="{name}" '
            f'points="{corners}" fill="{svg_colour(_ISLAND)}"{stroke}/>'
        )
        apex = centre + _ISLAND_RADIUS * _PATTERN[0]
        parts.append(
            f'<text x="{apex[0] + 10:.1f}" y="{apex[1] + 14:.1f}" fill="#f0f0f0" font-size="20" '
            f'font-family="sans-serif">{rules.ISLAND_LETTERS[island]}</text>'
        )
    for hole, (x, y) in enumerate(HOLE_CENTRES):
        value = int(board[hole])
        extra = " last-from" if hole == last_from else (" last-to" if hole == last_to else "")
        piece = "" if value == rules.EMPTY else rules.COLOUR_NAMES[value - 1]
        inner = (
            f'<circle r="5" fill="{svg_colour(_HOLE)}"/>'
            if not piece
            else f'<circle class="peg {piece}" r="9" fill="{svg_colour(COLOURS[value - 1])}" stroke="#141414" stroke-width="1"/>'
        )
        parts.append(
            f'<g class="cell{extra}" data-cell="{hole}" data-name="{hole_name(hole)}" data-piece="{piece}" '
            f'transform="translate({x:.1f},{y:.1f})"><circle class="hit" r="14" fill="transparent"/>{inner}'
            f'<circle class="ring" r="13" fill="none" stroke-width="3"/><title>{hole_name(hole)}</title></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
