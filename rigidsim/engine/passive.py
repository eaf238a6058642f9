"""Passive forces of one env: MuJoCo's engine_passive (mj_passive).

Joint and tendon springs (qfrc_spring), dof and tendon dampers
(qfrc_damper), body gravity compensation (qfrc_gravcomp, added to
qfrc_passive for joints that do not route it through their actuators) and
fluid forces (qfrc_fluid, `fluid`). Each part honours its disable bit
(spring, damper, gravity).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.fluid import fluid
from rigidsim.engine.support import apply_ft
from rigidsim.engine.tendon import tendon_springdamper
from rigidsim.engine.layout import (
    BODY_GRAVCOMP, BODY_MASS, DOF_DAMPING, DSBL_DAMPER, DSBL_GRAVITY, DSBL_SPRING, JNT_ACTGRAVCOMP, JNT_BALL,
    JNT_DOFADR, JNT_FREE, JNT_QPOSADR, JNT_STIFFNESS, JNT_TYPE, OPT_DISABLEFLAGS, OPT_GRAVITY, OPT_NGRAVCOMP,
    QFRC_DAMPER, QFRC_FLUID, QFRC_GRAVCOMP, QFRC_PASSIVE, QFRC_SPRING, QPOS_SPRING, SZ_NBODY, SZ_NJNT, SZ_NV, XIPOS,
)


@ti.func
def gravity_on(m: ti.template()):
    """Gravity is enabled and nonzero."""
    g = ti.Vector([m.opt_f[OPT_GRAVITY], m.opt_f[OPT_GRAVITY + 1], m.opt_f[OPT_GRAVITY + 2]])
    return (m.opt_i[OPT_DISABLEFLAGS] & DSBL_GRAVITY) == 0 and (g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0)


@ti.func
def gravcomp(m: ti.template(), d: ti.template(), b):
    """qfrc_gravcomp: forces cancelling gravity on bodies with gravcomp; returns whether any."""
    nv = m.opt_i[SZ_NV]
    for i in range(nv):
        d.dof[b, i, QFRC_GRAVCOMP] = 0.0
    has = 0
    if m.opt_i[OPT_NGRAVCOMP] > 0 and gravity_on(m):
        g = ti.Vector([m.opt_f[OPT_GRAVITY], m.opt_f[OPT_GRAVITY + 1], m.opt_f[OPT_GRAVITY + 2]])
        for i in range(1, m.opt_i[SZ_NBODY]):
            gc = m.body_f[i, BODY_GRAVCOMP]
            if gc != 0.0:
                has = 1
                force = g * (-(m.body_f[i, BODY_MASS] * gc))
                apply_ft(m, d, b, i, sm.getv(d.body, b, i, XIPOS, 3), force, force, QFRC_GRAVCOMP, False)
    return has


@ti.func
def add_gravcomp(m: ti.template(), d: ti.template(), b, col, via_actuators):
    """d.dof[:, col] += qfrc_gravcomp on the dofs of joints whose actuatorgravcomp flag is `via_actuators`."""
    for j in range(m.opt_i[SZ_NJNT]):
        if m.jnt_i[j, JNT_ACTGRAVCOMP] == via_actuators:
            jt = m.jnt_i[j, JNT_TYPE]
            n = 6 if jt == JNT_FREE else (3 if jt == JNT_BALL else 1)
            da = m.jnt_i[j, JNT_DOFADR]
            for c in range(n):
                d.dof[b, da + c, col] = d.dof[b, da + c, col] + d.dof[b, da + c, QFRC_GRAVCOMP]


@ti.func
def passive(m: ti.template(), d: ti.template(), b):
    """mj_passive: qfrc_spring, qfrc_damper, qfrc_gravcomp and their sum qfrc_passive."""
    nv = m.opt_i[SZ_NV]
    flags = m.opt_i[OPT_DISABLEFLAGS]
    for i in range(nv):
        d.dof[b, i, QFRC_SPRING] = 0.0
        d.dof[b, i, QFRC_DAMPER] = 0.0
        d.dof[b, i, QFRC_GRAVCOMP] = 0.0
        d.dof[b, i, QFRC_FLUID] = 0.0
        d.dof[b, i, QFRC_PASSIVE] = 0.0
    if (flags & DSBL_SPRING) == 0 or (flags & DSBL_DAMPER) == 0:
        if (flags & DSBL_SPRING) == 0:
            for j in range(m.opt_i[SZ_NJNT]):
                k = m.jnt_f[j, JNT_STIFFNESS]
                if k != 0.0:
                    pa = m.jnt_i[j, JNT_QPOSADR]
                    da = m.jnt_i[j, JNT_DOFADR]
                    jt = m.jnt_i[j, JNT_TYPE]
                    if jt == JNT_FREE or jt == JNT_BALL:
                        if jt == JNT_FREE:
                            for c in ti.static(range(3)):
                                d.dof[b, da + c, QFRC_SPRING] = -k * (d.qpos[b, pa + c] - m.qpos_f[pa + c, QPOS_SPRING])
                            pa += 3
                            da += 3
                        q = ti.Vector([d.qpos[b, pa + c] for c in ti.static(range(4))])
                        q0 = ti.Vector([m.qpos_f[pa + c, QPOS_SPRING] for c in ti.static(range(4))])
                        dif = sm.sub_quat(q, q0)
                        for c in ti.static(range(3)):
                            d.dof[b, da + c, QFRC_SPRING] = -k * dif[c]
                    else:
                        d.dof[b, da, QFRC_SPRING] = -k * (d.qpos[b, pa] - m.qpos_f[pa, QPOS_SPRING])
        if (flags & DSBL_DAMPER) == 0:
            for i in range(nv):
                damping = m.dof_f[i, DOF_DAMPING]
                if damping != 0.0:
                    d.dof[b, i, QFRC_DAMPER] = -damping * d.qvel[b, i]
        tendon_springdamper(m, d, b)
        has_gravcomp = gravcomp(m, d, b)
        has_fluid = fluid(m, d, b)
        for i in range(nv):
            d.dof[b, i, QFRC_PASSIVE] = d.dof[b, i, QFRC_SPRING] + d.dof[b, i, QFRC_DAMPER]
        if has_fluid:
            for i in range(nv):
                d.dof[b, i, QFRC_PASSIVE] = d.dof[b, i, QFRC_PASSIVE] + d.dof[b, i, QFRC_FLUID]
        if has_gravcomp:
            add_gravcomp(m, d, b, QFRC_PASSIVE, 0)
