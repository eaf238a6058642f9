"""Actuators of one env: MuJoCo's mj_transmission (joint), mj_fwdActuation, nextActivation,
and the actuator part of the velocity derivative used by implicit integration.

Supported: joint and jointinparent transmissions on hinge and slide joints
(moment = gear[0] at the joint's dof), tendon transmissions (moment =
gear[0] * ten_J); dynamics none, integrator, filter,
filterexact (with actearly); gain fixed/affine; bias none/affine;
ctrlrange, forcerange, actrange, joint actfrcrange clamping; actuator-level
gravity compensation. Everything else is refused at load (`data.check_supported`).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    ACT_ACTADR, ACT_ACTEARLY, ACT_ACTLIMITED, ACT_ACTNUM, ACT_ACTRANGE, ACT_BIASPRM, ACT_BIASTYPE, ACT_CTRLLIMITED,
    ACT_CTRLRANGE, ACT_DYNPRM, ACT_DYNTYPE, ACT_FORCELIMITED, ACT_FORCERANGE, ACT_GAINPRM, ACT_GAINTYPE, ACT_GEAR,
    ACT_TRN_DOFADR, ACT_TRN_QPOSADR, ACTUATOR_CTRL, ACTUATOR_FORCE, ACTUATOR_LENGTH, ACTUATOR_VELOCITY, BIAS_AFFINE,
    DSBL_ACTUATION, DSBL_CLAMPCTRL, DYN_FILTER, DYN_FILTEREXACT, DYN_INTEGRATOR, DYN_NONE, GAIN_AFFINE,
    JNT_ACTFRCLIMITED, JNT_ACTFRCRANGE, JNT_BALL, JNT_DOFADR, JNT_TYPE, MINVAL, OPT_DISABLEFLAGS, OPT_NACTGRAVCOMP,
    OPT_TIMESTEP, QH, QFRC_ACTUATOR, SZ_NJNT, SZ_NU, SZ_NV, ACT_TRNID, ACT_TRNTYPE, DOF_MADR, DOF_MROWNNZ, M_COLIND,
    TEN_LENGTH, TRN_TENDON, ACT_CRANKLENGTH, ACT_ROWSCALE, ACT_TRN_KIND, ACT_TRN_ROW, ACT_TRNID2, FRAME_BODYID,
    FXMAT, FXPOS, OPT_JACROW, TRN_JOINTINPARENT, TRN_SLIDERCRANK, TRNK_DOF, ACT_WRAPPERIOD,
)
from rigidsim.engine.support import add_axis_jacobian, add_point_jacobian
from rigidsim.engine.passive import add_gravcomp, gravity_on


@ti.func
def slider_crank(m: ti.template(), d: ti.template(), b, i, row):
    """mj_transmission's slider-crank: returns the length before gear; ten_J[row] = its moment before gear."""
    nv = m.opt_i[SZ_NV]
    site = m.act_i[i, ACT_TRNID]
    slider = m.act_i[i, ACT_TRNID2]
    rod = m.act_f[i, ACT_CRANKLENGTH]
    smat = sm.getv(d.site, b, slider, FXMAT, 9)
    axis = ti.Vector([smat[2], smat[5], smat[8]])
    spos = sm.getv(d.site, b, slider, FXPOS, 3)
    vec = sm.getv(d.site, b, site, FXPOS, 3) - spos
    av = vec[0] * axis[0] + vec[1] * axis[1] + vec[2] * axis[2]
    det = av * av + rod * rod - (vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2])
    length = av
    dlda = vec
    dldv = axis
    if det > 0.0:
        sdet = ti.sqrt(det)
        length = av - sdet
        dldv = axis * (1.0 - av / sdet) + vec * (1.0 / sdet)
        dlda = vec * (1.0 - av / sdet)
    # Jacobians, in the scratch rows of ten_J: of the crank site minus the slider site (rows 0-2), and of the
    # slider's axis (rows 3-5)
    jr = m.opt_i[OPT_JACROW]
    for k in range(nv):
        for c in ti.static(range(6)):
            d.ten_J[b, jr + c, k] = 0.0
    add_point_jacobian(m, d, b, m.site_i[site, FRAME_BODYID], sm.getv(d.site, b, site, FXPOS, 3), 1.0)
    add_point_jacobian(m, d, b, m.site_i[slider, FRAME_BODYID], spos, -1.0)
    add_axis_jacobian(m, d, b, m.site_i[slider, FRAME_BODYID], axis)
    for k in range(nv):
        mom = 0.0
        for c in ti.static(range(3)):
            mom = mom + (dlda[c] * d.ten_J[b, jr + 3 + c, k] + dldv[c] * d.ten_J[b, jr + c, k])
        d.ten_J[b, row, k] = mom
    return length


@ti.func
def transmission(m: ti.template(), d: ti.template(), b):
    """mj_transmission: actuator_length and the moments (see layout.TRNK_*): gear at a hinge or slide dof;
    the gear axis of a ball joint (length: its rotation vector along that axis) or the gear wrench of a free
    joint (length 0), rotated into the parent frame for jointinparent; gear * ten_J for tendons; gear * the
    crank's own moment row for slider-cranks."""
    nv = m.opt_i[SZ_NV]
    for i in range(m.opt_i[SZ_NU]):
        trn = m.act_i[i, ACT_TRNTYPE]
        g = m.act_f[i, ACT_GEAR]
        length = 0.0
        if m.act_i[i, ACT_TRN_KIND] == TRNK_DOF:
            length = d.qpos[b, m.act_i[i, ACT_TRN_QPOSADR]] * g
        elif trn == TRN_TENDON:
            length = d.ten[b, m.act_i[i, ACT_TRN_ROW], TEN_LENGTH] * g
        elif trn == TRN_SLIDERCRANK:
            length = slider_crank(m, d, b, i, m.act_i[i, ACT_TRN_ROW]) * g
        else:
            # a ball or free joint: its moment row
            row = m.act_i[i, ACT_TRN_ROW]
            qa = m.act_i[i, ACT_TRN_QPOSADR]
            da = m.act_i[i, ACT_TRN_DOFADR]
            for k in range(nv):
                d.ten_J[b, row, k] = 0.0
            if m.jnt_i[m.act_i[i, ACT_TRNID], JNT_TYPE] == JNT_BALL:
                quat = sm.normalize4(ti.Vector([d.qpos[b, qa + c] for c in ti.static(range(4))]))
                axis = sm.quat2vel(quat, 1.0)
                gear = sm.getm(m.act_f, i, ACT_GEAR, 3)
                if trn == TRN_JOINTINPARENT:
                    gear = sm.rot_vec_quat(gear, sm.neg_quat(quat))
                length = axis[0] * gear[0] + axis[1] * gear[1] + axis[2] * gear[2]
                for c in ti.static(range(3)):
                    d.ten_J[b, row, da + c] = gear[c]
            else:
                gear = sm.getm(m.act_f, i, ACT_GEAR + 3, 3)
                if trn == TRN_JOINTINPARENT:
                    quat = sm.normalize4(ti.Vector([d.qpos[b, qa + 3 + c] for c in ti.static(range(4))]))
                    gear = sm.rot_vec_quat(gear, sm.neg_quat(quat))
                for c in ti.static(range(3)):
                    d.ten_J[b, row, da + c] = m.act_f[i, ACT_GEAR + c]
                    d.ten_J[b, row, da + 3 + c] = gear[c]
        d.actu[b, i, ACTUATOR_LENGTH] = length


@ti.func
def actuator_velocity(m: ti.template(), d: ti.template(), b):
    """actuator_velocity = moment * qvel over the moment's nonzeros (zero when actuation is disabled)."""
    off = (m.opt_i[OPT_DISABLEFLAGS] & DSBL_ACTUATION) != 0
    for i in range(m.opt_i[SZ_NU]):
        v = 0.0
        if not off:
            if m.act_i[i, ACT_TRN_KIND] == TRNK_DOF:
                v = m.act_f[i, ACT_GEAR] * d.qvel[b, m.act_i[i, ACT_TRN_DOFADR]]
            else:
                row = m.act_i[i, ACT_TRN_ROW]
                g = m.act_f[i, ACT_ROWSCALE]
                for k in range(m.opt_i[SZ_NV]):
                    jk = d.ten_J[b, row, k]
                    if jk != 0.0:
                        v += (jk * g) * d.qvel[b, k]
        d.actu[b, i, ACTUATOR_VELOCITY] = v


@ti.func
def next_activation(m: ti.template(), d: ti.template(), b, i, adr, act_dot):
    """act after one timestep at rate act_dot (exact for filterexact), clamped to actrange."""
    act = d.act[b, adr]
    h = m.opt_f[OPT_TIMESTEP]
    if m.act_i[i, ACT_DYNTYPE] == DYN_FILTEREXACT:
        tau = ti.max(MINVAL, m.act_f[i, ACT_DYNPRM])
        act = act + act_dot * tau * (1.0 - ti.exp(-h / tau))
    else:
        act = act + act_dot * h
    if m.act_i[i, ACT_ACTLIMITED] != 0:
        act = ti.min(ti.max(act, m.act_f[i, ACT_ACTRANGE]), m.act_f[i, ACT_ACTRANGE + 1])
    return act


@ti.func
def wrap_setpoint(u, length, period):
    """The representative of setpoint u nearest to length, modulo period (mju_round: ties round up)."""
    x = (u - length) / period
    lower = ti.floor(x)
    upper = ti.ceil(x)
    r = upper
    if x - lower < upper - x:
        r = lower
    return u - period * r


@ti.func
def fwd_actuation(m: ti.template(), d: ti.template(), b):
    """mj_fwdActuation: act_dot, actuator_force, qfrc_actuator."""
    nu = m.opt_i[SZ_NU]
    nv = m.opt_i[SZ_NV]
    flags = m.opt_i[OPT_DISABLEFLAGS]
    for i in range(nu):
        d.actu[b, i, ACTUATOR_FORCE] = 0.0
    for i in range(nv):
        d.dof[b, i, QFRC_ACTUATOR] = 0.0
    if nu > 0 and (flags & DSBL_ACTUATION) == 0:
        # local clamped copy of ctrl; all zero if any is bad
        bad = 0
        for i in range(nu):
            u = d.ctrl[b, i]
            if (flags & DSBL_CLAMPCTRL) == 0 and m.act_i[i, ACT_CTRLLIMITED] != 0:
                u = ti.min(ti.max(u, m.act_f[i, ACT_CTRLRANGE]), m.act_f[i, ACT_CTRLRANGE + 1])
            if not sm.is_finite(u):
                bad = 1
            d.actu[b, i, ACTUATOR_CTRL] = u
        if bad:
            for i in range(nu):
                d.actu[b, i, ACTUATOR_CTRL] = 0.0
        # act_dot
        for i in range(nu):
            first = m.act_i[i, ACT_ACTADR]
            if first >= 0:
                last = first + m.act_i[i, ACT_ACTNUM] - 1
                for k in range(m.act_i[i, ACT_ACTNUM]):
                    d.act_dot[b, first + k] = 0.0
                u = d.actu[b, i, ACTUATOR_CTRL]
                dyn = m.act_i[i, ACT_DYNTYPE]
                if dyn == DYN_INTEGRATOR:
                    d.act_dot[b, last] = u
                elif dyn == DYN_FILTER or dyn == DYN_FILTEREXACT:
                    tau = ti.max(MINVAL, m.act_f[i, ACT_DYNPRM])
                    d.act_dot[b, last] = (u - d.act[b, last]) / tau
        # force = gain * (ctrl or act) + bias
        for i in range(nu):
            length = d.actu[b, i, ACTUATOR_LENGTH]
            vel = d.actu[b, i, ACTUATOR_VELOCITY]
            gain = m.act_f[i, ACT_GAINPRM]
            if m.act_i[i, ACT_GAINTYPE] == GAIN_AFFINE:
                gain = m.act_f[i, ACT_GAINPRM] + m.act_f[i, ACT_GAINPRM + 1] * length + \
                    m.act_f[i, ACT_GAINPRM + 2] * vel
            force = 0.0
            if m.act_i[i, ACT_ACTADR] == -1:
                u = d.actu[b, i, ACTUATOR_CTRL]
                if m.act_f[i, ACT_WRAPPERIOD] > 0.0:
                    u = wrap_setpoint(u, length, m.act_f[i, ACT_WRAPPERIOD])
                force = gain * u
            else:
                adr = m.act_i[i, ACT_ACTADR] + m.act_i[i, ACT_ACTNUM] - 1
                a = d.act[b, adr]
                if m.act_i[i, ACT_ACTEARLY] != 0:
                    a = next_activation(m, d, b, i, adr, d.act_dot[b, adr])
                if m.act_f[i, ACT_WRAPPERIOD] > 0.0:
                    a = wrap_setpoint(a, length, m.act_f[i, ACT_WRAPPERIOD])
                force = gain * a
            bias = 0.0
            if m.act_i[i, ACT_BIASTYPE] == BIAS_AFFINE:
                bias = m.act_f[i, ACT_BIASPRM] + m.act_f[i, ACT_BIASPRM + 1] * length + \
                    m.act_f[i, ACT_BIASPRM + 2] * vel
            force += bias
            if m.act_i[i, ACT_FORCELIMITED] != 0:
                force = ti.min(ti.max(force, m.act_f[i, ACT_FORCERANGE]), m.act_f[i, ACT_FORCERANGE + 1])
            d.actu[b, i, ACTUATOR_FORCE] = force
        # qfrc_actuator = moment' * force
        for i in range(nu):
            force = d.actu[b, i, ACTUATOR_FORCE]
            if m.act_i[i, ACT_TRN_KIND] == TRNK_DOF:
                dof = m.act_i[i, ACT_TRN_DOFADR]
                f = m.act_f[i, ACT_GEAR] * force
                d.dof[b, dof, QFRC_ACTUATOR] = d.dof[b, dof, QFRC_ACTUATOR] + f
            else:
                row = m.act_i[i, ACT_TRN_ROW]
                g = m.act_f[i, ACT_ROWSCALE]
                for k in range(nv):
                    jk = d.ten_J[b, row, k]
                    if jk != 0.0:
                        d.dof[b, k, QFRC_ACTUATOR] = d.dof[b, k, QFRC_ACTUATOR] + (jk * g) * force
        # actuator-level gravity compensation
        if m.opt_i[OPT_NACTGRAVCOMP] > 0 and gravity_on(m):
            add_gravcomp(m, d, b, QFRC_ACTUATOR, 1)
        # joint-level actuator force limits
        for j in range(m.opt_i[SZ_NJNT]):
            if m.jnt_i[j, JNT_ACTFRCLIMITED] != 0:
                da = m.jnt_i[j, JNT_DOFADR]
                d.dof[b, da, QFRC_ACTUATOR] = ti.min(ti.max(d.dof[b, da, QFRC_ACTUATOR], m.jnt_f[j, JNT_ACTFRCRANGE]),
                                                     m.jnt_f[j, JNT_ACTFRCRANGE + 1])


@ti.func
def actuator_deriv(m: ti.template(), d: ti.template(), b):
    """Add d qfrc_actuator / d qvel to qDeriv, held in d.M's QH column (mjd_actuator_vel)."""
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_ACTUATION) == 0:
        for i in range(m.opt_i[SZ_NU]):
            skip = 0
            if m.act_i[i, ACT_FORCELIMITED] != 0:
                f = d.actu[b, i, ACTUATOR_FORCE]
                if f <= m.act_f[i, ACT_FORCERANGE] or f >= m.act_f[i, ACT_FORCERANGE + 1]:
                    skip = 1
            if not skip:
                bias_vel = 0.0
                gain_vel = 0.0
                if m.act_i[i, ACT_BIASTYPE] == BIAS_AFFINE:
                    bias_vel = m.act_f[i, ACT_BIASPRM + 2]
                if m.act_i[i, ACT_GAINTYPE] == GAIN_AFFINE:
                    gain_vel = m.act_f[i, ACT_GAINPRM + 2]
                if gain_vel != 0.0:
                    if m.act_i[i, ACT_DYNTYPE] == DYN_NONE:
                        bias_vel += gain_vel * d.ctrl[b, i]
                    else:
                        adr = m.act_i[i, ACT_ACTADR] + m.act_i[i, ACT_ACTNUM] - 1
                        a = d.act[b, adr]
                        if m.act_i[i, ACT_ACTEARLY] != 0:
                            a = next_activation(m, d, b, i, adr, d.act_dot[b, adr])
                        bias_vel += gain_vel * a
                if bias_vel != 0.0:
                    if m.act_i[i, ACT_TRN_KIND] == TRNK_DOF:
                        g = m.act_f[i, ACT_GEAR]
                        adr = m.dof_i[m.act_i[i, ACT_TRN_DOFADR], DOF_MADR]
                        d.M[b, adr, QH] = d.M[b, adr, QH] + (g * bias_vel * g)
                    else:
                        add_outer_to_qderiv(m, d, b, m.act_i[i, ACT_TRN_ROW], m.act_f[i, ACT_ROWSCALE], bias_vel)


@ti.func
def add_outer_to_qderiv(m: ti.template(), d: ti.template(), b, t, scale, coef):
    """qDeriv += coef * v v' with v = scale * ten_J[t] (a tendon or moment row), on qM's sparsity only
    (implicitfast drops the rest)."""
    for k in range(m.opt_i[SZ_NV]):
        vk = d.ten_J[b, t, k] * scale
        if vk != 0.0:
            adr = m.dof_i[k, DOF_MADR]
            for p in range(m.dof_i[k, DOF_MROWNNZ]):
                vj = d.ten_J[b, t, m.m_i[adr + p, M_COLIND]] * scale
                d.M[b, adr + p, QH] = d.M[b, adr + p, QH] + vk * coef * vj
