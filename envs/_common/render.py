"""Render helpers: lazy pygame import, an offscreen canvas and a human window."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def require_pygame() -> Any:
    """Import pygame or raise an error that says how to install it."""
    try:
        import os

        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame
    except ImportError as error:  # pragma: no cover - depends on the install
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled('rendering needs pygame: pip install "polarzoo[render]" (or pip install pygame)') from error
    return pygame


def surface_to_array(surface: Any) -> NDArray[np.uint8]:
    """A pygame surface as a uint8 (H, W, 3) array."""
    pygame = require_pygame()
    return np.ascontiguousarray(np.transpose(pygame.surfarray.pixels3d(surface), (1, 0, 2))).astype(np.uint8)


def svg_colour(colour: tuple[int, int, int]) -> str:
    """``"#rrggbb"``: an RGB triple (the pygame drawings' colours) as SVG writes it."""
    return "#" + "".join(f"{channel:02x}" for channel in colour)


def no_display_reason() -> str | None:
    """Why a window cannot open here (one line), or ``None``: on Linux without ``DISPLAY`` or
    ``WAYLAND_DISPLAY`` SDL has nowhere to draw (it would wait for events that never come).  An
    explicit ``SDL_VIDEODRIVER`` (``dummy`` in tests, ``kmsdrm``, ...) is taken as meant."""
    import os
    import sys

    if os.environ.get("SDL_VIDEODRIVER"):
        return None
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no DISPLAY or WAYLAND_DISPLAY is set (a machine without a desktop, or an SSH session without X forwarding)"
    return None


class HumanWindow:
    """A pygame window that shows rgb frames."""

    def __init__(self, title: str, width: int, height: int) -> None:
        pygame = require_pygame()
        pygame.init()
        pygame.display.set_caption(title)
        self._pygame = pygame
        self._screen = pygame.display.set_mode((width, height))
        self._clock = pygame.time.Clock()

    def show(self, frame: NDArray[np.uint8], fps: float) -> None:
        pygame = self._pygame
        pygame.event.pump()
        surface = pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2)))
        self._screen.blit(surface, (0, 0))
        pygame.display.flip()
        self._clock.tick(fps)

    def close(self) -> None:
        self._pygame.display.quit()
