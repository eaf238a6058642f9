"""Objects' frames and motions for the sensors, as ti.funcs (MuJoCo's get_xpos_xmat, get_xquat,
mj_objectVelocity, mj_objectAcceleration): the pose of a body's inertial frame, a body (xbody), a geom or a site,
and its com-based velocity or acceleration moved to the object's position."""

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    BODY_IQUAT, BODY_LASTDOF, BODY_ROOTID, CACC, CVEL, FRAME_QUAT, FXMAT, FXPOS, SUBTREE_COM, XIMAT, XIPOS, XMAT,
    XPOS, XQUAT,
)



@ti.func
def object_frame(d: ti.template(), b, objtype, objid):
    """(xpos, xmat) of a body's inertial frame, a body's frame (xbody), a geom or a site (get_xpos_xmat)."""
    pos = sm.zero3()
    mat = ti.Vector([0.0] * 9)
    if objtype == M.OBJ_XBODY:
        pos = sm.getv(d.body, b, objid, XPOS, 3)
        mat = sm.getv(d.body, b, objid, XMAT, 9)
    elif objtype == M.OBJ_BODY:
        pos = sm.getv(d.body, b, objid, XIPOS, 3)
        mat = sm.getv(d.body, b, objid, XIMAT, 9)
    elif objtype == M.OBJ_GEOM:
        pos = sm.getv(d.geom, b, objid, FXPOS, 3)
        mat = sm.getv(d.geom, b, objid, FXMAT, 9)
    else:
        pos = sm.getv(d.site, b, objid, FXPOS, 3)
        mat = sm.getv(d.site, b, objid, FXMAT, 9)
    return pos, mat


@ti.func
def object_quat(m: ti.template(), d: ti.template(), b, objtype, objid, body):
    """The world orientation of an object as a quaternion (get_xquat): its body's xquat times its own."""
    q = sm.getv(d.body, b, body, XQUAT, 4)
    if objtype == M.OBJ_BODY:
        q = sm.mul_quat(q, sm.getm(m.body_f, body, BODY_IQUAT, 4))
    elif objtype == M.OBJ_GEOM:
        q = sm.mul_quat(q, sm.getm(m.geom_f, objid, FRAME_QUAT, 4))
    elif objtype == M.OBJ_SITE:
        q = sm.mul_quat(q, sm.getm(m.site_f, objid, FRAME_QUAT, 4))
    return q


@ti.func
def mat_column(mat, k):
    """Column k (0, 1, 2) of a row-major 3x3 matrix: the frame's x, y or z axis."""
    res = ti.Vector([mat[0], mat[3], mat[6]])
    if k == 1:
        res = ti.Vector([mat[1], mat[4], mat[7]])
    elif k == 2:
        res = ti.Vector([mat[2], mat[5], mat[8]])
    return res


@ti.func
def pick3(first, a, b):
    """a if `first` else b, as the first 3 of a 4-vector (a sensordata value)."""
    res = ti.Vector([b[0], b[1], b[2], 0.0])
    if first:
        res = ti.Vector([a[0], a[1], a[2], 0.0])
    return res


@ti.func
def ang3(v):
    return ti.Vector([v[0], v[1], v[2]])


@ti.func
def lin3(v):
    return ti.Vector([v[3], v[4], v[5]])


@ti.func
def force_at(torque, force, newpos, oldpos):
    """A force (torque, force) acting at oldpos, as the same force at newpos: its torque about newpos
    (mju_transformSpatial of a force vector)."""
    return torque - sm.cross3(newpos - oldpos, force), force


@ti.func
def object_motion(m: ti.template(), d: ti.template(), b, col, objtype, objid, body, local):
    """mj_objectVelocity (col CVEL) or, without its Coriolis term, mj_objectAcceleration (col CACC): the body's
    com-based motion vector `col` moved to the object's position, as (angular, linear), rotated into the object's
    frame when `local`. Zero on a body welded to the world or to a mocap body."""
    pos, mat = object_frame(d, b, objtype, objid)
    ang = sm.zero3()
    lin = sm.zero3()
    if m.body_i[body, BODY_LASTDOF] >= 0:
        v = sm.getv(d.body, b, body, col, 6)
        ang = ang3(v)
        lin = lin3(v) - sm.cross3(pos - sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3), ang)
        if local:
            ang = sm.rot_vec_mat_t(ang, mat)
            lin = sm.rot_vec_mat_t(lin, mat)
    return ang, lin


@ti.func
def object_acceleration(m: ti.template(), d: ti.template(), b, objtype, objid, body, local):
    """mj_objectAcceleration: the object's (angular, linear) acceleration, with the Coriolis term of its
    frame's rotation (after mj_rnePostConstraint)."""
    ang, lin = object_motion(m, d, b, CACC, objtype, objid, body, local)
    vang, vlin = object_motion(m, d, b, CVEL, objtype, objid, body, local)
    return ang, lin + sm.cross3(vang, vlin)
