"""What the sensor stages need of the forward pass, as ti.funcs: mj_subtreeVel (the subtrees' linear
velocity and angular momentum), mj_rnePostConstraint (cacc and cfrc_int, with the contact, equality and
spatial-tendon forces as external forces: MuJoCo 4.0's) and the energies (mj_energyPos, mj_energyVel)."""

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.constraint.equality import _mul_quat_axis, _weld_quats
from rigidsim.engine.constraint.record import contact_force
from rigidsim.engine.smooth import mul_dof_vec
from rigidsim.engine.tendon import tendon_passive_force
from rigidsim.engine.sensor_frame import force_at, object_motion
from rigidsim.engine.layout import (
    ACTUATOR_FORCE, ACT_GEAR, ACT_TRNID, ACT_TRNTYPE, BODY_DOFADR, BODY_DOFNUM, BODY_INERTIA, BODY_MASS,
    BODY_PARENTID, BODY_ROOTID, CACC, CDOF, CDOF_DOT, CFRC_INT, CINERT, CNSTR_EQUALITY, CNSTR_FRICTION_TENDON,
    CNSTR_LIMIT_TENDON, CON_EFCADR, CON_FRAME, CON_GEOM1, CON_POS, CVEL, DOF_MADR, DOF_MROWNNZ, DSBL_GRAVITY,
    DSBL_SPRING, EFCN_NE, EFCN_NF, EFCN_NL, EFC_FORCE, EFC_ID, EFC_POS, EFC_TYPE, EQ_BODY1, EQ_DATA, EQ_OBJ1ID,
    EQ_OBJTYPE, EQ_TYPE, FRAME_BODYID, FRAME_POS, FXPOS, JNT_BALL, JNT_FREE, JNT_QPOSADR, JNT_STIFFNESS, JNT_TYPE,
    MINVAL, M_COLIND, OPT_DISABLEFLAGS, OPT_GRAVITY, QM, QPOS_SPRING, SUBTREE_ANGMOM, SUBTREE_COM, SUBTREE_LINVEL,
    SUBTREE_MASS, SZ_NBODY, SZ_NCONMAX, SZ_NJNT, SZ_NTENDON, SZ_NU, SZ_NV, TEN_ADR, TEN_FIXED, TEN_LENGTH,
    TEN_LENGTH0, TEN_LENGTHSPRING, TEN_NUM, TEN_RANGE, TEN_STIFFNESS, TRN_TENDON, WRAP_BODYID, WRAP_OBJID, WRAP_PRM,
    WRAP_TYPE, XIMAT, XIPOS, XMAT, XPOS,
)



@ti.func
def subtree_vel(m: ti.template(), d: ti.template(), b):
    """mj_subtreeVel: each subtree's linear velocity (its com's) and angular momentum about its com."""
    nbody = m.opt_i[SZ_NBODY]
    for i in range(nbody):
        ang, lin = object_motion(m, d, b, CVEL, M.OBJ_BODY, i, i, 0)
        sm.setv(d.body, b, i, SUBTREE_LINVEL, lin * m.body_f[i, BODY_MASS])
        ximat = sm.getv(d.body, b, i, XIMAT, 9)
        dv = sm.rot_vec_mat_t(ang, ximat) * sm.getm(m.body_f, i, BODY_INERTIA, 3)
        sm.setv(d.body, b, i, SUBTREE_ANGMOM, sm.rot_vec_mat(dv, ximat))
    for ii in range(nbody):  # momenta summed up the tree, then divided by the subtree's mass
        i = nbody - 1 - ii
        mom = sm.getv(d.body, b, i, SUBTREE_LINVEL, 3)
        if i > 0:
            p = m.body_i[i, BODY_PARENTID]
            sm.setv(d.body, b, p, SUBTREE_LINVEL, sm.getv(d.body, b, p, SUBTREE_LINVEL, 3) + mom)
        sm.setv(d.body, b, i, SUBTREE_LINVEL, mom / ti.max(MINVAL, d.body[b, i, SUBTREE_MASS]))
    for ii in range(nbody - 1):
        i = nbody - 1 - ii
        p = m.body_i[i, BODY_PARENTID]
        _, lin = object_motion(m, d, b, CVEL, M.OBJ_BODY, i, i, 0)
        linvel = sm.getv(d.body, b, i, SUBTREE_LINVEL, 3)
        com = sm.getv(d.body, b, i, SUBTREE_COM, 3)
        # the body's momentum about its subtree's com, then the subtree's about its parent's
        own = sm.getv(d.body, b, i, SUBTREE_ANGMOM, 3) + sm.cross3(
            sm.getv(d.body, b, i, XIPOS, 3) - com, (lin - linvel) * m.body_f[i, BODY_MASS])
        sm.setv(d.body, b, i, SUBTREE_ANGMOM, own)
        dl = sm.cross3(com - sm.getv(d.body, b, p, SUBTREE_COM, 3),
                       (linvel - sm.getv(d.body, b, p, SUBTREE_LINVEL, 3)) * d.body[b, i, SUBTREE_MASS])
        sm.setv(d.body, b, p, SUBTREE_ANGMOM, sm.getv(d.body, b, p, SUBTREE_ANGMOM, 3) + own + dl)


@ti.func
def _add_ext(m: ti.template(), d: ti.template(), b, k, torque, force, at, sign):
    """cfrc_ext[k] += sign * (torque, force) acting at `at`, moved to k's subtree com (held in CFRC_INT)."""
    if k > 0:
        t, f = force_at(torque, force, sm.getv(d.body, b, m.body_i[k, BODY_ROOTID], SUBTREE_COM, 3), at)
        for c in ti.static(range(3)):
            d.body[b, k, CFRC_INT + c] = d.body[b, k, CFRC_INT + c] + sign * t[c]
            d.body[b, k, CFRC_INT + 3 + c] = d.body[b, k, CFRC_INT + 3 + c] + sign * f[c]


@ti.func
def _weld_torque(m: ti.template(), d: ti.template(), b, e, f):
    """The world torque on a weld's body 1 of its rotation rows' forces f: their Jacobian's transpose (rows
    0.5 torquescale Im(n (0, w) q) of body 1's angular velocity w, as the rows are built) times f."""
    q, n = _weld_quats(m, d, b, e)
    ts = 0.5 * m.eq_f[e, EQ_DATA + 10]
    torque = sm.zero3()
    for k in ti.static(range(3)):
        axis = sm.zero3()
        axis[k] = 1.0
        qc = sm.mul_quat(_mul_quat_axis(n, axis), q)
        torque[k] = ts * (qc[1] * f[0] + qc[2] * f[1] + qc[3] * f[2])
    return torque


@ti.func
def _tendon_force(m: ti.template(), d: ti.template(), b, t):
    """The force along spatial tendon t's length (positive: lengthens it) of everything that acts through the
    tendon: its constraint rows (friction, limits, tendon equalities, each times its Jacobian's factor on the
    tendon's), its spring and damper, and the actuators on it (force times gear)."""
    f = 0.0
    length = d.ten[b, t, TEN_LENGTH]
    ne = d.efc_n[b, EFCN_NE]
    for r in range(ne + d.efc_n[b, EFCN_NF] + d.efc_n[b, EFCN_NL]):
        typ = d.efc_i[b, r, EFC_TYPE]
        if typ == CNSTR_FRICTION_TENDON and d.efc_i[b, r, EFC_ID] == t:
            f += d.efc[b, r, EFC_FORCE]
        elif typ == CNSTR_LIMIT_TENDON and d.efc_i[b, r, EFC_ID] == t:
            # the lower limit's row is the tendon's Jacobian, the upper's its negative (`tendon_rows`)
            lower = d.efc[b, r, EFC_POS] == -1.0 * (m.ten_f[t, TEN_RANGE] - length)
            f += d.efc[b, r, EFC_FORCE] if lower else -d.efc[b, r, EFC_FORCE]
        elif typ == CNSTR_EQUALITY and r < ne:
            e = d.efc_i[b, r, EFC_ID]
            if m.eq_i[e, EQ_TYPE] == M.EQ_TENDON:
                if m.eq_i[e, EQ_OBJ1ID] == t:
                    f += d.efc[b, r, EFC_FORCE]
                if m.eq_i[e, EQ_OBJ1ID + 1] == t:  # length1 - poly(length2): minus the polynomial's slope
                    x = length - m.ten_f[t, TEN_LENGTH0]
                    slope = m.eq_f[e, EQ_DATA + 1] + x * (2.0 * m.eq_f[e, EQ_DATA + 2] + x * (
                        3.0 * m.eq_f[e, EQ_DATA + 3] + x * 4.0 * m.eq_f[e, EQ_DATA + 4]))
                    f -= d.efc[b, r, EFC_FORCE] * slope
    spring, damper = tendon_passive_force(m, d, b, t)
    f += spring + damper
    for a in range(m.opt_i[SZ_NU]):
        if m.act_i[a, ACT_TRNTYPE] == TRN_TENDON and m.act_i[a, ACT_TRNID] == t:
            f += d.actu[b, a, ACTUATOR_FORCE] * m.act_f[a, ACT_GEAR]
    return f


@ti.func
def _tendon_ext(m: ti.template(), d: ti.template(), b):
    """cfrc_ext of the spatial tendons (MuJoCo 4): each straight segment between two sites pulls its ends with
    the tendon's force (`_tendon_force`), divided by the divisor of the pulley before it."""
    for t in range(m.opt_i[SZ_NTENDON]):
        if m.ten_i[t, TEN_FIXED] == 0:
            f = _tendon_force(m, d, b, t)
            if f != 0.0:
                adr = m.ten_i[t, TEN_ADR]
                div = 1.0
                for w in range(adr, adr + m.ten_i[t, TEN_NUM] - 1):
                    if m.wrap_i[w, WRAP_TYPE] == M.WRAP_PULLEY:
                        div = m.wrap_f[w, WRAP_PRM]
                    elif m.wrap_i[w + 1, WRAP_TYPE] == M.WRAP_SITE:
                        pa = sm.getv(d.site, b, m.wrap_i[w, WRAP_OBJID], FXPOS, 3)
                        pb = sm.getv(d.site, b, m.wrap_i[w + 1, WRAP_OBJID], FXPOS, 3)
                        u, _ = sm.normalize3(pb - pa)
                        frc = u * (f / div)  # the length grows with b's end moving along u
                        _add_ext(m, d, b, m.wrap_i[w, WRAP_BODYID], sm.zero3(), frc, pa, -1.0)
                        _add_ext(m, d, b, m.wrap_i[w + 1, WRAP_BODYID], sm.zero3(), frc, pb, 1.0)


@ti.func
def rne_post_constraint(m: ti.template(), d: ti.template(), b, tendons: ti.template()):
    """mj_rnePostConstraint: cacc (CACC) and cfrc_int (CFRC_INT) with the contact and equality (connect, weld)
    forces of the solve as external forces, and with `tendons` the spatial tendons' forces (`_tendon_ext`)."""
    nbody = m.opt_i[SZ_NBODY]
    cacc0 = ti.Vector([0.0] * 6)
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_GRAVITY) == 0:
        for c in ti.static(range(3)):
            cacc0[3 + c] = -m.opt_f[OPT_GRAVITY + c]
    sm.setv(d.body, b, 0, CACC, cacc0)
    for i in range(nbody):  # cfrc_ext, accumulated in CFRC_INT
        sm.setv(d.body, b, i, CFRC_INT, ti.Vector([0.0] * 6))
    for c in range(ti.min(d.ncon[b], m.opt_i[SZ_NCONMAX])):
        if d.contact_i[b, c, CON_EFCADR] >= 0:
            f = contact_force(d, b, c)
            frame = sm.getv(d.contact, b, c, CON_FRAME, 9)
            force = sm.zero3()
            torque = sm.zero3()
            for k in ti.static(range(3)):
                axis = ti.Vector([frame[3 * k], frame[3 * k + 1], frame[3 * k + 2]])
                force = force + f[k] * axis
                torque = torque + f[3 + k] * axis
            pos = sm.getv(d.contact, b, c, CON_POS, 3)
            for side in ti.static(range(2)):  # geom 1's body takes the opposite
                k = m.geom_i[d.contact_i[b, c, CON_GEOM1 + side], FRAME_BODYID]
                _add_ext(m, d, b, k, torque, force, pos, ti.static(-1.0 if side == 0 else 1.0))
    ne = d.efc_n[b, EFCN_NE]
    r = 0
    while r < ne:  # connect and weld rows: their force on each body, at its anchor
        e = d.efc_i[b, r, EFC_ID]
        et = m.eq_i[e, EQ_TYPE]
        if et == M.EQ_CONNECT or et == M.EQ_WELD:
            force = ti.Vector([d.efc[b, r + c, EFC_FORCE] for c in ti.static(range(3))])
            torque = sm.zero3()
            if et == M.EQ_WELD:
                torque = _weld_torque(m, d, b, e, ti.Vector([d.efc[b, r + 3 + c, EFC_FORCE]
                                                             for c in ti.static(range(3))]))
            for side in ti.static(range(2)):
                k = m.eq_i[e, EQ_BODY1 + side]
                if k > 0:
                    off = sm.zero3()
                    if m.eq_i[e, EQ_OBJTYPE] == M.OBJ_BODY:
                        # body 1's point: the weld's second triple, the connect's first; body 2's the other
                        first = (et == M.EQ_WELD) if side == 0 else (et == M.EQ_CONNECT)
                        off = sm.getm(m.eq_f, e, EQ_DATA + (3 if first else 0), 3)
                    else:
                        off = sm.getm(m.site_f, m.eq_i[e, EQ_OBJ1ID + side], FRAME_POS, 3)
                    at = sm.rot_vec_mat(off, sm.getv(d.body, b, k, XMAT, 9)) + sm.getv(d.body, b, k, XPOS, 3)
                    _add_ext(m, d, b, k, torque, force, at, ti.static(1.0 if side == 0 else -1.0))
            r += 6 if et == M.EQ_WELD else 3
        else:
            r += 1
    if ti.static(tendons):
        _tendon_ext(m, d, b)
    for j in range(1, nbody):
        bda = m.body_i[j, BODY_DOFADR]
        n = m.body_i[j, BODY_DOFNUM]
        cacc = (sm.getv(d.body, b, m.body_i[j, BODY_PARENTID], CACC, 6) + mul_dof_vec(d, b, CDOF_DOT, bda, n, d.qvel, bda)
                + mul_dof_vec(d, b, CDOF, bda, n, d.qacc, bda))
        sm.setv(d.body, b, j, CACC, cacc)
        cinert = sm.getv(d.body, b, j, CINERT, 10)
        cvel = sm.getv(d.body, b, j, CVEL, 6)
        fbody = sm.mul_inert_vec(cinert, cacc) + sm.cross_force(cvel, sm.mul_inert_vec(cinert, cvel))
        sm.setv(d.body, b, j, CFRC_INT, fbody - sm.getv(d.body, b, j, CFRC_INT, 6))
    sm.setv(d.body, b, 0, CFRC_INT, ti.Vector([0.0] * 6))
    for jj in range(nbody - 1):
        j = nbody - 1 - jj
        p = m.body_i[j, BODY_PARENTID]
        sm.setv(d.body, b, p, CFRC_INT, sm.getv(d.body, b, p, CFRC_INT, 6) + sm.getv(d.body, b, j, CFRC_INT, 6))


@ti.func
def energy_pos(m: ti.template(), d: ti.template(), b):
    """mj_energyPos: gravity's potential and the joints' and tendons' springs'."""
    e = 0.0
    flags = m.opt_i[OPT_DISABLEFLAGS]
    if (flags & DSBL_GRAVITY) == 0:
        g = ti.Vector([m.opt_f[OPT_GRAVITY + c] for c in ti.static(range(3))])
        for i in range(1, m.opt_i[SZ_NBODY]):
            e -= m.body_f[i, BODY_MASS] * g.dot(sm.getv(d.body, b, i, XIPOS, 3))
    if (flags & DSBL_SPRING) == 0:
        for j in range(m.opt_i[SZ_NJNT]):
            k = m.jnt_f[j, JNT_STIFFNESS]
            if k != 0:
                adr = m.jnt_i[j, JNT_QPOSADR]
                jt = m.jnt_i[j, JNT_TYPE]
                if jt == JNT_FREE:
                    dif = ti.Vector([d.qpos[b, adr + c] - m.qpos_f[adr + c, QPOS_SPRING] for c in ti.static(range(3))])
                    e += 0.5 * k * dif.dot(dif)
                    adr += 3
                if jt == JNT_FREE or jt == JNT_BALL:
                    q = ti.Vector([d.qpos[b, adr + c] for c in ti.static(range(4))])
                    q0 = ti.Vector([m.qpos_f[adr + c, QPOS_SPRING] for c in ti.static(range(4))])
                    dif = sm.sub_quat(q, q0)
                    e += 0.5 * k * dif.dot(dif)
                else:
                    x = d.qpos[b, adr] - m.qpos_f[adr, QPOS_SPRING]
                    e += 0.5 * k * x * x
        for t in range(m.opt_i[SZ_NTENDON]):
            k = m.ten_f[t, TEN_STIFFNESS]
            if k != 0:
                length = d.ten[b, t, TEN_LENGTH]
                lo = m.ten_f[t, TEN_LENGTHSPRING]
                hi = m.ten_f[t, TEN_LENGTHSPRING + 1]
                x = 0.0
                if length > hi:
                    x = length - hi
                elif length < lo:
                    x = length - lo
                e += 0.5 * k * x * x
    return e


@ti.func
def energy_vel(m: ti.template(), d: ti.template(), b):
    """mj_energyVel: 0.5 qvel' M qvel, from qM's sparse rows (the diagonal, then the row's ancestors)."""
    e = 0.0
    for i in range(m.opt_i[SZ_NV]):
        adr = m.dof_i[i, DOF_MADR]
        vi = d.qvel[b, i]
        row = d.M[b, adr, QM] * vi
        for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
            row += 2.0 * d.M[b, adr + p, QM] * d.qvel[b, m.m_i[adr + p, M_COLIND]]
        e += row * vi
    return 0.5 * e
