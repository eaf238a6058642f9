"""Quantities MuJoCo computes from the model at qpos0 (engine_setconst.c), in numpy.

Forward kinematics at qpos0, point Jacobians, the joint-space mass matrix
(bodies, armature, tendon armature), then dof_M0, body/dof/tendon
invweight0, stat.meaninertia, tendon_length0 and lengthspring, actuator
length0/acc0, the implied eq_data of connect/weld constraints, dampratio
servos, and the remaining statistics (meanmass, meansize, extent, center).
"""

from __future__ import annotations

import math

import numpy as np

from rigidsim.errors import InputError
from rigidsim import model as M
from rigidsim.loaders.mjcf_defaults import where as _where

MINVAL = 1e-15


def _quat2mat(q):
    q = np.asarray(q, dtype=float)
    w, x, y, z = q
    return np.array([[w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]])


def _mulquat(a, b):
    return np.array([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                     a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                     a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                     a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])


def _quat2vel(q):
    """Rotation vector (axis * angle) of a unit quaternion, as mju_quat2Vel with dt = 1."""
    q = np.asarray(q, dtype=float)
    v = q[1:].copy()
    s = np.linalg.norm(v)
    if s < MINVAL:
        return np.zeros(3)
    ang = 2 * np.arctan2(s, q[0])
    if ang > np.pi:
        ang -= 2 * np.pi
    return v / s * ang


class Kin:
    """Positions and orientations of every frame at a configuration qpos."""

    def __init__(self, m, qpos):
        A = m.arrays
        nb = m.nbody
        self.m = m
        self.xpos = np.zeros((nb, 3))
        self.xquat = np.zeros((nb, 4))
        self.xquat[0, 0] = 1
        self.xmat = np.zeros((nb, 3, 3))
        self.xmat[0] = np.eye(3)
        self.xanchor = np.zeros((m.njnt, 3))
        self.xaxis = np.zeros((m.njnt, 3))
        for i in range(1, nb):
            p = A["body_parentid"][i]
            pos = self.xpos[p] + self.xmat[p] @ A["body_pos"][i]
            quat = _mulquat(self.xquat[p], A["body_quat"][i])
            ja, jn = A["body_jntadr"][i], A["body_jntnum"][i]
            for j in range(ja, ja + jn):
                t = A["jnt_type"][j]
                qa = A["jnt_qposadr"][j]
                if t == M.JNT_FREE:
                    pos = qpos[qa:qa + 3].copy()
                    quat = qpos[qa + 3:qa + 7] / np.linalg.norm(qpos[qa + 3:qa + 7])
                    self.xanchor[j] = pos
                    self.xaxis[j] = _quat2mat(quat)[:, 2]
                    continue
                mat = _quat2mat(quat)
                anchor = mat @ A["jnt_pos"][j] + pos
                axis = mat @ A["jnt_axis"][j]
                self.xanchor[j], self.xaxis[j] = anchor, axis
                if t == M.JNT_SLIDE:
                    pos = pos + axis * (qpos[qa] - A["qpos0"][qa])
                else:
                    if t == M.JNT_BALL:
                        qloc = qpos[qa:qa + 4] / np.linalg.norm(qpos[qa:qa + 4])
                    else:
                        ang = qpos[qa] - A["qpos0"][qa]
                        ax = A["jnt_axis"][j]
                        qloc = np.r_[np.cos(ang / 2), np.sin(ang / 2) * ax]
                    quat = _mulquat(quat, qloc)
                    pos = anchor - _quat2mat(quat) @ A["jnt_pos"][j]
            quat = quat / np.linalg.norm(quat)
            self.xpos[i], self.xquat[i], self.xmat[i] = pos, quat, _quat2mat(quat)
        self.xipos = self.xpos + np.einsum("bij,bj->bi", self.xmat, A["body_ipos"])
        self.ximat = np.array([self.xmat[i] @ _quat2mat(A["body_iquat"][i]) for i in range(nb)])
        gb = A["geom_bodyid"]
        self.geom_xpos = self.xpos[gb] + np.einsum("gij,gj->gi", self.xmat[gb], A["geom_pos"]) \
            if m.ngeom else np.zeros((0, 3))
        sb = A["site_bodyid"]
        self.site_xpos = self.xpos[sb] + np.einsum("gij,gj->gi", self.xmat[sb], A["site_pos"]) \
            if m.nsite else np.zeros((0, 3))
        self.site_xmat = np.array([self.xmat[sb[k]] @ _quat2mat(A["site_quat"][k]) for k in range(m.nsite)])
        # last dof of each body (own or inherited)
        self.lastdof = np.full(nb, -1)
        for i in range(1, nb):
            n = A["body_dofnum"][i]
            self.lastdof[i] = A["body_dofadr"][i] + n - 1 if n else self.lastdof[A["body_parentid"][i]]

    def jac(self, point, body):
        """Translational and rotational Jacobians (3 x nv each) of a point attached to a body."""
        m, A = self.m, self.m.arrays
        jp = np.zeros((3, m.nv))
        jr = np.zeros((3, m.nv))
        d = self.lastdof[body]
        while d >= 0:
            j = A["dof_jntid"][d]
            t = A["jnt_type"][j]
            if t == M.JNT_SLIDE:
                jp[:, d] = self.xaxis[j]
            elif t == M.JNT_HINGE:
                a = self.xaxis[j]
                jr[:, d] = a
                jp[:, d] = np.cross(a, point - self.xanchor[j])
            else:
                k = d - A["jnt_dofadr"][j]
                b = A["jnt_bodyid"][j]
                if t == M.JNT_FREE and k < 3:
                    jp[k, d] = 1.0
                else:
                    a = self.xmat[b][:, k - 3 if t == M.JNT_FREE else k]
                    jr[:, d] = a
                    jp[:, d] = np.cross(a, point - self.xanchor[j])
            d = A["dof_parentid"][d]
        return jp, jr


def tendon_kin(m, kin, qpos):
    """Tendon lengths and Jacobians (ntendon x nv)."""
    A = m.arrays
    L = np.zeros(m.ntendon)
    J = np.zeros((m.ntendon, m.nv))
    for t in range(m.ntendon):
        adr, num = A["tendon_adr"][t], A["tendon_num"][t]
        if A["wrap_type"][adr] == 1:
            for k in range(adr, adr + num):
                j = A["wrap_objid"][k]
                c = A["wrap_prm"][k]
                L[t] += c * qpos[A["jnt_qposadr"][j]]
                J[t, A["jnt_dofadr"][j]] += c
            continue
        divisor = 1.0
        for k in range(adr, adr + num - 1):
            if A["wrap_type"][k] == 2:
                divisor = A["wrap_prm"][k]
                continue
            if A["wrap_type"][k + 1] == 2:
                continue
            s0, s1 = A["wrap_objid"][k], A["wrap_objid"][k + 1]
            p0, p1 = kin.site_xpos[s0], kin.site_xpos[s1]
            dif = p1 - p0
            n = np.linalg.norm(dif)
            L[t] += n / divisor
            if n > MINVAL:
                u = dif / n
                j1, _ = kin.jac(p1, A["site_bodyid"][s1])
                j0, _ = kin.jac(p0, A["site_bodyid"][s0])
                J[t] += u @ (j1 - j0) / divisor
    return L, J


def _fail(cp, el, msg):
    raise InputError(msg, where=_where(el, cp.fn))


def transmission(cp, m, kin, ten_len, ten_J):
    """Actuator lengths and moments (nu x nv) at the configuration of `kin`."""
    A = m.arrays
    length = np.zeros(m.nu)
    moment = np.zeros((m.nu, m.nv))
    for i in range(m.nu):
        trn = A["actuator_trntype"][i]
        gear = A["actuator_gear"][i]
        id1 = A["actuator_trnid"][i, 0]
        el = cp.sc.actuators[i].el
        if trn in (M.TRN_JOINT, M.TRN_JOINTINPARENT):
            t = A["jnt_type"][id1]
            da, qa = A["jnt_dofadr"][id1], A["jnt_qposadr"][id1]
            q = kin_qpos(kin)
            if t in (M.JNT_HINGE, M.JNT_SLIDE):
                length[i] = gear[0] * q[qa]
                moment[i, da] = gear[0]
            elif t == M.JNT_BALL:
                g = gear[:3]
                if trn == M.TRN_JOINTINPARENT:
                    g = _quat2mat(q[qa:qa + 4]).T @ g
                length[i] = _quat2vel(q[qa:qa + 4]) @ g
                moment[i, da:da + 3] = g
            else:
                g = np.array(gear, dtype=float)
                if trn == M.TRN_JOINTINPARENT:
                    g[3:] = _quat2mat(q[qa + 3:qa + 7]).T @ g[3:]
                moment[i, da:da + 6] = g
        elif trn == M.TRN_TENDON:
            length[i] = gear[0] * ten_len[id1]
            moment[i] = gear[0] * ten_J[id1]
        elif trn == M.TRN_SITE:
            if A["actuator_trnid"][i, 1] >= 0:
                _fail(cp, el, "site actuators with a refsite are not supported by rigidsim")
            sb = A["site_bodyid"][id1]
            jp, jr = kin.jac(kin.site_xpos[id1], sb)
            R = kin.site_xmat[id1]
            moment[i] = (R @ gear[:3]) @ jp + (R @ gear[3:]) @ jr
        elif trn == M.TRN_SLIDERCRANK:
            length[i], moment[i] = _slidercrank(m, kin, i)
        else:
            _fail(cp, el, "body (adhesion) transmissions are not supported by rigidsim")
    return length, moment


def _slidercrank(m, kin, i):
    """Length and moment of a slider-crank transmission: the rod (cranklength) joins the crank site to a
    point sliding along the slider site's z axis; the length is that point's coordinate on the axis."""
    A = m.arrays
    crank, slider = A["actuator_trnid"][i]
    rod = A["actuator_cranklength"][i]
    axis = kin.site_xmat[slider][:, 2]
    vec = kin.site_xpos[crank] - kin.site_xpos[slider]
    av = float(axis @ vec)
    det = av * av + rod * rod - float(vec @ vec)
    if det < 0:  # the rod cannot reach the axis: fall back to the projection
        length, d_vec, d_axis = av, axis, vec
    else:
        sdet = math.sqrt(det)
        length = av - sdet
        d_vec = axis * (1 - av / sdet) + vec / sdet
        d_axis = vec * (1 - av / sdet)
    sb = A["site_bodyid"][slider]
    jp_s, jr_s = kin.jac(kin.site_xpos[slider], sb)
    jp_c, _ = kin.jac(kin.site_xpos[crank], A["site_bodyid"][crank])
    # the axis turns with the slider's body: d(axis) = w x axis
    j_axis = np.cross(jr_s.T, axis).T
    mom = d_axis @ j_axis + d_vec @ (jp_c - jp_s)
    g = A["actuator_gear"][i][0]
    return g * length, g * mom


def kin_qpos(kin):
    return kin.qpos


def mass_matrix(m, kin):
    A = m.arrays
    Mq = np.zeros((m.nv, m.nv))
    for b in range(1, m.nbody):
        if kin.lastdof[b] < 0:
            continue
        jp, jr = kin.jac(kin.xipos[b], b)
        R = kin.ximat[b]
        I = R @ np.diag(A["body_inertia"][b]) @ R.T
        Mq += A["body_mass"][b] * jp.T @ jp + jr.T @ I @ jr
    Mq[np.diag_indices(m.nv)] += A["dof_armature"]
    return Mq


def _inverse(Mf):
    """M^-1; a mass matrix singular in floating point (bodies 1e30 times heavier than others, which MuJoCo
    accepts with a warning) gets the pseudo-inverse instead of an exception."""
    try:
        return np.linalg.inv(Mf)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(Mf)


def set_constants(cp, m):
    A = m.arrays
    nv = m.nv
    A["body_subtreemass"][:] = A["body_mass"]
    for i in range(m.nbody - 1, 0, -1):
        A["body_subtreemass"][A["body_parentid"][i]] += A["body_subtreemass"][i]
    # moving bodies need mass
    def valid(i):  # mass and inertia >= MINVAL (NaN fails), here or in a jointless child's subtree (MuJoCo's)
        if A["body_mass"][i] >= MINVAL and np.min(A["body_inertia"][i]) >= MINVAL:
            return True
        return any(valid(c) for c in cp.sc.bodies[i].children if not A["body_jntnum"][c])

    for i in range(1, m.nbody):
        if A["body_jntnum"][i] and not valid(i):  # MuJoCo checks the bodies that carry joints themselves
            _fail(cp, cp.sc.bodies[i].el, f"mass and inertia of moving bodies must be larger than "
                                          f"1e-15 (body '{cp.sc.bodies[i].name}')")
    q0 = A["qpos0"]
    kin = Kin(m, q0)
    kin.qpos = q0
    Mc = mass_matrix(m, kin)
    ten_len, ten_J = tendon_kin(m, kin, q0)
    Mf = Mc + (ten_J.T * A["tendon_armature"]) @ ten_J if m.ntendon else Mc
    A["dof_M0"][:] = np.diag(Mc)
    A["tendon_length0"][:] = ten_len
    act_len, moment = transmission(cp, m, kin, ten_len, ten_J)
    A["actuator_length0"][:] = act_len
    Minv = _inverse(Mf) if nv else np.zeros((0, 0))
    # body invweight0
    for i in range(1, m.nbody):
        if A["body_weldid"][i] == 0:
            A["body_invweight0"][i] = 0
        elif A["body_simple"][i] == 2:
            A["body_invweight0"][i] = [1 / max(MINVAL, A["body_mass"][i]), 0.0]
        else:
            jp, jr = kin.jac(kin.xipos[i], i)
            Jm = np.vstack([jp, jr])
            Am = Jm @ Minv @ Jm.T
            tran = (Am[0, 0] + Am[1, 1] + Am[2, 2]) / 3
            rot = (Am[3, 3] + Am[4, 4] + Am[5, 5]) / 3
            A["body_invweight0"][i] = [tran, rot]
    for j in range(m.njnt):
        b = A["jnt_bodyid"][j]
        da = A["jnt_dofadr"][j]
        t = A["jnt_type"][j]
        if A["body_simple"][b] == 2:
            A["dof_invweight0"][da] = 1 / max(MINVAL, A["body_mass"][b])
        elif t == M.JNT_FREE:
            Am = Minv[da:da + 6, da:da + 6]
            A["dof_invweight0"][da:da + 3] = np.trace(Am[:3, :3]) / 3
            A["dof_invweight0"][da + 3:da + 6] = np.trace(Am[3:, 3:]) / 3
        elif t == M.JNT_BALL:
            A["dof_invweight0"][da:da + 3] = np.trace(Minv[da:da + 3, da:da + 3]) / 3
        else:
            A["dof_invweight0"][da] = Minv[da, da]
    _auto_spring_damper(cp, m)
    if nv:
        for t in range(m.ntendon):
            A["tendon_invweight0"][t] = ten_J[t] @ Minv @ ten_J[t]
        for i in range(m.nu):
            A["actuator_acc0"][i] = np.linalg.norm(Minv @ moment[i])
    # equality data implied by qpos0
    for e in range(m.neq):
        t, o1, o2 = A["eq_type"][e], A["eq_obj1id"][e], A["eq_obj2id"][e]
        data = A["eq_data"][e]
        if A["eq_objtype"][e] != M.OBJ_BODY or t not in (M.EQ_CONNECT, M.EQ_WELD):
            if t == M.EQ_CONNECT:
                data[:] = 0
            continue
        if t == M.EQ_CONNECT:
            pos = kin.xpos[o1] + kin.xmat[o1] @ data[0:3]
            data[3:6] = kin.xmat[o2].T @ (pos - kin.xpos[o2])
        else:
            if np.any(data[6:10] != 0):
                data[6:10] /= np.linalg.norm(data[6:10])
                continue
            pos = kin.xpos[o2] + kin.xmat[o2] @ data[0:3]
            data[3:6] = kin.xmat[o1].T @ (pos - kin.xpos[o1])
            q1 = kin.xquat[o1] * np.array([1, -1, -1, -1])
            data[6:10] = _mulquat(q1, kin.xquat[o2])
            data[11] = 1.0  # relative pose taken from qpos0
    # dampratio -> damping for position-like actuators
    for i in range(m.nu):
        g, b = A["actuator_gainprm"][i], A["actuator_biasprm"][i]
        if g[0] != -b[1] or b[2] <= 0:
            continue
        mass = 0.0
        for d in range(nv):
            tr2 = moment[i, d] ** 2
            if tr2 > MINVAL:
                mass += A["dof_M0"][d] / tr2
        b[2] = -(b[2] * 2 * np.sqrt(g[0] * mass))
    # spring lengths of tendons
    if m.ntendon:
        qs = A["qpos_spring"]
        kin_s = Kin(m, qs)
        ls, _ = tendon_kin(m, kin_s, qs)
        for t in range(m.ntendon):
            if A["tendon_lengthspring"][t, 0] == -1 and A["tendon_lengthspring"][t, 1] == -1:
                A["tendon_lengthspring"][t] = ls[t]
    _stat(cp, m, kin, Mf)


def _auto_spring_damper(cp, m):
    """Joint springdamper="timeconst dampratio": stiffness and damping from the dof's mean inverse weight
    at qpos0 (the same rule as a solref's), replacing any stiffness/damping given."""
    A = m.arrays
    for j, jt in enumerate(cp.joints):
        tc, dr = jt.spec["springdamper"]
        if tc <= 0 or dr <= 0:
            continue
        da = A["jnt_dofadr"][j]
        n = M.JNT_NV[A["jnt_type"][j]]
        inv = 0.0
        for k in range(n):
            inv += A["dof_invweight0"][da + k]
        inertia = n / max(MINVAL, inv)
        A["jnt_stiffness"][j] = inertia / max(MINVAL, tc * tc * dr * dr)
        A["dof_damping"][da:da + n] = 2 * inertia / max(MINVAL, tc)


def _stat(cp, m, kin, Mf):
    A = m.arrays
    st = m.stat
    xmin = np.full(3, 1e10)
    xmax = np.full(3, -1e10)

    def upd(p, r):
        np.minimum(xmin, p - r, out=xmin)
        np.maximum(xmax, p + r, out=xmax)

    for i in range(1, m.nbody):
        upd(kin.xpos[i], 0)
        upd(kin.xipos[i], 0)
    for j in range(m.njnt):
        upd(kin.xanchor[j], 0)
    for s in range(m.nsite):
        upd(kin.site_xpos[s], 0)
    for g in range(m.ngeom):
        rb = A["geom_rbound"][g]
        t = A["geom_type"][g]
        sz = A["geom_size"][g]
        if rb > 0:
            r = rb
        elif t == M.GEOM_PLANE:
            r = max(sz[0], sz[1]) * 0.1 if (sz[0] or sz[1]) else 0.01
        elif t == M.GEOM_HFIELD:
            r = max(A["hfield_size"][A["geom_dataid"][g]]) * 0.1
        else:
            r = 0.0
        upd(kin.geom_xpos[g], r)
    center = (xmin + xmax) * 0.5
    extent = 2.0  # MuJoCo's initial statistic (extent 2, meansize 0.2, meanmass 1, meaninertia 1)
    if xmax[0] > xmin[0]:
        extent = max(1e-5, float(np.max(xmax - xmin)))
    body = np.zeros(m.nbody)
    for j in range(m.njnt):
        b = A["jnt_bodyid"][j]
        body[b] = max(body[b], np.linalg.norm(kin.xipos[b] - kin.xanchor[j]))
        p = A["body_parentid"][b]
        body[p] = max(body[p], np.linalg.norm(kin.xipos[p] - kin.xanchor[j]))
    body[0] = 0
    for i in range(1, m.nbody):
        ga, gn = A["body_geomadr"][i], A["body_geomnum"][i]
        for g in range(ga, ga + gn) if gn else ():
            if A["geom_rbound"][g] > 0:
                body[i] = max(body[i], A["geom_rbound"][g] + np.linalg.norm(kin.xipos[i] - kin.geom_xpos[g]))
    meansize = 0.2
    if m.nbody > 1:
        meansize = float(np.mean(np.maximum(body[1:], 1e-5)))
    extent = max(extent, 2 * meansize)
    meanmass = float(np.mean(A["body_mass"][1:])) if m.nbody > 1 else 1.0
    meaninertia = float(np.mean(np.diag(Mf))) if m.nv else 1.0
    st.center, st.extent, st.meansize, st.meanmass, st.meaninertia = tuple(center), extent, meansize, \
        meanmass, meaninertia
    for k, v in cp.sc.statistic.items():
        setattr(st, k, tuple(v) if isinstance(v, list) else v)
