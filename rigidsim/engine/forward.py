"""Forward dynamics and integrators of one env: MuJoCo's engine_forward.

``forward`` is mj_forward's smooth part (position, velocity, actuation,
acceleration stages; with no constraint rows, qacc = qacc_smooth; the
constraint stage slots in after ``fwd_acceleration``). Integrators:
``euler`` (semi-implicit, with MuJoCo's implicit dof damping unless
eulerdamp is disabled), ``implicitfast`` (M - h*dqfrc/dqvel without the RNE
term), Genesis's ``approximate_implicitfast`` (the implicitfast matrix is
factored once in ``forward`` and used for qacc_smooth itself, then an Euler
update), and ``rk4`` (MuJoCo's classic 4-stage Runge-Kutta). ``advance`` is
mj_advance: act, then qvel, then qpos (quaternions integrated on the
manifold and normalized as MuJoCo does), then time.

The integrator is a compile-time switch (`ti.template`).
"""


import taichi as ti

from rigidsim.engine import math as sm
from rigidsim.engine.actuation import actuator_deriv, actuator_velocity, fwd_actuation, next_activation, transmission
from rigidsim.engine.layout import (
    ACT_ACTADR, ACT_ACTNUM, DOF_DAMPING, DOF_MADR, DSBL_ACTUATION, DSBL_DAMPER, INT_APPROX_IMPLICITFAST, INT_EULER,
    INT_IMPLICITFAST, INT_RK4, JNT_BALL, JNT_DOFADR, JNT_FREE, JNT_QPOSADR, JNT_TYPE, OPT_DISABLEFLAGS,
    OPT_EULERDAMP, OPT_TIMESTEP, QACC_INT, QACC_SMOOTH, QDERIV_DIAG, QFRC_ACTUATOR, QFRC_BIAS, QFRC_PASSIVE,
    QFRC_SMOOTH, NDM, QH, QHDIAGINV, QLD, QLDIAGINV, QM, SZ_NA, SZ_NJNT, SZ_NM, SZ_NQ, SZ_NU, SZ_NV,
)
from rigidsim.engine.passive import passive
from rigidsim.engine.smooth import com_pos, com_vel, crb, factor_m, kinematics, rne, solve_m

# ----------------------------------------------------------------------------- forward


@ti.func
def implicit_matrix(m: ti.template(), d: ti.template(), b):
    """qH = qM - h * qDeriv, qDeriv the (diagonal) derivative of qfrc_actuator + qfrc_passive in qvel."""
    nv = m.opt_i[SZ_NV]
    h = m.opt_f[OPT_TIMESTEP]
    for i in range(nv):
        d.dof[b, i, QDERIV_DIAG] = 0.0
    actuator_deriv(m, d, b)
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_DAMPER) == 0:
        for i in range(nv):
            d.dof[b, i, QDERIV_DIAG] = d.dof[b, i, QDERIV_DIAG] - m.dof_f[i, DOF_DAMPING]
    for k in range(m.opt_i[SZ_NM]):
        d.M[b, k, QH] = d.M[b, k, QM]
    for i in range(nv):
        adr = m.dof_i[i, DOF_MADR]
        d.M[b, adr, QH] = d.M[b, adr, QM] + (-h) * d.dof[b, i, QDERIV_DIAG]


@ti.func
def fwd_acceleration(m: ti.template(), d: ti.template(), b):
    """qfrc_smooth = passive - bias + actuator; qacc_smooth = M \\ qfrc_smooth."""
    for i in range(m.opt_i[SZ_NV]):
        f = d.dof[b, i, QFRC_PASSIVE] - d.dof[b, i, QFRC_BIAS]
        f = f + d.dof[b, i, QFRC_ACTUATOR]
        d.dof[b, i, QFRC_SMOOTH] = f
        d.dof[b, i, QACC_SMOOTH] = f
    solve_m(m, d, b, QLD, QLDIAGINV, QACC_SMOOTH)


@ti.func
def forward(m: ti.template(), d: ti.template(), b, integrator: ti.template()):
    """The smooth forward pass at the current state of env b; writes qacc."""
    # position
    kinematics(m, d, b, True)
    com_pos(m, d, b)
    crb(m, d, b)
    transmission(m, d, b)
    # velocity
    actuator_velocity(m, d, b)
    com_vel(m, d, b)
    passive(m, d, b)
    rne(m, d, b)
    # actuation
    fwd_actuation(m, d, b)
    # factorization (after actuation: approximate_implicitfast factors M - h*qDeriv)
    if ti.static(integrator == INT_APPROX_IMPLICITFAST):
        implicit_matrix(m, d, b)
        factor_m(m, d, b, QH, QLD, QLDIAGINV)
    else:
        factor_m(m, d, b, QM, QLD, QLDIAGINV)
    # acceleration
    fwd_acceleration(m, d, b)
    # constraints: none yet, qacc = qacc_smooth
    for i in range(m.opt_i[SZ_NV]):
        d.qacc[b, i] = d.dof[b, i, QACC_SMOOTH]


# ----------------------------------------------------------------------------- integration


@ti.func
def integrate_pos(m: ti.template(), qpos: ti.template(), qoff, vel: ti.template(), voff, b, h):
    """mj_integratePos on qpos[b, qoff + ...] with velocity vel[b, voff + ...] over time h."""
    for j in range(m.opt_i[SZ_NJNT]):
        jt = m.jnt_i[j, JNT_TYPE]
        pa = qoff + m.jnt_i[j, JNT_QPOSADR]
        va = voff + m.jnt_i[j, JNT_DOFADR]
        if jt == JNT_FREE or jt == JNT_BALL:
            if jt == JNT_FREE:
                for c in ti.static(range(3)):
                    qpos[b, pa + c] = qpos[b, pa + c] + vel[b, va + c] * h
                pa += 3
                va += 3
            q = ti.Vector([qpos[b, pa + c] for c in ti.static(range(4))])
            w = ti.Vector([vel[b, va + c] for c in ti.static(range(3))])
            q = sm.quat_integrate(q, w, h)
            for c in ti.static(range(4)):
                qpos[b, pa + c] = q[c]
        else:
            qpos[b, pa] = qpos[b, pa] + h * vel[b, va]


@ti.func
def advance_act(m: ti.template(), d: ti.template(), b, act_dot: ti.template(), aoff):
    """act <- nextActivation(act, act_dot[b, aoff + ...])."""
    if m.opt_i[SZ_NA] > 0 and (m.opt_i[OPT_DISABLEFLAGS] & DSBL_ACTUATION) == 0:
        for i in range(m.opt_i[SZ_NU]):
            adr = m.act_i[i, ACT_ACTADR]
            if adr >= 0:
                for k in range(m.act_i[i, ACT_ACTNUM]):
                    d.act[b, adr + k] = next_activation(m, d, b, i, adr + k, act_dot[b, aoff + adr + k])


@ti.func
def advance_euler(m: ti.template(), d: ti.template(), b):
    """mj_advance with act_dot, qacc = d.dof[:, QACC_INT], and the updated qvel."""
    h = m.opt_f[OPT_TIMESTEP]
    advance_act(m, d, b, d.act_dot, 0)
    for i in range(m.opt_i[SZ_NV]):
        d.qvel[b, i] = d.qvel[b, i] + d.dof[b, i, QACC_INT] * h
    integrate_pos(m, d.qpos, 0, d.qvel, 0, b, h)
    d.time[b] = d.time[b] + h


@ti.func
def euler(m: ti.template(), d: ti.template(), b):
    """mj_Euler: semi-implicit Euler, dof damping integrated implicitly unless eulerdamp is off."""
    nv = m.opt_i[SZ_NV]
    if m.opt_i[OPT_EULERDAMP] != 0:
        h = m.opt_f[OPT_TIMESTEP]
        # flat indices into d.M (per-env base computed once): d.M[b, k, c] is d.M.arr[mb + k * NDM + c]
        mb = b * d.M.strides[0]
        for k in range(m.opt_i[SZ_NM]):
            d.M.arr[mb + k * NDM + QH] = d.M.arr[mb + k * NDM + QM]
        for i in range(nv):
            adr = m.dof_i[i, DOF_MADR]
            d.M.arr[mb + adr * NDM + QH] = d.M.arr[mb + adr * NDM + QH] + (h * m.dof_f[i, DOF_DAMPING])
        factor_m(m, d, b, QH, QH, QHDIAGINV)
        for i in range(nv):
            d.dof[b, i, QACC_INT] = d.dof[b, i, QFRC_SMOOTH]
        solve_m(m, d, b, QH, QHDIAGINV, QACC_INT)
    else:
        for i in range(nv):
            d.dof[b, i, QACC_INT] = d.qacc[b, i]
    advance_euler(m, d, b)


@ti.func
def implicitfast(m: ti.template(), d: ti.template(), b):
    """mj_implicit for implicitfast: qacc = (M - h*qDeriv) \\ qfrc_smooth, then advance."""
    implicit_matrix(m, d, b)
    factor_m(m, d, b, QH, QH, QHDIAGINV)
    for i in range(m.opt_i[SZ_NV]):
        d.dof[b, i, QACC_INT] = d.dof[b, i, QFRC_SMOOTH]
    solve_m(m, d, b, QH, QHDIAGINV, QACC_INT)
    advance_euler(m, d, b)


@ti.func
def approx_implicitfast(m: ti.template(), d: ti.template(), b):
    """Genesis's approximate_implicitfast: qacc already used the modified matrix; explicit update."""
    for i in range(m.opt_i[SZ_NV]):
        d.dof[b, i, QACC_INT] = d.qacc[b, i]
    advance_euler(m, d, b)


# ----------------------------------------------------------------------------- RK4
# d.rk[b, :] holds X[0..3] (qpos, qvel, act), F[0..3] (qacc, act_dot) and dX (dqpos, dqvel, dact).


@ti.func
def rk_offsets(m: ti.template()):
    nq = m.opt_i[SZ_NQ]
    nv = m.opt_i[SZ_NV]
    na = m.opt_i[SZ_NA]
    nx = nq + nv + na
    return nq, nv, na, nx, 4 * nx, 4 * nx + 4 * (nv + na)


@ti.func
def rk_store(m: ti.template(), d: ti.template(), b, stage):
    """F[stage] = (qacc, act_dot); at stage 0 also X[0] = (qpos, qvel, act)."""
    nq, nv, na, nx, f0, dx0 = rk_offsets(m)
    if stage == 0:
        for i in range(nq):
            d.rk[b, i] = d.qpos[b, i]
        for i in range(nv):
            d.rk[b, nq + i] = d.qvel[b, i]
        for i in range(na):
            d.rk[b, nq + nv + i] = d.act[b, i]
    fo = f0 + stage * (nv + na)
    for i in range(nv):
        d.rk[b, fo + i] = d.qacc[b, i]
    for i in range(na):
        d.rk[b, fo + nv + i] = d.act_dot[b, i]


@ti.func
def rk_combine(m: ti.template(), d: ti.template(), b, nstage, final: ti.template(), stage):
    """dX = sum_j coef_j * (X[j].qvel, F[j]) over j < nstage; coefficients from the RK4 tableau."""
    nq, nv, na, nx, f0, dx0 = rk_offsets(m)
    for i in range(2 * nv + na):
        d.rk[b, dx0 + i] = 0.0
    for j in range(nstage):
        a = 0.0
        if ti.static(final):
            a = 1.0 / 6.0
            if j == 1 or j == 2:
                a = 1.0 / 3.0
        else:
            if j == stage - 1:
                a = 0.5
                if stage == 3:
                    a = 1.0
        xo = j * nx + nq
        fo = f0 + j * (nv + na)
        for i in range(nv):
            d.rk[b, dx0 + i] = d.rk[b, dx0 + i] + d.rk[b, xo + i] * a
        for i in range(nv + na):
            d.rk[b, dx0 + nv + i] = d.rk[b, dx0 + nv + i] + d.rk[b, fo + i] * a


@ti.func
def rk_prepare(m: ti.template(), d: ti.template(), b, stage):
    """X[stage] = X[0] '+' h*dX from the tableau row; load it into the env's state."""
    nq, nv, na, nx, f0, dx0 = rk_offsets(m)
    h = m.opt_f[OPT_TIMESTEP]
    rk_combine(m, d, b, stage, False, stage)
    xo = stage * nx
    for i in range(nx):
        d.rk[b, xo + i] = d.rk[b, i]
    integrate_pos(m, d.rk, xo, d.rk, dx0, b, h)
    for i in range(nv + na):
        d.rk[b, xo + nq + i] = d.rk[b, xo + nq + i] + d.rk[b, dx0 + nv + i] * h
    for i in range(nq):
        d.qpos[b, i] = d.rk[b, xo + i]
    for i in range(nv):
        d.qvel[b, i] = d.rk[b, xo + nq + i]
    for i in range(na):
        d.act[b, i] = d.rk[b, xo + nq + nv + i]


@ti.func
def rk_finish(m: ti.template(), d: ti.template(), b):
    """Combine the 4 stages, restore X[0], advance with (dact, dqvel, dqpos)."""
    nq, nv, na, nx, f0, dx0 = rk_offsets(m)
    h = m.opt_f[OPT_TIMESTEP]
    rk_combine(m, d, b, 4, True, 0)
    # Rotational stage velocities live in the frames of their stage orientations: bring them to X[0]'s
    # with the first-order term of the inverse exponential map, k_j = w_j + 1/2 theta_j x w_j, theta_j the
    # stage's rotation h * a_j * w_(j-1) (MuJoCo 4's RK4 on the quaternion manifold).
    for j in range(m.opt_i[SZ_NJNT]):
        jt = m.jnt_i[j, JNT_TYPE]
        if jt == JNT_FREE or jt == JNT_BALL:
            va = m.jnt_i[j, JNT_DOFADR] + (3 if jt == JNT_FREE else 0)
            for st in range(1, 4):
                a = 0.5
                bcoef = 1.0 / 3.0
                if st == 3:
                    a = 1.0
                    bcoef = 1.0 / 6.0
                prev = ti.Vector([d.rk[b, (st - 1) * nx + nq + va + c] for c in ti.static(range(3))])
                w = ti.Vector([d.rk[b, st * nx + nq + va + c] for c in ti.static(range(3))])
                corr = sm.cross3(prev * (a * h), w) * (0.5 * bcoef)
                for c in ti.static(range(3)):
                    d.rk[b, dx0 + va + c] = d.rk[b, dx0 + va + c] + corr[c]
    for i in range(nq):
        d.qpos[b, i] = d.rk[b, i]
    for i in range(nv):
        d.qvel[b, i] = d.rk[b, nq + i]
    for i in range(na):
        d.act[b, i] = d.rk[b, nq + nv + i]
    advance_act(m, d, b, d.rk, dx0 + 2 * nv)
    for i in range(nv):
        d.qvel[b, i] = d.qvel[b, i] + d.rk[b, dx0 + nv + i] * h
    integrate_pos(m, d.qpos, 0, d.rk, dx0, b, h)
    d.time[b] = d.time[b] + h


@ti.func
def integrate(m: ti.template(), d: ti.template(), b, integrator: ti.template()):
    """The update after the forward pass(es) of one step."""
    if ti.static(integrator == INT_EULER):
        euler(m, d, b)
    elif ti.static(integrator == INT_IMPLICITFAST):
        implicitfast(m, d, b)
    elif ti.static(integrator == INT_APPROX_IMPLICITFAST):
        approx_implicitfast(m, d, b)
    elif ti.static(integrator == INT_RK4):
        rk_finish(m, d, b)


def n_stages(integrator: int) -> int:
    return 4 if integrator == INT_RK4 else 1
