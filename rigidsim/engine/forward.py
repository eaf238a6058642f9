"""Forward dynamics and integrators of one env: MuJoCo's engine_forward.

``forward`` is mj_forward's smooth part (position, velocity, actuation,
acceleration stages; with no constraint rows, qacc = qacc_smooth; the
constraint stage slots in after ``fwd_acceleration``). Integrators:
``euler`` (semi-implicit, with MuJoCo's implicit dof damping unless
eulerdamp is disabled), ``implicitfast`` (M - h*dqfrc/dqvel without the RNE
term), Genesis's ``approximate_implicitfast`` (the implicitfast matrix is
factored once in ``forward`` and used for qacc_smooth itself, then an Euler
update), and ``rk4`` (MuJoCo's 4-stage Runge-Kutta; Munthe-Kaas on the
quaternion manifold for ball and free joints). ``advance`` is mj_advance:
act, then qvel, then qpos (quaternions integrated on the manifold and
normalized as MuJoCo does), then time.

The integrator is a compile-time switch (`ti.template`).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.actuation import (
    actuator_deriv, actuator_velocity, add_outer_to_qderiv, fwd_actuation, next_activation, transmission,
    wrap_setpoint,
)
from rigidsim.engine.layout import (
    ACT_ACTADR, ACT_ACTNUM, DOF_DAMPING, DOF_MADR, DSBL_ACTUATION, DSBL_DAMPER, INT_APPROX_IMPLICITFAST, INT_EULER,
    INT_IMPLICITFAST, INT_RK4, JNT_BALL, JNT_DOFADR, JNT_FREE, JNT_QPOSADR, JNT_TYPE, OPT_DISABLEFLAGS,
    OPT_EULERDAMP, OPT_TIMESTEP, QACC_FREE, QACC_INT, QACC_SMOOTH, QFRC_ACTUATOR, QFRC_BIAS, QFRC_PASSIVE,
    QFRC_SMOOTH, QFRC_CONSTRAINT, QACC_WARMSTART, NDM, QH, QHDIAGINV, QLD, QLDIAGINV, QM, SZ_NA, SZ_NJNT, SZ_NM, SZ_NQ, SZ_NTENDON, SZ_NU, SZ_NV,
    TEN_DAMPING, ACT_DYNTYPE, ACT_WRAPPERIOD, ACTUATOR_LENGTH, DYN_INTEGRATOR, CDOF, CDOF_DOT, CRB, CVEL, JNT_BODYID, JNT_STANDALONE,
)
from rigidsim.engine.passive import passive
from rigidsim.engine.smooth import com_pos, com_vel, crb, factor_m, kinematics, rne, solve_m
from rigidsim.engine.tendon import tendon, tendon_velocity

# ----------------------------------------------------------------------------- forward


@ti.func
def implicit_matrix(m: ti.template(), d: ti.template(), b, free_blocks: ti.template()):
    """qH = qM - h * qDeriv: qDeriv the derivative of qfrc_actuator + qfrc_passive in qvel (actuator gains and
    biases, dof and tendon damping; no RNE term), reduced to qM's sparsity as implicitfast does; qDeriv is
    built in the QH column itself. With `free_blocks`, standalone free bodies are solved first, from qM and
    qDeriv (`free_body_implicit`)."""
    nM = m.opt_i[SZ_NM]
    h = m.opt_f[OPT_TIMESTEP]
    for k in range(nM):
        d.M[b, k, QH] = 0.0
    actuator_deriv(m, d, b)
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_DAMPER) == 0:
        for i in range(m.opt_i[SZ_NV]):
            adr = m.dof_i[i, DOF_MADR]
            d.M[b, adr, QH] = d.M[b, adr, QH] - m.dof_f[i, DOF_DAMPING]
        for t in range(m.opt_i[SZ_NTENDON]):
            damping = m.ten_f[t, TEN_DAMPING]
            if damping != 0.0:
                add_outer_to_qderiv(m, d, b, t, 1.0, -damping)
    if ti.static(free_blocks):
        free_body_implicit(m, d, b)
    for k in range(nM):
        d.M[b, k, QH] = d.M[b, k, QM] + (-h) * d.M[b, k, QH]


@ti.func
def fwd_acceleration(m: ti.template(), d: ti.template(), b, simple: ti.template()):
    """qfrc_smooth = passive - bias + actuator; qacc_smooth = M \\ qfrc_smooth."""
    for i in range(m.opt_i[SZ_NV]):
        f = d.dof[b, i, QFRC_PASSIVE] - d.dof[b, i, QFRC_BIAS]
        f = f + d.dof[b, i, QFRC_ACTUATOR]
        d.dof[b, i, QFRC_SMOOTH] = f
        d.dof[b, i, QACC_SMOOTH] = f
    solve_m(m, d, b, QLD, QLDIAGINV, QACC_SMOOTH, simple)


@ti.func
def no_constraint(m: ti.template(), d: ti.template(), b, kinds: ti.template()):
    """The constraint stage of a scene without constraints: qacc = qacc_smooth."""
    for i in range(m.opt_i[SZ_NV]):
        d.qacc[b, i] = d.dof[b, i, QACC_SMOOTH]


@ti.func
def forward(m: ti.template(), d: ti.template(), b, integrator: ti.template(), constraint: ti.template(),
            kinds: ti.template()):
    """The forward pass at the current state of env b; writes qacc. `constraint`: `no_constraint` for the
    smooth pass alone (qacc = qacc_smooth), or the constraint stage (`rigidsim.engine.constraint.stage.constraint_stage`,
    from a module imported only for scenes with constraints) run after the smooth acceleration with the
    collider mask `kinds`; it writes qacc and qfrc_constraint."""
    # position
    kinematics(m, d, b, True)
    com_pos(m, d, b)
    tendon(m, d, b)
    crb(m, d, b)
    transmission(m, d, b)
    # velocity
    tendon_velocity(m, d, b)
    actuator_velocity(m, d, b)
    com_vel(m, d, b)
    passive(m, d, b)
    rne(m, d, b)
    # actuation
    fwd_actuation(m, d, b)
    # factorization (after actuation: approximate_implicitfast factors M - h*qDeriv)
    if ti.static(integrator == INT_APPROX_IMPLICITFAST):
        implicit_matrix(m, d, b, False)
        factor_m(m, d, b, QH, QLD, QLDIAGINV, False)
    else:
        factor_m(m, d, b, QLD, QLD, QLDIAGINV, True)  # crb wrote qM into QLD too
    # acceleration
    fwd_acceleration(m, d, b, ti.static(integrator != INT_APPROX_IMPLICITFAST))
    constraint(m, d, b, kinds)


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
        # an integrator servo on a ball joint keeps its setpoint at the representative nearest its length
        for i in range(m.opt_i[SZ_NU]):
            period = m.act_f[i, ACT_WRAPPERIOD]
            if period > 0.0 and m.act_i[i, ACT_DYNTYPE] == DYN_INTEGRATOR:
                adr = m.act_i[i, ACT_ACTADR] + m.act_i[i, ACT_ACTNUM] - 1
                d.act[b, adr] = wrap_setpoint(d.act[b, adr], d.actu[b, i, ACTUATOR_LENGTH], period)


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
        factor_m(m, d, b, QH, QH, QHDIAGINV, True)  # a diagonal change keeps simple rows simple
        for i in range(nv):
            d.dof[b, i, QACC_INT] = d.dof[b, i, QFRC_SMOOTH] + d.dof[b, i, QFRC_CONSTRAINT]
        solve_m(m, d, b, QH, QHDIAGINV, QACC_INT, True)
    else:
        for i in range(nv):
            d.dof[b, i, QACC_INT] = d.qacc[b, i]
    advance_euler(m, d, b)


@ti.func
def free_body_implicit(m: ti.template(), d: ti.template(), b):
    """MuJoCo 4's implicitfast on a standalone free body (a free joint whose tree has no other dofs): its 6x6
    block is solved exactly, (M - h (qDeriv - d qfrc_bias / d qvel)) qacc = qfrc_smooth, the gyroscopic
    derivative of the bias included (which makes the block asymmetric), into QACC_FREE; `implicitfast` puts
    it in QACC_INT after the global solve. Reads qDeriv from the QH column before qH is formed. The tree's
    composite inertia (crb) carries any welded child bodies."""
    h = m.opt_f[OPT_TIMESTEP]
    for j in range(m.opt_i[SZ_NJNT]):
        if m.jnt_i[j, JNT_STANDALONE] != 0:
            da = m.jnt_i[j, JNT_DOFADR]
            body = m.jnt_i[j, JNT_BODYID]
            inert = sm.getv(d.body, b, body, CRB, 10)
            cvel = sm.getv(d.body, b, body, CVEL, 6)
            icvel = sm.mul_inert_vec(inert, cvel)
            srot = ti.Vector([0.0] * 6)  # the rotational dofs' part of cvel
            for k in ti.static(range(3, 6)):
                srot = srot + sm.getv(d.dof, b, da + k, CDOF, 6) * d.qvel[b, da + k]
            a = ti.Matrix.zero(float, 6, 6)
            # a run-time loop over the columns (dynamic indexing into the local matrix): one copy of the
            # column's spatial algebra instead of six unrolled ones (the implicitfast variant's compile time)
            for k in range(6):
                sk = sm.getv(d.dof, b, da + k, CDOF, 6)
                # d cacc / d qvel_k: cdof_dot_k, and for a translational k the change of the rotational
                # dofs' cdof_dot (each is (translational cvel) x cdof)
                dcacc = sm.getv(d.dof, b, da + k, CDOF_DOT, 6)
                if k < 3:
                    dcacc = dcacc + sm.cross_motion(sk, srot)
                dcfrc = sm.mul_inert_vec(inert, dcacc) + sm.cross_force(sk, icvel) + \
                    sm.cross_force(cvel, sm.mul_inert_vec(inert, sk))
                for r in ti.static(range(6)):
                    dbias = sm.dot6(sm.getv(d.dof, b, da + r, CDOF, 6), dcfrc)
                    # qM and qDeriv (both symmetric) are stored in row max(r, k), column min(r, k)
                    adr = m.dof_i[da + ti.max(r, k), DOF_MADR] + ti.abs(r - k)
                    a[r, k] = d.M[b, adr, QM] - h * (d.M[b, adr, QH] - dbias)
            x = ti.Vector([d.dof[b, da + r, QFRC_SMOOTH] + d.dof[b, da + r, QFRC_CONSTRAINT]
                           for r in ti.static(range(6))])
            # Gaussian elimination (the matrix is the positive definite qM block plus an O(h) term)
            for p in ti.static(range(6)):
                for r in ti.static(range(p + 1, 6)):
                    f = a[r, p] / a[p, p]
                    for c in ti.static(range(p + 1, 6)):
                        a[r, c] = a[r, c] - f * a[p, c]
                    x[r] = x[r] - f * x[p]
            for p in ti.static(range(5, -1, -1)):
                v = x[p]
                for c in ti.static(range(p + 1, 6)):
                    v = v - a[p, c] * x[c]
                x[p] = v / a[p, p]
            for r in ti.static(range(6)):
                d.dof[b, da + r, QACC_FREE] = x[r]


@ti.func
def implicitfast(m: ti.template(), d: ti.template(), b):
    """mj_implicit for implicitfast: qacc = (M - h*qDeriv) \\ qfrc_smooth, then advance."""
    implicit_matrix(m, d, b, True)
    factor_m(m, d, b, QH, QH, QHDIAGINV, False)
    for i in range(m.opt_i[SZ_NV]):
        d.dof[b, i, QACC_INT] = d.dof[b, i, QFRC_SMOOTH] + d.dof[b, i, QFRC_CONSTRAINT]
    solve_m(m, d, b, QH, QHDIAGINV, QACC_INT, False)
    for j in range(m.opt_i[SZ_NJNT]):
        if m.jnt_i[j, JNT_STANDALONE] != 0:
            da = m.jnt_i[j, JNT_DOFADR]
            for r in ti.static(range(6)):
                d.dof[b, da + r, QACC_INT] = d.dof[b, da + r, QACC_FREE]
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
def dexp_inv(theta, w):
    """The inverse of the exponential map's differential on SO(3) at rotation vector theta, applied to w:
    w + theta x w / 2 + c(t) theta x (theta x w), c(t) = 1/t^2 - (1 + cos t) / (2 t sin t), t = |theta|."""
    t = ti.sqrt(theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2])
    r = w + sm.cross3(theta, w) * 0.5
    if t > 0.0:
        c = 1.0 / (t * t) - (1.0 + ti.cos(t)) / (2.0 * t * ti.sin(t))
        r = r + sm.cross3(theta, sm.cross3(theta, w)) * c
    return r


@ti.func
def rk_store(m: ti.template(), d: ti.template(), b, stage):
    """F[stage] = (qacc, act_dot); at stage 0 also X[0] = (qpos, qvel, act). At stages 1-3 the rotational
    velocities of ball and free joints in X[stage] become Munthe-Kaas increments dexp^-1(theta, w), theta the
    rotation that took X[0] to X[stage] (still in dX): RK4 on the quaternion manifold, as MuJoCo 4 steps it."""
    nq, nv, na, nx, f0, dx0 = rk_offsets(m)
    if stage == 0:
        for i in range(nq):
            d.rk[b, i] = d.qpos[b, i]
        for i in range(nv):
            d.rk[b, nq + i] = d.qvel[b, i]
        for i in range(na):
            d.rk[b, nq + nv + i] = d.act[b, i]
    else:
        h = m.opt_f[OPT_TIMESTEP]
        xo = stage * nx + nq
        for j in range(m.opt_i[SZ_NJNT]):
            jt = m.jnt_i[j, JNT_TYPE]
            if jt == JNT_FREE or jt == JNT_BALL:
                va = m.jnt_i[j, JNT_DOFADR] + (3 if jt == JNT_FREE else 0)
                theta = ti.Vector([d.rk[b, dx0 + va + c] for c in ti.static(range(3))]) * h
                w = ti.Vector([d.rk[b, xo + va + c] for c in ti.static(range(3))])
                k = dexp_inv(theta, w)
                for c in ti.static(range(3)):
                    d.rk[b, xo + va + c] = k[c]
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
    """The update after the forward pass(es) of one step; qacc (the last forward pass's) is kept as the next
    step's solver warmstart, as mj_advance keeps it."""
    for i in range(m.opt_i[SZ_NV]):
        d.dof[b, i, QACC_WARMSTART] = d.qacc[b, i]
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
