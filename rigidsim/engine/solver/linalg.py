"""Linear algebra of the constraint solver, over the island being solved.

The solver works on one constraint island at a time (or on every dof and row at once). `island.lists`
writes the island's dofs, ascending, into ``solver_vi[b, k, SVI_LIST]`` (k < nvi) and its rows, in
their order, into ``solver_efc_i[b, c, SEI_LIST]`` (c < nrow); every function here takes those counts
and walks the lists. Per-dof vectors stay indexed by dof (a column of ``solver_v`` or ``dof``); the dense
Hessian is indexed by position in the list.

Sums follow MuJoCo's order where it is cheap to do so: `dot` keeps mju_dot's four partial sums, the
sparse mass-matrix product is mju_mulSymVecSparse's, and the Cholesky routines are mju_cholFactor,
mju_cholSolve and mju_cholUpdate, so that the termination tests see the same rounding.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    DOF_MADR, DOF_MROWNNZ, EFC_FORCE, M_COLIND, MINVAL, QLD, QLDIAGINV, QM, SEI_LIST, SVI_LIST,
)


@ti.func
def dof(d: ti.template(), b, k):
    """The k-th dof of the island's list."""
    return d.solver_vi[b, k, SVI_LIST]


@ti.func
def row(d: ti.template(), b, c):
    """The c-th constraint row of the island's list."""
    return d.solver_efc_i[b, c, SEI_LIST]


@ti.func
def dot(d: ti.template(), b, n, x: ti.template(), cx, y: ti.template(), cy):
    """sum over the island's n dofs i of x[b, i, cx] * y[b, i, cy], summed as mju_dot does (four running
    partial sums, then the remainder)."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        i2 = dof(d, b, k + 2)
        i3 = dof(d, b, k + 3)
        r0 = r0 + x[b, i0, cx] * y[b, i0, cy]
        r1 = r1 + x[b, i1, cx] * y[b, i1, cy]
        r2 = r2 + x[b, i2, cx] * y[b, i2, cy]
        r3 = r3 + x[b, i3, cx] * y[b, i3, cy]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        i2 = dof(d, b, k + 2)
        res = res + (x[b, i0, cx] * y[b, i0, cy] + x[b, i1, cx] * y[b, i1, cy] + x[b, i2, cx] * y[b, i2, cy])
    elif rem == 2:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        res = res + (x[b, i0, cx] * y[b, i0, cy] + x[b, i1, cx] * y[b, i1, cy])
    elif rem == 1:
        i0 = dof(d, b, k)
        res = res + x[b, i0, cx] * y[b, i0, cy]
    return res


@ti.func
def jdot(d: ti.template(), b, r, n, y: ti.template(), cy):
    """Row r of efc_J times the vector in column cy of y, over the island's n dofs (mju_dot's order)."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        i2 = dof(d, b, k + 2)
        i3 = dof(d, b, k + 3)
        r0 = r0 + d.efc_J[b, r, i0] * y[b, i0, cy]
        r1 = r1 + d.efc_J[b, r, i1] * y[b, i1, cy]
        r2 = r2 + d.efc_J[b, r, i2] * y[b, i2, cy]
        r3 = r3 + d.efc_J[b, r, i3] * y[b, i3, cy]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        i2 = dof(d, b, k + 2)
        res = res + (d.efc_J[b, r, i0] * y[b, i0, cy] + d.efc_J[b, r, i1] * y[b, i1, cy]
                     + d.efc_J[b, r, i2] * y[b, i2, cy])
    elif rem == 2:
        i0 = dof(d, b, k)
        i1 = dof(d, b, k + 1)
        res = res + (d.efc_J[b, r, i0] * y[b, i0, cy] + d.efc_J[b, r, i1] * y[b, i1, cy])
    elif rem == 1:
        i0 = dof(d, b, k)
        res = res + d.efc_J[b, r, i0] * y[b, i0, cy]
    return res


@ti.func
def hdot(h: ti.template(), b, i, j, n):
    """Rows i and j of the dense matrix h (positions), first n columns, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + h[b, i, k] * h[b, j, k]
        r1 = r1 + h[b, i, k + 1] * h[b, j, k + 1]
        r2 = r2 + h[b, i, k + 2] * h[b, j, k + 2]
        r3 = r3 + h[b, i, k + 3] * h[b, j, k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (h[b, i, k] * h[b, j, k] + h[b, i, k + 1] * h[b, j, k + 1] + h[b, i, k + 2] * h[b, j, k + 2])
    elif rem == 2:
        res = res + (h[b, i, k] * h[b, j, k] + h[b, i, k + 1] * h[b, j, k + 1])
    elif rem == 1:
        res = res + h[b, i, k] * h[b, j, k]
    return res


@ti.func
def mul_m(m: ti.template(), d: ti.template(), b, n, x: ti.template(), cx, res: ti.template(), cres):
    """res[:, cres] = M x[:, cx] on the island's n dofs, from qM's legacy sparse rows (the diagonal, then the
    row's ancestors nearest first), adding each off-diagonal entry to both its row and its column as
    mju_mulSymVecSparse does. An island holds whole kinematic trees, so every entry stays inside it."""
    for k in range(n):
        i = dof(d, b, k)
        adr = m.dof_i[i, DOF_MADR]
        xi = x[b, i, cx]
        res[b, i, cres] = d.M[b, adr, QM] * xi
        for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
            j = m.m_i[adr + p, M_COLIND]
            val = d.M[b, adr + p, QM]
            res[b, i, cres] = res[b, i, cres] + val * x[b, j, cx]
            res[b, j, cres] = res[b, j, cres] + val * xi


@ti.func
def solve_ld(m: ti.template(), d: ti.template(), b, n, x: ti.template(), cx):
    """x[:, cx] = M^-1 x[:, cx] on the island's n dofs, from the L'DL factor of the forward pass (column QLD
    of d.M, 1/D in d.dof[:, QLDIAGINV]); every row of the factor is used (no simple-dof shortcut)."""
    for kk in range(n):
        i = dof(d, b, n - 1 - kk)
        xi = x[b, i, cx]
        if xi != 0.0:
            adr = m.dof_i[i, DOF_MADR]
            for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
                j = m.m_i[adr + p, M_COLIND]
                x[b, j, cx] = x[b, j, cx] - d.M[b, adr + p, QLD] * xi
    for k in range(n):
        i = dof(d, b, k)
        x[b, i, cx] = x[b, i, cx] * d.dof[b, i, QLDIAGINV]
    for k in range(n):
        i = dof(d, b, k)
        adr = m.dof_i[i, DOF_MADR]
        xi = x[b, i, cx]
        for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
            xi -= d.M[b, adr + p, QLD] * x[b, m.m_i[adr + p, M_COLIND], cx]
        x[b, i, cx] = xi


@ti.func
def mul_jt(d: ti.template(), b, nvi, nrow, res: ti.template(), cres):
    """res[:, cres] = J' efc_force over the island's rows and dofs (mju_mulMatTVec: rows with zero force are
    skipped)."""
    for k in range(nvi):
        res[b, dof(d, b, k), cres] = 0.0
    for c in range(nrow):
        r = row(d, b, c)
        f = d.efc[b, r, EFC_FORCE]
        if f != 0.0:
            for k in range(nvi):
                i = dof(d, b, k)
                res[b, i, cres] = res[b, i, cres] + d.efc_J[b, r, i] * f


# ----------------------------------------------------------------------------- dense Cholesky on the Hessian


@ti.func
def chol_factor(h: ti.template(), b, n, mindiag):
    """In place L L' of the symmetric matrix in the lower triangle of h[b, :n, :n] (mju_cholFactor): a pivot
    below mindiag is replaced by it and its column cleared. Returns the rank (n less such pivots)."""
    rank = n
    for j in range(n):
        tmp = h[b, j, j]
        if j > 0:
            tmp -= hdot(h, b, j, j, j)
        deficient = tmp < mindiag
        if deficient:
            tmp = mindiag
            rank -= 1
        h[b, j, j] = ti.sqrt(tmp)
        if deficient:
            for i in range(j + 1, n):
                h[b, i, j] = 0.0
        else:
            inv = 1.0 / h[b, j, j]
            for i in range(j + 1, n):
                h[b, i, j] = (h[b, i, j] - hdot(h, b, i, j, j)) * inv
    return rank


@ti.func
def chol_solve(d: ti.template(), h: ti.template(), b, n, src, dst):
    """solver_v[:, dst] = (L L')^-1 solver_v[:, src] with the factor in h (positions of the island's list):
    forward then backward substitution, dividing by the diagonal (mju_cholSolve)."""
    for k in range(n):
        d.solver_v[b, dof(d, b, k), dst] = d.solver_v[b, dof(d, b, k), src]
    for i in range(n):
        di = dof(d, b, i)
        ri = d.solver_v[b, di, dst]
        if i > 0:
            # the row times the solution so far, in mju_dot's order
            r0 = 0.0
            r1 = 0.0
            r2 = 0.0
            r3 = 0.0
            k = 0
            while k + 4 <= i:
                r0 = r0 + h[b, i, k] * d.solver_v[b, dof(d, b, k), dst]
                r1 = r1 + h[b, i, k + 1] * d.solver_v[b, dof(d, b, k + 1), dst]
                r2 = r2 + h[b, i, k + 2] * d.solver_v[b, dof(d, b, k + 2), dst]
                r3 = r3 + h[b, i, k + 3] * d.solver_v[b, dof(d, b, k + 3), dst]
                k += 4
            s = (r0 + r2) + (r1 + r3)
            rem = i - k
            if rem == 3:
                s = s + (h[b, i, k] * d.solver_v[b, dof(d, b, k), dst]
                         + h[b, i, k + 1] * d.solver_v[b, dof(d, b, k + 1), dst]
                         + h[b, i, k + 2] * d.solver_v[b, dof(d, b, k + 2), dst])
            elif rem == 2:
                s = s + (h[b, i, k] * d.solver_v[b, dof(d, b, k), dst]
                         + h[b, i, k + 1] * d.solver_v[b, dof(d, b, k + 1), dst])
            elif rem == 1:
                s = s + h[b, i, k] * d.solver_v[b, dof(d, b, k), dst]
            ri = ri - s
        d.solver_v[b, di, dst] = ri / h[b, i, i]
    for ii in range(n):
        i = n - 1 - ii
        di = dof(d, b, i)
        ri = d.solver_v[b, di, dst]
        for j in range(i + 1, n):
            ri -= h[b, j, i] * d.solver_v[b, dof(d, b, j), dst]
        d.solver_v[b, di, dst] = ri / h[b, i, i]


@ti.func
def chol_update(d: ti.template(), h: ti.template(), b, n, xcol, plus):
    """In place rank-one update (plus != 0) or downdate of the factor in h: L L' +- x x' with x in
    solver_v[:, xcol], which is overwritten (mju_cholUpdate). Returns the rank: n less the pivots that fell
    below mjMINVAL and were replaced by it."""
    rank = n
    for k in range(n):
        xk = d.solver_v[b, dof(d, b, k), xcol]
        if xk != 0.0:
            lkk = h[b, k, k]
            tmp = lkk * lkk + (xk * xk if plus != 0 else -xk * xk)
            if tmp < MINVAL:
                tmp = MINVAL
                rank -= 1
            r = ti.sqrt(tmp)
            c = r / lkk
            cinv = 1.0 / c
            s = xk / lkk
            h[b, k, k] = r
            if plus != 0:
                for i in range(k + 1, n):
                    h[b, i, k] = (h[b, i, k] + s * d.solver_v[b, dof(d, b, i), xcol]) * cinv
            else:
                for i in range(k + 1, n):
                    h[b, i, k] = (h[b, i, k] - s * d.solver_v[b, dof(d, b, i), xcol]) * cinv
            for i in range(k + 1, n):
                di = dof(d, b, i)
                d.solver_v[b, di, xcol] = c * d.solver_v[b, di, xcol] - s * h[b, i, k]
    return rank


# ----------------------------------------------------------------------------- small dense matrices (local)


@ti.func
def small_dot(a, i, x, n):
    """Row i of the local matrix a times the local vector x, first n entries, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + a[i, k] * x[k]
        r1 = r1 + a[i, k + 1] * x[k + 1]
        r2 = r2 + a[i, k + 2] * x[k + 2]
        r3 = r3 + a[i, k + 3] * x[k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (a[i, k] * x[k] + a[i, k + 1] * x[k + 1] + a[i, k + 2] * x[k + 2])
    elif rem == 2:
        res = res + (a[i, k] * x[k] + a[i, k + 1] * x[k + 1])
    elif rem == 1:
        res = res + a[i, k] * x[k]
    return res


@ti.func
def small_rowdot(a, i, j, n):
    """Rows i and j of the local matrix a, first n columns, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + a[i, k] * a[j, k]
        r1 = r1 + a[i, k + 1] * a[j, k + 1]
        r2 = r2 + a[i, k + 2] * a[j, k + 2]
        r3 = r3 + a[i, k + 3] * a[j, k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (a[i, k] * a[j, k] + a[i, k + 1] * a[j, k + 1] + a[i, k + 2] * a[j, k + 2])
    elif rem == 2:
        res = res + (a[i, k] * a[j, k] + a[i, k + 1] * a[j, k + 1])
    elif rem == 1:
        res = res + a[i, k] * a[j, k]
    return res


@ti.func
def small_chol(a, n, mindiag):
    """L L' of the local symmetric n x n matrix a (lower triangle), as `chol_factor`; returns (L, rank)."""
    h = a
    rank = n
    for j in range(n):
        tmp = h[j, j]
        if j > 0:
            tmp -= small_rowdot(h, j, j, j)
        deficient = tmp < mindiag
        if deficient:
            tmp = mindiag
            rank -= 1
        h[j, j] = ti.sqrt(tmp)
        if deficient:
            for i in range(j + 1, n):
                h[i, j] = 0.0
        else:
            inv = 1.0 / h[j, j]
            for i in range(j + 1, n):
                h[i, j] = (h[i, j] - small_rowdot(h, i, j, j)) * inv
    return h, rank


@ti.func
def small_chol_solve(a, v, n):
    """(L L')^-1 v for the local factor a of `small_chol` (mju_cholSolve)."""
    res = v
    for i in range(n):
        ri = res[i]
        if i > 0:
            ri -= small_dot(a, i, res, i)
        res[i] = ri / a[i, i]
    for ii in range(n):
        i = n - 1 - ii
        ri = res[i]
        for j in range(i + 1, n):
            ri -= a[j, i] * res[j]
        res[i] = ri / a[i, i]
    return res


@ti.func
def vec_dot(x, y, n):
    """sum of x[k] * y[k] for k < n over local vectors, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + x[k] * y[k]
        r1 = r1 + x[k + 1] * y[k + 1]
        r2 = r2 + x[k + 2] * y[k + 2]
        r3 = r3 + x[k + 3] * y[k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (x[k] * y[k] + x[k + 1] * y[k + 1] + x[k + 2] * y[k + 2])
    elif rem == 2:
        res = res + (x[k] * y[k] + x[k + 1] * y[k + 1])
    elif rem == 1:
        res = res + x[k] * y[k]
    return res
