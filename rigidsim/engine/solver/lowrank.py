"""Newton's direction through the mass matrix's factor and a small matrix of the rows (Woodbury), for islands
with few rows.

Newton's Hessian is H = M + J_Q' D_Q J_Q (Q: the rows in the QUADRATIC state). When an island has few rows
next to its dofs, H^-1 g is cheaper through M's L'DL factor (the forward pass made it) than through a
dense factor of H: with V = M^-1 J' (nvi x nrow) and W = J V (nrow x nrow), both computed once per solve,

    H^-1 g = M^-1 g - V_Q S^-1 J_Q M^-1 g,        S = D_Q^-1 + W_QQ,

and S (nrow x nrow, refactored when a row changes state) is all that changes between iterations. The
gradient is g = M (qacc - qacc_smooth) - J' f (f: efc_force), so M^-1 g = dq - V f with dq = qacc -
qacc_smooth and J M^-1 g = J dq - W f, where J dq = jar + aref - J qacc_smooth: nothing but V, W and a few
vectors of length nrow is needed per iteration, no M^-1 solve and no product with M. With u = f + S^-1 z
(z = J_Q M^-1 g on Q, 0 elsewhere) the direction is -(dq - V u), and M times it is J' u - (Ma - qfrc_smooth),
which replaces the product with M that the line search needs.

The same direction as the dense factor's, in another order of operations: within the parity contract
(qacc and forces to 1e-6 relative), not bit for bit (tests/test_solver_lowrank.py holds it to MuJoCo).
Used for Newton with the pyramidal cone (no CONE-state Hessian blocks) when 2 nrow + 2 <= nvi; a pile of
bodies with many contacts, or the elliptic cone, keeps the dense factor.

Storage (both matrices are free while this path runs): solver_H[b, i, c] (dof i, c < nrow) holds V, and
solver_H[b, dof(c), nrow + c2] (c2 <= c) the lower triangle of W; solver_Hcone's rows c < nrow hold the
Cholesky factor of S (lower triangle), its column nrow the vector u, its column nrow + 1 J qacc_smooth, its
column nrow + 2 the reciprocal of the factor's diagonal entry (the substitutions multiply by it: a chain of
multiplications, not of divisions).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTRSTATE_QUADRATIC, CONE_ELLIPTIC, DOF_MADR, DOF_MROWNNZ, DOF_SUBTREEEND, EFC_AREF, EFC_D, EFC_FORCE,
    EFC_JAREF, EFC_STATE, M_COLIND, MINVAL, NSOLVI, OPT_CONE, QACC_SMOOTH, QFRC_SMOOTH, QLD, QLDIAGINV,
    SEI_OLDSTATE, SV_MA, SV_MGRAD, SV_MV, SV_QACC,
)
from rigidsim.engine.solver.linalg import (
    ancestor_entry, base, dof, dof_arrays, list_base, row, row_arrays, row_bases, row_span, span_at, span_dof,
    two,
)

# columns of V (rows of W) computed at once in `lowrank_setup`, each in a register
CHUNK = 4


@ti.func
def fits(m: ti.template(), nvi, nrow):
    """True when an island of nvi dofs and nrow rows takes the low-rank path (the module's docstring)."""
    return m.opt_i[OPT_CONE] != CONE_ELLIPTIC and 2 * nrow + 2 <= nvi


@ti.func
def lowrank_setup(m: ti.template(), d: ti.template(), b, nvi, nrow):
    """V = M^-1 J' into solver_H's first nrow columns (all right-hand sides at once through the L'DL factor
    of qM, rows of V contiguous), then W = J V (lower triangle) and J qacc_smooth. Every pass computes a
    run of CHUNK columns of a row at once as sums in registers, stored once (a store inside the loop would
    make the compiled code reload every array's address after it): L'^-1 from the last dof, each row less
    its descendants' rows (a range of dofs, `DOF_SUBTREEEND`) times their factor entries in its column;
    then 1/D and L^-1 from the first dof, each row less its ancestors' rows; W's entries as dots of J's rows
    with V's columns."""
    vi = ti.static(d.solver_vi.arr)
    ha = ti.static(d.solver_H.arr)
    ja = ti.static(d.efc_J.arr)
    ma = ti.static(d.M.arr)
    ms = ti.static(d.M.strides[1])
    ca = ti.static(d.solver_Hcone.arr)
    ns = d.solver_H.strides[1]
    hb = base(d.solver_H, b, 0)
    cb = base(d.solver_Hcone, b, 0)
    lb = list_base(d, b)
    mb = base(d.M, b, QLD)
    for k in range(nvi):
        hi = hb + vi[lb + k * NSOLVI] * ns
        for c in range(nrow):
            ha[hi + c] = 0.0
    for c in range(nrow):  # J' scattered: row i of V holds J[:, i]
        p, o, sh, whole = row_span(d, b, row(d, b, c), nvi, True)
        for s in range(two(nvi)):
            first, end, js, sf = span_at(p, o, sh, s)
            for k in range(first, end):
                i = span_dof(vi, lb, k, sf, whole)
                ha[hb + i * ns + c] = ja[js + i]
    # L'^-1: row j less sum over its descendants i of L[i, j] row i (the rows below are final by then); the
    # run's columns past nrow are read, not stored (the last, nrow + CHUNK - 2, is inside the row: the path
    # takes 2 nrow + 2 <= nvi)
    for kk in range(nvi):
        j = vi[lb + (nvi - 1 - kk) * NSOLVI]
        hj = hb + j * ns
        nj = m.dof_i[j, DOF_MROWNNZ]
        c = 0
        while c < nrow:
            acc = ti.Vector.zero(float, CHUNK)
            for i in range(j + 1, m.dof_i[j, DOF_SUBTREEEND]):
                lij = ma[mb + ancestor_entry(m, i, nj) * ms]  # L[i, j]: j is i's ancestor
                hi = hb + i * ns + c
                for q in ti.static(range(CHUNK)):
                    acc[q] = acc[q] + lij * ha[hi + q]
            for q in ti.static(range(CHUNK)):
                if c + q < nrow:
                    ha[hj + c + q] = ha[hj + c + q] - acc[q]
            c += CHUNK
    # 1/D, then L^-1: row i = its row / D less sum over its ancestors j of L[i, j] row j (final already)
    for k in range(nvi):
        i = vi[lb + k * NSOLVI]
        adr = m.dof_i[i, DOF_MADR]
        hi = hb + i * ns
        dinv = d.dof[b, i, QLDIAGINV]
        c = 0
        while c < nrow:
            acc = ti.Vector.zero(float, CHUNK)
            for q in ti.static(range(CHUNK)):
                acc[q] = ha[hi + c + q] * dinv
            for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
                lij = ma[mb + (adr + p) * ms]
                hj = hb + m.m_i[adr + p, M_COLIND] * ns + c
                for q in ti.static(range(CHUNK)):
                    acc[q] = acc[q] - lij * ha[hj + q]
            for q in ti.static(range(CHUNK)):
                if c + q < nrow:
                    ha[hi + c + q] = acc[q]
            c += CHUNK
    # W = J V, row c's entries c2 <= c as sums along row c's nonzeros; J qacc_smooth beside it
    for c in range(nrow):
        wc = hb + dof(d, b, c) * ns + nrow
        p, o, sh, whole = row_span(d, b, row(d, b, c), nvi, True)
        jqs = 0.0
        for s in range(two(nvi)):
            first, end, js, sf = span_at(p, o, sh, s)
            for k in range(first, end):
                i = span_dof(vi, lb, k, sf, whole)
                jqs += ja[js + i] * d.dof[b, i, QACC_SMOOTH]
        c2 = 0
        while c2 <= c:
            acc = ti.Vector.zero(float, CHUNK)
            for s in range(two(nvi)):
                first, end, js, sf = span_at(p, o, sh, s)
                for k in range(first, end):
                    i = span_dof(vi, lb, k, sf, whole)
                    jci = ja[js + i]
                    hi = hb + i * ns + c2
                    for q in ti.static(range(CHUNK)):
                        acc[q] = acc[q] + jci * ha[hi + q]
            for q in ti.static(range(CHUNK)):
                if c2 + q <= c:
                    ha[wc + c2 + q] = acc[q]
            c2 += CHUNK
        ca[cb + c * d.solver_Hcone.strides[1] + nrow + 1] = jqs


@ti.func
def _quadratic(d: ti.template(), b, c):
    """True when the c-th listed row is in the QUADRATIC state."""
    return d.efc_i[b, row(d, b, c), EFC_STATE] == CNSTRSTATE_QUADRATIC


@ti.func
def lowrank_factor(d: ti.template(), b, nrow, full):
    """S = diag(1 / D_Q) + W_QQ (rows outside Q: identity) factored in solver_Hcone; with `full` always, else
    only when a row entered or left the QUADRATIC state since SEI_OLDSTATE."""
    changed = full
    for c in range(nrow):
        r = row(d, b, c)
        if (d.solver_efc_i[b, r, SEI_OLDSTATE] == CNSTRSTATE_QUADRATIC) != (
                d.efc_i[b, r, EFC_STATE] == CNSTRSTATE_QUADRATIC):
            changed = True
    if changed:
        ha = ti.static(d.solver_H.arr)
        ca = ti.static(d.solver_Hcone.arr)
        ns = d.solver_H.strides[1]
        cs = d.solver_Hcone.strides[1]
        hb = base(d.solver_H, b, 0)
        cb = base(d.solver_Hcone, b, 0)
        for c in range(nrow):
            r = row(d, b, c)
            qc = d.efc_i[b, r, EFC_STATE] == CNSTRSTATE_QUADRATIC
            wc = hb + dof(d, b, c) * ns + nrow
            sc = cb + c * cs
            for c2 in range(c):
                val = 0.0
                if qc and _quadratic(d, b, c2):
                    val = ha[wc + c2]
                ca[sc + c2] = val
            ca[sc + c] = ha[wc + c] + 1.0 / d.efc[b, r, EFC_D] if qc else 1.0
        # S = L L' in place, row by row (S is positive definite: diag(1/D) plus a Gram matrix); 1 / L[c, c] in
        # column nrow + 2
        for c in range(nrow):
            sc = cb + c * cs
            for c2 in range(c + 1):
                sc2 = cb + c2 * cs
                t = ca[sc + c2]
                for k in range(c2):
                    t -= ca[sc + k] * ca[sc2 + k]
                if c2 < c:
                    ca[sc + c2] = t * ca[sc2 + nrow + 2]
                else:
                    lcc = ti.sqrt(ti.max(t, MINVAL))
                    ca[sc + c] = lcc
                    ca[sc + nrow + 2] = 1.0 / lcc


@ti.func
def lowrank_solve(d: ti.template(), b, nvi, nrow):
    """solver_v[:, SV_MGRAD] = H^-1 grad = dq - V u (the module's docstring), u kept for `lowrank_mv`."""
    fa, ia, la, fs, xs, ls = ti.static(*row_arrays(d))
    va, vs, da, ds = ti.static(*dof_arrays(d))
    fb, ib, eb = row_bases(d, b)
    vb = base(d.solver_v, b, 0)
    db = base(d.dof, b, 0)
    vi = ti.static(d.solver_vi.arr)
    ha = ti.static(d.solver_H.arr)
    ca = ti.static(d.solver_Hcone.arr)
    ns = d.solver_H.strides[1]
    cs = d.solver_Hcone.strides[1]
    hb = base(d.solver_H, b, 0)
    cb = base(d.solver_Hcone, b, 0)
    lb = list_base(d, b)
    ub = cb + nrow  # u (first z, then S^-1 z, then f + S^-1 z) at ca[ub + c * cs]
    # z = J dq - W f on the QUADRATIC rows (W symmetric: row c's lower part, then column c below it)
    for c in range(nrow):
        r = la[eb + c * ls]
        z = 0.0
        if ia[ib + r * xs + EFC_STATE] == CNSTRSTATE_QUADRATIC:
            wc = hb + vi[lb + c * NSOLVI] * ns + nrow
            wf = 0.0
            for c2 in range(c + 1):
                wf += ha[wc + c2] * fa[fb + la[eb + c2 * ls] * fs + EFC_FORCE]
            for c2 in range(c + 1, nrow):
                wf += ha[hb + vi[lb + c2 * NSOLVI] * ns + nrow + c] * fa[fb + la[eb + c2 * ls] * fs + EFC_FORCE]
            z = (fa[fb + r * fs + EFC_JAREF] + fa[fb + r * fs + EFC_AREF] - ca[cb + c * cs + nrow + 1]) - wf
        ca[ub + c * cs] = z
    # S^-1 z: forward then backward substitution with its factor (rows outside Q: z = 0 stays 0)
    for c in range(nrow):
        sc = cb + c * cs
        s = ca[ub + c * cs]
        for c2 in range(c):
            s -= ca[sc + c2] * ca[ub + c2 * cs]
        ca[ub + c * cs] = s * ca[sc + nrow + 2]
    for cc in range(nrow):
        c = nrow - 1 - cc
        sc = cb + c * cs
        t = ca[ub + c * cs] * ca[sc + nrow + 2]
        ca[ub + c * cs] = t
        for c2 in range(c):  # row c of L is column c of L': subtract from the entries above
            ca[ub + c2 * cs] = ca[ub + c2 * cs] - ca[sc + c2] * t
    for c in range(nrow):
        ca[ub + c * cs] = ca[ub + c * cs] + fa[fb + la[eb + c * ls] * fs + EFC_FORCE]
    for k in range(nvi):
        i = vi[lb + k * NSOLVI]
        hi = hb + i * ns
        vu = 0.0
        for c in range(nrow):
            vu += ha[hi + c] * ca[ub + c * cs]
        va[vb + i * vs + SV_MGRAD] = (va[vb + i * vs + SV_QACC] - da[db + i * ds + QACC_SMOOTH]) - vu


@ti.func
def lowrank_mv(d: ti.template(), b, nvi, nrow):
    """solver_v[:, SV_MV] = M times the search direction -(dq - V u) = J' u - (Ma - qfrc_smooth), with the u
    of the `lowrank_solve` that gave the direction."""
    fa, ia, la, fs, xs, ls = ti.static(*row_arrays(d))
    va, vs, da, ds = ti.static(*dof_arrays(d))
    fb, ib, eb = row_bases(d, b)
    vb = base(d.solver_v, b, 0)
    db = base(d.dof, b, 0)
    vi = ti.static(d.solver_vi.arr)
    ja = ti.static(d.efc_J.arr)
    ca = ti.static(d.solver_Hcone.arr)
    cs = d.solver_Hcone.strides[1]
    ub = base(d.solver_Hcone, b, 0) + nrow
    lb = list_base(d, b)
    for k in range(nvi):
        i = vi[lb + k * NSOLVI]
        va[vb + i * vs + SV_MV] = da[db + i * ds + QFRC_SMOOTH] - va[vb + i * vs + SV_MA]
    for c in range(nrow):
        u = ca[ub + c * cs]
        if u != 0.0:
            p, o, sh, whole = row_span(d, b, la[eb + c * ls], nvi, True)
            for s in range(two(nvi)):
                first, end, js, sf = span_at(p, o, sh, s)
                for k in range(first, end):
                    i = span_dof(vi, lb, k, sf, whole)
                    va[vb + i * vs + SV_MV] = va[vb + i * vs + SV_MV] + ja[js + i] * u
