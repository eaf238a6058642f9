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
    LAUNCH_CONTACTS, LAUNCH_EVERY, LAUNCH_FINAL, LAUNCH_FRAME0, LAUNCH_GROW, LAUNCH_NSTEPS, LAUNCH_RECORD,
    LAUNCH_RESUME, LAUNCH_S0, LAUNCH_USE_CTRL, SZ_NA, SZ_NCONMAX, SZ_NBODY, SZ_NQ, SZ_NU, SZ_NV, XPOS, XQUAT,
)
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
    hfield_f: ND, hfield_i: ND, hfield_data: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, solver_v: ND, solver_vi: ND, solver_efc_i: ND, solver_H: ND,
    solver_Hcone: ND, solver_n: ND,
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
                   mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, opt_f, opt_i),
            _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom, site,
                  actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit, ccd_f,
                  ccd_i, efc_J, efc, efc_i, efc_n, eq_active, solver_v, solver_vi, solver_efc_i, solver_H,
                  solver_Hcone, solver_n),
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
    hfield_f: ND, hfield_i: ND, hfield_data: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, solver_v: ND, solver_vi: ND, solver_efc_i: ND, solver_H: ND,
    solver_Hcone: ND, solver_n: ND,
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
                       mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, opt_f, opt_i),
                _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                      site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit,
                      ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, solver_v, solver_vi, solver_efc_i,
                      solver_H, solver_Hcone, solver_n),
                # <<< generated
                b, integrator, no_constraint, 0)


@ti.func
def _loop_canary(b, s0, status: ti.template(), launch: ti.template()):
    """On a device: fail env b (status FAIL_LOOP_LIMIT) when its launch's loops were cut short. Mesa's software
    Vulkan driver (llvmpipe, lavapipe) ends every loop of a shader invocation once all its loops together have
    iterated 65,535 times, silently: a launch of 100 cheetah steps did 68 (issue 30). A loop that runs
    launch[LAUNCH_CANARY] = 2 times (a bound the compiler cannot see) then stops after its first pass, and
    leaves its counter at 0 instead of 1."""
    last = 0
    for k in range(launch[LAUNCH_CANARY]):
        last = k
    if last != launch[LAUNCH_CANARY] - 1 and status[b, 0] == ENV_RUNNING:
        status[b, 0] = ENV_FAILED
        status[b, 1] = s0
        status[b, 2] = FAIL_LOOP_LIMIT
        status[b, 3] = 0


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
            t, extra: ti.template(), contacts):
    """frames[t, b, :] = (time, qpos, qvel, qacc, ctrl, act, xpos, xquat), then what `extra` records (the
    constraint fields of `layout.frame_layout`, `contacts`: with the contact rows, in the contact pool
    `crec`). Returns 0 when the pool has no room for the frame's contacts (the env then pauses), else 1."""
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
    return extra(m, d, b, frames, crec, launch, t, o + 4 * nbody, contacts)


@ti.func
def _rollout_env(m: ti.template(), d: ti.template(), b, ctrl_seq: ti.template(), frames: ti.template(),
                 crec: ti.template(), status: ti.template(), launch: ti.template(), integrator: ti.template(),
                 constraint: ti.template(), kinds: ti.template(), extra: ti.template()):
    """Steps s0 .. s0 + nsteps of env b (launch[LAUNCH_*]), recording its frames. An env whose contacts find
    no room left in the contact pool pauses after the forward pass of step gs, before recording it
    (status[b] = (2, gs)); a launch with launch[LAUNCH_RESUME] = 1 runs the paused envs alone, from that
    point on (the forward pass is not redone: nothing of the env changed), into a larger pool."""
    nq = m.opt_i[SZ_NQ]
    nv = m.opt_i[SZ_NV]
    nu = m.opt_i[SZ_NU]
    s0 = launch[LAUNCH_S0]
    nsteps = launch[LAUNCH_NSTEPS]
    every = launch[LAUNCH_EVERY]
    frame0 = launch[LAUNCH_FRAME0]
    final = launch[LAUNCH_FINAL]
    use_ctrl = launch[LAUNCH_USE_CTRL]
    record = launch[LAUNCH_RECORD]
    contacts = launch[LAUNCH_CONTACTS]
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
            # x - x is 0 for finite x and NaN otherwise: one branch per step unless something is bad
            z = 0.0
            for i in range(nq):
                z = z + (d.qpos[b, i] - d.qpos[b, i])
            for i in range(nv):
                z = z + (d.qvel[b, i] - d.qvel[b, i])
            if not (z == 0.0):  # NaN compares unequal to everything
                for i in range(nq):
                    if not _check(d.qpos[b, i], 1, b, gs, status):
                        alive = 0
                for i in range(nv):
                    if not _check(d.qvel[b, i], 2, b, gs, status):
                        alive = 0
        if alive:
            for stage in range(4 if ti.static(integrator == INT_RK4) else 1):
                if alive:
                    if resumed == 0:
                        if ti.static(integrator == INT_RK4):  # the other integrators do not carry RK4's code
                            if stage > 0:
                                rk_prepare(m, d, b, stage)
                        forward(m, d, b, integrator, constraint, kinds)
                        if d.ncon[b] > m.opt_i[SZ_NCONMAX]:  # more contacts than max_contacts: stop, drop nothing
                            alive = 0
                            if launch[LAUNCH_GROW] != 0:  # pause: the step is done again in a larger buffer
                                status[b, 0] = ENV_PAUSED_CAPACITY
                                status[b, 1] = gs
                                status[b, 3] = d.ncon[b]
                            elif status[b, 0] == 0:
                                status[b, 0] = 1
                                status[b, 1] = gs
                                status[b, 2] = 4
                                status[b, 3] = d.ncon[b]
                    resumed = 0
                    if alive and stage == 0:
                        z = 0.0
                        for i in range(nv):
                            z = z + (d.qacc[b, i] - d.qacc[b, i])
                        if not (z == 0.0):  # NaN compares unequal to everything
                            for i in range(nv):
                                if not _check(d.qacc[b, i], 3, b, gs, status):
                                    alive = 0
                        # every every-th step, and the final state when every does not divide the run
                        if alive and record != 0 and (gs % every == 0 or s == nsteps):
                            if not _record(m, d, b, frames, crec, launch, (gs + every - 1) // every - frame0,
                                           extra, contacts):
                                alive = 0  # no room for its contacts: pause here, resumed by the next launch
                                status[b, 0] = ENV_PAUSED_POOL
                                status[b, 1] = gs
                    if ti.static(integrator == INT_RK4):
                        if alive and s < nsteps:
                            rk_store(m, d, b, stage)
                if s == nsteps:
                    break  # the final pass: forward only
            if alive and s < nsteps:
                integrate(m, d, b, integrator)
    if ti.static(lang.LOOP_CANARY):
        _loop_canary(b, s0, status, launch)


@kernel
def rollout_kernel(
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, solver_v: ND, solver_vi: ND, solver_efc_i: ND, solver_H: ND,
    solver_Hcone: ND, solver_n: ND,
    # <<< generated
    # In:
    ctrl_seq: ND, launch: ND, nenv: ti.template(), integrator: ti.template(),
    # Out:
    frames: ND, crec: ND, status: ND,
):
    env_loop()
    for i in range(env_begin(launch, nenv), env_end(launch, nenv)):
        if in_slice(i, launch, nenv):
            b = env_of(i, time.shape[0])
            _rollout_env(
                # >>> generated: groups
                _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f,
                       act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i,
                       bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                       mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, opt_f, opt_i),
                _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                      site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit,
                      ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, solver_v, solver_vi, solver_efc_i,
                      solver_H, solver_Hcone, solver_n),
                # <<< generated
                b, ctrl_seq, frames, crec, status, launch, integrator, no_constraint, 0, no_extra)
