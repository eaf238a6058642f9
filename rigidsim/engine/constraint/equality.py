"""Equality-constraint rows of one env: MuJoCo's mj_instantiateEquality (with mj_equalityAnchors) and the
equality part of mj_diagApprox and mj_makeImpedance, and mj_Jdotv, the connect and weld rows' J-dot qvel that
mj_referenceConstraint subtracts from their aref. Active equalities only (d.eq_active, from eq_active0); flex
equalities are refused at load.

- connect (3 rows): anchors p1 on body 1, p2 on body 2 (body semantics: eq_data[0:3] and eq_data[3:6] in
  the bodies' frames; site semantics: the two sites' positions), pos = p1 - p2,
  J = J_p(body 1 at p1) - J_p(body 2 at p2). diagA: both bodies' translation invweight0.
- weld (6 rows): the anchors swapped (eq_data[3:6] on body 1, eq_data[0:3] on body 2), rows 0-2 as connect;
  rows 3-5 the orientation error: with q = xquat1 relpose (site semantics: xquat1 site_quat1) and
  n = neg(xquat2) (neg(xquat2 site_quat2)), pos = torquescale vec(n q) and
  J = torquescale vec(0.5 n (J_r1 - J_r2) q), column by column. diagA: translation then rotation
  invweight0 of both bodies. A connect or weld block takes its impedance at the norm of its pos.
- joint (1 row): pos = q1 - q1_0 - data[0] - poly(q2 - q2_0), poly(x) = data[1] x + ... + data[4] x^4
  (without a second joint pos = q1 - q1_0 - data[0]), J = e_dof1 - poly'(q2 - q2_0) e_dof2;
  tendon (1 row): the same with ten_length, tendon_length0 and the tendons' Jacobians. diagA: the objects'
  dof (tendon) invweight0 summed.

A block whose Jacobian is all zeros (nothing moves either side) makes no rows, as in MuJoCo.

mj_Jdotv: for connect and weld rows, aref -= Jdot_p(body 1 at p1) qvel - Jdot_p(body 2 at p2) qvel, where a
dof's Jdot column is cdof_dot_lin + cdof_dot_ang x (p - com) + cdof_ang x v_p (v_p the point's velocity;
the rotational dofs of ball and free joints take cdof_dot = cvel x cdof of their body); welds also subtract
the time derivative of the orientation rows: torquescale vec(0.5 (n' w q + n Jdot_r qvel q + n w q')), w the
relative angular velocity of the bodies. The products with qvel are summed over every dof in mju_dot's
order, as MuJoCo's dense mj_mulMatVec sums them.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.constraint.rows import (
    chain_span, jac_dif_step, set_row, set_soft, soft_params, soft_row, zero_rows, zero_span,
)
from rigidsim.engine.layout import (
    BODY_LASTDOF, BODY_ROOTID, CDOF, CDOF_DOT, CNSTR_EQUALITY, CVEL, DOF_BODYID, DOF_JNTID, DOF_PARENTID, EFC_AREF,
    EFC_ID, EFCN_NE, EQ_BODY1, EQ_BODY2, EQ_DATA, EQ_INVWEIGHT, EQ_OBJ1ID, EQ_OBJ2ID, EQ_OBJTYPE, EQ_SOLIMP,
    EQ_SOLREF, EQ_TYPE, FRAME_QUAT, FXPOS, JNT_BALL, JNT_DOFADR, JNT_FREE, JNT_QPOSADR, JNT_TYPE, QPOS0, SUBTREE_COM,
    SZ_NEQ, SZ_NV, TEN_LENGTH, TEN_LENGTH0, XMAT, XPOS, XQUAT, EFC_JADR,
)
from rigidsim.engine.solver.linalg import base, jcol
from rigidsim.model import EQ_CONNECT, EQ_JOINT, EQ_TENDON, EQ_WELD, OBJ_BODY


@ti.func
def _mul_quat_axis(q, a):
    """mju_mulQuatAxis: q * (0, a)."""
    return ti.Vector([
        -q[1] * a[0] - q[2] * a[1] - q[3] * a[2],
        q[0] * a[0] + q[2] * a[2] - q[3] * a[1],
        q[0] * a[1] + q[3] * a[0] - q[1] * a[2],
        q[0] * a[2] + q[1] * a[1] - q[2] * a[0],
    ])


@ti.func
def _deriv_quat(q, w):
    """mju_derivQuat: dq/dt of q turning at angular velocity w (in the frame q maps from)."""
    return ti.Vector([
        0.5 * (-w[0] * q[1] - w[1] * q[2] - w[2] * q[3]),
        0.5 * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2]),
        0.5 * (-w[0] * q[3] + w[1] * q[0] + w[2] * q[1]),
        0.5 * (w[0] * q[2] - w[1] * q[1] + w[2] * q[0]),
    ])


@ti.func
def _vec3(q):
    return ti.Vector([q[1], q[2], q[3]])


@ti.func
def _body_point(d: ti.template(), b, body, local):
    """xmat[body] local + xpos[body]."""
    return sm.rot_vec_mat(local, sm.getv(d.body, b, body, XMAT, 9)) + sm.getv(d.body, b, body, XPOS, 3)


@ti.func
def _anchors(m: ti.template(), d: ti.template(), b, e):
    """mj_equalityAnchors: the global anchor points of connect or weld e on its body 1 and body 2."""
    p1 = sm.zero3()
    p2 = sm.zero3()
    if m.eq_i[e, EQ_OBJTYPE] == OBJ_BODY:
        a1 = EQ_DATA
        a2 = EQ_DATA + 3
        if m.eq_i[e, EQ_TYPE] == EQ_WELD:
            a1 = EQ_DATA + 3
            a2 = EQ_DATA
        p1 = _body_point(d, b, m.eq_i[e, EQ_OBJ1ID], sm.getm(m.eq_f, e, a1, 3))
        p2 = _body_point(d, b, m.eq_i[e, EQ_OBJ2ID], sm.getm(m.eq_f, e, a2, 3))
    else:
        p1 = sm.getv(d.site, b, m.eq_i[e, EQ_OBJ1ID], FXPOS, 3)
        p2 = sm.getv(d.site, b, m.eq_i[e, EQ_OBJ2ID], FXPOS, 3)
    return p1, p2


@ti.func
def _frame_quats(m: ti.template(), d: ti.template(), b, e):
    """A weld's orientations: (side 1's quaternion, side 2's): xquat1, xquat2 (body semantics, before relpose)
    or xquat1 site_quat1, xquat2 site_quat2 (site semantics)."""
    q1 = sm.getv(d.body, b, m.eq_i[e, EQ_BODY1], XQUAT, 4)
    q2 = sm.getv(d.body, b, m.eq_i[e, EQ_BODY2], XQUAT, 4)
    if m.eq_i[e, EQ_OBJTYPE] != OBJ_BODY:
        q1 = sm.mul_quat(q1, sm.getm(m.site_f, m.eq_i[e, EQ_OBJ1ID], FRAME_QUAT, 4))
        q2 = sm.mul_quat(q2, sm.getm(m.site_f, m.eq_i[e, EQ_OBJ2ID], FRAME_QUAT, 4))
    return q1, q2


@ti.func
def _weld_quats(m: ti.template(), d: ti.template(), b, e):
    """(q, n): q = xquat1 relpose (site semantics: xquat1 site_quat1), n = the conjugate of side 2's."""
    q1, q2 = _frame_quats(m, d, b, e)
    if m.eq_i[e, EQ_OBJTYPE] == OBJ_BODY:
        q1 = sm.mul_quat(q1, sm.getm(m.eq_f, e, EQ_DATA + 6, 4))
    return q1, sm.neg_quat(q2)


@ti.func
def _norm(v, n):
    """mju_norm of the first n (3 or 6) entries, summed in mju_dot's order."""
    s = 0.0
    if n == 6:
        s = (v[0] * v[0] + v[2] * v[2]) + (v[1] * v[1] + v[3] * v[3])
        s += v[4] * v[4] + v[5] * v[5]
    else:
        s += v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    return ti.sqrt(s)


@ti.func
def _body_rows(m: ti.template(), d: ti.template(), b, r, e, weld):
    """A connect's 3 rows or a weld's 6 at row r; returns the next row."""
    nrow = 3
    if weld:
        nrow = 6
    p1, p2 = _anchors(m, d, b, e)
    b1 = m.eq_i[e, EQ_BODY1]
    b2 = m.eq_i[e, EQ_BODY2]
    ts = m.eq_f[e, EQ_DATA + 10]
    q, n = _weld_quats(m, d, b, e)
    dp = p1 - p2
    cpos = ti.Vector([dp[0], dp[1], dp[2], 0.0, 0.0, 0.0])
    if weld:
        qe = sm.mul_quat(n, q)
        cpos = ti.Vector([dp[0], dp[1], dp[2], qe[1] * ts, qe[2] * ts, qe[3] * ts])
    # Jacobian: body 1's dof chain minus body 2's, merged from the highest dof down
    sp = chain_span(m, b1, b2)
    zero_span(m, d, b, r, nrow, sp)
    nonzero = False
    off1 = p1 - sm.getv(d.body, b, m.body_i[b1, BODY_ROOTID], SUBTREE_COM, 3)
    off2 = p2 - sm.getv(d.body, b, m.body_i[b2, BODY_ROOTID], SUBTREE_COM, 3)
    da1 = m.body_i[b1, BODY_LASTDOF]
    da2 = m.body_i[b2, BODY_LASTDOF]
    while da1 >= 0 or da2 >= 0:
        da, jp, jr, da1, da2 = jac_dif_step(m, d, base(d.dof, b, 0), da1, da2, off1, off2)
        for k in ti.static(range(3)):
            d.efc_J[b, d.efc_i[b, r + k, EFC_JADR] + jcol(sp, da)] = jp[k]
            if jp[k] != 0.0:
                nonzero = True
        if weld:
            qc = sm.mul_quat(_mul_quat_axis(n, jr), q)
            for k in ti.static(range(3)):
                v = 0.5 * qc[k + 1] * ts
                d.efc_J[b, d.efc_i[b, r + 3 + k, EFC_JADR] + jcol(sp, da)] = v
                if v != 0.0:
                    nonzero = True
    if nonzero:
        imp, kk, bb = soft_params(m, sm.getm(m.eq_f, e, EQ_SOLREF, 2), sm.getm(m.eq_f, e, EQ_SOLIMP, 5),
                                  _norm(cpos, nrow), 0.0, False)
        for k in ti.static(range(6)):
            if k < nrow:
                diag_a = m.eq_f[e, EQ_INVWEIGHT]
                if ti.static(k >= 3):
                    diag_a = m.eq_f[e, EQ_INVWEIGHT + 1]
                set_row(d, b, r + k, CNSTR_EQUALITY, e, cpos[k], 0.0, 0.0, diag_a)
                set_soft(d, b, r + k, imp, kk, bb)
        r += nrow
    return r


@ti.func
def _scalar_value(m: ti.template(), d: ti.template(), b, obj, tendon):
    """(value, reference) of a joint equality's joint (qpos, qpos0) or a tendon equality's tendon (ten_length,
    tendon_length0)."""
    value = 0.0
    ref = 0.0
    if tendon:
        value = d.ten[b, obj, TEN_LENGTH]
        ref = m.ten_f[obj, TEN_LENGTH0]
    else:
        adr = m.jnt_i[obj, JNT_QPOSADR]
        value = d.qpos[b, adr]
        ref = m.qpos_f[adr, QPOS0]
    return value, ref


@ti.func
def _scalar_row(m: ti.template(), d: ti.template(), b, r, e, tendon):
    """A joint or tendon equality's row at row r; returns the next row."""
    nv = m.opt_i[SZ_NV]
    o1 = m.eq_i[e, EQ_OBJ1ID]
    o2 = m.eq_i[e, EQ_OBJ2ID]
    zero_rows(m, d, b, r, 1)
    adr = d.efc_i[b, r, EFC_JADR]  # a whole row: dof c at adr + c
    if tendon:
        for c in range(nv):
            d.efc_J[b, adr + c] = d.ten_J[b, o1, c]
    else:
        d.efc_J[b, adr + m.jnt_i[o1, JNT_DOFADR]] = 1.0
    pos1, ref1 = _scalar_value(m, d, b, o1, tendon)
    data0 = m.eq_f[e, EQ_DATA]
    cpos = pos1 - ref1 - data0
    if o2 >= 0:
        pos2, ref2 = _scalar_value(m, d, b, o2, tendon)
        c1 = m.eq_f[e, EQ_DATA + 1]
        c2 = m.eq_f[e, EQ_DATA + 2]
        c3 = m.eq_f[e, EQ_DATA + 3]
        c4 = m.eq_f[e, EQ_DATA + 4]
        dif = pos2 - ref2
        cpos = pos1 - ref1 - data0 - (c1 * dif + c2 * dif * dif + c3 * dif * dif * dif + c4 * dif * dif * dif * dif)
        deriv = c1 + 2 * c2 * dif + 3 * c3 * dif * dif + 4 * c4 * dif * dif * dif
        if tendon:
            for c in range(nv):
                d.efc_J[b, adr + c] = d.efc_J[b, adr + c] + d.ten_J[b, o2, c] * (-deriv)
        else:
            dof2 = m.jnt_i[o2, JNT_DOFADR]
            d.efc_J[b, adr + dof2] = d.efc_J[b, adr + dof2] + (-deriv)
    nonzero = False
    for c in range(nv):
        if d.efc_J[b, adr + c] != 0.0:
            nonzero = True
    if nonzero:
        soft_row(m, d, b, r, CNSTR_EQUALITY, e, cpos, 0.0, 0.0, m.eq_f[e, EQ_INVWEIGHT],
                 sm.getm(m.eq_f, e, EQ_SOLREF, 2), sm.getm(m.eq_f, e, EQ_SOLIMP, 5), False)
        r += 1
    return r


@ti.func
def equality_rows(m: ti.template(), d: ti.template(), b, r0):
    """mj_instantiateEquality and the rows' diagA and impedance; returns the next row."""
    r = r0
    for e in range(m.opt_i[SZ_NEQ]):
        if d.eq_active[b, e] != 0:
            typ = m.eq_i[e, EQ_TYPE]
            if typ == EQ_CONNECT or typ == EQ_WELD:
                r = _body_rows(m, d, b, r, e, typ == EQ_WELD)
            elif typ == EQ_JOINT or typ == EQ_TENDON:
                r = _scalar_row(m, d, b, r, e, typ == EQ_TENDON)
    return r


# ----------------------------------------------------------------------------- mj_Jdotv


@ti.func
def _next_dof(m: ti.template(), last, i):
    """The lowest dof above i on the chain from `last` down dof_parentid (-1: none): walks the chain in
    increasing order without storing it."""
    nxt = -1
    j = last
    while j > i:
        nxt = j
        j = m.dof_i[j, DOF_PARENTID]
    return nxt


@ti.func
def _jacdot_qvel(m: ti.template(), d: ti.template(), b, body, point):
    """mj_jacDot of `point` on `body` times qvel: (translational 3, rotational 3), each the dense row's dot
    product with qvel in mju_dot's order (four running sums by dof index mod 4, then the tail)."""
    nv = m.opt_i[SZ_NV]
    n4 = (nv // 4) * 4
    com = sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3)
    offset = point - com
    cvel = sm.getv(d.body, b, body, CVEL, 6)
    # the point's linear velocity (mju_transformSpatial of cvel from the com to the point)
    vp = ti.Vector([cvel[3], cvel[4], cvel[5]]) - sm.cross3(offset, ti.Vector([cvel[0], cvel[1], cvel[2]]))
    r0 = ti.Vector([0.0] * 6)
    r1 = ti.Vector([0.0] * 6)
    r2 = ti.Vector([0.0] * 6)
    r3 = ti.Vector([0.0] * 6)
    t0 = ti.Vector([0.0] * 6)
    t1 = ti.Vector([0.0] * 6)
    t2 = ti.Vector([0.0] * 6)
    last = m.body_i[body, BODY_LASTDOF]
    i = _next_dof(m, last, -1)
    while i >= 0:
        cd = sm.getv(d.dof, b, i, CDOF, 6)
        cdd = sm.getv(d.dof, b, i, CDOF_DOT, 6)
        j = m.dof_i[i, DOF_JNTID]
        jt = m.jnt_i[j, JNT_TYPE]
        if jt == JNT_BALL or (jt == JNT_FREE and i >= m.jnt_i[j, JNT_DOFADR] + 3):
            cdd = sm.cross_motion(sm.getv(d.body, b, m.dof_i[i, DOF_BODYID], CVEL, 6), cd)
        tmp1 = sm.cross3(ti.Vector([cdd[0], cdd[1], cdd[2]]), offset)
        tmp2 = sm.cross3(ti.Vector([cd[0], cd[1], cd[2]]), vp)
        col = ti.Vector([cdd[3] + tmp1[0] + tmp2[0], cdd[4] + tmp1[1] + tmp2[1], cdd[5] + tmp1[2] + tmp2[2],
                         cdd[0], cdd[1], cdd[2]])
        term = col * d.qvel[b, i]
        if i < n4:
            k = i % 4
            if k == 0:
                r0 = r0 + term
            elif k == 1:
                r1 = r1 + term
            elif k == 2:
                r2 = r2 + term
            else:
                r3 = r3 + term
        elif i == n4:
            t0 = term
        elif i == n4 + 1:
            t1 = term
        else:
            t2 = term
        i = _next_dof(m, last, i)
    res = (r0 + r2) + (r1 + r3)
    left = nv - n4
    if left == 3:
        res = res + (t0 + t1 + t2)
    elif left == 2:
        res = res + (t0 + t1)
    elif left == 1:
        res = res + t0
    return res


@ti.func
def jdotv(m: ti.template(), d: ti.template(), b):
    """mj_Jdotv: every connect and weld row's aref less its J-dot qvel (after aref is set)."""
    ne = d.efc_n[b, EFCN_NE]
    row = 0
    while row < ne:
        e = d.efc_i[b, row, EFC_ID]
        typ = m.eq_i[e, EQ_TYPE]
        if typ == EQ_CONNECT or typ == EQ_WELD:
            p1, p2 = _anchors(m, d, b, e)
            b1 = m.eq_i[e, EQ_BODY1]
            b2 = m.eq_i[e, EQ_BODY2]
            v1 = ti.Vector([0.0] * 6)
            v2 = ti.Vector([0.0] * 6)
            for side in range(2):  # a loop with one call: one inlined copy of the J-dot code
                body = b1
                point = p1
                if side == 1:
                    body = b2
                    point = p2
                v = _jacdot_qvel(m, d, b, body, point)
                if side == 0:
                    v1 = v
                else:
                    v2 = v
            for k in ti.static(range(3)):
                d.efc[b, row + k, EFC_AREF] = d.efc[b, row + k, EFC_AREF] - (v1[k] - v2[k])
            if typ == EQ_WELD:
                ts = m.eq_f[e, EQ_DATA + 10]
                q, n = _weld_quats(m, d, b, e)
                f1, f2 = _frame_quats(m, d, b, e)
                c1 = sm.getv(d.body, b, b1, CVEL, 6)
                c2 = sm.getv(d.body, b, b2, CVEL, 6)
                w1 = ti.Vector([c1[0], c1[1], c1[2]])
                w2 = ti.Vector([c2[0], c2[1], c2[2]])
                dw = w1 - w2
                qdot = _deriv_quat(f1, w1)  # d/dt of side 1's frame, then of q
                if m.eq_i[e, EQ_OBJTYPE] == OBJ_BODY:
                    qdot = sm.mul_quat(qdot, sm.getm(m.eq_f, e, EQ_DATA + 6, 4))
                ndot = sm.neg_quat(_deriv_quat(f2, w2))
                djr = ti.Vector([v1[3] - v2[3], v1[4] - v2[4], v1[5] - v2[5]])
                u1 = sm.mul_quat(_mul_quat_axis(ndot, dw), q)
                u2 = sm.mul_quat(_mul_quat_axis(n, djr), q)
                u3 = sm.mul_quat(_mul_quat_axis(n, dw), qdot)
                for k in ti.static(range(3)):
                    d.efc[b, row + 3 + k, EFC_AREF] = d.efc[b, row + 3 + k, EFC_AREF] - \
                        0.5 * (u1[k + 1] + u2[k + 1] + u3[k + 1]) * ts
                row += 6
            else:
                row += 3
        else:  # a joint or tendon equality: one row
            row += 1
