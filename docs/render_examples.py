"""Render the README's pictures: a mid-game position of each environment, the window and the web app.

MUJOCO_GL=egl python docs/render_examples.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OUT = Path(__file__).parent


def save(frame: np.ndarray, name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.imsave(OUT / name, frame)
    print("wrote", OUT / name)


def main() -> None:
    from polarzoo.baselines.agents import FireAndIceHeuristic, FloeHeuristic, ThinIceHeuristic
    from polarzoo.envs import fire_and_ice_v0, go_with_the_floe_v0, thin_ice_v0

    for module, agent, plies, name, kwargs in (
        (fire_and_ice_v0, FireAndIceHeuristic(), 20, "fire_and_ice.png", {}),
        (go_with_the_floe_v0, FloeHeuristic(), 12, "go_with_the_floe.png", {}),
        (thin_ice_v0, ThinIceHeuristic(candidates=8), 19, "thin_ice.png", {"num_players": 3}),
    ):
        seed = 0 if module is thin_ice_v0 else 4
        rng = np.random.default_rng(seed)
        env = module.raw_env(render_mode="rgb_array", **kwargs)
        env.reset(seed=seed)
        for _ in range(plies):
            if all(env.terminations.values()):
                break
            mask = env.legal_action_mask()
            if module is thin_ice_v0 and mask[:9].any():  # varied calls make a more telling picture
                env.step(int(rng.choice(np.flatnonzero(mask[:9]))))
            else:
                env.step(agent.act(env, env.agent_selection, rng))
        save(env.render(), name)
        env.close()
    solitaire_picture()
    window_play_picture()
    web_play_picture()


def solitaire_picture() -> None:
    """A solitaire deal after 10 captures of its exact solution."""
    import gymnasium as gym

    import polarzoo  # noqa: F401 - registers the env
    from polarzoo.envs.fire_and_ice.solitaire_solver import solve

    env = gym.make("polarzoo/FireAndIceSolitaire-v0", render_mode="rgb_array")
    env.reset(seed=7)
    for action in solve(env.unwrapped.state).solution[:10]:
        env.step(action)
    save(env.render(), "fire_and_ice_solitaire.png")
    env.close()


def window_play_picture() -> None:
    """The play window (--window) mid-game: a selected peg with its legal destinations."""
    import os

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from polarzoo.baselines.play.window import WindowGame

    frames: list[np.ndarray] = []
    game = WindowGame("fire_and_ice_v0", "fire", "heuristic", seed=4, events=[], on_frame=frames.append)

    def clicks():  # noqa: ANN202
        for turn in range(6):
            moves = sorted(game.board.moves(game.env.observe("fire")["action_mask"]))
            source, target = moves[(7 * turn) % len(moves)]
            yield pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=tuple(game.board.centres[source]), button=1)
            if turn == 5:
                save(frames[-1], "window_play.png")
                return
            yield pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=tuple(game.board.centres[target]), button=1)

    game.scripted = clicks()
    game.run()


if __name__ == "__main__":
    main()


def web_play_picture() -> None:
    """``web_play.png``: the web app (polarzoo-web) in headless Chromium, Fire & Ice against the
    shipped agent after four of its own hinted moves, the hint shown and a peg selected."""
    import shutil
    import socket
    import threading
    import time

    import uvicorn
    from playwright.sync_api import sync_playwright

    from polarzoo.baselines.play.web import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(defaults={"env": "fire_and_ice_v0", "opponent": "pretrained"})
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1040, "height": 700})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("g.cell.movable")
        page.wait_for_selector('body[data-busy="0"]', state="attached")
        for move in range(4):
            page.click("#hint-button")
            page.wait_for_selector("#hint:not([hidden]) li")
            best = page.evaluate("window.polarzoo.game.legal.find(m => m.action === window.polarzoo.hint.moves[0].action)")
            page.click(f'g.cell[data-cell="{best["from"]}"]')
            page.click(f'g.cell[data-cell="{best["to"]}"]')
            page.wait_for_function(f"window.polarzoo.game.moves.length >= {2 * (move + 1)}")
            page.wait_for_selector('body[data-busy="0"]', state="attached")
        page.click("#hint-button")
        page.wait_for_selector("#hint:not([hidden]) li")
        page.locator("g.cell.movable").first.click()
        page.screenshot(path=str(OUT / "web_play.png"))
        print("wrote", OUT / "web_play.png")
        browser.close()
    server.should_exit = True
