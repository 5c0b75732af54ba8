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
_PATTERN = np.array(
    [[0, -1], [-_S3 / 4, -0.25], [_S3 / 4, -0.25], [0, 0], [-_S3 / 2, 0.5], [0, 0.5], [_S3 / 2, 0.5]]
)
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
