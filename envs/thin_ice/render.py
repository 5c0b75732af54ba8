"""Thin Ice renderers: a text table per pile, and MuJoCo offscreen images of all piles."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.thin_ice import rules
from polarzoo.envs.thin_ice.physics import NUM_PIECES, PIECE_SIZE, build_mjcf
from polarzoo.envs.thin_ice.rules import SIZE_LETTERS

SIZE_COLOURS = {0: (0.95, 0.85, 0.2, 1.0), 1: (0.95, 0.5, 0.1, 1.0), 2: (0.8, 0.15, 0.15, 1.0)}  # S yellow, M orange, L red


def _orientation_word(axis: NDArray[np.float64]) -> str:
    if axis[2] > 0.9:
        return "upright"
    if axis[2] < -0.9:
        return "inverted"
    return "lying" if abs(axis[2]) < 0.5 else "tilted"


def render_ansi(state: rules.ThinIceState, piles: Any) -> str:
    """The game ``state`` and each player's pile in ``piles`` (the physics backend,
    :class:`~polarzoo.envs.thin_ice.physics.MuJoCoPiles`) as text."""
    s = state
    num_players = len(piles.piles)
    lines = []
    phase = rules.PHASE_NAMES[s.phase]
    call = rules.CALLS[s.current_call] if s.current_call >= 0 else "-"
    head = f"Thin Ice, {num_players} players: phase {phase}, call {call}, supply S/M/L {s.supply.tolist()}"
    if s.phase == rules.ADD:
        pending = "".join(SIZE_LETTERS[x] for x in s.pending) or "-"
        head += f"; player_{s.adder} adds (pending {pending}, in hand {'slot ' + str(s.in_hand) if s.in_hand >= 0 else '-'})"
    elif s.phase == rules.CALL:
        head += f"; player_{s.caller} calls"
    lines.append(head)
    for player in range(num_players):
        pile = piles.piles[player]
        contacts = pile.contacts()
        status = f"OUT ({s.out_rule[player]})" if s.out_round[player] >= 0 else "in"
        if s.phase == rules.OVER:
            status += f", {s.points[player]:g} points"
        lines.append(f"player_{player} [{status}]")
        lines.append("  slot size  x mm   y mm   z mm  orientation table")
        positions, axes = pile.positions(), pile.axes()
        for slot, piece in enumerate(piles.slot_piece[player]):
            if not s.slot_in_pile[player][slot]:
                lines.append(f"  {slot:>4} {SIZE_LETTERS[PIECE_SIZE[piece]]:>4}  (in hand)")
                continue
            x, y, z = positions[piece] * 1000
            lines.append(
                f"  {slot:>4} {SIZE_LETTERS[PIECE_SIZE[piece]]:>4} {x:6.1f} {y:6.1f} {z:6.1f}  {_orientation_word(axes[piece]):<11} "
                f"{'yes' if contacts.on_table[piece] else 'no'}"
            )
    return "\n".join(lines) + "\n"


_HIDDEN_GROUP = 5  # MuJoCo's last geom group


def display_mjcf(config: Any, grid: int, pitch: float) -> str:
    """The picture's scene: the physics' 15-piece scene (:func:`build_mjcf`) on a darker floor, with
    a table top under the lattice and a dot at every lattice point (``grid x grid``, ``pitch``
    metres apart, centred on the pile).  Nothing of it is simulated."""
    xml = build_mjcf(config)
    half = (grid - 1) / 2 * pitch + 0.03  # the lattice and 3 cm around it
    dots = "".join(
        f'<geom type="cylinder" size="0.0007 0.00005" pos="{(col - (grid - 1) / 2) * pitch:.5f} '
        f'{(row - (grid - 1) / 2) * pitch:.5f} 0.00005" rgba="0.25 0.22 0.2 1" contype="0" conaffinity="0"/>'
        for row in range(grid)
        for col in range(grid)
    )
    table = (
        f'<geom name="table_top" type="box" size="{half:.5f} {half:.5f} 0.001" pos="0 0 -0.001" '
        f'rgba="0.80 0.72 0.58 1" contype="0" conaffinity="0"/>{dots}'
    )
    plane = '<geom name="table" type="plane" size="2 2 0.1"'
    if xml.count(plane) != 1 or 'rgba="0.55 0.6 0.65 1"/>' not in xml:  # pragma: no cover - build_mjcf changed
        raise AssertionError("display_mjcf no longer finds the table plane of build_mjcf's scene")
    xml = xml.replace(plane, table + plane + ' pos="0 0 -0.003"')  # the floor just under the table top
    return xml.replace('rgba="0.55 0.6 0.65 1"/>', 'rgba="0.42 0.47 0.53 1"/>', 1)


# A 5x7 pixel font for the panel labels (no font library needed): one string of 7 rows per glyph.
_GLYPHS = {
    "A": "01110100011000111111100011000110001",
    "E": "11111100001000011110100001000011111",
    "L": "10000100001000010000100001000011111",
    "N": "10001110011010110011100011000110001",
    "O": "01110100011000110001100011000101110",
    "P": "11110100011000111110100001000010000",
    "R": "11110100011000111110101001001010001",
    "T": "11111001000010000100001000010000100",
    "U": "10001100011000110001100011000101110",
    "Y": "10001100010101000100001000010000100",
    "_": "00000000000000000000000000000011111",
    "(": "00010001000100001000010000010000010",
    ")": "01000001000001000010000100010001000",
    " ": "00000000000000000000000000000000000",
    "0": "01110100011001110101110011000101110",
    "1": "00100011000010000100001000010001110",
    "2": "01110100010000100010001000100011111",
    "3": "11110000010000101110000010000111110",
    "4": "00010001100101010010111110001000010",
    "5": "11111100001111000001000011000101110",
}


def draw_text(frame: NDArray[np.uint8], text: str, left: int, bottom: int, scale: int = 2) -> None:
    """White ``text`` (capitals, digits, ``_ ( )``) on a dark box into ``frame``, in place."""
    width = len(text) * 6 * scale
    top = bottom - 7 * scale
    frame[max(top - 3, 0) : bottom + 3, max(left - 3, 0) : left + width + 1] //= 3
    for index, char in enumerate(text.upper()):
        bits = _GLYPHS.get(char, _GLYPHS[" "])
        for row in range(7):
            for col in range(5):
                if bits[row * 5 + col] == "1":
                    y, x = top + row * scale, left + (index * 6 + col) * scale
                    frame[y : y + scale, x : x + scale] = 255


class PileRenderer:
    """Offscreen MuJoCo rendering, one view per pile, side by side."""

    def __init__(self, width: int = 320, height: int = 320) -> None:
        import mujoco

        self.width, self.height = width, height
        # per player: a display scene of all 15 pieces (the parked layout), its data, a renderer
        self._displays: dict[int, tuple[Any, Any, Any]] = {}
        self._options = mujoco.MjvOption()
        self._options.geomgroup[_HIDDEN_GROUP] = 0

    def _display_for(self, player: int, pile: Any, grid: int, pitch: float) -> tuple[Any, Any, Any]:
        import mujoco

        if player not in self._displays:
            # The pile may simulate only its pieces in play (``idle_pieces="removed"``); the
            # picture is drawn from a scene of all 15 with the pile's poses copied in, plus what
            # only a picture needs: a table top on a darker floor and the placement lattice.
            model = mujoco.MjModel.from_xml_string(display_mjcf(pile.config, grid, pitch))
            for piece in range(NUM_PIECES):
                model.geom_rgba[model.body_geomadr[piece + 1] : model.body_geomadr[piece + 1] + model.body_geomnum[piece + 1]] = (
                    SIZE_COLOURS[int(PIECE_SIZE[piece])]
                )
            try:
                renderer = mujoco.Renderer(model, self.height, self.width)
            except Exception as error:  # noqa: BLE001 - any GL failure gets the same advice
                raise RuntimeError(
                    "MuJoCo could not open an OpenGL context for rendering. On a headless machine install Mesa "
                    "(Debian/Ubuntu: apt-get install libegl1 libgl1 libglx-mesa0 libegl-mesa0 libosmesa6) and set "
                    f"MUJOCO_GL=egl or MUJOCO_GL=osmesa before importing mujoco. Original error: {error}"
                ) from error
            self._displays[player] = (model, mujoco.MjData(model), renderer)
        return self._displays[player]

    def render(self, state: rules.ThinIceState, piles: Any) -> NDArray[np.uint8]:
        """One panel per player's pile in ``piles``, side by side; ``state`` marks who is out
        (darkened, red frame) and whose turn it is (green bar)."""
        import mujoco

        frames = []
        s = state
        for player, pile in enumerate(piles.piles):
            model, data, renderer = self._display_for(player, pile, piles.grid, piles.pitch)
            data.qpos[:] = pile.poses().ravel()
            mujoco.mj_kinematics(model, data)
            # Parked pieces go to a geom group the scene leaves out (a zero alpha alone still
            # drew their edges along the top of the picture); groups only affect drawing.
            for piece in range(NUM_PIECES):
                body = piece + 1
                model.geom_group[model.body_geomadr[body] : model.body_geomadr[body] + model.body_geomnum[body]] = (
                    0 if pile.in_play[piece] else _HIDDEN_GROUP
                )
            camera = mujoco.MjvCamera()
            in_play = pile.in_play
            centre = pile.positions()[in_play].mean(axis=0) if in_play.any() else np.zeros(3)
            camera.lookat[:] = (centre[0], centre[1], 0.02)
            camera.distance = 0.2
            camera.azimuth = 135.0
            camera.elevation = -30.0
            renderer.update_scene(data, camera, scene_option=self._options)
            # The shadow map drew dark slivers on the far table along the top of each panel.
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
            frame = renderer.render().copy()
            out = s.out_round[player] >= 0
            if out:  # eliminated: darken and frame in red
                frame = (frame * 0.5).astype(np.uint8)
                frame[:6, :] = frame[-6:, :] = (200, 30, 30)
                frame[:, :6] = frame[:, -6:] = (200, 30, 30)
            if s.phase != rules.OVER and s.current_player == player:  # whose turn: a green bar
                frame[-10:, :] = (40, 180, 60)
            label = f"PLAYER_{player}" + (f" OUT ({s.out_rule[player]})" if out else "")
            draw_text(frame, label, left=12, bottom=frame.shape[0] - 16)
            frames.append(frame)
        return np.concatenate(frames, axis=1)

    def close(self) -> None:
        for _, _, renderer in self._displays.values():
            renderer.close()
        self._displays.clear()


_drawing = threading.local()


def thread_renderer(grid: int, pitch: float, config: Any) -> PileRenderer:
    """The calling thread's :class:`PileRenderer` for piles of this configuration (made once per
    thread and configuration, kept with the thread: an OpenGL context is bound to its thread, so
    a renderer an env kept would be freed by whichever thread drops the env)."""
    renderers = getattr(_drawing, "renderers", None)
    if renderers is None:
        renderers = _drawing.renderers = {}
    key = (grid, pitch, repr(config))
    if key not in renderers:
        renderers[key] = PileRenderer()
    return renderers[key]
