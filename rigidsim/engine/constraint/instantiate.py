"""The constraint rows of one env: MuJoCo's mj_makeConstraint (instantiate, diagApprox, impedance) and
mj_referenceConstraint (efc_vel, efc_aref), with a dense efc_J.

Rows come in MuJoCo's order: equality (`equality`), dof then tendon friction loss, joint then tendon limits
(`tendon_rows`), contacts. Each row gets, where it is made, everything its block
needs: its Jacobian, pos and margin, the approximate inverse inertia diagA from the model's invweight0,
the impedance from solimp at the block's violation, R, D = 1 / R, K, B (`impedance`), and diagA adjusted
so that R = (1 - imp) / imp * diagA holds after the contacts' friction regularization.

- equality rows: `equality` (connect, weld, joint, tendon; its mj_Jdotv corrects their aref).
- friction loss of dof i: J = e_i, pos = margin = 0, K = 0, diagA = dof_invweight0[i].
- tendon friction loss and tendon limits: `tendon_rows`, after the dofs' and the joints' rows.
- a hinge or slide joint's limit, per side s = -1 (lower), +1 (upper) within the margin
  (dist = s (range[s] - q) < margin): J = -s e_dof, pos = dist; a ball joint's: dist = max(range) - angle,
  J = -(rotation axis) on its three dofs. diagA = dof_invweight0 of the joint's first dof.
- a contact (not excluded: dist < includemargin = the pair's margin), with the Jacobian difference
  J2 - J1 of the two bodies at the contact point rotated into the contact frame (rows normal, t1, t2, then
  the rotational rows spin, roll1, roll2 for condim > 3): condim 1 one row; pyramidal cone the pairs
  J_n +/- friction[k-1] J_k, k = 1..dim-1; elliptic cone the dim rows as they are. diagA from the bodies'
  translation and rotation invweight0; every row's pos is dist and margin includemargin (elliptic: the
  normal row only), the impedance is the contact's. Then R_1 = R_0 / impratio, con.mu = friction[0]
  sqrt(R_1 / R_0); elliptic rows j > 1 get R_1 friction[0]^2 / friction[j-1]^2; pyramidal rows all get
  2 mu^2 R_0.

Dot products over dofs sum as MuJoCo's mju_dot does (four running sums, then the tail), so efc_vel is the
same number, not just close.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.constraint.equality import equality_rows, jdotv
from rigidsim.engine.constraint.impedance import (
    check_solimp, check_solref, impedance, regularizer, stiffness_damping,
)
from rigidsim.engine.constraint.rows import (
    chain_span, contact_row, jac_dif_step, place_span, row_adr, row_vel, soft_row,
)
from rigidsim.engine.constraint.tendon_rows import tendon_friction_rows, tendon_limit_rows
from rigidsim.engine.layout import (
    BODY_INVWEIGHT0, BODY_LASTDOF, BODY_ROOTID, CNSTR_CONTACT_ELLIPTIC, CNSTR_CONTACT_FRICTIONLESS,
    CNSTR_CONTACT_PYRAMIDAL, CNSTR_FRICTION_DOF, CNSTR_LIMIT_JOINT, CON_DIST, CON_EFCADR, CON_FRAME, CON_GEOM1,
    CON_GEOM2, CON_PAIR, CON_POS, CONE_ELLIPTIC, DOF_FRICTIONLOSS, DOF_INVWEIGHT0, DOF_SOLIMP,
    DOF_SOLREF, DSBL_CONSTRAINT, DSBL_CONTACT, DSBL_EQUALITY, DSBL_FRICTIONLOSS, DSBL_LIMIT, EFC_AREF, EFC_B,
    EFC_IMP, EFC_K, EFC_MARGIN, EFC_POS, EFC_VEL, EFCN_NE,
    EFCN_NEFC, EFCN_NF, EFCN_NL, FRAME_BODYID, JNT_BALL, JNT_DOFADR, JNT_LIMITED, JNT_MARGIN, JNT_QPOSADR,
    JNT_RANGE, JNT_SOLIMP, JNT_SOLREF, JNT_TYPE, MINVAL, OPT_CONE, OPT_DISABLEFLAGS, OPT_IMPRATIO, PAIR_DIM,
    PAIR_FRICTION, PAIR_MARGIN, PAIR_SOLIMP, PAIR_SOLREF, PAIR_SOLREFFRICTION, SUBTREE_COM, SZ_EFCW, SZ_NEFCWIDE,
    SZ_NJNT, SZ_NV, EFC_JADR,
)
from rigidsim.engine.solver.linalg import base, jcol


@ti.func
def _scalar_row(m: ti.template(), d: ti.template(), b, r, typ, id, dof, jval, pos, margin, frictionloss, diag_a,
                ref, solimp):
    """A row whose Jacobian is jval at one dof (a dof's friction loss)."""
    place_span(m, d, b, r, 1, ti.Vector([dof, dof + 1, 0, 0]), False)  # its span: the dof alone, written next
    d.efc_J[b, d.efc_i[b, r, EFC_JADR]] = jval
    soft_row(m, d, b, r, typ, id, pos, margin, frictionloss, diag_a, ref, solimp, typ == CNSTR_FRICTION_DOF)


@ti.func
def friction_rows(m: ti.template(), d: ti.template(), b, r0):
    """mj_instantiateFriction for dofs: one row per dof with friction loss; returns the next row."""
    r = r0
    for i in range(m.opt_i[SZ_NV]):
        fl = m.dof_f[i, DOF_FRICTIONLOSS]
        if fl != 0.0:
            _scalar_row(m, d, b, r, CNSTR_FRICTION_DOF, i, i, 1.0, 0.0, 0.0, fl, m.dof_f[i, DOF_INVWEIGHT0],
                        sm.getm(m.dof_f, i, DOF_SOLREF, 2), sm.getm(m.dof_f, i, DOF_SOLIMP, 5))
            r += 1
    return r


@ti.func
def limit_rows(m: ti.template(), d: ti.template(), b, r0):
    """mj_instantiateLimit for joints; returns the next row."""
    r = r0
    for j in range(m.opt_i[SZ_NJNT]):
        if m.jnt_i[j, JNT_LIMITED] != 0:
            jt = m.jnt_i[j, JNT_TYPE]
            dof = m.jnt_i[j, JNT_DOFADR]
            margin = m.jnt_f[j, JNT_MARGIN]
            ref = sm.getm(m.jnt_f, j, JNT_SOLREF, 2)
            solimp = sm.getm(m.jnt_f, j, JNT_SOLIMP, 5)
            diag_a = m.dof_f[dof, DOF_INVWEIGHT0]
            adr = m.jnt_i[j, JNT_QPOSADR]
            # a ball joint has one candidate row, a hinge or slide two (lower, then upper), a free joint none;
            # one loop and one copy of the row's writers for all of them (compiled code size)
            nside = 0
            if jt == JNT_BALL:
                nside = 1
            elif jt != 0:
                nside = 2
            for s in range(nside):
                side = 2.0 * s - 1.0
                axis = sm.zero3()
                dist = 0.0
                if jt == JNT_BALL:
                    q = sm.normalize4(ti.Vector([d.qpos[b, adr + k] for k in ti.static(range(4))]))
                    ax, angle = sm.normalize3(sm.quat2vel(q, 1.0))
                    axis = ax
                    dist = ti.max(m.jnt_f[j, JNT_RANGE], m.jnt_f[j, JNT_RANGE + 1]) - angle
                else:
                    dist = side * (m.jnt_f[j, JNT_RANGE + s] - d.qpos[b, adr])
                if dist < margin:
                    # the joint's dofs, every entry written next
                    place_span(m, d, b, r, 1, ti.Vector([dof, dof + (3 if jt == JNT_BALL else 1), 0, 0]), False)
                    nonzero = True
                    if jt == JNT_BALL:
                        nonzero = False
                        for k in ti.static(range(3)):
                            d.efc_J[b, d.efc_i[b, r, EFC_JADR] + k] = -axis[k]
                            if axis[k] != 0.0:
                                nonzero = True
                    else:
                        d.efc_J[b, d.efc_i[b, r, EFC_JADR]] = -side
                    if nonzero:  # MuJoCo drops a non-contact row whose Jacobian is all zeros
                        soft_row(m, d, b, r, CNSTR_LIMIT_JOINT, j, dist, margin, 0.0, diag_a, ref, solimp, False)
                        r += 1
    return r


@ti.func
def _frame_comp(frame, a, v):
    """Row a of the contact frame (a local 3x3) times the vector v, summed left to right."""
    return frame[a, 0] * v[0] + frame[a, 1] * v[1] + frame[a, 2] * v[2]


@ti.func
def contact_rows(m: ti.template(), d: ti.template(), b, r0, ncon):
    """mj_instantiateContact, diagApprox and impedance for the contacts of env b, and their rows' part of
    mj_referenceConstraint (efc_vel, aref: `reference_constraint` does the other rows); returns the next row.
    Every row of a contact shares its spans, so the rows' addresses and fields are computed here in locals
    and written once, without reading back a row's place (`row_adr`)."""
    r = r0
    elliptic = m.opt_i[OPT_CONE] == CONE_ELLIPTIC
    nv = m.opt_i[SZ_NV]
    wide = m.opt_i[SZ_NEFCWIDE]
    efcw = m.opt_i[SZ_EFCW]
    jb = base(d.efc_J, b, 0)
    qb = base(d.qvel, b, 0)
    db = base(d.dof, b, 0)
    for c in range(ncon):
        p = d.contact_i[b, c, CON_PAIR]
        dist = d.contact[b, c, CON_DIST]
        margin = m.pair_f[p, PAIR_MARGIN]
        d.contact_i[b, c, CON_EFCADR] = -1
        if dist < margin and nv > 0:  # contacts in the gap are excluded
            d.contact_i[b, c, CON_EFCADR] = r
            dim = m.pair_i[p, PAIR_DIM]
            nrow = dim
            typ = CNSTR_CONTACT_ELLIPTIC
            if dim == 1:
                typ = CNSTR_CONTACT_FRICTIONLESS
            elif not elliptic:
                nrow = 2 * (dim - 1)
                typ = CNSTR_CONTACT_PYRAMIDAL
            fri = sm.getm(m.pair_f, p, PAIR_FRICTION, 5)
            b1 = m.geom_i[d.contact_i[b, c, CON_GEOM1], FRAME_BODYID]
            b2 = m.geom_i[d.contact_i[b, c, CON_GEOM2], FRAME_BODYID]
            pos = sm.getv(d.contact, b, c, CON_POS, 3)
            off1 = pos - sm.getv(d.body, b, m.body_i[b1, BODY_ROOTID], SUBTREE_COM, 3)
            off2 = pos - sm.getv(d.body, b, m.body_i[b2, BODY_ROOTID], SUBTREE_COM, 3)
            # Jacobian: the two bodies' dof chains merged, highest dof first; J2 - J1 per dof. The chains
            # visit each span's first and last dof; the dofs between two visited ones of a span (a sibling
            # branch's) are cleared, so that every stored entry is written once
            sp = chain_span(m, b1, b2)
            da1 = m.body_i[b1, BODY_LASTDOF]
            da2 = m.body_i[b2, BODY_LASTDOF]
            if da1 < 0 and da2 < 0:  # no dofs: the one stored zero
                for k in range(nrow):
                    d.efc_J.arr[jb + row_adr(r + k, nv, wide, efcw)] = 0.0
            # the contact frame's rows (local: read once, not once per dof and row)
            frame = ti.Matrix.zero(float, 3, 3)
            for a in ti.static(range(3)):
                for e in ti.static(range(3)):
                    frame[a, e] = d.contact[b, c, CON_FRAME + 3 * a + e]
            prev = -1
            prevcol = -1
            while da1 >= 0 or da2 >= 0:
                da, jp, jr, da2, da1 = jac_dif_step(m, d, db, da2, da1, off2, off1)
                col = jcol(sp, da)
                if prev >= 0 and prevcol - col == prev - da:  # the same span: clear the gap
                    for k in range(nrow):
                        ak = jb + row_adr(r + k, nv, wide, efcw)
                        for gc in range(col + 1, prevcol):
                            d.efc_J.arr[ak + gc] = 0.0
                prev = da
                prevcol = col
                # frame row k % 3 times the translational (k < 3) or rotational difference, component k of
                # comp (the rotational ones only for condim > 3); then a loop over the rows, not unrolled
                # (compiled code size)
                comp = ti.Vector.zero(float, 6)
                for a in ti.static(range(3)):
                    comp[a] = _frame_comp(frame, a, jp)
                if dim > 3:
                    for a in ti.static(range(3)):
                        comp[3 + a] = _frame_comp(frame, a, jr)
                # the rows unrolled, each behind its test k < dim: comp and fri indexed by constants stay in
                # registers (an index known only at run time puts a local vector in memory)
                if typ == CNSTR_CONTACT_PYRAMIDAL:
                    t0 = comp[0]
                    for k in ti.static(range(1, 6)):
                        if k < dim:
                            tk = comp[k]
                            fk = fri[k - 1]
                            ak = r + 2 * (k - 1)
                            d.efc_J.arr[jb + row_adr(ak, nv, wide, efcw) + col] = t0 + fk * tk
                            d.efc_J.arr[jb + row_adr(ak + 1, nv, wide, efcw) + col] = t0 + (-fk) * tk
                else:
                    for k in ti.static(range(6)):
                        if k < dim:
                            d.efc_J.arr[jb + row_adr(r + k, nv, wide, efcw) + col] = comp[k]
            # diagApprox: the bodies' translation weights (the rotation weights would give only rows whose R
            # the friction regularization replaces)
            tran = m.body_f[b1, BODY_INVWEIGHT0] + m.body_f[b2, BODY_INVWEIGHT0]
            ref = check_solref(m, sm.getm(m.pair_f, p, PAIR_SOLREF, 2), 0.02, 1.0)
            solimp = check_solimp(sm.getm(m.pair_f, p, PAIR_SOLIMP, 5))
            imp, _ = impedance(solimp, dist, margin)
            # R of the first row from its diagA; with friction (dim > 1) every other row's R follows from it
            # (the friction regularization: R_1 = R_0 / impratio, mu = friction[0] sqrt(R_1 / R_0); pyramidal
            # rows all 2 mu^2 R_0, elliptic row j > 1 R_1 friction[0]^2 / friction[j-1]^2), so it is the only
            # diagA-derived R computed; D and diagA are re-derived from each row's final R
            diag0 = tran
            if typ == CNSTR_CONTACT_PYRAMIDAL:
                diag0 = tran + fri[0] * fri[0] * tran
            r_0 = regularizer(imp, diag0)
            r_1 = r_0
            mu = 0.0
            if dim > 1:
                r_1 = r_0 / ti.max(MINVAL, m.opt_f[OPT_IMPRATIO])
                mu = fri[0] * ti.sqrt(r_1 / r_0)
            r_pyr = 2.0 * mu * mu * r_0
            kn, bn = stiffness_damping(ref, solimp[1], False)
            # an elliptic contact's friction rows: K = 0, solreffriction when it is set
            rf = ref
            if typ == CNSTR_CONTACT_ELLIPTIC:
                reff = check_solref(m, sm.getm(m.pair_f, p, PAIR_SOLREFFRICTION, 2), 0.0, 0.0)
                if reff[0] != 0.0 or reff[1] != 0.0:
                    rf = reff
            kf, bf = stiffness_damping(rf, solimp[1], True)
            for k in range(nrow):
                rr = r_0
                kk = kn
                bb = bn
                pos_k = dist
                margin_k = margin
                fk = 0.0  # the row's friction coefficient (pyramidal: its edge pair's; elliptic: its own)
                if typ == CNSTR_CONTACT_PYRAMIDAL:
                    fk = fri[k // 2]
                    rr = r_pyr
                elif typ == CNSTR_CONTACT_ELLIPTIC and k > 0:
                    fk = fri[k - 1]
                    rr = r_1
                    if k > 1:
                        rr = r_1 * fri[0] * fri[0] / (fk * fk)
                    pos_k = 0.0
                    margin_k = 0.0
                    kk = kf
                    bb = bf
                contact_row(d, b, r + k, typ, c, pos_k, margin_k, dim, k, rr, imp, kk, bb, mu, fk, sp,
                            row_adr(r + k, nv, wide, efcw), jb, qb, nv)
            r += nrow
    return r


# which kinds of rows a kernel compiles (a scene's `rows_of`; bits of the constraint stage's compile-time mask)
ROW_EQUALITY, ROW_FRICTION, ROW_TENDON_FRICTION, ROW_LIMIT, ROW_TENDON_LIMIT, ROW_CONTACT = 1, 2, 4, 8, 16, 32
ROW_ALL = 63


def rows_of(model, has_contacts: bool) -> int:
    """The kinds of rows a model can make (plain Python: numpy on the model's arrays)."""
    mask = ROW_CONTACT if has_contacts else 0
    if model.neq:
        mask |= ROW_EQUALITY
    if (model.dof_frictionloss != 0).any():
        mask |= ROW_FRICTION
    if model.ntendon and (model.tendon_frictionloss > 0).any():
        mask |= ROW_TENDON_FRICTION
    if model.jnt_limited.any():
        mask |= ROW_LIMIT
    if model.ntendon and model.tendon_limited.any():
        mask |= ROW_TENDON_LIMIT
    return mask


@ti.func
def make_constraint(m: ti.template(), d: ti.template(), b, ncon, rows: ti.template()):
    """The rows of env b (after collision: `ncon` contacts in d.contact); sets efc_n's counts. `rows`: the
    kinds of rows compiled in (`rows_of`)."""
    flags = m.opt_i[OPT_DISABLEFLAGS]
    ne = 0
    nf = 0
    nl = 0
    r = 0
    if (flags & DSBL_CONSTRAINT) == 0:
        if ti.static(rows & ROW_EQUALITY):
            if (flags & DSBL_EQUALITY) == 0:
                r = equality_rows(m, d, b, r)
        ne = r
        if (flags & DSBL_FRICTIONLOSS) == 0:
            if ti.static(rows & ROW_FRICTION):
                r = friction_rows(m, d, b, r)
            if ti.static(rows & ROW_TENDON_FRICTION):
                r = tendon_friction_rows(m, d, b, r)
        nf = r - ne
        if (flags & DSBL_LIMIT) == 0:
            if ti.static(rows & ROW_LIMIT):
                r = limit_rows(m, d, b, r)
            if ti.static(rows & ROW_TENDON_LIMIT):
                r = tendon_limit_rows(m, d, b, r)
        nl = r - ne - nf
        if ti.static(rows & ROW_CONTACT):
            if (flags & DSBL_CONTACT) == 0:
                r = contact_rows(m, d, b, r, ncon)
    d.efc_n[b, EFCN_NE] = ne
    d.efc_n[b, EFCN_NF] = nf
    d.efc_n[b, EFCN_NL] = nl
    d.efc_n[b, EFCN_NEFC] = r


@ti.func
def reference_constraint(m: ti.template(), d: ti.template(), b, rows: ti.template()):
    """efc_vel = J qvel and aref = -B vel - K imp (pos - margin) for every row of env b but the contacts'
    (`contact_rows` sets theirs), then the connect and weld rows' aref less their Jacobian's time derivative
    times qvel (`equality.jdotv`)."""
    nv = m.opt_i[SZ_NV]
    n = d.efc_n[b, EFCN_NEFC]
    if ti.static(rows & ROW_CONTACT):  # the contacts' rows have theirs (`contact_rows`)
        n = d.efc_n[b, EFCN_NE] + d.efc_n[b, EFCN_NF] + d.efc_n[b, EFCN_NL]
    for r in range(n):
        vel = row_vel(d, b, r, nv)
        d.efc[b, r, EFC_VEL] = vel
        d.efc[b, r, EFC_AREF] = (-d.efc[b, r, EFC_B]) * vel - d.efc[b, r, EFC_K] * d.efc[b, r, EFC_IMP] * (
            d.efc[b, r, EFC_POS] - d.efc[b, r, EFC_MARGIN])
    if ti.static(rows & ROW_EQUALITY):
        if d.efc_n[b, EFCN_NE] > 0:
            jdotv(m, d, b)
