"""baselines.window_play: a scripted mouse plays whole games (headless pygame), undo included."""

from __future__ import annotations

import os

import numpy as np
import pytest

pygame = pytest.importorskip("pygame")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from polarzoo.baselines.play.window import WindowGame  # noqa: E402


def _clicks(game: WindowGame, rng: np.random.Generator):  # noqa: ANN202
    """Mouse events for random legal moves, read from the game as it goes; one undo, a few misclicks."""
    undone = False
    moves_made = 0
    while True:
        env = game.env
        moves = game.board.moves(env.observe(game.human)["action_mask"])
        if not moves:
            yield pygame.event.Event(pygame.KEYDOWN, unicode="p", key=pygame.K_p)
            continue
        yield pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(3, 3), button=1)  # water: nothing happens
        source, target = list(moves)[int(rng.integers(len(moves)))]
        yield pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=tuple(game.board.centres[source]), button=1)
        assert game.selected == source
        yield pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=tuple(game.board.centres[target]), button=1)
        moves_made += 1
        if moves_made == 2 and not undone:
            undone = True
            yield pygame.event.Event(pygame.KEYDOWN, unicode="u", key=pygame.K_u)


@pytest.mark.parametrize(
    "env_id,human",
    [("fire_and_ice_v0", "fire"), ("fire_and_ice_v0", "ice"), ("go_with_the_floe_v0", "black"), ("go_with_the_floe_v0", "white")],
)
def test_scripted_mouse_plays_a_whole_game(env_id: str, human: str) -> None:
    frames = []
    game = WindowGame(env_id, human, "random", seed=1, events=[], on_frame=frames.append)
    game.scripted = _clicks(game, np.random.default_rng(2))
    result = game.run()
    assert "wins" in result or result == "draw"
    assert game.env.agents == [] and frames and frames[-1].dtype == np.uint8


def test_hint_quit_and_wrong_game() -> None:
    game = WindowGame(
        "fire_and_ice_v0",
        "fire",
        "heuristic",
        seed=0,
        events=[
            pygame.event.Event(pygame.KEYDOWN, unicode="h", key=pygame.K_h),
            pygame.event.Event(pygame.KEYDOWN, unicode="q", key=pygame.K_q),
        ],
    )
    assert game.run() == "quit"
    assert game.message.startswith("hint: D4-")
    with pytest.raises(ValueError, match="window play is for"):
        WindowGame("thin_ice_v0", "player_0", "random")


def test_n_shows_and_hides_the_hole_numbers() -> None:
    frames: list[np.ndarray] = []
    key = pygame.event.Event(pygame.KEYDOWN, unicode="n", key=pygame.K_n)
    game = WindowGame(
        "fire_and_ice_v0",
        "fire",
        "random",
        seed=0,
        on_frame=frames.append,
        events=[key, key, pygame.event.Event(pygame.KEYDOWN, unicode="q", key=pygame.K_q)],
    )
    assert game.run() == "quit"
    assert game.env.render_hole_labels is False and game.message == "hole numbers hidden"
    # the first frame has none, the second the numbers, the third none again
    assert not np.array_equal(frames[0][60:480], frames[1][60:480])
    assert np.array_equal(frames[0][60:480], frames[2][60:480])
