"""Writers of constraint rows shared by every kind of row (`instantiate`, `equality`, `tendon_rows`): clearing a
row's dense Jacobian, its descriptive fields (MuJoCo's mj_addConstraint), its soft-constraint parameters (the
per-row part of mj_makeImpedance), and the dot product over dofs in mju_dot's order.

A row is kept only when its Jacobian has a nonzero (MuJoCo's mj_addConstraint drops every other non-contact
row), so writers fill the Jacobian first, test it, and only then set the fields and advance the row count.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine.constraint.impedance import check_solimp, check_solref, impedance, regularizer, stiffness_damping
from rigidsim.engine import math as sm
from rigidsim.engine.solver.linalg import base, row_span, span_dot
from rigidsim.engine.layout import (
    BODY_LASTDOF, BODY_TREEDOF, CDOF, DOF_PARENTID, EFC_AREF, EFC_B, EFC_BLOCK, EFC_D, EFC_DIAGA, EFC_DIM,
    EFC_FORCE,
    EFC_FRICTION, EFC_FRICTIONLOSS, EFC_ID, EFC_IMP, EFC_K, EFC_JADR, EFC_MARGIN, EFC_MU, EFC_POS, EFC_R,
    EFC_SPAN, EFC_STATE, EFC_TYPE, EFC_VEL, SZ_EFCW, SZ_NEFCWIDE, SZ_NV,
)


@ti.func
def row_vel(d: ti.template(), b, r, nv):
    """efc_J row r times qvel over its spans, summed over its nonzeros (`linalg.span_dot`)."""
    p, o, sh, whole = row_span(d, b, r, nv, False)
    return span_dot(d.efc_J.arr, o, sh, whole, d.qvel.arr, base(d.qvel, b, 0), 1, d.solver_vi.arr, 0, nv, p)


@ti.func
def zero_rows(m: ti.template(), d: ti.template(), b, r, n):
    """Clear rows r..r+n-1 of efc_J over every dof: rows stored whole (EFC_SPAN all zeros)."""
    zero_span(m, d, b, r, n, ti.Vector([0, 0, 0, 0]))


@ti.func
def place_span(m: ti.template(), d: ti.template(), b, r, n, span, clear):
    """Place rows r..r+n-1 in efc_J with `span` (lo1, hi1, lo2, hi2: layout.EFC_SPAN; hi1 <= lo1: every dof)
    and, with `clear`, clear their entries: the first SZ_NEFCWIDE rows of an env have nv entries of room, the
    others SZ_EFCW (enough for any contact's spans); entries outside the spans are neither stored nor read."""
    nv = m.opt_i[SZ_NV]
    wide = m.opt_i[SZ_NEFCWIDE]
    n_entry = span[1] - span[0] + span[3] - span[2]
    if span[1] <= span[0]:
        n_entry = nv
    jb = base(d.efc_J, b, 0)
    for k in range(n):
        rk = r + k
        adr = row_adr(rk, nv, wide, m.opt_i[SZ_EFCW])
        for q in ti.static(range(4)):
            d.efc_i[b, rk, EFC_SPAN + q] = span[q]
        d.efc_i[b, rk, EFC_JADR] = adr
        if clear:
            for c in range(n_entry):
                d.efc_J.arr[jb + adr + c] = 0.0


@ti.func
def row_adr(r, nv, wide, efcw):
    """Where row r's entries start in its env's efc_J (`place_span`): the first `wide` rows nv apart, the
    others efcw apart after them."""
    return ti.select(r >= wide, wide * nv + (r - wide) * efcw, r * nv)


@ti.func
def zero_span(m: ti.template(), d: ti.template(), b, r, n, span):
    """`place_span` with the rows' entries cleared."""
    place_span(m, d, b, r, n, span, True)


@ti.func
def chain_span(m: ti.template(), b1, b2):
    """The span of a row whose Jacobian is a difference of two bodies' (mj_jacDifPair): each body's dof chain
    lies between its tree's first dof and its last dof, one range when the trees coincide, ascending."""
    lo1 = m.body_i[b1, BODY_TREEDOF]
    hi1 = m.body_i[b1, BODY_LASTDOF] + 1
    lo2 = m.body_i[b2, BODY_TREEDOF]
    hi2 = m.body_i[b2, BODY_LASTDOF] + 1
    if lo1 < 0 or (lo2 >= 0 and lo2 < lo1):  # order them: an empty one (a world-fixed body) second
        t = lo1
        lo1 = lo2
        lo2 = t
        t = hi1
        hi1 = hi2
        hi2 = t
    if lo1 < 0:  # both fixed to the world: a zero row, one entry stored
        hi1 = 1
        lo1 = 0
    if lo2 < 0:
        lo2 = 0
        hi2 = 0
    elif lo2 == lo1:  # one tree
        hi1 = ti.max(hi1, hi2)
        lo2 = 0
        hi2 = 0
    return ti.Vector([lo1, hi1, lo2, hi2])


@ti.func
def set_row(d: ti.template(), b, r, typ, id, pos, margin, frictionloss, diag_a):
    d.efc[b, r, EFC_POS] = pos
    d.efc[b, r, EFC_MARGIN] = margin
    d.efc[b, r, EFC_FRICTIONLOSS] = frictionloss
    d.efc[b, r, EFC_DIAGA] = diag_a
    d.efc[b, r, EFC_MU] = 0.0
    d.efc[b, r, EFC_FRICTION] = 0.0
    d.efc[b, r, EFC_FORCE] = 0.0
    d.efc_i[b, r, EFC_TYPE] = typ
    d.efc_i[b, r, EFC_ID] = id
    d.efc_i[b, r, EFC_STATE] = 0
    d.efc_i[b, r, EFC_DIM] = 0
    d.efc_i[b, r, EFC_BLOCK] = 0


@ti.func
def contact_row(d: ti.template(), b, r, typ, id, pos, margin, dim, block, rr, imp, k, bb, mu, friction, sp, adr,
                jb, qb, nv):
    """Every field of contact row r (its Jacobian already written at jb + adr, `row_adr`, with spans sp), each
    written once: `set_row`'s, with the row's place in its contact (dim, block), its span and address, its final
    R (D = 1 / R, diagA re-derived from it as `set_r` does), K, B, imp, mu, friction, and mj_referenceConstraint's
    efc_vel (`row_vel`'s sum) and aref. Written through flat offsets from the env's base (no stride reloads)."""
    o = ti.Vector([jb + adr - sp[0], jb + adr + sp[1] - sp[0] - sp[2]])
    vel = span_dot(d.efc_J.arr, o, ti.Vector([0, 0]), False, d.qvel.arr, qb, 1, d.solver_vi.arr, 0, nv, sp)
    fb = base(d.efc, b, 0) + r * ti.static(d.efc.strides[1])
    ib = base(d.efc_i, b, 0) + r * ti.static(d.efc_i.strides[1])
    f = ti.static(d.efc.arr)
    f[fb + EFC_POS] = pos
    f[fb + EFC_MARGIN] = margin
    f[fb + EFC_FRICTIONLOSS] = 0.0
    f[fb + EFC_MU] = mu
    f[fb + EFC_FRICTION] = friction
    f[fb + EFC_FORCE] = 0.0
    f[fb + EFC_R] = rr
    f[fb + EFC_D] = 1.0 / rr
    f[fb + EFC_DIAGA] = rr * imp / (1.0 - imp)
    f[fb + EFC_K] = k
    f[fb + EFC_B] = bb
    f[fb + EFC_IMP] = imp
    f[fb + EFC_VEL] = vel
    f[fb + EFC_AREF] = (-bb) * vel - k * imp * (pos - margin)
    g = ti.static(d.efc_i.arr)
    g[ib + EFC_TYPE] = typ
    g[ib + EFC_ID] = id
    g[ib + EFC_STATE] = 0
    g[ib + EFC_DIM] = dim
    g[ib + EFC_BLOCK] = block
    for q in ti.static(range(4)):
        g[ib + EFC_SPAN + q] = sp[q]
    g[ib + EFC_JADR] = adr


@ti.func
def set_impedance(d: ti.template(), b, r, imp, ref, dwidth, frictional):
    """R, D, K, B, imp of row r from its impedance and diagA (already set), and diagA re-derived from R."""
    rr = regularizer(imp, d.efc[b, r, EFC_DIAGA])
    set_r(d, b, r, rr, imp)
    k, bb = stiffness_damping(ref, dwidth, frictional)
    d.efc[b, r, EFC_K] = k
    d.efc[b, r, EFC_B] = bb
    d.efc[b, r, EFC_IMP] = imp


@ti.func
def set_r(d: ti.template(), b, r, rr, imp):
    d.efc[b, r, EFC_R] = rr
    d.efc[b, r, EFC_D] = 1.0 / rr
    d.efc[b, r, EFC_DIAGA] = rr * imp / (1.0 - imp)


@ti.func
def soft_params(m: ti.template(), ref, solimp, imp_pos, margin, frictional):
    """(imp, K, B) of a row or block from its solref and solimp (checked here), the impedance taken at
    violation imp_pos - margin; `frictional`: K = 0 (friction loss)."""
    ref = check_solref(m, ref, 0.02, 1.0)
    solimp = check_solimp(solimp)
    imp, _ = impedance(solimp, imp_pos, margin)
    k, bb = stiffness_damping(ref, solimp[1], frictional)
    return imp, k, bb


@ti.func
def set_soft(d: ti.template(), b, r, imp, k, bb):
    """R, D, K, B, imp of row r from its block's impedance, K and B and its diagA (already set); diagA
    re-derived from R."""
    set_r(d, b, r, regularizer(imp, d.efc[b, r, EFC_DIAGA]), imp)
    d.efc[b, r, EFC_K] = k
    d.efc[b, r, EFC_B] = bb
    d.efc[b, r, EFC_IMP] = imp


@ti.func
def soft_row(m: ti.template(), d: ti.template(), b, r, typ, id, pos, margin, frictionloss, diag_a, ref, solimp,
             frictional):
    """Row r's fields (its Jacobian already written) and its soft-constraint parameters from solref and
    solimp, the impedance taken at the row's own violation pos - margin; `frictional`: K = 0 (friction loss)."""
    set_row(d, b, r, typ, id, pos, margin, frictionloss, diag_a)
    imp, k, bb = soft_params(m, ref, solimp, pos, margin, frictional)
    set_soft(d, b, r, imp, k, bb)


@ti.func
def _dof_jac(d: ti.template(), db, dof, offset):
    """A dof's translational and rotational Jacobian columns at `offset` from its tree's subtree com (mj_jac);
    db: the env's base in d.dof (`linalg.base`)."""
    o = db + dof * ti.static(d.dof.strides[1]) + CDOF
    cd = ti.Vector([d.dof.arr[o + k] for k in ti.static(range(6))])
    ang = ti.Vector([cd[0], cd[1], cd[2]])
    return ti.Vector([cd[3], cd[4], cd[5]]) + sm.cross3(ang, offset), ang


@ti.func
def jac_dif_step(m: ti.template(), d: ti.template(), db, dap, dam, offp, offm):
    """One dof of mj_jacDifPair's dense difference (Jp - Jm at two points), walking the two bodies' merged dof
    chains from the highest dof down (db: the env's base in d.dof): `dap`, `dam` are each chain's current dof
    (-1: done), `offp`, `offm` the points from their trees' subtree com. Returns (dof, translational, rotational
    difference, next dap, next dam); the plus side is added first, then the minus side subtracted, as MuJoCo
    subtracts the two Jacobians."""
    da = ti.max(dap, dam)
    jp = sm.zero3()
    jr = sm.zero3()
    nap = dap
    nam = dam
    if dap == da:
        tp, tr = _dof_jac(d, db, da, offp)
        jp = jp + tp
        jr = jr + tr
        nap = m.dof_i[dap, DOF_PARENTID]
    if dam == da:
        tp, tr = _dof_jac(d, db, da, offm)
        jp = jp - tp
        jr = jr - tr
        nam = m.dof_i[dam, DOF_PARENTID]
    return da, jp, jr, nap, nam
