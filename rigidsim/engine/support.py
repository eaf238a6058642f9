"""Jacobian helpers of one env: MuJoCo's engine_support (mj_jac, mj_jacPointAxis, mj_applyFT).

Each walks the dof chain of a body (from the last dof of the body or of its nearest ancestor with dofs,
along dof_parentid): the dofs whose motion moves a point on that body.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    BODY_DOFADR, BODY_DOFNUM, BODY_PARENTID, BODY_ROOTID, CDOF, DOF_PARENTID, OPT_JACROW, SUBTREE_COM,
)


@ti.func
def chain_start(m: ti.template(), body):
    """The last dof of `body`'s chain, -1 when neither it nor an ancestor has dofs."""
    bb = body
    while bb > 0 and m.body_i[bb, BODY_DOFNUM] == 0:
        bb = m.body_i[bb, BODY_PARENTID]
    j = -1
    if bb > 0:
        j = m.body_i[bb, BODY_DOFADR] + m.body_i[bb, BODY_DOFNUM] - 1
    return j


@ti.func
def apply_ft(m: ti.template(), d: ti.template(), b, body, point, force, torque, col, with_torque: ti.template()):
    """d.dof[:, col] += jacp' force (+ jacr' torque with `with_torque`) at `point` on `body` (mj_applyFT)."""
    offset = point - sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3)
    j = chain_start(m, body)
    while j >= 0:
        cdof = sm.getv(d.dof, b, j, CDOF, 6)
        ang = ti.Vector([cdof[0], cdof[1], cdof[2]])
        tmp = sm.cross3(ang, offset)
        jacp = ti.Vector([cdof[3] + tmp[0], cdof[4] + tmp[1], cdof[5] + tmp[2]])
        f = d.dof[b, j, col] + (jacp[0] * force[0] + jacp[1] * force[1] + jacp[2] * force[2])
        if ti.static(with_torque):
            f = f + (ang[0] * torque[0] + ang[1] * torque[1] + ang[2] * torque[2])
        d.dof[b, j, col] = f
        j = m.dof_i[j, DOF_PARENTID]


@ti.func
def add_point_jacobian(m: ti.template(), d: ti.template(), b, body, point, sign):
    """Scratch rows 0-2 of ten_J (from OPT_JACROW) += sign * (the translational Jacobian of `point` on `body`)
    (mj_jac)."""
    jr = m.opt_i[OPT_JACROW]
    offset = point - sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3)
    j = chain_start(m, body)
    while j >= 0:
        cdof = sm.getv(d.dof, b, j, CDOF, 6)
        tmp = sm.cross3(ti.Vector([cdof[0], cdof[1], cdof[2]]), offset)
        for c in ti.static(range(3)):
            d.ten_J[b, jr + c, j] = d.ten_J[b, jr + c, j] + sign * (cdof[3 + c] + tmp[c])
        j = m.dof_i[j, DOF_PARENTID]


@ti.func
def add_axis_jacobian(m: ti.template(), d: ti.template(), b, body, axis):
    """Scratch rows 3-5 of ten_J += the Jacobian of `axis` fixed in `body`: cdof_rot x axis over its dof
    chain (mj_jacPointAxis's axis part)."""
    jr = m.opt_i[OPT_JACROW] + 3
    j = chain_start(m, body)
    while j >= 0:
        r = sm.cross3(ti.Vector([d.dof[b, j, CDOF + c] for c in ti.static(range(3))]), axis)
        for c in ti.static(range(3)):
            d.ten_J[b, jr + c, j] = d.ten_J[b, jr + c, j] + r[c]
        j = m.dof_i[j, DOF_PARENTID]
