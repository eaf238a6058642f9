"""The noslip pass (MuJoCo's mj_solNoSlip and mj_dualFinish), per island.

After the main solve the normal forces stay fixed and the friction forces are re-solved without
regularization, by projected Gauss-Seidel sweeps on the dual cost f'(A f)/2 + f'b with A = J M^-1 J' (the
regularizer R removed from the diagonal, which is clamped at 1e-10) and b = J qacc_smooth - aref:
friction-loss rows are clamped to +-frictionloss, each pair of opposite pyramid edges moves its difference
with their sum held, and an elliptic contact's tangential forces solve a small QCQP inside the friction
ellipsoid of its normal force. A block change that raises the cost is undone. A sweep's scaled cost
decrease below noslip_tolerance ends the pass (scaled as the primal solver's: 1 / (meaninertia nv), or per
island 1 / the trace of its M, which is what mujoco 4.0.0 does; MuJoCo's 3.12 source scales islands as
the whole); the states are the dual ones (friction loss: LINEARPOS when
the force is at -loss, LINEARNEG at +loss) and qfrc_constraint = J' f, qacc = qacc_smooth + M^-1 J' f.

A's entries are formed on the fly: y = M^-1 J_row' by one factor solve, A_ij = J_i y_j, and the residual
J_i M^-1 J' f + b_i from u = M^-1 J' f, which is kept up to date as forces change (no nefc^2 matrix).
Per-row scratch: EFC_QUAD holds b, EFC_QUAD + 1 the inverse of A's diagonal for friction-loss rows.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTR_CONTACT_ELLIPTIC, CNSTR_CONTACT_PYRAMIDAL, CNSTR_EQUALITY, CNSTR_FRICTION_DOF, CNSTR_FRICTION_TENDON,
    CNSTRSTATE_CONE, CNSTRSTATE_LINEARNEG, CNSTRSTATE_LINEARPOS, CNSTRSTATE_QUADRATIC, CNSTRSTATE_SATISFIED,
    EFC_AREF, EFC_DIM, EFC_FORCE, EFC_FRICTION, EFC_FRICTIONLOSS, EFC_MU, EFC_QUAD, EFC_R, EFC_STATE, EFC_TYPE,
    DOF_MADR, EFCN_NITER, MINVAL, OPT_MEANINERTIA, OPT_NOSLIP_ITERATIONS, OPT_NOSLIP_TOLERANCE, QACC_SMOOTH,
    QFRC_CONSTRAINT, OPT_SOLVER_M, SN_NISLAND, SV_GRAD, SV_LTJ, SV_UPD, SVI_NITER, SZ_NV,
)
from rigidsim.engine.solver.island import lists
from rigidsim.engine.solver.variant import ELLIPTIC
from rigidsim.engine.solver.linalg import (
    dof, jdot, mul_jt, row, row_vector, small_chol, small_chol_solve, small_dot, solve_ld, vec_dot,
)

_B, _ARINV = EFC_QUAD, EFC_QUAD + 1  # per-row scratch: b = J qacc_smooth - aref; 1 / A_ii of friction-loss rows
_U = SV_GRAD  # u = M^-1 J' f
_Y = SV_LTJ  # y_l = M^-1 J_l' of the rows of the block being solved (up to 5)


# ----------------------------------------------------------------------------- small QCQPs


@ti.func
def qcqp2(a, bv, dv, r):
    """min x'Ax/2 + x'b subject to (x0/d0)^2 + (x1/d1)^2 <= r^2 (mju_QCQP2): in scaled coordinates a Newton
    search on the multiplier la of |x| = r. Returns (x, 1 if the constraint is active)."""
    b1 = bv[0] * dv[0]
    b2 = bv[1] * dv[1]
    a11 = a[0, 0] * dv[0] * dv[0]
    a22 = a[1, 1] * dv[1] * dv[1]
    a12 = a[0, 1] * dv[0] * dv[1]
    la = 0.0
    v1 = 0.0
    v2 = 0.0
    singular = False
    it = 0
    while it < 20:
        it += 1
        det = (a11 + la) * (a22 + la) - a12 * a12
        if det < 1e-10:
            singular = True
            break
        detinv = 1.0 / det
        p11 = (a22 + la) * detinv
        p22 = (a11 + la) * detinv
        p12 = -a12 * detinv
        v1 = -p11 * b1 - p12 * b2
        v2 = -p12 * b1 - p22 * b2
        val = v1 * v1 + v2 * v2 - r * r
        if val < 1e-10:
            break
        deriv = -2.0 * (p11 * v1 * v1 + 2.0 * p12 * v1 * v2 + p22 * v2 * v2)
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    res = ti.Vector([0.0] * 6)
    active = 0
    if not singular:
        res[0] = v1 * dv[0]
        res[1] = v2 * dv[1]
        active = 1 if la != 0.0 else 0
    return res, active


@ti.func
def qcqp3(a, bv, dv, r):
    """`qcqp2` in three dimensions (mju_QCQP3), the inverse from cofactors."""
    b1 = bv[0] * dv[0]
    b2 = bv[1] * dv[1]
    b3 = bv[2] * dv[2]
    a11 = a[0, 0] * dv[0] * dv[0]
    a22 = a[1, 1] * dv[1] * dv[1]
    a33 = a[2, 2] * dv[2] * dv[2]
    a12 = a[0, 1] * dv[0] * dv[1]
    a13 = a[0, 2] * dv[0] * dv[2]
    a23 = a[1, 2] * dv[1] * dv[2]
    la = 0.0
    v1 = 0.0
    v2 = 0.0
    v3 = 0.0
    singular = False
    it = 0
    while it < 20:
        it += 1
        p11 = (a22 + la) * (a33 + la) - a23 * a23
        p22 = (a11 + la) * (a33 + la) - a13 * a13
        p33 = (a11 + la) * (a22 + la) - a12 * a12
        p12 = a13 * a23 - a12 * (a33 + la)
        p13 = a12 * a23 - a13 * (a22 + la)
        p23 = a12 * a13 - a23 * (a11 + la)
        det = (a11 + la) * p11 + a12 * p12 + a13 * p13
        if det < 1e-10:
            singular = True
            break
        detinv = 1.0 / det
        p11 *= detinv
        p22 *= detinv
        p33 *= detinv
        p12 *= detinv
        p13 *= detinv
        p23 *= detinv
        v1 = -p11 * b1 - p12 * b2 - p13 * b3
        v2 = -p12 * b1 - p22 * b2 - p23 * b3
        v3 = -p13 * b1 - p23 * b2 - p33 * b3
        val = v1 * v1 + v2 * v2 + v3 * v3 - r * r
        if val < 1e-10:
            break
        deriv = -2.0 * (p11 * v1 * v1 + p22 * v2 * v2 + p33 * v3 * v3) - 4.0 * (p12 * v1 * v2 + p13 * v1 * v3
                                                                              + p23 * v2 * v3)
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    res = ti.Vector([0.0] * 6)
    active = 0
    if not singular:
        res[0] = v1 * dv[0]
        res[1] = v2 * dv[1]
        res[2] = v3 * dv[2]
        active = 1 if la != 0.0 else 0
    return res, active


@ti.func
def qcqp(a, bv, dv, r, n):
    """`qcqp2` in n <= 5 dimensions (mju_QCQP), with a Cholesky factor of A + la I."""
    sa = ti.Matrix.zero(float, 6, 6)
    sb = ti.Vector([0.0] * 6)
    for i in range(n):
        sb[i] = bv[i] * dv[i]
        for j in range(n):
            sa[i, j] = a[i, j] * dv[i] * dv[j]
    la = 0.0
    res = ti.Vector([0.0] * 6)
    singular = False
    it = 0
    while it < 20:
        it += 1
        ala = sa
        for i in range(n):
            ala[i, i] = ala[i, i] + la
        fac, rank = small_chol(ala, n, 1e-10)
        if rank < n:
            singular = True
            break
        res = -small_chol_solve(fac, sb, n)
        val = vec_dot(res, res, n) - r * r
        if val < 1e-10:
            break
        tmp = small_chol_solve(fac, res, n)
        deriv = -2.0 * vec_dot(res, tmp, n)
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    out = ti.Vector([0.0] * 6)
    active = 0
    if not singular:
        for i in range(n):
            out[i] = res[i] * dv[i]
        active = 1 if la != 0.0 else 0
    return out, active


@ti.func
def project_ellipsoid(f, normal, mu, n, feasible):
    """Scale the tangential forces f (n of them) onto the ellipsoid sum (f_j / mu_j)^2 = normal^2: always
    (feasible = 0) or only when outside it."""
    s = 0.0
    for j in range(n):
        s += f[j] * f[j] / (mu[j] * mu[j])
    normal2 = normal * normal
    out = f
    if feasible == 0 or s > normal2:
        scl = ti.sqrt(normal2 / ti.max(MINVAL, s))
        for j in range(n):
            out[j] = out[j] * scl
    return out


# ----------------------------------------------------------------------------- the sweeps


@ti.func
def dual_state(d: ti.template(), b, nrow, variant: ti.template()):
    """Every listed row's state from its force, as a dual solver sees it (dualState)."""
    c = 0
    while c < nrow:
        r = row(d, b, c)
        typ = d.efc_i[b, r, EFC_TYPE]
        f = d.efc[b, r, EFC_FORCE]
        step = 1
        if typ == CNSTR_EQUALITY:
            d.efc_i[b, r, EFC_STATE] = CNSTRSTATE_QUADRATIC
        elif typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
            fl = d.efc[b, r, EFC_FRICTIONLOSS]
            state = CNSTRSTATE_QUADRATIC
            if f <= -fl:
                state = CNSTRSTATE_LINEARPOS
            elif f >= fl:
                state = CNSTRSTATE_LINEARNEG
            d.efc_i[b, r, EFC_STATE] = state
        elif typ != CNSTR_CONTACT_ELLIPTIC:
            d.efc_i[b, r, EFC_STATE] = CNSTRSTATE_SATISFIED if f <= 0.0 else CNSTRSTATE_QUADRATIC
        elif ti.static(variant & ELLIPTIC):
            dim = d.efc_i[b, r, EFC_DIM]
            step = dim
            mu = d.efc[b, r, EFC_MU]
            t = ti.Vector([0.0] * 6)
            for j in range(1, dim):
                t[j - 1] = d.efc[b, r + j, EFC_FORCE] / d.efc[b, r + j, EFC_FRICTION]
            n = f / mu
            tn = ti.sqrt(vec_dot(t, t, dim - 1))
            state = CNSTRSTATE_CONE
            if mu * n >= tn:
                state = CNSTRSTATE_SATISFIED
            elif n + mu * tn <= 0.0:
                state = CNSTRSTATE_QUADRATIC
            for j in range(dim):
                d.efc_i[b, r + j, EFC_STATE] = state
        c += step


@ti.func
def _inv_a_row(m: ti.template(), d: ti.template(), b, nvi, r, col):
    """solver_v[:, col] = M^-1 J_r' on the island."""
    row_vector(d, b, r, nvi, col, 1.0)
    solve_ld(m, d, b, nvi, d.solver_v, col)


@ti.func
def _move_u(d: ti.template(), b, nvi, col, delta):
    """u += delta * (the y in solver_v[:, col])."""
    if delta != 0.0:
        for k in range(nvi):
            i = dof(d, b, k)
            d.solver_v[b, i, _U] = d.solver_v[b, i, _U] + d.solver_v[b, i, col] * delta


@ti.func
def _block(m: ti.template(), d: ti.template(), b, nvi, r0, n):
    """For the n rows r0.. (a pyramid edge pair or an elliptic contact's tangential rows): their y's in
    _Y.., A's block with its diagonal clamped at 1e-10, the residuals J_l u + b_l, the current forces and
    bc = residual - A f (the block's own part removed). Returns (A, residual, forces, bc)."""
    for l in range(n):
        _inv_a_row(m, d, b, nvi, r0 + l, _Y + l)
    a = ti.Matrix.zero(float, 6, 6)
    res = ti.Vector([0.0] * 6)
    old = ti.Vector([0.0] * 6)
    for l in range(n):
        for q in range(n):
            a[l, q] = jdot(d, b, r0 + l, nvi, d.solver_v, _Y + q)
        a[l, l] = ti.max(1e-10, a[l, l])
        res[l] = d.efc[b, r0 + l, _B] + jdot(d, b, r0 + l, nvi, d.solver_v, _U)
        old[l] = d.efc[b, r0 + l, EFC_FORCE]
    bc = ti.Vector([0.0] * 6)
    for l in range(n):
        bc[l] = res[l] - small_dot(a, l, old, n)
    return a, res, old, bc


@ti.func
def _finish_block(d: ti.template(), b, nvi, r0, n, a, res, old, new):
    """Keep the block's new forces unless they raise the cost by more than 1e-10 (costChange); move u by
    the kept change. Returns the cost change (<= 1e-10; 0 when undone)."""
    delta = new - old
    quad = 0.0
    for i in range(n):
        quad += delta[i] * small_dot(a, i, delta, n)
    change = 0.5 * quad + vec_dot(delta, res, n)
    if change > 1e-10:
        change = 0.0
    else:
        for l in range(n):
            d.efc[b, r0 + l, EFC_FORCE] = new[l]
            _move_u(d, b, nvi, _Y + l, delta[l])
    return change


@ti.func
def _sweep(m: ti.template(), d: ti.template(), b, nvi, nrow, variant: ti.template()):
    """One Gauss-Seidel sweep over the island's friction: friction loss, then the contacts. Returns the cost
    decrease."""
    improvement = 0.0
    for c in range(nrow):
        r = row(d, b, c)
        typ = d.efc_i[b, r, EFC_TYPE]
        if typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
            res = d.efc[b, r, _B] + jdot(d, b, r, nvi, d.solver_v, _U)
            old = d.efc[b, r, EFC_FORCE]
            ainv = d.efc[b, r, _ARINV]
            f = old - res * ainv
            fl = d.efc[b, r, EFC_FRICTIONLOSS]
            if f < -fl:
                f = -fl
            elif f > fl:
                f = fl
            d.efc[b, r, EFC_FORCE] = f
            delta = f - old
            improvement -= 0.5 * delta * delta / ainv + delta * res
            if delta != 0.0:
                _inv_a_row(m, d, b, nvi, r, _Y)
                _move_u(d, b, nvi, _Y, delta)
    # contacts: each pair of opposite pyramid edges, or an elliptic contact's tangential rows, is a block
    c = 0
    while c < nrow:
        r = row(d, b, c)
        typ = d.efc_i[b, r, EFC_TYPE]
        dim = d.efc_i[b, r, EFC_DIM]
        pyramid = typ == CNSTR_CONTACT_PYRAMIDAL
        nblock = 0
        step = 1
        if pyramid:
            nblock = dim - 1
            step = 2 * (dim - 1)
        elif ti.static(variant & ELLIPTIC):
            if typ == CNSTR_CONTACT_ELLIPTIC:
                nblock = 1
                step = dim
        for e in range(nblock):
            r0 = r + 2 * e if pyramid else r + 1
            n = 2 if pyramid else dim - 1
            a, res, old, bc = _block(m, d, b, nvi, r0, n)
            new = old
            if pyramid:
                # f0 = mid + y, f1 = mid - y with the pair's sum held: minimize over y in [-mid, mid]
                mid = 0.5 * (old[0] + old[1])
                k1 = a[0, 0] + a[1, 1] - a[0, 1] - a[1, 0]
                k0 = mid * (a[0, 0] - a[1, 1]) + bc[0] - bc[1]
                if k1 < MINVAL:
                    new[0] = mid
                    new[1] = mid
                else:
                    y = -k0 / k1
                    if y < -mid:
                        new[0] = 0.0
                        new[1] = 2.0 * mid
                    elif y > mid:
                        new[0] = 2.0 * mid
                        new[1] = 0.0
                    else:
                        new[0] = mid + y
                        new[1] = mid - y
            elif ti.static(variant & ELLIPTIC):
                # the tangential forces inside the friction ellipsoid of the normal force
                normal = d.efc[b, r, EFC_FORCE]
                mu = ti.Vector([0.0] * 6)
                for j in range(n):
                    mu[j] = d.efc[b, r + 1 + j, EFC_FRICTION]
                new = ti.Vector([0.0] * 6)
                if not (normal < MINVAL):
                    v = ti.Vector([0.0] * 6)
                    active = 0
                    if n == 2:
                        v, active = qcqp2(a, bc, mu, normal)
                    elif n == 3:
                        v, active = qcqp3(a, bc, mu, normal)
                    else:
                        v, active = qcqp(a, bc, mu, normal, n)
                    if active != 0:
                        v = project_ellipsoid(v, normal, mu, n, 0)
                    new = v
            improvement -= _finish_block(d, b, nvi, r0, n, a, res, old, new)
        c += step
    return improvement


@ti.func
def noslip(m: ti.template(), d: ti.template(), b, variant: ti.template()):
    """The noslip pass of env b after `solve.solve` (its islands): re-solve the friction forces, then
    qfrc_constraint = J' f and qacc = qacc_smooth + M^-1 qfrc_constraint. Adds the sweeps to the iteration
    counts (EFCN_NITER and each island's SVI_NITER)."""
    nv = m.opt_i[SZ_NV]
    nisland = d.solver_n[b, SN_NISLAND]
    maxiter = m.opt_i[OPT_NOSLIP_ITERATIONS]
    tol = m.opt_f[OPT_NOSLIP_TOLERANCE]
    nvi, nrow = lists(m, d, b, -1)
    mul_jt(d, b, nvi, nrow, d.solver_v, _U)
    solve_ld(m, d, b, nvi, d.solver_v, _U)
    for c in range(nrow):
        r = row(d, b, c)
        d.efc[b, r, _B] = jdot(d, b, r, nvi, d.dof, QACC_SMOOTH) - d.efc[b, r, EFC_AREF]
    total = 0
    for k in range(ti.max(nisland, 1)):
        nvi, nrow = lists(m, d, b, k if nisland > 0 else -1)
        # the improvement's scale: as the primal solver's (4.0.0 scales an island by its own inertia)
        scale = 1.0 / (m.opt_f[OPT_MEANINERTIA] * ti.max(1, nv))
        if nisland > 0:
            inertia = 0.0
            for q in range(nvi):
                inertia += d.M[b, m.dof_i[dof(d, b, q), DOF_MADR], m.opt_i[OPT_SOLVER_M]]
            scale = 1.0 / inertia
        for c in range(nrow):
            r = row(d, b, c)
            typ = d.efc_i[b, r, EFC_TYPE]
            if typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
                _inv_a_row(m, d, b, nvi, r, _Y)
                d.efc[b, r, _ARINV] = 1.0 / ti.max(MINVAL, jdot(d, b, r, nvi, d.solver_v, _Y))
        dual_state(d, b, nrow, variant)
        it = 0
        while it < maxiter:
            improvement = 0.0
            if it == 0:
                for c in range(nrow):
                    r = row(d, b, c)
                    f = d.efc[b, r, EFC_FORCE]
                    improvement += 0.5 * f * f * d.efc[b, r, EFC_R]
            improvement += _sweep(m, d, b, nvi, nrow, variant)
            dual_state(d, b, nrow, variant)
            improvement *= scale
            it += 1
            if improvement < tol:
                break
        d.solver_vi[b, k, SVI_NITER] = d.solver_vi[b, k, SVI_NITER] + it
        total += it
    d.efc_n[b, EFCN_NITER] = d.efc_n[b, EFCN_NITER] + total
    # qfrc_constraint and qacc from the forces
    nvi, nrow = lists(m, d, b, -1)
    mul_jt(d, b, nvi, nrow, d.dof, QFRC_CONSTRAINT)
    for i in range(nv):
        d.solver_v[b, i, SV_UPD] = d.dof[b, i, QFRC_CONSTRAINT]
    solve_ld(m, d, b, nvi, d.solver_v, SV_UPD)
    for i in range(nv):
        d.qacc[b, i] = d.solver_v[b, i, SV_UPD] + d.dof[b, i, QACC_SMOOTH]
