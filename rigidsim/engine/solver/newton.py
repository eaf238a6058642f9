"""Newton's Hessian and its dense Cholesky factor (MuJoCo's MakeHessian, FactorizeHessian, HessianCone and
HessianIncremental, dense case).

H = M + J' diag(D_quadratic) J over the island (rows in the QUADRATIC state contribute D, the others 0) is
factored into ``solver_H`` (positions of the island's dof list, lower triangle). With elliptic contacts in
the CONE state a second factor in ``solver_Hcone`` adds each such contact's cone Hessian as dim rank-one
updates: with the cone Hessian's own Cholesky factor Lc, the rows of Lc' J. After a step, rows that entered
or left the QUADRATIC state update or downdate the factor by sqrt(D) J_row; when a downdate loses rank the
Hessian is rebuilt and factored again.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTRSTATE_CONE, CNSTRSTATE_QUADRATIC, DOF_MADR, DOF_MROWNNZ, EFC_D, EFC_DIM, EFC_STATE, M_COLIND, MINVAL,
    NSOLVI, OPT_SOLVER_M, SEI_OLDSTATE, SV_LTJ, SV_UPD, SVI_POS,
)
from rigidsim.engine.solver.linalg import (
    GROUP, base, chol_factor, chol_update, dof, list_base, row, row_group, row_span, row_vector, small_chol, span_at,
    span_dof, two,
)
from rigidsim.engine.solver.update import cone_hessian
from rigidsim.engine.solver.variant import ELLIPTIC


@ti.func
def make_hessian(m: ti.template(), d: ti.template(), b, nvi, nrow):
    """solver_H's lower triangle = M + J' diag(D of the QUADRATIC rows) J on the island (mju_sqrMatTD's
    order: row by row, each nonzero J entry scaling the row's leading part; a run of rows with the same spans
    at once, adding in the rows' order, `linalg.row_group`)."""
    vi = ti.static(d.solver_vi.arr)
    ha = ti.static(d.solver_H.arr)
    ja = ti.static(d.efc_J.arr)
    ma = ti.static(d.M.arr)
    ms = ti.static(d.M.strides[1])
    ns = d.solver_H.strides[1]  # nv: the row stride of solver_H
    lb = list_base(d, b)
    hb = base(d.solver_H, b, 0)
    for i in range(nvi):
        for k in range(i + 1):
            ha[hb + i * ns + k] = 0.0
    c = 0
    while c < nrow:
        g, rows, off = row_group(d, b, c, nrow)  # rows sharing spans: each entry of H loaded and stored once
        dr = ti.Vector([0.0] * GROUP)
        for q in ti.static(range(GROUP)):
            if q < g:
                if d.efc_i[b, rows[q], EFC_STATE] == CNSTRSTATE_QUADRATIC:
                    dr[q] = d.efc[b, rows[q], EFC_D]
        if (dr != 0.0).any():
            p, o, sh, whole = row_span(d, b, rows[0], nvi, True)  # the rows' nonzeros lie in their spans
            for s in range(two(nvi)):
                first, end, js, sf = span_at(p, o, sh, s)
                for i in range(first, end):
                    ji = js + span_dof(vi, lb, i, sf, whole)
                    # row q's entry i times its D: 0 for a row that adds nothing (a zero entry, D = 0, or q >= g:
                    # adding its zero products leaves the sum as it is)
                    scl = ti.Vector([0.0] * GROUP)
                    for q in ti.static(range(GROUP)):
                        scl[q] = ja[ji + off[q]] * dr[q]
                    if (scl != 0.0).any():
                        hi = hb + i * ns
                        for t in range(s + 1):  # the spans' columns up to i
                            kfirst, kend, jt, tf = span_at(p, o, sh, t)
                            for k in range(kfirst, ti.min(kend, i + 1)):
                                jk = jt + span_dof(vi, lb, k, tf, whole)
                                h = ha[hi + k]
                                for q in ti.static(range(GROUP)):
                                    h = h + ja[jk + off[q]] * scl[q]
                                ha[hi + k] = h
        c += g
    mb = base(d.M, b, m.opt_i[OPT_SOLVER_M])  # qM, or qH (approximate_implicitfast)
    pb = base(d.solver_vi, b, SVI_POS)
    for i in range(nvi):
        di = vi[lb + i * NSOLVI]
        adr = m.dof_i[di, DOF_MADR]
        hi = hb + i * ns
        for p in range(m.dof_i[di, DOF_MROWNNZ]):
            hij = hi + vi[pb + m.m_i[adr + p, M_COLIND] * NSOLVI]
            ha[hij] = ha[hij] + ma[mb + (adr + p) * ms]


@ti.func
def hessian_cone(d: ti.template(), b, nvi, nrow):
    """solver_Hcone = the factor in solver_H updated with every CONE contact's cone Hessian (HessianCone)."""
    for i in range(nvi):
        for k in range(i + 1):
            d.solver_Hcone[b, i, k] = d.solver_H[b, i, k]
    c = 0
    while c < nrow:
        r = row(d, b, c)
        step = 1
        if d.efc_i[b, r, EFC_STATE] == CNSTRSTATE_CONE:
            dim = d.efc_i[b, r, EFC_DIM]
            step = dim
            local, _rank = small_chol(cone_hessian(d, b, r, dim), dim, MINVAL)
            # rows of Lc' J, then one rank-one update per row
            for q in range(dim):
                for k in range(nvi):
                    d.solver_v[b, dof(d, b, k), SV_LTJ + q] = 0.0
            for rr in range(dim):
                p, o, sh, whole = row_span(d, b, r + rr, nvi, True)
                for q in range(rr + 1):
                    scl = local[rr, q]
                    for s in range(two(nvi)):
                        first, end, js, sf = span_at(p, o, sh, s)
                        for k in range(first, end):
                            i = span_dof(d.solver_vi.arr, list_base(d, b), k, sf, whole)
                            d.solver_v[b, i, SV_LTJ + q] = d.solver_v[b, i, SV_LTJ + q] + d.efc_J.arr[js + i] * scl
            for q in range(dim):
                chol_update(d, d.solver_Hcone, b, nvi, SV_LTJ + q, 1)
        c += step


@ti.func
def update_factor(m: ti.template(), d: ti.template(), b, nvi, nrow, full, variant: ti.template()):
    """Bring the factor in solver_H up to date with the states: with `full`, build the Hessian and factor it
    (MakeHessian, FactorizeHessian); else a rank-one update (a row entered the QUADRATIC state since
    SEI_OLDSTATE) or downdate (it left) by sqrt(D) J_row per changed row, rebuilding and refactoring instead
    when a downdate loses rank (HessianIncremental). With the elliptic cone compiled, solver_Hcone is then
    that factor updated with the active cones (a copy when there are none), so that the solve has one
    factor to read (one compiled copy of it)."""
    rebuild = full
    c = 0
    while c < nrow and not rebuild:
        r = row(d, b, c)
        old = d.solver_efc_i[b, r, SEI_OLDSTATE]
        new = d.efc_i[b, r, EFC_STATE]
        plus = -1
        if old != CNSTRSTATE_QUADRATIC and new == CNSTRSTATE_QUADRATIC:
            plus = 1
        elif old == CNSTRSTATE_QUADRATIC and new != CNSTRSTATE_QUADRATIC:
            plus = 0
        if plus != -1:
            sd = ti.sqrt(d.efc[b, r, EFC_D])
            row_vector(d, b, r, nvi, SV_UPD, sd)
            if chol_update(d, d.solver_H, b, nvi, SV_UPD, plus) < nvi:
                rebuild = True
        c += 1
    if rebuild:
        make_hessian(m, d, b, nvi, nrow)
        chol_factor(d, d.solver_H, b, nvi, MINVAL)
    if ti.static(variant & ELLIPTIC):
        hessian_cone(d, b, nvi, nrow)
