"""Thin Ice: MuJoCo physics (``physics``), game layer (``rules``), AEC env (``env``), renderers."""

import os

from polarzoo.envs.game_info import GameInfo

# MuJoCo picks its OpenGL backend when it is first imported; without a display, use EGL.
if not os.environ.get("DISPLAY") and "MUJOCO_GL" not in os.environ:
    os.environ["MUJOCO_GL"] = "egl"

GAME = GameInfo(
    id="thin_ice_v0",
    title="Thin Ice",
    module="polarzoo.envs.thin_ice_v0",
    players=(2, 6),
    notation_example="call SM, place M c2 upright, pickup 3, done",
    rules="docs/rules/thin_ice.md",
    pettingzoo_id="polarzoo/thin_ice-v0",
    view="piles",
    benchmark_steps=False,
    kit="polarzoo.baselines.kits.thin_ice:KIT",
)
