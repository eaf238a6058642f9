"""Kernel entry points: every kernel takes the packed model and data arrays as
arguments (one compiled kernel serves every scene and batch size), runs in
parallel over envs on its outermost loop, and does each env's work serially
inside (the ti.func stages of `smooth`, `passive`, `actuation`, `forward`).

``kinematics_kernel`` and ``forward_kernel`` are the per-stage entry points
the stage tests use; ``rollout_kernel`` advances many steps per launch,
records frames into an in-kernel buffer and stops an env at its first
non-finite value, so launch overhead is amortized over a chunk of steps.

The env loop is one iteration per env, scheduled one env at a time over the
runtime's threads (`lang.env_loop`): every thread works at any B >= T, and
each env is still done by exactly one thread.

Argument groups, in order: model arrays (``M``), data arrays (``D``), then
the kernel's own inputs and outputs.
"""


from rigidsim.engine.lang import ti
from rigidsim.engine import lang
from rigidsim.engine.lang import env_begin, env_end, env_loop, env_of, in_slice, kernel

from rigidsim.engine import math as sm
from rigidsim.engine.forward import forward, integrate, no_constraint, rk_prepare, rk_store
from rigidsim.engine.layout import (
    ENV_FAILED, ENV_PAUSED_CAPACITY, ENV_PAUSED_POOL, ENV_RUNNING, FAIL_LOOP_LIMIT, INT_RK4, LAUNCH_CANARY,
    LAUNCH_CONTACTS, LAUNCH_EVERY, LAUNCH_FINAL, LAUNCH_FRAME0, LAUNCH_GROW, LAUNCH_NSTEPS, LAUNCH_PASS,
    LAUNCH_RECORD, LAUNCH_RESUME, LAUNCH_S0, LAUNCH_USE_CTRL, STAGE_NAMES, STATUS_RESUMED, STATUS_START, SZ_NA,
    SZ_NCONMAX, SZ_NBODY, SZ_NQ, SZ_NSENSORDATA, SZ_NU, SZ_NV, XPOS, XQUAT,
)
from rigidsim.engine.sensor import G_HISTORY, G_RECORD, history_advance, sensors
from rigidsim.engine.smooth import kinematics

from rigidsim.engine.groups import ND, _data, _model


@kernel
def kinematics_kernel(
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, sens_f: ND, sens_i: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, history: ND, sens_con: ND, solver_v: ND, solver_vi: ND,
    solver_efc_i: ND, solver_H: ND, solver_Hcone: ND, solver_n: ND,
    # <<< generated
    # In:
):
    env_loop()
    for i in range(time.shape[0]):
        b = env_of(i, time.shape[0])
        kinematics(
            # >>> generated: groups
            _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f, act_i,
                   qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i, bvh_f,
                   pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                   mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
            _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom, site,
                  actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit, ccd_f,
                  ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi, solver_efc_i,
                  solver_H, solver_Hcone, solver_n),
            # <<< generated
            b, True)


@kernel
def forward_kernel(
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, sens_f: ND, sens_i: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, history: ND, sens_con: ND, solver_v: ND, solver_vi: ND,
    solver_efc_i: ND, solver_H: ND, solver_Hcone: ND, solver_n: ND,
    # <<< generated
    # In:
    integrator: ti.template(), reps: ti.i32,
):
    env_loop()
    for i in range(time.shape[0]):
        b = env_of(i, time.shape[0])
        for _ in range(reps):  # more than once only to time it (benchmarks/bench_stages.py)
            forward(
                # >>> generated: groups
                _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f,
                       act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i,
                       bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                       mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
                _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                      site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit,
                      ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi,
                      solver_efc_i, solver_H, solver_Hcone, solver_n),
                # <<< generated
                b, integrator, no_constraint, 0)


@kernel
def sensor_kernel(
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, sens_f: ND, sens_i: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, history: ND, sens_con: ND, solver_v: ND, solver_vi: ND,
    solver_efc_i: ND, solver_H: ND, solver_Hcone: ND, solver_n: ND,
    # <<< generated
    # In:
    sensing: ti.template(),
    # Out:
    out: ND,
):
    """out[0, b] = env b's sensordata at the state its last forward pass left (`sensor.sensors`, the groups
    `sensing`)."""
    env_loop()
    for i in range(time.shape[0]):
        b = env_of(i, time.shape[0])
        sensors(
            # >>> generated: groups
            _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f, act_i,
                   qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i, bvh_f,
                   pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                   mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
            _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom, site,
                  actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit, ccd_f,
                  ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi, solver_efc_i,
                  solver_H, solver_Hcone, solver_n),
            # <<< generated
            b, out, 0, 0, sensing)


@ti.func
def _loop_canary(b, s0, status: ti.template(), launch: ti.template(), where=0):
    """On a device: fail env b (status FAIL_LOOP_LIMIT) when its launch's loops were cut short. Mesa's software
    Vulkan driver (llvmpipe, lavapipe) ends every loop of a shader invocation once all its loops together have
    iterated 65,535 times, silently: a launch of 100 cheetah steps did 68 (issue 30). A loop that runs
    launch[LAUNCH_CANARY] = 2 times (a bound the compiler cannot see) then stops after its first pass, and
    leaves its counter at 0 instead of 1. `where`: the part of the step the launch's kernel did (status[b, 3]:
    0 all of it, else `layout.STAGE_NAMES`' index of a staged task's part)."""
    last = 0
    for k in range(launch[LAUNCH_CANARY]):
        last = k
    if last != launch[LAUNCH_CANARY] - 1 and status[b, 0] == ENV_RUNNING:
        status[b, 0] = ENV_FAILED
        status[b, 1] = s0
        status[b, 2] = FAIL_LOOP_LIMIT
        status[b, 3] = where


@ti.func
def _check(x, kind, b, gs, status: ti.template()):
    """Record the first non-finite value of env b: status[b] = (1, step, kind, is_inf)."""
    ok = 1
    if not sm.is_finite(x):
        ok = 0
        if status[b, 0] == 0:
            status[b, 0] = 1
            status[b, 1] = gs
            status[b, 2] = kind
            status[b, 3] = 1 if ti.math.isinf(x) else 0
    return ok


@ti.func
def no_extra(m: ti.template(), d: ti.template(), b, frames: ti.template(), crec: ti.template(),
             launch: ti.template(), t, o, contacts):
    """The frame of a scene without constraints ends with xquat."""
    return 1


@ti.func
def _record(m: ti.template(), d: ti.template(), b, frames: ti.template(), crec: ti.template(), launch: ti.template(),
            t, extra: ti.template(), contacts, sensing: ti.template()):
    """frames[t, b, :] = (time, qpos, qvel, qacc, ctrl, act, xpos, xquat), the sensordata when `sensing` (the
    sensor groups compiled in, `sensor.mask_of`) has G_RECORD, then what `extra` records (the constraint fields of
    `layout.frame_layout`, `contacts`: with the contact rows, in the contact pool `crec`). Returns 0 when the
    pool has no room for the frame's contacts (the env then pauses), else 1."""
    nq = m.opt_i[SZ_NQ]
    nv = m.opt_i[SZ_NV]
    nu = m.opt_i[SZ_NU]
    na = m.opt_i[SZ_NA]
    nbody = m.opt_i[SZ_NBODY]
    frames[t, b, 0] = d.time[b]
    o = 1
    for i in range(nq):
        frames[t, b, o + i] = d.qpos[b, i]
    o += nq
    for i in range(nv):
        frames[t, b, o + i] = d.qvel[b, i]
    o += nv
    for i in range(nv):
        frames[t, b, o + i] = d.qacc[b, i]
    o += nv
    for i in range(nu):
        frames[t, b, o + i] = d.ctrl[b, i]
    o += nu
    for i in range(na):
        frames[t, b, o + i] = d.act[b, i]
    o += na
    for i in range(nbody):
        for c in ti.static(range(3)):
            frames[t, b, o + 3 * i + c] = d.body[b, i, XPOS + c]
    o += 3 * nbody
    for i in range(nbody):
        for c in ti.static(range(4)):
            frames[t, b, o + 4 * i + c] = d.body[b, i, XQUAT + c]
    o += 4 * nbody
    if ti.static(sensing & G_RECORD):
        sensors(m, d, b, frames, t, o, sensing)
        o += m.opt_i[SZ_NSENSORDATA]
    return extra(m, d, b, frames, crec, launch, t, o, contacts)


@ti.func
def _finite(a: ti.template(), n, kind, b, gs, status: ti.template()):
    """1 when a[b, :n] is finite at step gs, else 0 (status[b]: the first bad value, of kind `kind`)."""
    alive = 1
    # x - x is 0 for finite x and NaN otherwise: one branch per step unless something is bad
    z = 0.0
    for i in range(n):
        z = z + (a[b, i] - a[b, i])
    if not (z == 0.0):  # NaN compares unequal to everything
        for i in range(n):
            if not _check(a[b, i], kind, b, gs, status):
                alive = 0
    return alive


@ti.func
def _check_state(m: ti.template(), d: ti.template(), b, gs, status: ti.template()):
    """1 when env b's qpos and qvel are finite at step gs, else 0 (status[b]: the first bad value)."""
    ok_qpos = _finite(d.qpos, m.opt_i[SZ_NQ], 1, b, gs, status)
    ok_qvel = _finite(d.qvel, m.opt_i[SZ_NV], 2, b, gs, status)
    return ok_qpos * ok_qvel


@ti.func
def _capacity_ok(m: ti.template(), d: ti.template(), b, gs, status: ti.template(), launch: ti.template()):
    """After the forward pass of step gs: 1 when env b's contacts fit max_contacts; else 0, the env paused
    (LAUNCH_GROW: the step is done again in a larger buffer) or failed, nothing dropped."""
    ok = 1
    if d.ncon[b] > m.opt_i[SZ_NCONMAX]:
        ok = 0
        if launch[LAUNCH_GROW] != 0:
            status[b, 0] = ENV_PAUSED_CAPACITY
            status[b, 1] = gs
            status[b, 3] = d.ncon[b]
        elif status[b, 0] == 0:
            status[b, 0] = 1
            status[b, 1] = gs
            status[b, 2] = 4
            status[b, 3] = d.ncon[b]
    return ok


@ti.func
def _recorded(m: ti.template(), d: ti.template(), b, gs, s, frames: ti.template(), crec: ti.template(),
              status: ti.template(), launch: ti.template(), extra: ti.template(), sensing: ti.template()):
    """After the forward pass of step gs (s of the launch): qacc checked, then the frame recorded on every
    every-th step and at the launch's final pass. 0 when env b stops here: qacc not finite, or no room for its
    contacts in the pool (paused: resumed by the next launch); else 1."""
    alive = _finite(d.qacc, m.opt_i[SZ_NV], 3, b, gs, status)
    every = launch[LAUNCH_EVERY]
    # every every-th step, and the final state when every does not divide the run
    if alive and launch[LAUNCH_RECORD] != 0 and (gs % every == 0 or s == launch[LAUNCH_NSTEPS]):
        if not _record(m, d, b, frames, crec, launch, (gs + every - 1) // every - launch[LAUNCH_FRAME0], extra,
                       launch[LAUNCH_CONTACTS], sensing):
            alive = 0
            status[b, 0] = ENV_PAUSED_POOL
            status[b, 1] = gs
    return alive


@ti.func
def _rollout_env(m: ti.template(), d: ti.template(), b, ctrl_seq: ti.template(), frames: ti.template(),
                 crec: ti.template(), status: ti.template(), launch: ti.template(), integrator: ti.template(),
                 constraint: ti.template(), kinds: ti.template(), extra: ti.template(), sensing: ti.template()):
    """Steps s0 .. s0 + nsteps of env b (launch[LAUNCH_*]), recording its frames. An env whose contacts find
    no room left in the contact pool pauses after the forward pass of step gs, before recording it
    (status[b] = (2, gs)); a launch with launch[LAUNCH_RESUME] = 1 runs the paused envs alone, from that
    point on (the forward pass is not redone: nothing of the env changed), into a larger pool."""
    nu = m.opt_i[SZ_NU]
    s0 = launch[LAUNCH_S0]
    nsteps = launch[LAUNCH_NSTEPS]
    final = launch[LAUNCH_FINAL]
    use_ctrl = launch[LAUNCH_USE_CTRL]
    start = 0
    resumed = 0  # 1 while the paused step's forward pass is kept
    if launch[LAUNCH_RESUME] != 0:
        start = nsteps + final  # not paused: nothing to do
        if status[b, 0] == ENV_PAUSED_POOL or status[b, 0] == ENV_PAUSED_CAPACITY:
            start = status[b, 1] - s0
            # paused for the pool: its forward pass is kept; for capacity: done again with room for its contacts
            resumed = 1 if status[b, 0] == ENV_PAUSED_POOL else 0
            status[b, 0] = ENV_RUNNING
    alive = 1 if status[b, 0] == 0 else 0
    nrow = ctrl_seq.shape[0]
    bc = b if ctrl_seq.shape[1] > 1 else 0
    # nsteps steps, then (final) one more forward pass to complete the last frame
    for s in range(start, nsteps + final):
        gs = s0 + s
        if alive:
            if use_ctrl != 0 and s < nsteps:
                row = gs if nrow > 1 else 0  # the sequence from the call's first step
                for i in range(nu):
                    d.ctrl[b, i] = ctrl_seq[row, bc, i]
            alive = _check_state(m, d, b, gs, status)
        if alive:
            for stage in range(4 if ti.static(integrator == INT_RK4) else 1):
                if alive:
                    if resumed == 0:
                        if ti.static(integrator == INT_RK4):  # the other integrators do not carry RK4's code
                            if stage > 0:
                                rk_prepare(m, d, b, stage)
                        forward(m, d, b, integrator, constraint, kinds)
                        alive = _capacity_ok(m, d, b, gs, status, launch)
                    resumed = 0
                    if alive and stage == 0:
                        alive = _recorded(m, d, b, gs, s, frames, crec, status, launch, extra, sensing)
                        if ti.static(sensing & G_HISTORY):  # at the step's first pass (RK4's too)
                            if alive and s < nsteps:
                                history_advance(m, d, b, sensing)
                    if ti.static(integrator == INT_RK4):
                        if alive and s < nsteps:
                            rk_store(m, d, b, stage)
                if s == nsteps:
                    break  # the final pass: forward only
            if alive and s < nsteps:
                integrate(m, d, b, integrator)
    if ti.static(lang.LOOP_CANARY):
        _loop_canary(b, s0, status, launch)


# ----------------------------------------------------------------------------- a device's staged launch
# On Vulkan a launch is one pass of one step (`lang.LAUNCH_STEPS_MAX`: the step, then in a launch of its own the
# final forward pass, launch[LAUNCH_PASS]), cut into tasks: each a loop over the envs of its own at the kernel's
# top level, which the kernel language compiles to a shader of its own and runs after the one before it has
# finished (`_staged`). A rollout kernel as one shader took Mesa's software driver 110 s to compile for the
# cheetah and 10 min with every collider in, more than linearly in its size; and that driver's 65,535 loop
# iterations (`_loop_canary`) are then counted per task, not per step.


@ti.func
def _in_pass(b, p, status: ti.template(), launch: ti.template()):
    """Whether env b does pass p of the launch: it runs, and the launch's passes (its step, then the final
    forward pass) reach p from the pass it starts at."""
    return (status[b, 0] == ENV_RUNNING and status[b, STATUS_START] <= p
            and p < launch[LAUNCH_NSTEPS] + launch[LAUNCH_FINAL])


@ti.func
def _forward_due(b, p, status: ti.template(), launch: ti.template()):
    """Whether env b does pass p's forward pass: `_in_pass`, unless the pass is the one it paused in for room in
    the contact pool, whose forward pass is kept."""
    return _in_pass(b, p, status, launch) and not (status[b, STATUS_START] == p and status[b, STATUS_RESUMED] != 0)


@ti.func
def _staged_begin(m: ti.template(), d: ti.template(), b, p, ctrl_seq: ti.template(), status: ti.template(),
                  launch: ti.template()):
    """Pass p's start: (first pass) where env b starts, as `_rollout_env`; its controls, its state checked."""
    s0 = launch[LAUNCH_S0]
    if p == 0:
        start = 0
        resumed = 0
        if launch[LAUNCH_RESUME] != 0:
            start = launch[LAUNCH_NSTEPS] + launch[LAUNCH_FINAL]  # not paused: nothing to do
            if status[b, 0] == ENV_PAUSED_POOL or status[b, 0] == ENV_PAUSED_CAPACITY:
                start = status[b, 1] - s0
                resumed = 1 if status[b, 0] == ENV_PAUSED_POOL else 0
                status[b, 0] = ENV_RUNNING
        status[b, STATUS_START] = start
        status[b, STATUS_RESUMED] = resumed
    if _in_pass(b, p, status, launch):
        gs = s0 + p
        if launch[LAUNCH_USE_CTRL] != 0 and p < launch[LAUNCH_NSTEPS]:
            row = gs if ctrl_seq.shape[0] > 1 else 0
            bc = b if ctrl_seq.shape[1] > 1 else 0
            for i in range(m.opt_i[SZ_NU]):
                d.ctrl[b, i] = ctrl_seq[row, bc, i]
        _check_state(m, d, b, gs, status)


@ti.func
def _staged_end(m: ti.template(), d: ti.template(), b, p, frames: ti.template(),
                crec: ti.template(), status: ti.template(), launch: ti.template(), integrator: ti.template(),
                extra: ti.template(), sensing: ti.template()):
    """Pass p's end, as `_rollout_env` ends a step: the contact capacity and qacc checked, the frame recorded,
    the state integrated (not after the final pass)."""
    if _in_pass(b, p, status, launch):
        gs = launch[LAUNCH_S0] + p
        alive = 1
        if _forward_due(b, p, status, launch):
            alive = _capacity_ok(m, d, b, gs, status, launch)
        status[b, STATUS_RESUMED] = 0
        if alive:
            alive = _recorded(m, d, b, gs, p, frames, crec, status, launch, extra, sensing)
        if alive and p < launch[LAUNCH_NSTEPS]:
            if ti.static(sensing & G_HISTORY):
                history_advance(m, d, b, sensing)
            integrate(m, d, b, integrator)


@ti.func
def _staged(m: ti.template(), d: ti.template(), b, task: ti.template(), ctrl_seq: ti.template(),
            frames: ti.template(), crec: ti.template(), status: ti.template(), launch: ti.template(),
            integrator: ti.template(), smooth: ti.template(), parts: ti.template(), kinds: ti.template(),
            extra: ti.template(), sensing: ti.template()):
    """Task `task` of the launch's pass p (launch[LAUNCH_PASS]) for env b: 0 the pass's start, 1 the smooth
    forward pass (with `smooth` as its constraint stage: `forward.no_constraint` in a scene without constraints,
    nothing in one with them), then the constraint stage's parts `parts` (each ``part(m, d, b, kinds)``), then
    the pass's end."""
    p = launch[LAUNCH_PASS]
    if ti.static(task == 0):
        _staged_begin(m, d, b, p, ctrl_seq, status, launch)
    elif ti.static(task == 1):
        if _forward_due(b, p, status, launch):
            forward(m, d, b, integrator, smooth, kinds)
    elif ti.static(task < len(parts) + 2):
        if _forward_due(b, p, status, launch):
            ti.static(parts[task - 2])(m, d, b, kinds)
    else:
        _staged_end(m, d, b, p, frames, crec, status, launch, integrator, extra, sensing)
    if ti.static(lang.LOOP_CANARY):
        _loop_canary(b, launch[LAUNCH_S0] + p, status, launch,
                     ti.static(1 + task if task < 2 + len(parts) else len(STAGE_NAMES) - 1))


def staged(integrator) -> bool:
    """Whether a rollout kernel runs as `_staged` tasks: on a backend with LAUNCH_STEPS_MAX, but RK4 (whose
    four forward passes a step keep stage state between them) in one task."""
    return bool(lang.LAUNCH_STEPS_MAX) and integrator != INT_RK4


@kernel
def rollout_kernel(
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, sens_f: ND, sens_i: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, history: ND, sens_con: ND, solver_v: ND, solver_vi: ND,
    solver_efc_i: ND, solver_H: ND, solver_Hcone: ND, solver_n: ND,
    # <<< generated
    # In:
    ctrl_seq: ND, launch: ND, nenv: ti.template(), integrator: ti.template(), sensing: ti.template(),
    # Out:
    frames: ND, crec: ND, status: ND,
):
    if ti.static(staged(integrator)):
        for task in ti.static(range(3)):
            for i in range(nenv):
                if in_slice(i, launch, nenv):
                    b = env_of(i, time.shape[0])
                    _staged(
                        # >>> generated: groups
                        _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i,
                               act_f, act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i,
                               pair_f, pair_i, bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f,
                               mesh_poly_i, mesh_polyvert, mesh_polymap, mesh_extrema, hfield_f, hfield_i,
                               hfield_data, sens_f, sens_i, opt_f, opt_i),
                        _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M,
                              geom, site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f,
                              sap_i, pair_hit, ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con,
                              solver_v, solver_vi, solver_efc_i, solver_H, solver_Hcone, solver_n),
                        # <<< generated
                        b, task, ctrl_seq, frames, crec, status, launch, integrator, no_constraint, (), 0, no_extra,
                        sensing)
    else:
        env_loop()
        for i in range(env_begin(launch, nenv), env_end(launch, nenv)):
            if in_slice(i, launch, nenv):
                b = env_of(i, time.shape[0])
                _rollout_env(
                    # >>> generated: groups
                    _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f,
                           act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i,
                           bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i,
                           mesh_polyvert, mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f,
                           sens_i, opt_f, opt_i),
                    _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                          site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i,
                          pair_hit, ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v,
                          solver_vi, solver_efc_i, solver_H, solver_Hcone, solver_n),
                    # <<< generated
                    b, ctrl_seq, frames, crec, status, launch, integrator, no_constraint, 0, no_extra, sensing)
