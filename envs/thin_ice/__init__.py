"""Thin Ice: MuJoCo physics (``physics``), game layer (``rules``), AEC env (``env``), renderers."""

import os

# MuJoCo picks its OpenGL backend when it is first imported; without a display, use EGL.
if not os.environ.get("DISPLAY") and "MUJOCO_GL" not in os.environ:
    os.environ["MUJOCO_GL"] = "egl"
