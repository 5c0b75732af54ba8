"""Compiled (numba) checks that run after every MuJoCo step of a Thin Ice pile.

:class:`polarzoo.envs.thin_ice.physics.PilePhysics` checks the rules at every physics step while a
pile moves (T: four pieces on the table, A: three pieces touching nothing, N: two pieces nested),
checks that the simulation is still sound, and measures the pieces' speeds to know when the pile
is still.  Written as NumPy calls these were about half of a placement's time (dozens of small
calls per step beside one ``mj_step``); here they are one call that reads MuJoCo's arrays in
place.  ``PilePhysics.contacts()`` and ``rule_violated()`` use the same kernel, so there is one
definition of each rule.

The loops around them are compiled too: :func:`settle_pile` steps the pile with MuJoCo's C
``mj_step`` and checks after every step, :func:`lower_piece` lowers a piece to first contact with
``mj_kinematics`` / ``mj_collision`` (the C functions called by address through an LLVM
intrinsic, so the kernels still cache), and :func:`pile_features` gives an observation's
per-piece numbers; ``PilePhysics`` keeps the Python versions of the loops, which take the same
steps (tested in lockstep).
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

#: :func:`check_pile` status codes
SOUND, NOT_FINITE, LEFT_WORLD = 0, 1, 2
#: :func:`check_pile` rule codes (index into RULE_LETTERS)
RULE_LETTERS = (None, "T", "A", "N")


@njit(cache=True, nogil=True)
def contacts(contact_geom, xpos, xmat, nest, scratch):
    """Fill ``on_table`` / ``touching`` (15,) bools from MuJoCo's contact geom pairs (ncon, 2)
    and write the nested (inner, outer) pairs into ``nested`` (k, 2); returns k.

    ``nest`` is the pile's fixed geometry, ``(geom_piece, piece_body, piece_size, apex_heights,
    inner_apex_heights, nest_cos, nest_distance)`` (``geom_piece``: geom -> piece, -1 = table);
    ``scratch`` the arrays written, ``(on_table, touching, pair, nested)``.

    A touching pair (a < b) is nested with a inside b when the axes are within the nest angle
    (``dot >= nest_cos``) and a's apex is within ``nest_distance`` of b's inner apex; pairs are
    listed a-inside-b first (pairs in ascending order), then b-inside-a.  ``pair`` (15, 15) bools
    is scratch space (cleared here), so a call allocates nothing."""
    geom_piece, piece_body, piece_size, apex_heights, inner_apex_heights, nest_cos, nest_distance = nest
    on_table, touching, pair, nested = scratch
    count = len(on_table)
    for i in range(count):
        on_table[i] = False
        touching[i] = False
        for j in range(count):
            pair[i, j] = False
    for c in range(contact_geom.shape[0]):
        a = geom_piece[contact_geom[c, 0]]
        b = geom_piece[contact_geom[c, 1]]
        if a < 0 and b >= 0:
            on_table[b] = True
        elif b < 0 and a >= 0:
            on_table[a] = True
        elif a >= 0 and b >= 0 and a != b:
            touching[a] = True
            touching[b] = True
            if a < b:
                pair[a, b] = True
            else:
                pair[b, a] = True
    found = 0
    for direction in range(2):
        for a in range(count):
            for b in range(a + 1, count):
                if not pair[a, b]:
                    continue
                inner, outer = (a, b) if direction == 0 else (b, a)
                ib, ob = piece_body[inner], piece_body[outer]
                # axes: the third column of each body's rotation matrix
                dot = xmat[ib, 2] * xmat[ob, 2] + xmat[ib, 5] * xmat[ob, 5] + xmat[ib, 8] * xmat[ob, 8]
                if dot < nest_cos:
                    continue
                h_in, h_out = apex_heights[piece_size[inner]], inner_apex_heights[piece_size[outer]]
                dx = (xpos[ib, 0] + h_in * xmat[ib, 2]) - (xpos[ob, 0] + h_out * xmat[ob, 2])
                dy = (xpos[ib, 1] + h_in * xmat[ib, 5]) - (xpos[ob, 1] + h_out * xmat[ob, 5])
                dz = (xpos[ib, 2] + h_in * xmat[ib, 8]) - (xpos[ob, 2] + h_out * xmat[ob, 8])
                if math.sqrt(dx * dx + dy * dy + dz * dz) <= nest_distance:
                    nested[found, 0] = inner
                    nested[found, 1] = outer
                    found += 1
    return found


@njit(cache=True, nogil=True)
def rule(on_table, touching, in_play, nested_count):
    """Index into :data:`RULE_LETTERS` of the rule that holds (T before A before N), 0 = none."""
    table = 0
    airborne = 0
    for i in range(len(in_play)):
        if in_play[i]:
            if on_table[i]:
                table += 1
            elif not touching[i]:
                airborne += 1
    if table >= 4:
        return 1
    if airborne >= 3:
        return 2
    if nested_count > 0:
        return 3
    return 0


@njit(cache=True, nogil=True)
def check_pile(contact_geom, in_play, xpos, xmat, qpos, qvel, world_limit, dofs, nest, scratch):
    """After one ``mj_step``: (status, rule, linear speed, angular speed).

    ``status`` is :data:`SOUND`, :data:`NOT_FINITE` (NaN or infinity in ``qpos`` / ``qvel``) or
    :data:`LEFT_WORLD` (a piece in play beyond ``world_limit`` on some axis); ``rule`` as in
    :func:`rule`; the speeds are the largest linear and angular speed over the free joints
    whose velocity addresses start at ``dofs`` (6 each).  The rule and speeds are only
    computed for a sound state.  ``nest`` and ``scratch`` as :func:`contacts`'s."""
    piece_body = nest[1]
    for i in range(qpos.shape[0]):
        if not math.isfinite(qpos[i]):
            return NOT_FINITE, 0, 0.0, 0.0
    for i in range(qvel.shape[0]):
        if not math.isfinite(qvel[i]):
            return NOT_FINITE, 0, 0.0, 0.0
    for p in range(len(in_play)):
        if in_play[p]:
            for k in range(3):
                if abs(xpos[piece_body[p], k]) > world_limit:
                    return LEFT_WORLD, 0, 0.0, 0.0
    found = contacts(contact_geom, xpos, xmat, nest, scratch)
    code = rule(scratch[0], scratch[1], in_play, found)
    linear = 0.0
    angular = 0.0
    for d in dofs:
        v = math.sqrt(qvel[d] * qvel[d] + qvel[d + 1] * qvel[d + 1] + qvel[d + 2] * qvel[d + 2])
        w = math.sqrt(qvel[d + 3] * qvel[d + 3] + qvel[d + 4] * qvel[d + 4] + qvel[d + 5] * qvel[d + 5])
        linear = max(linear, v)
        angular = max(angular, w)
    return SOUND, code, linear, angular


# ---------------------------------------------------------------------------- the settle loop
#: :func:`settle_pile` status beyond :func:`check_pile`'s: MuJoCo met a bad state and reset the data
RESET = 3


@intrinsic
def _call_model_data(typingctx, function, model, data):
    """Call the C function at address ``function`` as ``void f(const mjModel*, mjData*)``
    (``mj_step``, ``mj_kinematics``, ``mj_collision``)."""
    signature = types.void(types.uintp, types.uintp, types.uintp)

    def codegen(context, builder, sig, args):
        address, model_pointer, data_pointer = args
        pointer = ir.IntType(8).as_pointer()
        function_type = ir.FunctionType(ir.VoidType(), [pointer, pointer])
        callee = builder.inttoptr(address, function_type.as_pointer())
        builder.call(callee, [builder.inttoptr(model_pointer, pointer), builder.inttoptr(data_pointer, pointer)])
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def _clock_ns(typingctx, function, timespec):
    """``clock_gettime(CLOCK_MONOTONIC, timespec)`` through the C function at ``function``;
    ``timespec`` is an int64 array of 2 (seconds, nanoseconds).  Returns the nanoseconds."""
    signature = types.int64(types.uintp, timespec)

    def codegen(context, builder, sig, args):
        address, array = args
        pointer = ir.IntType(8).as_pointer()
        function_type = ir.FunctionType(ir.IntType(32), [ir.IntType(32), pointer])
        callee = builder.inttoptr(address, function_type.as_pointer())
        view = context.make_array(sig.args[1])(context, builder, array)
        data = builder.bitcast(view.data, pointer)
        builder.call(callee, [ir.Constant(ir.IntType(32), 1), data])  # 1 = CLOCK_MONOTONIC (Linux only: see physics)
        words = view.data
        seconds = builder.load(words)
        nanoseconds = builder.load(builder.gep(words, [ir.Constant(ir.IntType(64), 1)]))
        return builder.add(builder.mul(seconds, ir.Constant(ir.IntType(64), 1_000_000_000)), nanoseconds)

    return signature, codegen


@njit(cache=True)
def settle_pile(
    step_function,
    model_address,
    data_address,
    header_int32,
    ncon_index,
    header_float64,
    time_index,
    contact_geom,
    cap,
    settle_steps,
    settle_linear,
    settle_angular,
    in_play,
    xpos,
    xmat,
    qpos,
    qvel,
    world_limit,
    dofs,
    nest,
    scratch,
    clock_function,
    clock,
):
    """Step a pile with MuJoCo's C ``mj_step`` (at address ``step_function``) and :func:`check_pile`
    after every step, until a rule holds, the pile is still for ``settle_steps`` steps in a row, or
    ``cap`` steps: (status, rule, steps, settled), ``status`` as :func:`check_pile`'s or
    :data:`RESET`.  The same loop as ``PilePhysics``' Python one, without a Python call per step.

    MuJoCo's data is read in place: ``header_int32`` / ``header_float64`` view the ``mjData``
    struct (``ncon`` and ``time`` at the given indices) and ``contact_geom`` (rows of
    ``mjContact.geom`` over the arena, where ``mj_collision`` writes the contacts) has a row per
    contact that fits.  With ``clock_function`` (the address of ``clock_gettime``, 0 for none),
    ``clock`` (int64, 4) accumulates [nanoseconds inside mj_step, steps, scratch x2]."""
    still_for = 0
    last_time = header_float64[time_index]
    timespec = clock[2:4]
    for step in range(1, cap + 1):
        if clock_function:
            start = _clock_ns(clock_function, timespec)
            _call_model_data(step_function, model_address, data_address)
            clock[0] += _clock_ns(clock_function, timespec) - start
            clock[1] += 1
        else:
            _call_model_data(step_function, model_address, data_address)
        # A bad state makes MuJoCo reset the data, time included.
        now = header_float64[time_index]
        if now <= last_time:
            return RESET, 0, step, False
        last_time = now
        ncon = header_int32[ncon_index]
        status, rule, linear, angular = check_pile(
            contact_geom[:ncon], in_play, xpos, xmat, qpos, qvel, world_limit, dofs, nest, scratch
        )
        if status:
            return status, 0, step, False
        if rule:
            return SOUND, rule, step, False
        if dofs.size == 0:  # an empty pile is still
            return SOUND, 0, step, True
        still_for = still_for + 1 if linear < settle_linear and angular < settle_angular else 0
        if still_for >= settle_steps:
            return SOUND, 0, step, True
    return SOUND, 0, cap, False


# ---------------------------------------------------------------------------- the lowering
#: :func:`lower_piece`'s results when the start was not free / the piece went through the table
START_BLOCKED, FELL_THROUGH = -1.0, -2.0


@njit(cache=True)
def _penetrates(query, piece):
    """Whether ``piece`` penetrates anything at the current positions; ``query`` is
    ``(kinematics, collision, model_address, data_address, header_int32, ncon_index, contact_geom,
    contact_dist, geom_piece)`` (:func:`lower_piece`'s arguments of those names)."""
    kinematics, collision, model_address, data_address, header_int32, ncon_index, contact_geom, contact_dist, geom_piece = query
    _call_model_data(kinematics, model_address, data_address)
    _call_model_data(collision, model_address, data_address)
    for c in range(header_int32[ncon_index]):
        if (geom_piece[contact_geom[c, 0]] == piece or geom_piece[contact_geom[c, 1]] == piece) and contact_dist[c] < 0:
            return True
    return False


@njit(cache=True)
def _set_height(qpos, qvel, qpos_address, dof_address, x, y, z, quaternion):
    qpos[qpos_address] = x
    qpos[qpos_address + 1] = y
    qpos[qpos_address + 2] = z
    for k in range(4):
        qpos[qpos_address + 3 + k] = quaternion[k]
    for k in range(6):
        qvel[dof_address + k] = 0.0


@njit(cache=True)
def clearance(geom_xpos, geom_rbound, geom_piece, in_play, piece):
    """Vertical gap between the lowest point of ``piece``'s geom bounding spheres and the highest
    of the other pieces in play whose spheres overlap one of its own seen from above (or the
    table top, 0), at the current kinematics: how far the piece can come down before anything
    can touch it."""
    low = math.inf
    for g in range(geom_piece.shape[0]):
        if geom_piece[g] == piece:
            low = min(low, geom_xpos[g, 2] - geom_rbound[g])
    high = 0.0
    for o in range(geom_piece.shape[0]):
        other = geom_piece[o]
        if other < 0 or other == piece or not in_play[other]:
            continue
        for g in range(geom_piece.shape[0]):
            if geom_piece[g] != piece:
                continue
            dx = geom_xpos[o, 0] - geom_xpos[g, 0]
            dy = geom_xpos[o, 1] - geom_xpos[g, 1]
            if math.sqrt(dx * dx + dy * dy) < geom_rbound[o] + geom_rbound[g]:
                high = max(high, geom_xpos[o, 2] + geom_rbound[o])
                break
    return low - high


@njit(cache=True)
def lower_piece(
    kinematics,
    collision,
    model_address,
    data_address,
    header_int32,
    ncon_index,
    contact_geom,
    contact_dist,
    geom_piece,
    in_play,
    qpos,
    qvel,
    geom_xpos,
    geom_rbound,
    qpos_address,
    dof_address,
    piece,
    x,
    y,
    quaternion,
    z_free,
    step,
    floor,
    geom_margin,
    body_margin,
    body,
    margin,
    bisections,
):
    """The lowering of ``PilePhysics.place`` in one call.  The piece starts at ``z_free`` (it
    must be free there: :data:`START_BLOCKED` otherwise); the 1 mm steps (``step``) within its
    :func:`clearance` are passed over without a query; then it comes down a step at a time until
    it penetrates something, with conservative advancement (a collision query with contact
    ``margin`` on the piece's geoms skips the steps within its distance to the rest), then
    ``bisections`` halvings between the last free and the first penetrating height.  Returns the
    free height (the piece is left at the last height queried), or :data:`FELL_THROUGH` below
    ``floor``.  The heights visited are the Python version's, in the same order (MuJoCo's C
    functions at the addresses ``kinematics`` and ``collision``; contacts read in place as in
    :func:`settle_pile`)."""
    _set_height(qpos, qvel, qpos_address, dof_address, x, y, z_free, quaternion)
    query = (kinematics, collision, model_address, data_address, header_int32, ncon_index, contact_geom, contact_dist, geom_piece)
    if _penetrates(query, piece):
        return START_BLOCKED
    z = z_free
    for _ in range(max(int(clearance(geom_xpos, geom_rbound, geom_piece, in_play, piece) / step) - 1, 0)):
        z = z - step
    while True:
        z_next = z - step
        _set_height(qpos, qvel, qpos_address, dof_address, x, y, z_next, quaternion)
        if _penetrates(query, piece):
            z_contact = z_next
            break
        z = z_next
        if z < floor:
            return FELL_THROUGH
        # the separation query: the piece's geoms (and the broad phase's body margin) get the margin
        for g in range(geom_piece.shape[0]):
            if geom_piece[g] == piece:
                geom_margin[g] = margin
        body_margin[body] = margin
        _call_model_data(collision, model_address, data_address)
        for g in range(geom_piece.shape[0]):
            if geom_piece[g] == piece:
                geom_margin[g] = 0.0
        body_margin[body] = 0.0
        separation = margin
        for c in range(header_int32[ncon_index]):
            if geom_piece[contact_geom[c, 0]] == piece or geom_piece[contact_geom[c, 1]] == piece:
                separation = min(separation, contact_dist[c])
        for _ in range(max(int(separation / step) - 1, 0)):
            z = z - step
    for _ in range(bisections):
        middle = (z + z_contact) / 2
        _set_height(qpos, qvel, qpos_address, dof_address, x, y, middle, quaternion)
        if _penetrates(query, piece):
            z_contact = middle
        else:
            z = middle
    return z


# ---------------------------------------------------------------------------- observation features
@njit(cache=True, nogil=True)
def pile_features(xpos, xmat, piece_body, present, parking, contact_geom, geom_piece, position_scale, out):
    """``out`` (15, 7) float32 per piece: base-centre position / ``position_scale`` clipped to
    [-1, 1] (pieces not ``present`` in the scene: their ``parking`` spot), the axis (third column
    of the body's rotation), touching the table (from the contact geom pairs) - what
    ``PilePhysics.positions()``, ``axes()`` and ``contacts().on_table`` give, in one call."""
    for p in range(out.shape[0]):
        body = piece_body[p]
        for k in range(3):
            position = xpos[body, k] if present[p] else parking[p, k]
            out[p, k] = min(max(position / position_scale, -1.0), 1.0)
            out[p, 3 + k] = xmat[body, 3 * k + 2]
        out[p, 6] = 0.0
    for c in range(contact_geom.shape[0]):
        a = geom_piece[contact_geom[c, 0]]
        b = geom_piece[contact_geom[c, 1]]
        if a < 0 and b >= 0:
            out[b, 6] = 1.0
        elif b < 0 and a >= 0:
            out[a, 6] = 1.0
