"""Thin Ice physics: hollow Looney pyramids in MuJoCo, one pile scene per player.

Every pyramid is a free body made of four convex wall slabs (the convex hull of an outer face
triangle and the parallel inner face triangle, 1.5 mm inside), so pieces are really hollow and
nest.  Each player's pile has its own scenes (``MjModel`` copy and ``MjData``).  By default
(``PhysicsConfig.idle_pieces="removed"``) a scene holds only the pieces in play: one model per
count of S, M and L in the pile (at most 216, compiled once per process), and a piece coming into
or leaving the pile moves the pile to the scene of the new counts, every other piece's pose,
velocity and solver warm start carried over.  The spec's layout (``idle_pieces="parked"``) is one
scene of all 15 pieces (5 S, 5 M, 5 L), the idle ones *parked* under the table with no contacts
(``contype = conaffinity = 0``) and gravity compensation; MuJoCo still integrates their 6 degrees
of freedom each, so it is about 1.2x slower, and the same game (``envs/thin_ice/equivalence.py``).

The rule checks (T: four pieces touching the table; A: three pieces in the pile touching
nothing; N: two pieces nested) run at every physics step while the pile moves, so a player is
out the moment one holds.  ``PilePhysics.snapshot()`` / ``restore()`` capture everything needed
to continue bit-identically (MuJoCo's integration state plus which pieces are in play).

The settle loop and the lowering run in compiled code (``kernels.settle_pile``,
``kernels.lower_piece``): MuJoCo's C ``mj_step`` / ``mj_kinematics`` / ``mj_collision`` called
from numba with the rules read from ``mjData`` in place, no Python call per physics step.  The
layout of ``mjData`` is found once per process on a probe scene and checked
(:func:`_compiled_step`); where it is not found (an unusual MuJoCo build) or
``POLARZOO_THIN_ICE_PYTHON_SETTLE=1``, the same loops run in Python: the same steps, outcome and
state to the bit (tested in lockstep).  MuJoCo's warnings (a bad state, which it answers by
resetting the data) are handled as in Python; one of its fatal *errors* (its stack running out)
inside a compiled loop would end the process instead of raising a Python exception.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.extras import require
from polarzoo.envs.thin_ice import kernels as _kernels
from polarzoo.envs.thin_ice.rules import NUM_ORIENTATIONS, ORIENTATIONS, PIECES_PER_SIZE, SIZE_LETTERS  # noqa: F401 (re-exported)

# ------------------------------------------------------------------------------ piece geometry
BASE = (0.01429, 0.01984, 0.02540)  # metres, Looney Labs' published sizes
HEIGHT = (0.02540, 0.03493, 0.04445)
WALL = 0.0015
DENSITY = 1050.0
NUM_PIECES = 3 * PIECES_PER_SIZE
#: piece index -> size index (0 = S, 1 = M, 2 = L): S0..S4, M0..M4, L0..L4.
PIECE_SIZE = np.repeat(np.arange(3), PIECES_PER_SIZE)


def inner_apex_drop(size: int) -> float:
    """How far below the outer apex the inner apex lies (the walls are WALL thick)."""
    half = BASE[size] / 2
    return WALL * math.hypot(HEIGHT[size], half) / half


INNER_APEX_HEIGHT = tuple(HEIGHT[s] - inner_apex_drop(s) for s in range(3))
_HEIGHTS, _INNER_APEX_HEIGHTS = np.array(HEIGHT), np.array(INNER_APEX_HEIGHT)


def _slab_vertices(size: int, face: int) -> list[tuple[float, float, float]]:
    half, height = BASE[size] / 2, HEIGHT[size]
    inner_height = INNER_APEX_HEIGHT[size]
    inner_half = half * inner_height / height
    corners = [(1, -1), (1, 1), (-1, 1), (-1, -1)]
    (ax, ay), (bx, by) = corners[face], corners[(face + 1) % 4]
    return [
        (ax * half, ay * half, 0.0),
        (bx * half, by * half, 0.0),
        (0.0, 0.0, height),
        (ax * inner_half, ay * inner_half, 0.0),
        (bx * inner_half, by * inner_half, 0.0),
        (0.0, 0.0, inner_height),
    ]


#: :attr:`PhysicsConfig.idle_pieces` choices
IDLE_PIECES = ("removed", "parked")


@dataclass(frozen=True)
class PhysicsConfig:
    """Physics options (the spec's defaults but ``settle_steps``); every field is validated by
    :meth:`validate`.  ``PhysicsConfig(settle_steps=25)`` is the spec's reference setting."""

    table_friction: float = 1.0
    piece_friction: float = 0.5
    timestep: float = 0.002
    tremor_position: float = 0.0005  # metres (standard deviation)
    tremor_tilt_degrees: float = 1.0
    settle_cap_seconds: float = 3.0
    settle_linear: float = 0.002  # m/s
    settle_angular: float = 0.05  # rad/s
    # Steps in a row below both speeds before the pile counts as still.  The spec's feasibility
    # study used 25; 10 gives the same outcome frequencies on the scripted piles of
    # envs/thin_ice/equivalence.py (60 tremor seeds each, tests/test_thin_ice_physics.py) and
    # saves 15 steps of every action that leaves the pile standing.
    settle_steps: int = 10
    # Pieces not in play: "removed" simulates only the pieces in play (one compiled model per
    # count of S, M and L in the pile, the state carried over by piece); "parked" is the spec's
    # single model with all 15 pieces, the unused ones parked without contacts.  The same game
    # by envs/thin_ice/equivalence.py; "removed" skips 6 free bodies' dynamics per parked piece.
    idle_pieces: str = "removed"

    def validate(self) -> None:
        checks = {
            "table_friction": (0.05, 3.0),
            "piece_friction": (0.05, 3.0),
            "timestep": (0.0002, 0.005),
            "tremor_position": (0.0, 0.005),
            "tremor_tilt_degrees": (0.0, 10.0),
            "settle_cap_seconds": (0.1, 30.0),
            "settle_linear": (1e-5, 0.05),
            "settle_angular": (1e-4, 1.0),
            "settle_steps": (1, 1000),
        }
        if self.idle_pieces not in IDLE_PIECES:
            raise ValueError(f"idle_pieces must be one of {', '.join(map(repr, IDLE_PIECES))}; got {self.idle_pieces!r}")
        if isinstance(self.settle_steps, bool) or not isinstance(self.settle_steps, (int, np.integer)):
            raise TypeError(f"settle_steps must be a whole number of physics steps; got {self.settle_steps!r}")
        for name, (low, high) in checks.items():
            value = getattr(self, name)
            if (
                isinstance(value, (bool, np.bool_))
                or not isinstance(value, (int, float, np.integer, np.floating))
                or not low <= value <= high
            ):
                raise ValueError(f"{name} must be a number in [{low}, {high}]; got {value!r}")


def build_mjcf(config: PhysicsConfig, counts: tuple[int, int, int] | None = None) -> str:
    """The MJCF of one pile scene: a table and 15 parked pyramids, or (``counts``) only
    ``counts[s]`` pieces of each size, all in play (``idle_pieces="removed"``)."""
    meshes, bodies = [], []
    for size in range(3):
        for face in range(4):
            vertices = " ".join(f"{v:.7f}" for vertex in _slab_vertices(size, face) for v in vertex)
            meshes.append(f'<mesh name="{SIZE_LETTERS[size]}{face}" vertex="{vertices}"/>')
    for piece in range(NUM_PIECES):
        size = int(PIECE_SIZE[piece])
        if counts is not None and piece - size * PIECES_PER_SIZE >= counts[size]:
            continue
        geoms = "".join(
            f'<geom name="p{piece}_{face}" type="mesh" mesh="{SIZE_LETTERS[size]}{face}" class="piece"/>' for face in range(4)
        )
        x, y, z = _parking_spot(piece)
        parked = ' gravcomp="1"' if counts is None else ""
        bodies.append(f'<body name="piece{piece}" pos="{x} {y} {z}"{parked}><freejoint name="j{piece}"/>{geoms}</body>')
    collides = ' contype="0" conaffinity="0"' if counts is None else ""
    return f"""
<mujoco model="thin_ice_pile">
  <compiler angle="radian"/>
  <option timestep="{config.timestep}" integrator="implicitfast" cone="elliptic" impratio="10" solver="Newton">
    <flag multiccd="enable"/>
  </option>
  <visual><headlight ambient="0.35 0.35 0.35" diffuse="0.6 0.6 0.6"/></visual>
  <default>
    <geom condim="4" solimp="0.95 0.99 0.0005" solref="0.004 1"/>
    <default class="piece">
      <geom density="{DENSITY}" friction="{config.piece_friction} 0.005 0.0001"{collides} rgba="0.8 0.8 0.8 1"/>
    </default>
  </default>
  <asset>{"".join(meshes)}</asset>
  <worldbody>
    <light pos="0 0 1" dir="0 0 -1" directional="true"/>
    <geom name="table" type="plane" size="2 2 0.1" friction="{config.table_friction} 0.005 0.0001" rgba="0.55 0.6 0.65 1"/>
    {"".join(bodies)}
  </worldbody>
</mujoco>"""


def _parking_spot(piece: int) -> tuple[float, float, float]:
    # Under the table: out of every camera's view and casting no shadow on it.
    return (1.0 + 0.1 * (piece % 5), 1.0 + 0.1 * (piece // 5), -1.0)


class PhysicsError(RuntimeError):
    """The simulation went unstable (NaN, or a piece left the world)."""


@dataclass
class Outcome:
    """What a physical action did: the elimination rule that fired (or None), steps simulated."""

    eliminated: str | None = None
    steps: int = 0
    settled: bool = True


@dataclass
class Contacts:
    on_table: NDArray[np.bool_]  # (15,) touching the table
    touching_piece: NDArray[np.bool_]  # (15,) touching another piece of the pile
    nested_pairs: list[tuple[int, int]] = field(default_factory=list)  # (inner, outer)


_MODEL_CACHE: dict[tuple[PhysicsConfig, tuple[int, int, int] | None], Any] = {}
_MODEL_CACHE_LIMIT = 512  # compiled scenes kept per process (216 piece counts per config)
_SCENE_LIMIT = 48  # scenes (model copy + data) kept per pile
_PIECE_BITS = 1 << np.arange(NUM_PIECES, dtype=np.int64)
_SEVEN, _SIX = np.arange(7), np.arange(6)  # a free joint's qpos and dof offsets
#: (15, 3) where a piece out of play is (parked under the table)
PARKING = np.array([_parking_spot(piece) for piece in range(NUM_PIECES)])


def compiled_model(config: PhysicsConfig, counts: tuple[int, int, int] | None = None) -> Any:
    mujoco = require("mujoco", "Thin Ice's physics")

    key = (config, counts)
    model = _MODEL_CACHE.get(key)
    if model is None:
        if len(_MODEL_CACHE) >= _MODEL_CACHE_LIMIT:
            _MODEL_CACHE.pop(next(iter(_MODEL_CACHE)))
        model = _MODEL_CACHE[key] = mujoco.MjModel.from_xml_string(build_mjcf(config, counts))
    return model


class _Scene:
    """One compiled pile scene with its own ``MjData`` and its body slots: slot ``5 * size + k``
    is the body named ``piece{5 * size + k}`` (with ``counts``: the k-th piece of that size in
    play, in piece order; parked scenes: piece ``5 * size + k`` itself)."""

    def __init__(self, mujoco: Any, config: PhysicsConfig, counts: tuple[int, int, int] | None) -> None:
        import copy

        # A copy per pile: the lowering's margin query and nothing else write to it.
        self.model = model = copy.deepcopy(compiled_model(config, counts))
        self.data = mujoco.MjData(model)
        self.counts = counts
        body = np.full(NUM_PIECES, -1, dtype=np.int64)
        for slot in range(NUM_PIECES):
            body[slot] = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"piece{slot}")
        present = body >= 0
        self.slot_body = np.where(present, body, 0)
        self.slot_qpos = np.array([model.jnt_qposadr[model.body_jntadr[b]] if ok else -1 for b, ok in zip(body, present)])
        self.slot_dof = np.array([model.jnt_dofadr[model.body_jntadr[b]] if ok else -1 for b, ok in zip(body, present)])
        self.geom_slot = np.full(model.ngeom, -1, dtype=np.int64)
        for slot in map(int, np.flatnonzero(present)):
            b = int(body[slot])
            self.geom_slot[model.body_geomadr[b] : model.body_geomadr[b] + model.body_geomnum[b]] = slot
        self.views = _DataViews(model, self.data) if _compiled_step() is not None else None
        #: in-play bit mask -> PilePhysics' piece maps in this scene (PilePhysics._use)
        self.piece_maps: dict[int, tuple[Any, ...]] = {}


class _StructLayout(NamedTuple):
    """Where the compiled settle loop finds what it reads of an ``mjData`` (this MuJoCo build)."""

    step: int  # addresses of the C functions mj_step, mj_kinematics, mj_collision
    kinematics: int
    collision: int
    clock: int  # address of the C function clock_gettime
    ncon: int  # int32 index of mjData.ncon
    time: int  # float64 index of mjData.time
    arena: int  # uint64 index of mjData.arena (mj_collision writes the contacts at its start)
    geom: int  # byte offsets of mjContact.geom and mjContact.dist
    dist: int
    contact_size: int  # sizeof(mjContact)
    header_bytes: int  # bytes of the struct the views cover


_PROBE = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 0.5"><freejoint/><geom type="box" size=".01 .01 .01"/></body>
<body pos="0.1 0 0.5"><freejoint/><geom type="box" size=".01 .01 .01"/></body></worldbody></mujoco>"""


@functools.cache  # once per process
def _compiled_step() -> _StructLayout | None:
    """The layout of MuJoCo's ``mjData`` as this process's build has it, found and checked on a
    probe scene of two boxes: ``ncon`` is the one int field that follows the probe's contact
    counts (0, 4, 8), ``time`` the double before ``energy`` (checked by writing it), the arena
    field the first pointer after the header holding the contacts' address.  ``None`` (the
    Python loop is used) where anything does not check out; ``POLARZOO_THIN_ICE_PYTHON_SETTLE=1``
    asks for the Python loop."""
    if os.environ.get("POLARZOO_THIN_ICE_PYTHON_SETTLE", "") not in ("", "0"):
        return None
    try:
        return _find_layout()
    except (OSError, AttributeError, TypeError, ValueError):  # another platform or build: the Python loops
        return None


def _find_layout() -> _StructLayout | None:
    mujoco = require("mujoco", "Thin Ice's physics")
    library = ctypes.CDLL(os.path.join(os.path.dirname(mujoco.__file__), f"libmujoco.so.{mujoco.__version__}"))
    libc = ctypes.CDLL(None)
    model = mujoco.MjModel.from_xml_string(_PROBE)
    data = mujoco.MjData(model)
    base = data._address
    energy = data.energy.ctypes.data - base
    low = data.solver_fwdinv.ctypes.data + data.solver_fwdinv.nbytes - base
    header_bytes = energy + 16 + 8 * 16
    header = np.ctypeslib.as_array((ctypes.c_int32 * (header_bytes // 4)).from_address(base))
    candidates = set(range(low // 4, (energy - 8) // 4))
    counts = set()
    for z1, z2 in ((0.5, 0.5), (0.0099, 0.0099), (0.5, 0.0099)):
        data.qpos[2], data.qpos[9] = z1, z2
        mujoco.mj_forward(model, data)
        counts.add(data.ncon)
        candidates = {i for i in candidates if header[i] == data.ncon}
    if counts != {0, 4, 8} or len(candidates) != 1:
        return None
    contacts = min(data.contact.dist.ctypes.data, data.contact.geom.ctypes.data)  # mjContact's dist is its first field
    pointers = header.view(np.uint64)
    arena = [i for i in range((energy + 16) // 8, header_bytes // 8) if int(pointers[i]) == contacts]
    time_index = (energy - 8) // 8
    data.time = 12.375
    if not arena or header.view(np.float64)[time_index] != data.time:
        return None
    return _StructLayout(
        step=_address(library.mj_step),
        kinematics=_address(library.mj_kinematics),
        collision=_address(library.mj_collision),
        # CLOCK_MONOTONIC is 1 on Linux only: elsewhere mj_step is not timed (time_mj_step)
        clock=_address(libc.clock_gettime) if sys.platform.startswith("linux") else 0,
        ncon=candidates.pop(),
        time=time_index,
        arena=arena[0],
        geom=data.contact.geom.ctypes.data - contacts,
        dist=data.contact.dist.ctypes.data - contacts,
        contact_size=data.contact.geom.strides[0],
        header_bytes=header_bytes,
    )


def _address(function: Any) -> int:
    """The address of a C function of a ``ctypes`` library (``ValueError`` if it has none)."""
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address:
        raise ValueError("a C function without an address")
    return address


class _DataViews:
    """NumPy views of one ``MjData`` for :func:`kernels.settle_pile` (kept beside the data)."""

    def __init__(self, model: Any, data: Any) -> None:
        layout = _compiled_step()
        assert layout is not None
        self.model_address, self.data_address = model._address, data._address
        self.header_int32 = np.ctypeslib.as_array((ctypes.c_int32 * (layout.header_bytes // 4)).from_address(data._address))
        self.header_float64 = self.header_int32.view(np.float64)
        arena = int(self.header_int32.view(np.uint64)[layout.arena])
        rows = (int(model.narena) - max(layout.geom, layout.dist)) // layout.contact_size
        size = rows * layout.contact_size
        geoms = np.ctypeslib.as_array((ctypes.c_int32 * (size // 4)).from_address(arena + layout.geom))
        distances = np.ctypeslib.as_array((ctypes.c_double * (size // 8)).from_address(arena + layout.dist))
        self.contact_geom = np.lib.stride_tricks.as_strided(
            geoms, shape=(rows, 2), strides=(layout.contact_size, 4), writeable=False
        )
        self.contact_dist = np.lib.stride_tricks.as_strided(
            distances, shape=(rows,), strides=(layout.contact_size,), writeable=False
        )


#: [nanoseconds inside mj_step, steps, scratch, scratch] of the compiled settle loops while
#: :func:`time_mj_step` is on (benchmarks read it)
STEP_CLOCK = np.zeros(4, dtype=np.int64)
_TIMING = [False]


def time_mj_step(on: bool = True) -> None:
    """Time every ``mj_step`` of the compiled settle loop into :data:`STEP_CLOCK` (two clock
    reads a step, about 50 ns beside tens of microseconds; Linux only, elsewhere nothing is
    counted)."""
    _TIMING[0] = bool(on)


class PilePhysics:
    """One player's pile scene."""

    WORLD_LIMIT = 2.0  # metres: a piece farther than this has left the world
    NEST_DISTANCE = 0.001
    NEST_ANGLE = math.radians(8.0)

    def __init__(self, config: PhysicsConfig | None = None) -> None:
        mujoco = require("mujoco", "Thin Ice's physics")
        self._mujoco = mujoco
        self.config = config or PhysicsConfig()
        self.config.validate()
        self._removing = self.config.idle_pieces == "removed"
        self._scenes: dict[tuple[int, int, int] | None, _Scene] = {}
        self.in_play = np.zeros(NUM_PIECES, dtype=bool)
        self._nest_cos = math.cos(self.NEST_ANGLE)
        # scratch space of the compiled per-step check (touching pairs, nested pairs)
        self._pair_buffer = np.zeros((NUM_PIECES, NUM_PIECES), dtype=bool)
        self._nested_buffer = np.zeros((NUM_PIECES * NUM_PIECES, 2), dtype=np.int64)
        self._on_table = np.zeros(NUM_PIECES, dtype=bool)
        self._touching = np.zeros(NUM_PIECES, dtype=bool)
        #: settle and lower in compiled loops (kernels.settle_pile, kernels.lower_piece) where this
        #: MuJoCo build allows it; False: the Python loops (the same steps, the same outcome, the
        #: same state to the bit: tests/test_thin_ice_physics.py)
        self.compiled_loops = _compiled_step() is not None
        #: bumped at every change of the pile's state through this class (a settle, restore,
        #: reset): what is derived from the pile (the env's observation features) is cached by it
        self.version = 0
        warning = mujoco.mjtWarning
        self._bad_state_warnings = (int(warning.mjWARN_BADQACC), int(warning.mjWARN_BADQVEL), int(warning.mjWARN_BADQPOS))
        self._use(self._scene((0, 0, 0) if self._removing else None))
        self.table_geom = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, "table")
        mujoco.mj_forward(self.model, self.data)
        self._warnings_seen = self._instability_warnings()

    def reset(self) -> None:
        """Back to the empty pile at time 0, exactly as a new ``PilePhysics`` (compiled scenes kept)."""
        if self._removing:
            self.in_play[:] = False
            self._use(self._scene((0, 0, 0)))
        else:
            for piece in np.flatnonzero(self.in_play):
                self._activate(int(piece), False)
        self._mujoco.mj_resetData(self.model, self.data)
        self._mujoco.mj_forward(self.model, self.data)
        self._warnings_seen = self._instability_warnings()
        self.version += 1

    # ---- bookkeeping ------------------------------------------------------------------------
    def _scene(self, counts: tuple[int, int, int] | None) -> _Scene:
        scene = self._scenes.get(counts)
        if scene is None:
            if len(self._scenes) >= _SCENE_LIMIT:
                self._scenes.pop(next(k for k in self._scenes if k != getattr(self, "_counts", None)))
            scene = self._scenes[counts] = _Scene(self._mujoco, self.config, counts)
        return scene

    def _piece_counts(self) -> tuple[int, int, int]:
        counts = self.in_play.reshape(3, PIECES_PER_SIZE).sum(axis=1)
        return int(counts[0]), int(counts[1]), int(counts[2])

    def _use(self, scene: _Scene) -> None:
        """Make ``scene`` the live one and map the pieces in play to its body slots."""
        self._counts, self._live_scene = scene.counts, scene
        self.model, self.data = scene.model, scene.data
        # The maps depend only on which pieces are in play: computed once per scene and set.
        key = -1 if scene.counts is None else int(self.in_play @ _PIECE_BITS)
        maps = scene.piece_maps.get(key)
        if maps is None:
            maps = scene.piece_maps[key] = self._piece_maps(scene)
        (self.piece_body, self.qpos_adr, self.dof_adr, self.geom_piece, self.piece_geoms, self._present) = maps

    def _piece_maps(self, scene: _Scene) -> tuple[Any, ...]:
        if scene.counts is None:
            slot_of = np.arange(NUM_PIECES)
        else:
            # the k-th piece of a size in play (piece order) takes that size's k-th body
            slot_of = np.full(NUM_PIECES, -1, dtype=np.int64)
            for size in range(3):
                pieces = [p for p in range(size * PIECES_PER_SIZE, (size + 1) * PIECES_PER_SIZE) if self.in_play[p]]
                for k, piece in enumerate(pieces):
                    slot_of[piece] = size * PIECES_PER_SIZE + k
        present = slot_of >= 0
        safe = np.where(present, slot_of, 0)
        piece_of_slot = np.full(NUM_PIECES, -1, dtype=np.int64)
        piece_of_slot[slot_of[present]] = np.flatnonzero(present)
        geom_piece = np.where(scene.geom_slot >= 0, piece_of_slot[np.maximum(scene.geom_slot, 0)], -1)  # -1: the table
        maps = (
            np.where(present, scene.slot_body[safe], 0),
            np.where(present, scene.slot_qpos[safe], -1),
            np.where(present, scene.slot_dof[safe], -1),
            geom_piece,
            [np.flatnonzero(geom_piece == p) for p in range(NUM_PIECES)],
            present,
        )
        for array in maps:  # shared by every use of this scene with these pieces in play
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
        return maps

    def _activate(self, piece: int, active: bool) -> None:
        if self._removing:
            self._switch(piece, active)
            return
        geoms = self.piece_geoms[piece]
        self.model.geom_contype[geoms] = int(active)
        self.model.geom_conaffinity[geoms] = int(active)
        # MuJoCo's broad phase reads the per-body OR of its geoms' bits, computed at compile time.
        self.model.body_contype[self.piece_body[piece]] = int(active)
        self.model.body_conaffinity[self.piece_body[piece]] = int(active)
        self.model.body_gravcomp[self.piece_body[piece]] = 0.0 if active else 1.0
        self.in_play[piece] = active

    def _switch(self, piece: int, active: bool) -> None:
        """``idle_pieces="removed"``: move to the scene of the new piece counts, carrying every
        other piece's pose, velocity and solver warm start over (the whole integration state: no
        actuators, forces or mocap bodies), and the time.  A piece coming in is at rest at its
        parking spot until its pose is set."""
        if bool(self.in_play[piece]) == active:
            return
        data = self.data
        keep = self.in_play.copy()
        keep[piece] = False
        qpos_index, dof_index = self.qpos_adr[keep][:, None] + _SEVEN, self.dof_adr[keep][:, None] + _SIX
        poses, velocities, warm = data.qpos[qpos_index], data.qvel[dof_index], data.qacc_warmstart[dof_index]
        time = data.time
        self.in_play[piece] = active
        self._use(self._scene(self._piece_counts()))
        new = self.data
        self._mujoco.mj_resetData(self.model, new)
        qpos_index, dof_index = self.qpos_adr[keep][:, None] + _SEVEN, self.dof_adr[keep][:, None] + _SIX
        new.qpos[qpos_index], new.qvel[dof_index], new.qacc_warmstart[dof_index] = poses, velocities, warm
        if active:
            self._set_pose(piece, PARKING[piece], np.array([1.0, 0.0, 0.0, 0.0]))
        new.time = time
        self._warnings_seen = self._instability_warnings()

    def _set_pose(self, piece: int, position: NDArray[np.float64], quaternion: NDArray[np.float64]) -> None:
        adr, dof = self.qpos_adr[piece], self.dof_adr[piece]
        if adr < 0:  # removed from the scene: nothing to set
            return
        self.data.qpos[adr : adr + 3] = position
        self.data.qpos[adr + 3 : adr + 7] = quaternion
        self.data.qvel[dof : dof + 6] = 0.0

    def free_piece(self, size: int) -> int:
        """A parked piece of ``size`` (``ValueError`` if none is left)."""
        for piece in range(size * PIECES_PER_SIZE, (size + 1) * PIECES_PER_SIZE):
            if not self.in_play[piece]:
                return piece
        raise ValueError(f"no {SIZE_LETTERS[size]} piece left to place")

    def positions(self) -> NDArray[np.float64]:
        """(15, 3) base-centre positions (pieces out of play: their parking spots)."""
        positions = self.data.xpos[self.piece_body]
        if self._counts is not None:
            positions[~self._present] = PARKING[~self._present]
        return positions

    def features(self, position_scale: float, out: NDArray[np.float32]) -> NDArray[np.float32]:
        """``out`` (15, 7): per piece, :meth:`positions` / ``position_scale`` clipped to [-1, 1],
        :meth:`axes`, touching the table (``contacts().on_table``), in one compiled call
        (:func:`kernels.pile_features`; what the env's observation reads)."""
        data = self.data
        _kernels.pile_features(
            data.xpos,
            data.xmat,
            self.piece_body,
            self._present,
            PARKING,
            self._contact_geoms(),
            self.geom_piece,
            position_scale,
            out,
        )
        return out

    def axes(self) -> NDArray[np.float64]:
        """(15, 3) unit vectors from base centre toward the apex (pieces out of play: +z)."""
        return self.data.xmat[self.piece_body][:, [2, 5, 8]]

    def poses(self) -> NDArray[np.float64]:
        """(15, 7) position and quaternion of every piece (out of play: parked, upright), in
        the layout of the parked scene's ``qpos`` (what the renderer draws)."""
        poses = np.tile(np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), (NUM_PIECES, 1))
        poses[:, :3] = PARKING
        for piece in np.flatnonzero(self.in_play):
            adr = self.qpos_adr[piece]
            poses[piece] = self.data.qpos[adr : adr + 7]
        return poses

    # ---- contacts and rules -----------------------------------------------------------------
    def _contact_geoms(self) -> NDArray[np.int32]:
        return self.data.contact.geom[: self.data.ncon]

    def _nest(self) -> tuple[Any, ...]:
        """The pile's geometry as the compiled checks take it (:func:`kernels.contacts`'s ``nest``)."""
        return (self.geom_piece, self.piece_body, PIECE_SIZE, _HEIGHTS, _INNER_APEX_HEIGHTS, self._nest_cos, self.NEST_DISTANCE)

    def _pile_state(self, dofs: NDArray[np.int64]) -> tuple[Any, ...]:
        """What :func:`kernels.check_pile` reads of the pile after a step, ``in_play`` to ``dofs``."""
        data = self.data
        return (self.in_play, data.xpos, data.xmat, data.qpos, data.qvel, self.WORLD_LIMIT, dofs)

    def contacts(self) -> Contacts:
        """Which pieces touch the table, touch another piece, and the nested (inner, outer)
        pairs: tip in inner tip, axes within NEST_ANGLE and the inner piece's apex within
        NEST_DISTANCE of the outer piece's inner apex (:func:`kernels.contacts`)."""
        data = self.data
        on_table = np.zeros(NUM_PIECES, dtype=bool)
        touching = np.zeros(NUM_PIECES, dtype=bool)
        found = _kernels.contacts(
            self._contact_geoms(),
            data.xpos,
            data.xmat,
            self._nest(),
            (on_table, touching, self._pair_buffer, self._nested_buffer),
        )
        return Contacts(on_table, touching, [(int(i), int(o)) for i, o in self._nested_buffer[:found]])

    def rule_violated(self, contacts: Contacts | None = None) -> str | None:
        """``"T"``, ``"A"``, ``"N"`` or ``None`` for the pile as it is now."""
        contacts = contacts or self.contacts()
        return _kernels.RULE_LETTERS[
            _kernels.rule(contacts.on_table, contacts.touching_piece, self.in_play, len(contacts.nested_pairs))
        ]

    # ---- simulation -------------------------------------------------------------------------
    def _instability_warnings(self) -> int:
        warnings, (bad_acc, bad_vel, bad_pos) = self.data.warning, self._bad_state_warnings
        return int(warnings[bad_acc].number) + int(warnings[bad_vel].number) + int(warnings[bad_pos].number)

    def _check_warnings(self) -> None:
        if self._instability_warnings() != self._warnings_seen:
            # MuJoCo resets the data on a bad state; never score a pile after that.
            self._warnings_seen = self._instability_warnings()
            raise PhysicsError(
                "the simulation went unstable (MuJoCo reported a bad state and reset it); the pile cannot be scored"
            )

    @staticmethod
    def _raise_for(status: int) -> None:
        if status == _kernels.NOT_FINITE:
            raise PhysicsError("the simulation went unstable (NaN in the state); the pile cannot be scored")
        if status == _kernels.LEFT_WORLD:
            raise PhysicsError("a piece left the world (more than 2 m away); the simulation went unstable")

    def settle(self) -> Outcome:
        """Step until every piece in play is still (or the cap), checking the rules every step;
        then the derived data (positions, contacts) is brought up to the final state."""
        self.version += 1
        outcome = self._settle()
        # mj_step leaves positions and contacts of the state *before* its last integration;
        # observations read them, so recompute them from the state (as a restored pile has them).
        self._mujoco.mj_forward(self.model, self.data)
        return outcome

    def _settle(self) -> Outcome:
        scene = self._live_scene
        if scene.views is None or not self.compiled_loops:
            return self._settle_in_python()
        layout, views, config = _compiled_step(), scene.views, self.config
        assert layout is not None
        cap = int(round(config.settle_cap_seconds / config.timestep))
        dofs = self.dof_adr[self.in_play].astype(np.int64)
        status, rule, steps, settled = _kernels.settle_pile(
            layout.step,
            views.model_address,
            views.data_address,
            views.header_int32,
            layout.ncon,
            views.header_float64,
            layout.time,
            views.contact_geom,
            cap,
            config.settle_steps,
            config.settle_linear,
            config.settle_angular,
            *self._pile_state(dofs),
            self._nest(),
            (self._on_table, self._touching, self._pair_buffer, self._nested_buffer),
            layout.clock if _TIMING[0] else 0,
            STEP_CLOCK,
        )
        if status == _kernels.RESET:
            self._check_warnings()
            raise PhysicsError(
                "the simulation went unstable (MuJoCo reported a bad state and reset it); the pile cannot be scored"
            )
        if status:
            self._raise_for(status)
        return Outcome(_kernels.RULE_LETTERS[rule] if rule else None, int(steps), bool(settled))

    def _settle_in_python(self) -> Outcome:
        mujoco, model, data = self._mujoco, self.model, self.data
        config = self.config
        cap = int(round(config.settle_cap_seconds / config.timestep))
        still_for = 0
        dofs = self.dof_adr[self.in_play].astype(np.int64)
        on_table = np.zeros(NUM_PIECES, dtype=bool)
        touching = np.zeros(NUM_PIECES, dtype=bool)
        check, rule_letters = _kernels.check_pile, _kernels.RULE_LETTERS
        # MuJoCo's arrays are views that stay put: the arguments are gathered once, not every step
        pile, nest, scratch = self._pile_state(dofs), self._nest(), (on_table, touching, self._pair_buffer, self._nested_buffer)
        step_fn, last_time = mujoco.mj_step, data.time
        for step in range(1, cap + 1):
            step_fn(model, data)
            # A bad state makes MuJoCo reset the data, time included: one float read per step
            # (reading its warning counters cost more than a tenth of a small pile's step).
            if data.time <= last_time:
                self._check_warnings()
                raise PhysicsError(
                    "the simulation went unstable (MuJoCo reported a bad state and reset it); the pile cannot be scored"
                )
            last_time = data.time
            # Soundness, the rules and the speeds in one compiled call on MuJoCo's arrays.
            status, rule, linear, angular = check(self._contact_geoms(), *pile, nest, scratch)
            if status:
                self._raise_for(status)
            if rule:
                return Outcome(rule_letters[rule], step, False)
            if not dofs.size:  # an empty pile is still
                return Outcome(None, step, True)
            still_for = still_for + 1 if linear < config.settle_linear and angular < config.settle_angular else 0
            if still_for >= config.settle_steps:
                return Outcome(None, step, True)
        return Outcome(None, cap, False)

    def _clearance(self, piece: int) -> float:
        """Vertical gap between the lowest point of ``piece``'s geom bounding spheres and the
        highest of the other pieces in play (or the table top), at the current kinematics."""
        data, rbound = self.data, self.model.geom_rbound
        mine = self.piece_geoms[piece]
        low = float((data.geom_xpos[mine, 2] - rbound[mine]).min())
        others = np.array([g for p in np.flatnonzero(self.in_play) if p != piece for g in self.piece_geoms[p]], dtype=np.int64)
        if others.size:
            # Only spheres that overlap one of ours seen from above can meet it on the way down.
            gaps = np.linalg.norm(data.geom_xpos[others, None, :2] - data.geom_xpos[None, mine, :2], axis=2)
            below = (gaps < rbound[others, None] + rbound[None, mine]).any(axis=1)
            others = others[below]
        high = float((data.geom_xpos[others, 2] + rbound[others]).max()) if others.size else 0.0
        return low - max(high, 0.0)

    SEPARATION_MARGIN = 0.02  # metres: how far below the piece a separation query looks

    def _separation(self, piece: int) -> float:
        """Smallest distance from ``piece`` to the table or another piece in play, capped at
        SEPARATION_MARGIN (a collision query with that contact margin on the piece's geoms, put
        back to 0 afterwards; call it right after a ``_penetrates`` that found none)."""
        mujoco, data, geoms = self._mujoco, self.data, self.piece_geoms[piece]
        body = self.piece_body[piece]
        # The broad phase reads the body's largest geom margin, computed at compile time.
        self.model.geom_margin[geoms] = self.SEPARATION_MARGIN
        self.model.body_margin[body] = self.SEPARATION_MARGIN
        try:
            mujoco.mj_collision(self.model, data)
        finally:
            self.model.geom_margin[geoms] = 0.0
            self.model.body_margin[body] = 0.0
        if not data.ncon:
            return self.SEPARATION_MARGIN
        pairs = data.contact.geom[: data.ncon]
        mine = (self.geom_piece[pairs[:, 0]] == piece) | (self.geom_piece[pairs[:, 1]] == piece)
        return (
            float(min(data.contact.dist[: data.ncon][mine].min(), self.SEPARATION_MARGIN))
            if mine.any()
            else self.SEPARATION_MARGIN
        )

    def _penetrates(self, piece: int) -> bool:
        mujoco = self._mujoco
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_collision(self.model, self.data)
        if not self.data.ncon:
            return False
        geoms = self.data.contact.geom[: self.data.ncon]
        mine = (self.geom_piece[geoms[:, 0]] == piece) | (self.geom_piece[geoms[:, 1]] == piece)
        return bool((self.data.contact.dist[: self.data.ncon][mine] < 0).any())

    def place(
        self, size: int, point: tuple[float, float], orientation: int, rng: np.random.Generator | None, piece: int | None = None
    ) -> Outcome:
        """Lower a piece of ``size`` above ``point`` until first contact, lift 1 mm, release, settle."""
        if piece is None:
            piece = self.free_piece(size)
        rotation = ORIENTATION_MATRICES[size, orientation]
        offset = np.zeros(3)
        if rng is not None and self.config.tremor_tilt_degrees > 0:
            axis = rng.normal(size=3)
            axis[2] = 0.0
            axis /= max(float(np.linalg.norm(axis)), 1e-12)
            angle = math.radians(self.config.tremor_tilt_degrees) * rng.normal()
            rotation = axis_angle_matrix(axis, angle) @ rotation
        if rng is not None and self.config.tremor_position > 0:
            offset[:2] = rng.normal(scale=self.config.tremor_position, size=2)
        # The point is the middle of the piece's axis, seen from above.
        centre_offset = rotation @ np.array([0.0, 0.0, HEIGHT[size] / 2])
        xy = np.array(point, dtype=float) + offset[:2] - centre_offset[:2]
        quaternion = matrix_to_quaternion(rotation)
        self._activate(piece, True)
        top = max(
            [0.0] + [float(self.data.xpos[self.piece_body[p]][2]) + HEIGHT[2] for p in np.flatnonzero(self.in_play) if p != piece]
        )
        z_free = top + 2 * HEIGHT[2]
        step = 0.001
        scene = self._live_scene
        if scene.views is not None and self.compiled_loops:
            z = self._lower_compiled(scene, piece, xy, quaternion, z_free, step)
        else:
            z = self._lower_in_python(piece, xy, quaternion, z_free, step)
        self._set_pose(piece, np.array([xy[0], xy[1], z + 0.001]), quaternion)
        return self.settle()

    BISECTIONS = 6  # between the last free and the first penetrating height: to ~0.03 mm

    def _lower_compiled(
        self, scene: _Scene, piece: int, xy: NDArray[np.float64], quaternion: NDArray[np.float64], z_free: float, step: float
    ) -> float:
        layout, views, data, model = _compiled_step(), scene.views, self.data, self.model
        assert layout is not None and views is not None
        z = _kernels.lower_piece(
            layout.kinematics,
            layout.collision,
            views.model_address,
            views.data_address,
            views.header_int32,
            layout.ncon,
            views.contact_geom,
            views.contact_dist,
            self.geom_piece,
            self.in_play,
            data.qpos,
            data.qvel,
            data.geom_xpos,
            model.geom_rbound,
            int(self.qpos_adr[piece]),
            int(self.dof_adr[piece]),
            piece,
            float(xy[0]),
            float(xy[1]),
            quaternion,
            z_free,
            step,
            -HEIGHT[2],
            model.geom_margin,
            model.body_margin,
            int(self.piece_body[piece]),
            self.SEPARATION_MARGIN,
            self.BISECTIONS,
        )
        if z == _kernels.START_BLOCKED:  # pragma: no cover - start is above everything
            raise PhysicsError("could not find a free height to lower the piece from")
        if z == _kernels.FELL_THROUGH:  # pragma: no cover - the table always stops it
            raise PhysicsError("the piece fell through the table")
        return float(z)

    def _lower_in_python(
        self, piece: int, xy: NDArray[np.float64], quaternion: NDArray[np.float64], z_free: float, step: float
    ) -> float:
        self._set_pose(piece, np.array([xy[0], xy[1], z_free]), quaternion)
        if self._penetrates(piece):  # pragma: no cover - start is above everything
            raise PhysicsError("could not find a free height to lower the piece from")
        z = z_free
        # While the piece's bounding spheres are above everything else's there is no contact to
        # find: skip those 1 mm steps without collision queries (same z sequence, same result).
        for _ in range(max(int(self._clearance(piece) / step) - 1, 0)):
            z = z - step
        while True:
            z_next = z - step
            self._set_pose(piece, np.array([xy[0], xy[1], z_next]), quaternion)
            if self._penetrates(piece):
                z_contact = z_next
                break
            z = z_next
            if z < -HEIGHT[2]:  # pragma: no cover - the table always stops it
                raise PhysicsError("the piece fell through the table")
            # Conservative advancement: nothing can be hit before the piece has come down by its
            # clearance, so skip the 1 mm steps inside it (same z sequence, same first contact).
            for _ in range(max(int(self._separation(piece) / step) - 1, 0)):
                z = z - step
        for _ in range(self.BISECTIONS):
            middle = (z + z_contact) / 2
            self._set_pose(piece, np.array([xy[0], xy[1], middle]), quaternion)
            if self._penetrates(piece):
                z_contact = middle
            else:
                z = middle
        return z

    def release(self, pieces: list[tuple[int, NDArray[np.float64], NDArray[np.float64]]]) -> Outcome:
        """Test helper: put pieces at exact poses ``(piece, position, rotation matrix)`` at rest, then settle."""
        for piece, position, rotation in pieces:
            self._activate(piece, True)
            self._set_pose(piece, np.asarray(position, dtype=float), matrix_to_quaternion(np.asarray(rotation, dtype=float)))
        self._mujoco.mj_forward(self.model, self.data)
        return self.settle()

    def pick_up(self, piece: int) -> Outcome:
        """Take ``piece`` out of the pile (it is parked); the rest may fall."""
        if not self.in_play[piece]:
            raise ValueError(f"piece {piece} is not in the pile")
        self._activate(piece, False)
        self._set_pose(piece, np.array(_parking_spot(piece)), np.array([1.0, 0.0, 0.0, 0.0]))
        return self.settle()

    # ---- snapshots --------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The pile's full integration state (read only: the live pile is not touched).  A live
        pile's derived data always matches its state (``__init__``, ``settle`` and ``restore``
        end with ``mj_forward``), so continuing it and continuing a restored copy are identical."""
        mujoco = self._mujoco
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        state = np.empty(mujoco.mj_stateSize(self.model, spec))
        mujoco.mj_getState(self.model, self.data, state, spec)
        return {"state": state, "in_play": self.in_play.copy()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        mujoco = self._mujoco
        if self._removing:
            self.in_play[:] = snapshot["in_play"]
            self._use(self._scene(self._piece_counts()))
        else:
            for piece in range(NUM_PIECES):
                self._activate(piece, bool(snapshot["in_play"][piece]))
        mujoco.mj_setState(self.model, self.data, snapshot["state"], mujoco.mjtState.mjSTATE_INTEGRATION)
        mujoco.mj_forward(self.model, self.data)
        self._warnings_seen = self._instability_warnings()
        self.version += 1

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "snapshot": self.snapshot()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]
        self.restore(state["snapshot"])


# ------------------------------------------------------------------------------ rotations
def axis_angle_matrix(axis: NDArray[np.float64], angle: float) -> NDArray[np.float64]:
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    C = 1 - c
    return np.array(
        [
            [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
        ]
    )


def orientation_matrix(size: int, orientation: int) -> NDArray[np.float64]:
    """Rotation (body -> world) for one of the six placement orientations."""
    if orientation == 0:
        return np.eye(3)
    if orientation == 1:
        return np.diag([1.0, -1.0, -1.0])
    half, height = BASE[size] / 2, HEIGHT[size]
    slant = math.hypot(height, half)
    tilt = math.asin(half / slant)  # the axis dips by the half apex angle: face flat, apex on the table
    apex_direction = {2: (1, 0), 3: (-1, 0), 4: (0, 1), 5: (0, -1)}[orientation]
    u = np.array([apex_direction[0], apex_direction[1], 0.0])
    z_axis = math.cos(tilt) * u - math.sin(tilt) * np.array([0.0, 0.0, 1.0])
    # The body's +x face (outward normal (h, 0, b/2)/slant) must face straight down.
    x_axis = (-slant * np.array([0.0, 0.0, 1.0]) - half * z_axis) / height
    x_axis /= np.linalg.norm(x_axis)
    y_axis = np.cross(z_axis, x_axis)
    return np.column_stack([x_axis, y_axis, z_axis])


#: (3 sizes, 6 orientations, 3, 3): :func:`orientation_matrix` of each
ORIENTATION_MATRICES = np.array([[orientation_matrix(size, o) for o in range(NUM_ORIENTATIONS)] for size in range(3)])
ORIENTATION_MATRICES.flags.writeable = False


def matrix_to_quaternion(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    import mujoco

    quaternion = np.empty(4)
    mujoco.mju_mat2Quat(quaternion, np.ascontiguousarray(matrix, dtype=float).ravel())
    return quaternion


# ------------------------------------------------------------------------------ the game's backend
class MuJoCoPiles:
    """The physics backend of the game layer (:class:`polarzoo.envs.thin_ice.rules.PhysicsBackend`):
    one :class:`PilePhysics` per player; targets are ``6 * cell + orientation`` on a ``grid x
    grid`` lattice of ``pitch`` metres.  An action goes env -> rules -> this -> MuJoCo."""

    def __init__(self, num_players: int, config: PhysicsConfig, grid: int, pitch: float) -> None:
        self.config = config
        self.grid = grid
        self.pitch = pitch
        self.piles = [PilePhysics(config) for _ in range(num_players)]
        self.reset()

    def reset(self) -> None:
        """Every pile empty at time 0, as new (their compiled scenes kept for the next game)."""
        for pile in self.piles:
            if pile.in_play.any() or pile.data.time:
                pile.reset()
        self.slot_piece: list[list[int]] = [[] for _ in self.piles]
        self.placements = 0
        self.last_steps = 0

    def target_point(self, target: int) -> tuple[tuple[float, float], int]:
        cell, orientation = divmod(target, NUM_ORIENTATIONS)
        row, col = divmod(cell, self.grid)
        centre = (self.grid - 1) / 2
        return ((col - centre) * self.pitch, (row - centre) * self.pitch), orientation

    def place(self, player: int, size: int, target: int, piece_slot: int | None, rng: np.random.Generator | None) -> str | None:
        pile = self.piles[player]
        slots = self.slot_piece[player]
        if piece_slot is not None and piece_slot < len(slots):
            piece = slots[piece_slot]
        else:
            piece = pile.free_piece(size)
            slots.append(piece)
        point, orientation = self.target_point(target)
        outcome = pile.place(size, point, orientation, rng, piece=piece)
        self.placements += 1
        self.last_steps = outcome.steps
        return outcome.eliminated

    def pick_up(self, player: int, piece_slot: int) -> str | None:
        outcome = self.piles[player].pick_up(self.slot_piece[player][piece_slot])
        self.last_steps = outcome.steps
        return outcome.eliminated
