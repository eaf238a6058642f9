"""Writers of constraint rows shared by every kind of row (`instantiate`, `equality`, `tendon_rows`): clearing a
row's dense Jacobian, its descriptive fields (MuJoCo's mj_addConstraint), its soft-constraint parameters (the
per-row part of mj_makeImpedance), and the dot product over dofs in mju_dot's order.

A row is kept only when its Jacobian has a nonzero (MuJoCo's mj_addConstraint drops every other non-contact
row), so writers fill the Jacobian first, test it, and only then set the fields and advance the row count.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine.constraint.impedance import check_solimp, check_solref, impedance, regularizer, stiffness_damping
from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    CDOF, DOF_PARENTID, EFC_B, EFC_BLOCK, EFC_D, EFC_DIAGA, EFC_DIM, EFC_FORCE, EFC_FRICTION, EFC_FRICTIONLOSS, EFC_ID, EFC_IMP, EFC_K,
    EFC_MARGIN, EFC_MU, EFC_POS, EFC_R, EFC_STATE, EFC_TYPE, SZ_NV,
)


@ti.func
def dot_dofs(a: ti.template(), ra, x: ti.template(), b, n):
    """sum_i a[b, ra, i] * x[b, i], i < n, summed in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    i = 0
    while i + 4 <= n:
        r0 += a[b, ra, i] * x[b, i]
        r1 += a[b, ra, i + 1] * x[b, i + 1]
        r2 += a[b, ra, i + 2] * x[b, i + 2]
        r3 += a[b, ra, i + 3] * x[b, i + 3]
        i += 4
    res = (r0 + r2) + (r1 + r3)
    left = n - i
    if left == 3:
        res += a[b, ra, i] * x[b, i] + a[b, ra, i + 1] * x[b, i + 1] + a[b, ra, i + 2] * x[b, i + 2]
    elif left == 2:
        res += a[b, ra, i] * x[b, i] + a[b, ra, i + 1] * x[b, i + 1]
    elif left == 1:
        res += a[b, ra, i] * x[b, i]
    return res


@ti.func
def zero_rows(m: ti.template(), d: ti.template(), b, r, n):
    for k in range(n):
        for c in range(m.opt_i[SZ_NV]):
            d.efc_J[b, r + k, c] = 0.0


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
def _dof_jac(d: ti.template(), b, dof, offset):
    """A dof's translational and rotational Jacobian columns at `offset` from its tree's subtree com (mj_jac)."""
    cd = sm.getv(d.dof, b, dof, CDOF, 6)
    ang = ti.Vector([cd[0], cd[1], cd[2]])
    return ti.Vector([cd[3], cd[4], cd[5]]) + sm.cross3(ang, offset), ang


@ti.func
def jac_dif_step(m: ti.template(), d: ti.template(), b, dap, dam, offp, offm):
    """One dof of mj_jacDifPair's dense difference (Jp - Jm at two points), walking the two bodies' merged dof
    chains from the highest dof down: `dap`, `dam` are each chain's current dof (-1: done), `offp`, `offm` the
    points from their trees' subtree com. Returns (dof, translational, rotational difference, next dap, next
    dam); the plus side is added first, then the minus side subtracted, as MuJoCo subtracts the two Jacobians."""
    da = ti.max(dap, dam)
    jp = sm.zero3()
    jr = sm.zero3()
    nap = dap
    nam = dam
    if dap == da:
        tp, tr = _dof_jac(d, b, da, offp)
        jp = jp + tp
        jr = jr + tr
        nap = m.dof_i[dap, DOF_PARENTID]
    if dam == da:
        tp, tr = _dof_jac(d, b, da, offm)
        jp = jp - tp
        jr = jr - tr
        nam = m.dof_i[dam, DOF_PARENTID]
    return da, jp, jr, nap, nam
