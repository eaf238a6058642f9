"""The constraint update of the primal solver (MuJoCo's mj_constraintUpdate_impl and PrimalUpdateConstraint).

Given jar = J qacc - aref of every listed row (``efc[b, r, EFC_JAREF]``), each row gets a state, a force and
a share of the constraint cost s(jar):

* equality rows are quadratic: cost D jar^2 / 2, force -D jar;
* friction-loss rows (loss f, regularizer R) are Huber: linear beyond |jar| >= R f (force -+f), quadratic
  inside;
* limits, frictionless and pyramidal contact rows are one-sided: satisfied (no force) for jar >= 0, quadratic
  below;
* an elliptic contact (dim rows) maps its rows to a circular cone, U0 = mu jar0 and Uj = friction_j jar_j,
  with N = U0 and T = |U1..|: above the cone (N >= mu T) it is satisfied, below the dual cone (mu N + T <= 0)
  every row is quadratic, and between the two it is in the CONE state with cost Dm (N - mu T)^2 / 2,
  Dm = D0 / (mu^2 (1 + mu^2)).

`cone_hessian` is that middle zone's second derivative in jar (the 'H' MuJoCo keeps per contact), which
Newton's factor takes as a rank-dim update.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTR_CONTACT_ELLIPTIC, CNSTR_EQUALITY, CNSTR_FRICTION_DOF, CNSTR_FRICTION_TENDON, CNSTRSTATE_CONE,
    CNSTRSTATE_LINEARNEG, CNSTRSTATE_LINEARPOS, CNSTRSTATE_QUADRATIC, CNSTRSTATE_SATISFIED, EFC_D, EFC_DIM,
    EFC_FORCE, EFC_FRICTION, EFC_FRICTIONLOSS, EFC_JAREF, EFC_MU, EFC_R, EFC_STATE, EFC_TYPE, QFRC_CONSTRAINT,
)
from rigidsim.engine.solver.linalg import mul_jt, row_arrays, row_bases, vec_dot
from rigidsim.engine.solver.variant import ELLIPTIC


@ti.func
def cone_coords(d: ti.template(), b, r, dim, jar_col: ti.template()):
    """The elliptic contact of rows r.. mapped to the circular cone: (U, N, T, mu) with U[0] = mu jar0,
    U[j] = friction_j jar_j, N = U[0] and T = |U[1:dim]| (mju_norm's order)."""
    mu = d.efc[b, r, EFC_MU]
    u = ti.Vector([0.0] * 6)
    u[0] = d.efc[b, r, jar_col] * mu
    for j in range(1, dim):
        u[j] = d.efc[b, r + j, jar_col] * d.efc[b, r + j, EFC_FRICTION]
    t = ti.Vector([0.0] * 6)
    for j in range(dim - 1):
        t[j] = u[j + 1]
    return u, u[0], ti.sqrt(vec_dot(t, t, dim - 1)), mu


@ti.func
def constraint_update(d: ti.template(), b, nrow, variant: ti.template()):
    """States, forces (EFC_STATE, EFC_FORCE) and the constraint cost of the listed rows from their jar in
    EFC_JAREF; returns (cost, rows in the CONE state). Rows are read through flat offsets computed once per
    call (`linalg.row_bases`): a row's fields are at a constant distance from its offset, so no access reloads
    the arrays' per-env strides."""
    fa, ia, la, fs, js, ls = ti.static(*row_arrays(d))
    fb, ib, lb = row_bases(d, b)
    cost = 0.0
    ncone = 0
    c = 0
    while c < nrow:
        r = la[lb + c * ls]
        fr = fb + r * fs  # row r's floats: fa[fr + EFC_...]
        ir = ib + r * js  # and its ints
        typ = ia[ir + EFC_TYPE]
        jar = fa[fr + EFC_JAREF]
        dr = fa[fr + EFC_D]
        step = 1
        if typ == CNSTR_EQUALITY:
            cost += 0.5 * dr * jar * jar
            fa[fr + EFC_FORCE] = -dr * jar
            ia[ir + EFC_STATE] = CNSTRSTATE_QUADRATIC
        elif typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
            rr = fa[fr + EFC_R]
            f = fa[fr + EFC_FRICTIONLOSS]
            if jar <= -rr * f:
                cost += -0.5 * rr * f * f - f * jar
                fa[fr + EFC_FORCE] = f
                ia[ir + EFC_STATE] = CNSTRSTATE_LINEARNEG
            elif jar >= rr * f:
                cost += -0.5 * rr * f * f + f * jar
                fa[fr + EFC_FORCE] = -f
                ia[ir + EFC_STATE] = CNSTRSTATE_LINEARPOS
            else:
                cost += 0.5 * dr * jar * jar
                fa[fr + EFC_FORCE] = -dr * jar
                ia[ir + EFC_STATE] = CNSTRSTATE_QUADRATIC
        elif typ != CNSTR_CONTACT_ELLIPTIC:
            if jar >= 0.0:
                fa[fr + EFC_FORCE] = 0.0
                ia[ir + EFC_STATE] = CNSTRSTATE_SATISFIED
            else:
                cost += 0.5 * dr * jar * jar
                fa[fr + EFC_FORCE] = -dr * jar
                ia[ir + EFC_STATE] = CNSTRSTATE_QUADRATIC
        elif ti.static(variant & ELLIPTIC):  # elliptic rows exist only when the variant compiles them
            dim = ia[ir + EFC_DIM]
            step = dim
            u, n, t, mu = cone_coords(d, b, r, dim, EFC_JAREF)
            state = CNSTRSTATE_CONE
            if n >= mu * t or (t <= 0.0 and n >= 0.0):
                state = CNSTRSTATE_SATISFIED
                for j in range(dim):
                    fa[fr + j * fs + EFC_FORCE] = 0.0
            elif mu * n + t <= 0.0 or (t <= 0.0 and n < 0.0):
                state = CNSTRSTATE_QUADRATIC
                for j in range(dim):
                    jj = fa[fr + j * fs + EFC_JAREF]
                    dj = fa[fr + j * fs + EFC_D]
                    cost += 0.5 * dj * jj * jj
                    fa[fr + j * fs + EFC_FORCE] = -dj * jj
            else:
                dm = dr / (mu * mu * (1.0 + mu * mu))
                nmt = n - mu * t
                cost += 0.5 * dm * nmt * nmt
                f0 = -dm * nmt * mu
                fa[fr + EFC_FORCE] = f0
                for j in range(1, dim):
                    fa[fr + j * fs + EFC_FORCE] = -f0 / t * u[j] * fa[fr + j * fs + EFC_FRICTION]
                ncone += dim
            for j in range(dim):
                ia[ir + j * js + EFC_STATE] = state
        c += step
    return cost, ncone


@ti.func
def cone_hessian(d: ti.template(), b, r, dim):
    """The cost's Hessian in jar of the elliptic contact at rows r.. in the CONE state, as a local 6x6 matrix
    (dim x dim used): in cone coordinates the first row is (1, -mu U/T), the tangent block is
    mu N / T^3 U U' + (mu^2 - mu N / T) I; then scaled on both sides by diag(mu, friction) and by Dm."""
    u, n, t, mu = cone_coords(d, b, r, dim, EFC_JAREF)
    dm = d.efc[b, r, EFC_D] / (mu * mu * (1.0 + mu * mu))
    h = ti.Matrix.zero(float, 6, 6)
    scl = -mu / t
    h[0, 0] = 1.0
    for j in range(1, dim):
        h[0, j] = scl * u[j]
    scl = mu * n / (t * t * t)
    for k in range(1, dim):
        for j in range(k, dim):
            h[k, j] = scl * u[j] * u[k]
    scl = mu * mu - mu * n / t
    for j in range(1, dim):
        h[j, j] = h[j, j] + scl
    for k in range(dim):
        sk = dm * (mu if k == 0 else d.efc[b, r + k, EFC_FRICTION])
        for j in range(k, dim):
            h[k, j] = h[k, j] * (sk * (mu if j == 0 else d.efc[b, r + j, EFC_FRICTION]))
    for k in range(dim):
        for j in range(k + 1, dim):
            h[j, k] = h[k, j]
    return h


@ti.func
def primal_update(d: ti.template(), b, nvi, nrow, jt, variant: ti.template()):
    """The primal solver's update at the qacc in solver_v[:, SV_QACC] (EFC_JAREF given): states and forces
    and, when jt != 0, qfrc_constraint = J' force. Returns (constraint cost, rows in the CONE state)."""
    cost, ncone = constraint_update(d, b, nrow, variant)
    if jt != 0:
        mul_jt(d, b, nvi, nrow, d.dof, QFRC_CONSTRAINT)
    return cost, ncone
