"""Tendons of one env: MuJoCo's mj_tendon (ten_length and the dense
Jacobians ten_J), the tendon part of mj_fwdVelocity (ten_velocity = ten_J
qvel) and the tendon spring-dampers of mj_springdamper.

Fixed tendons (every wrap a joint: length = sum coef * qpos, constant
Jacobian) and spatial tendons through sites with pulleys (each pulley
divides the length and Jacobian of the path after it). Wrapping around
geoms is refused at load (`data.check_supported`).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.support import add_point_jacobian
from rigidsim.engine.layout import (
    DSBL_DAMPER, DSBL_SPRING, FXPOS, JNT_DOFADR, OPT_JACROW, JNT_QPOSADR, OPT_DISABLEFLAGS, QFRC_DAMPER,
    QFRC_SPRING, SZ_NTENDON, SZ_NV, TEN_ADR, TEN_DAMPING, TEN_FIXED, TEN_LENGTH, TEN_LENGTHSPRING, TEN_NUM,
    TEN_STIFFNESS, TEN_VELOCITY, WRAP_BODYID, WRAP_OBJID, WRAP_PRM, WRAP_PULLEY, WRAP_TYPE,
)


@ti.func
def dot_n(a: ti.template(), ia, b: ti.template(), ib, n):
    """sum_k a[ia + k] * b[ib + k] over flat arrays, in mju_dot's order (4 partial sums, then the tail)."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 += a[ia + k] * b[ib + k]
        r1 += a[ia + k + 1] * b[ib + k + 1]
        r2 += a[ia + k + 2] * b[ib + k + 2]
        r3 += a[ia + k + 3] * b[ib + k + 3]
        k += 4
    r = (r0 + r2) + (r1 + r3)
    while k < n:
        r += a[ia + k] * b[ib + k]
        k += 1
    return r


@ti.func
def tendon(m: ti.template(), d: ti.template(), b):
    """mj_tendon: ten_length and the dense ten_J of every tendon (after com_pos: uses cdof, subtree_com)."""
    nv = m.opt_i[SZ_NV]
    for t in range(m.opt_i[SZ_NTENDON]):
        for k in range(nv):
            d.ten_J[b, t, k] = 0.0
        length = 0.0
        adr = m.ten_i[t, TEN_ADR]
        num = m.ten_i[t, TEN_NUM]
        if m.ten_i[t, TEN_FIXED] != 0:
            for w in range(adr, adr + num):
                jid = m.wrap_i[w, WRAP_OBJID]
                coef = m.wrap_f[w, WRAP_PRM]
                length += coef * d.qpos[b, m.jnt_i[jid, JNT_QPOSADR]]
                d.ten_J[b, t, m.jnt_i[jid, JNT_DOFADR]] = coef
        else:
            divisor = 1.0
            j = 0
            while j < num - 1:
                w0 = adr + j
                type0 = m.wrap_i[w0, WRAP_TYPE]
                if type0 == WRAP_PULLEY or m.wrap_i[w0 + 1, WRAP_TYPE] == WRAP_PULLEY:
                    if type0 == WRAP_PULLEY:
                        divisor = m.wrap_f[w0, WRAP_PRM]
                else:
                    # a straight segment between two sites
                    p0 = sm.getv(d.site, b, m.wrap_i[w0, WRAP_OBJID], FXPOS, 3)
                    p1 = sm.getv(d.site, b, m.wrap_i[w0 + 1, WRAP_OBJID], FXPOS, 3)
                    dp = p1 - p0
                    length += ti.sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]) / divisor
                    body0 = m.wrap_i[w0, WRAP_BODYID]
                    body1 = m.wrap_i[w0 + 1, WRAP_BODYID]
                    if body0 != body1:
                        dif, dnorm = sm.normalize3(dp)
                        jr = m.opt_i[OPT_JACROW]
                        for k in range(nv):
                            for c in ti.static(range(3)):
                                d.ten_J[b, jr + c, k] = 0.0
                        add_point_jacobian(m, d, b, body1, p1, 1.0)
                        add_point_jacobian(m, d, b, body0, p0, -1.0)
                        inv = 1.0 / divisor
                        for k in range(nv):
                            tmp = d.ten_J[b, jr, k] * dif[0] + d.ten_J[b, jr + 1, k] * dif[1] + \
                                d.ten_J[b, jr + 2, k] * dif[2]
                            d.ten_J[b, t, k] = d.ten_J[b, t, k] + tmp * inv
                j += 1
        d.ten[b, t, TEN_LENGTH] = length


@ti.func
def tendon_velocity(m: ti.template(), d: ti.template(), b):
    """ten_velocity = ten_J * qvel (mj_fwdVelocity)."""
    nv = m.opt_i[SZ_NV]
    qv = b * d.qvel.strides[0]
    for t in range(m.opt_i[SZ_NTENDON]):
        tj = b * d.ten_J.strides[0] + t * d.ten_J.strides[1]
        d.ten[b, t, TEN_VELOCITY] = dot_n(d.ten_J.arr, tj, d.qvel.arr, qv, nv)


@ti.func
def tendon_passive_force(m: ti.template(), d: ti.template(), b, t):
    """Tendon t's spring force (dead band between lengthspring[0] and [1]) and damper force along its length."""
    flags = m.opt_i[OPT_DISABLEFLAGS]
    stiffness = m.ten_f[t, TEN_STIFFNESS] if (flags & DSBL_SPRING) == 0 else 0.0
    damping = m.ten_f[t, TEN_DAMPING] if (flags & DSBL_DAMPER) == 0 else 0.0
    frc_spring = 0.0
    frc_damper = 0.0
    if stiffness != 0.0 or damping != 0.0:
        length = d.ten[b, t, TEN_LENGTH]
        lower = m.ten_f[t, TEN_LENGTHSPRING]
        upper = m.ten_f[t, TEN_LENGTHSPRING + 1]
        if length > upper:
            frc_spring = stiffness * (upper - length)
        elif length < lower:
            frc_spring = stiffness * (lower - length)
        frc_damper = -damping * d.ten[b, t, TEN_VELOCITY]
    return frc_spring, frc_damper


@ti.func
def tendon_springdamper(m: ti.template(), d: ti.template(), b):
    """Tendon springs and dampers (`tendon_passive_force`) into qfrc_spring / qfrc_damper."""
    nv = m.opt_i[SZ_NV]
    for t in range(m.opt_i[SZ_NTENDON]):
        frc_spring, frc_damper = tendon_passive_force(m, d, b, t)
        if frc_spring != 0.0 or frc_damper != 0.0:
            for k in range(nv):
                jk = d.ten_J[b, t, k]
                if frc_spring != 0.0:
                    d.dof[b, k, QFRC_SPRING] = d.dof[b, k, QFRC_SPRING] + jk * frc_spring
                if frc_damper != 0.0:
                    d.dof[b, k, QFRC_DAMPER] = d.dof[b, k, QFRC_DAMPER] + jk * frc_damper
