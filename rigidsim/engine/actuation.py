"""Actuators of one env: MuJoCo's mj_transmission (joint), mj_fwdActuation, nextActivation,
and the actuator part of the velocity derivative used by implicit integration.

Supported: joint and jointinparent transmissions on hinge and slide joints
(moment = gear[0] at the joint's dof), tendon transmissions (moment =
gear[0] * ten_J); dynamics none, integrator, filter,
filterexact (with actearly); gain fixed/affine; bias none/affine;
ctrlrange, forcerange, actrange, joint actfrcrange clamping; actuator-level
gravity compensation. Everything else is refused at load (`data.check_supported`).
"""


import taichi as ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    ACT_ACTADR, ACT_ACTEARLY, ACT_ACTLIMITED, ACT_ACTNUM, ACT_ACTRANGE, ACT_BIASPRM, ACT_BIASTYPE, ACT_CTRLLIMITED,
    ACT_CTRLRANGE, ACT_DYNPRM, ACT_DYNTYPE, ACT_FORCELIMITED, ACT_FORCERANGE, ACT_GAINPRM, ACT_GAINTYPE, ACT_GEAR,
    ACT_TRN_DOFADR, ACT_TRN_QPOSADR, ACTUATOR_CTRL, ACTUATOR_FORCE, ACTUATOR_LENGTH, ACTUATOR_VELOCITY,
    BIAS_AFFINE, DSBL_ACTUATION, DSBL_CLAMPCTRL, DYN_FILTER, DYN_FILTEREXACT, DYN_INTEGRATOR, DYN_NONE,
    GAIN_AFFINE, JNT_ACTFRCLIMITED, JNT_ACTFRCRANGE, JNT_ACTGRAVCOMP, JNT_BALL, JNT_DOFADR, JNT_FREE, JNT_TYPE,
    MINVAL, OPT_DISABLEFLAGS, OPT_NACTGRAVCOMP, OPT_TIMESTEP, QDERIV, QFRC_ACTUATOR, QFRC_GRAVCOMP, SZ_NJNT,
    SZ_NU, SZ_NV, ACT_TRNID, ACT_TRNTYPE, DOF_MADR, DOF_MROWNNZ, M_COLIND, TEN_LENGTH, TRN_TENDON,
)
from rigidsim.engine.passive import gravity_on


@ti.func
def transmission(m: ti.template(), d: ti.template(), b):
    """actuator_length: gear * q for joint transmissions (the moment is gear at the joint's dof), gear *
    ten_length for tendon transmissions (the moment is gear * ten_J)."""
    for i in range(m.opt_i[SZ_NU]):
        if m.act_i[i, ACT_TRNTYPE] == TRN_TENDON:
            d.actu[b, i, ACTUATOR_LENGTH] = d.ten[b, m.act_i[i, ACT_TRNID], TEN_LENGTH] * m.act_f[i, ACT_GEAR]
        else:
            d.actu[b, i, ACTUATOR_LENGTH] = d.qpos[b, m.act_i[i, ACT_TRN_QPOSADR]] * m.act_f[i, ACT_GEAR]


@ti.func
def actuator_velocity(m: ti.template(), d: ti.template(), b):
    """actuator_velocity = moment * qvel (zero when actuation is disabled)."""
    off = (m.opt_i[OPT_DISABLEFLAGS] & DSBL_ACTUATION) != 0
    for i in range(m.opt_i[SZ_NU]):
        v = 0.0
        if not off:
            g = m.act_f[i, ACT_GEAR]
            if m.act_i[i, ACT_TRNTYPE] == TRN_TENDON:
                t = m.act_i[i, ACT_TRNID]
                for k in range(m.opt_i[SZ_NV]):
                    jk = d.ten_J[b, t, k]
                    if jk != 0.0:
                        v += (jk * g) * d.qvel[b, k]
            else:
                v = g * d.qvel[b, m.act_i[i, ACT_TRN_DOFADR]]
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
                force = gain * d.actu[b, i, ACTUATOR_CTRL]
            else:
                adr = m.act_i[i, ACT_ACTADR] + m.act_i[i, ACT_ACTNUM] - 1
                a = d.act[b, adr]
                if m.act_i[i, ACT_ACTEARLY] != 0:
                    a = next_activation(m, d, b, i, adr, d.act_dot[b, adr])
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
            if m.act_i[i, ACT_TRNTYPE] == TRN_TENDON:
                t = m.act_i[i, ACT_TRNID]
                g = m.act_f[i, ACT_GEAR]
                force = d.actu[b, i, ACTUATOR_FORCE]
                for k in range(nv):
                    jk = d.ten_J[b, t, k]
                    if jk != 0.0:
                        d.dof[b, k, QFRC_ACTUATOR] = d.dof[b, k, QFRC_ACTUATOR] + (jk * g) * force
            else:
                dof = m.act_i[i, ACT_TRN_DOFADR]
                f = m.act_f[i, ACT_GEAR] * d.actu[b, i, ACTUATOR_FORCE]
                d.dof[b, dof, QFRC_ACTUATOR] = d.dof[b, dof, QFRC_ACTUATOR] + f
        # actuator-level gravity compensation
        if m.opt_i[OPT_NACTGRAVCOMP] > 0 and gravity_on(m):
            for j in range(m.opt_i[SZ_NJNT]):
                if m.jnt_i[j, JNT_ACTGRAVCOMP] != 0:
                    jt = m.jnt_i[j, JNT_TYPE]
                    n = 6 if jt == JNT_FREE else (3 if jt == JNT_BALL else 1)
                    da = m.jnt_i[j, JNT_DOFADR]
                    for c in range(n):
                        g = d.dof[b, da + c, QFRC_GRAVCOMP]
                        d.dof[b, da + c, QFRC_ACTUATOR] = d.dof[b, da + c, QFRC_ACTUATOR] + g
        # joint-level actuator force limits
        for j in range(m.opt_i[SZ_NJNT]):
            if m.jnt_i[j, JNT_ACTFRCLIMITED] != 0:
                da = m.jnt_i[j, JNT_DOFADR]
                d.dof[b, da, QFRC_ACTUATOR] = ti.min(ti.max(d.dof[b, da, QFRC_ACTUATOR], m.jnt_f[j, JNT_ACTFRCRANGE]),
                                                     m.jnt_f[j, JNT_ACTFRCRANGE + 1])


@ti.func
def actuator_deriv(m: ti.template(), d: ti.template(), b):
    """Add d qfrc_actuator / d qvel to qDeriv in d.M's QDERIV column (mjd_actuator_vel)."""
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
                    g = m.act_f[i, ACT_GEAR]
                    if m.act_i[i, ACT_TRNTYPE] == TRN_TENDON:
                        add_outer_to_qderiv(m, d, b, m.act_i[i, ACT_TRNID], g, bias_vel)
                    else:
                        adr = m.dof_i[m.act_i[i, ACT_TRN_DOFADR], DOF_MADR]
                        d.M[b, adr, QDERIV] = d.M[b, adr, QDERIV] + (g * bias_vel * g)


@ti.func
def add_outer_to_qderiv(m: ti.template(), d: ti.template(), b, t, scale, coef):
    """qDeriv += coef * v v' with v = scale * ten_J[t], on qM's sparsity only (implicitfast drops the rest)."""
    for k in range(m.opt_i[SZ_NV]):
        vk = d.ten_J[b, t, k] * scale
        if vk != 0.0:
            adr = m.dof_i[k, DOF_MADR]
            for p in range(m.dof_i[k, DOF_MROWNNZ]):
                vj = d.ten_J[b, t, m.m_i[adr + p, M_COLIND]] * scale
                d.M[b, adr + p, QDERIV] = d.M[b, adr + p, QDERIV] + vk * coef * vj
