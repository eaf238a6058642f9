"""Newton's Hessian and its dense Cholesky factor (MuJoCo's MakeHessian, FactorizeHessian, HessianCone and
HessianIncremental, dense case).

H = M + J' diag(D_quadratic) J over the island (rows in the QUADRATIC state contribute D, the others 0) is
factored into ``solver_H`` (lower triangle; its rows and columns in the factor's order of the island's dofs,
which `ordering.order` chooses before the first factor of a solve: SVI_HPOS, SVI_HLIST). With elliptic contacts in
the CONE state a second factor in ``solver_Hcone`` adds each such contact's cone Hessian as dim rank-one
updates: with the cone Hessian's own Cholesky factor Lc, the rows of Lc' J. After a step, rows that entered
or left the QUADRATIC state update or downdate the factor by sqrt(D) J_row; when a downdate loses rank the
Hessian is rebuilt and factored again.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTRSTATE_CONE, CNSTRSTATE_QUADRATIC, CONE_ELLIPTIC, DOF_MADR, DOF_MROWNNZ, EFC_D, EFC_DIM, EFC_STATE,
    M_COLIND, MINVAL, NSOLVI, OPT_CONE, OPT_SOLVER_M, SEI_OLDSTATE, SV_LTJ, SV_UPD, SVI_FIRST, SVI_HPOS, SVI_TREE,
)
from rigidsim.engine.solver.linalg import (
    GROUP, base, chol_factor, chol_update, dof, list_base, row, row_group, row_span, row_vector, small_chol, span_at,
    span_dof, two,
)
from rigidsim.engine.solver.ordering import order
from rigidsim.engine.solver.update import cone_hessian
from rigidsim.engine.solver.variant import ELLIPTIC


@ti.func
def quadratic_d(d: ti.template(), sb, db, rows, g):
    """D of each of a run's g rows (`linalg.row_group`) in the QUADRATIC state, 0 for the others and past the
    run; sb and db: env b's flat offsets of efc_i's EFC_STATE and efc's EFC_D."""
    dr = ti.Vector([0.0] * GROUP)
    for q in ti.static(range(GROUP)):
        if q < g:
            if d.efc_i.arr[sb + rows[q] * ti.static(d.efc_i.strides[1])] == CNSTRSTATE_QUADRATIC:
                dr[q] = d.efc.arr[db + rows[q] * ti.static(d.efc.strides[1])]
    return dr


@ti.func
def make_hessian(m: ti.template(), d: ti.template(), b, nvi, nrow):
    """solver_H's lower triangle = M + J' diag(D of the QUADRATIC rows) J on the island (mju_sqrMatTD's
    order: row by row, each nonzero J entry scaling the row's leading part; a run of rows with the same spans
    at once, adding in the rows' order, `linalg.row_group`). The pair of list positions k <= i is entry
    (max, min) of their rows in the factor's order (SVI_HPOS): a span's dofs, one tree's, are consecutive
    there too, from the row of its first dof. Only the profile is written (SVI_FIRST: a bound on each row's
    first nonzero from the rows' trees, `linalg.chol_factor`); entries left of it are not read."""
    vi = ti.static(d.solver_vi.arr)
    ha = ti.static(d.solver_H.arr)
    ja = ti.static(d.efc_J.arr)
    ma = ti.static(d.M.arr)
    ms = ti.static(d.M.strides[1])
    ns = d.solver_H.strides[1]  # nv: the row stride of solver_H
    lb = list_base(d, b)
    hb = base(d.solver_H, b, 0)
    pb = base(d.solver_vi, b, SVI_HPOS)
    sb = base(d.efc_i, b, EFC_STATE)
    db = base(d.efc, b, EFC_D)
    # the profile: row fi's first nonzero (by position) is at or after the first row of its dof's tree (M's
    # entries) and of every tree a QUADRATIC row through the dof spans; only [first, fi] is cleared (with
    # elliptic cones the whole triangle: solver_Hcone's updates lower the shared bound below it)
    fb = base(d.solver_vi, b, SVI_FIRST)
    tb = base(d.solver_vi, b, SVI_TREE)
    for k in range(nvi):
        di = vi[lb + k * NSOLVI]
        vi[fb + vi[pb + di * NSOLVI] * NSOLVI] = vi[pb + vi[tb + di * NSOLVI] * NSOLVI]
    c = 0
    while c < nrow:
        g, rows, _ = row_group(d, b, c, nrow)
        if (quadratic_d(d, sb, db, rows, g) != 0.0).any():
            p, o, sh, whole = row_span(d, b, rows[0], nvi, True)
            lo = 0  # the first factor row of the rows' trees (of a whole row: 0)
            if not whole:
                lo = vi[pb + (p[0] + sh[0]) * NSOLVI]
                if p[3] > p[2]:
                    lo = ti.min(lo, vi[pb + (p[2] + sh[1]) * NSOLVI])
            for s in range(two(nvi)):
                first, end, _, sf = span_at(p, o, sh, s)
                for k in range(first, end):
                    fi = vi[pb + span_dof(vi, lb, k, sf, whole) * NSOLVI]
                    vi[fb + fi * NSOLVI] = ti.min(vi[fb + fi * NSOLVI], lo)
        c += g
    full = m.opt_i[OPT_CONE] == CONE_ELLIPTIC
    for i in range(nvi):
        hi = hb + i * ns
        for k in range(ti.select(full, 0, vi[fb + i * NSOLVI]), i + 1):
            ha[hi + k] = 0.0
    c = 0
    while c < nrow:
        g, rows, off = row_group(d, b, c, nrow)  # rows sharing spans: each entry of H loaded and stored once
        dr = quadratic_d(d, sb, db, rows, g)
        if (dr != 0.0).any():
            p, o, sh, whole = row_span(d, b, rows[0], nvi, True)  # the rows' nonzeros lie in their spans
            # the factor's row of each span's first dof (of a whole row: unused, each dof's own is read)
            hp = ti.Vector([vi[pb + (p[0] + sh[0]) * NSOLVI], vi[pb + (p[2] + sh[1]) * NSOLVI]])
            for s in range(two(nvi)):
                first, end, js, sf = span_at(p, o, sh, s)
                hs = ti.select(s == 0, hp[0], hp[1]) - first
                for i in range(first, end):
                    di = span_dof(vi, lb, i, sf, whole)
                    ji = js + di
                    # row q's entry i times its D: 0 for a row that adds nothing (a zero entry, D = 0, or q >= g:
                    # adding its zero products leaves the sum as it is)
                    scl = ti.Vector([0.0] * GROUP)
                    for q in ti.static(range(GROUP)):
                        scl[q] = ja[ji + off[q]] * dr[q]
                    if (scl != 0.0).any():
                        fi = hs + i
                        if whole:
                            fi = vi[pb + di * NSOLVI]
                        for t in range(s + 1):  # the spans' columns up to i
                            kfirst, kend, jt, tf = span_at(p, o, sh, t)
                            ht = ti.select(t == 0, hp[0], hp[1]) - kfirst  # k's row: ht + k
                            # entry (i, k) of span t's block: row fi, column ht + k; the block of an earlier
                            # span whose tree comes later in the factor's order: row ht + k, column fi
                            hik = hb + fi * ns + ht + kfirst
                            step = 1
                            if t < s and ht + kfirst > fi:
                                hik = hb + (ht + kfirst) * ns + fi
                                step = ns
                            for k in range(kfirst, ti.min(kend, i + 1)):
                                dk = span_dof(vi, lb, k, tf, whole)
                                jk = jt + dk
                                if whole:  # positions of the whole list: each dof's row
                                    fk = vi[pb + dk * NSOLVI]
                                    hik = hb + ti.max(fi, fk) * ns + ti.min(fi, fk)
                                h = ha[hik]
                                for q in ti.static(range(GROUP)):
                                    h = h + ja[jk + off[q]] * scl[q]
                                ha[hik] = h
                                hik += step
        c += g
    mb = base(d.M, b, m.opt_i[OPT_SOLVER_M])  # qM, or qH (approximate_implicitfast)
    for i in range(nvi):
        di = vi[lb + i * NSOLVI]
        adr = m.dof_i[di, DOF_MADR]
        hi = hb + vi[pb + di * NSOLVI] * ns  # M's row: the dof's ancestors, rows before it in its tree
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
    factor to read (one compiled copy of it). The first factor of a solve (`full`) chooses the factor's order
    of the island's dofs first (`ordering.order`)."""
    if full:
        order(m, d, b, nvi, nrow)
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
