"""Sensors of one env, as ti.funcs: MuJoCo's engine_sensor (mj_sensorPos, mj_sensorVel, mj_sensorAcc) with what
they need of engine_core_smooth (mj_subtreeVel, mj_rnePostConstraint) and the energies (mj_energyPos/Vel).

``sensors`` computes the whole sensordata row of env b from what the forward pass left in ``d``: after it, every
stage's inputs are there (poses, velocities, qacc, actuator and constraint forces), so one call after the pass
gives what MuJoCo's three stage calls give inside mj_forward. The rollout kernels call it when they record a frame
(`kernels._record`), ``sensor_kernel`` at the current state.

Only the code a scene's sensors use is compiled in: ``mask_of(model)`` is a bit set of groups (``G_*``), and a
scene without sensors compiles none of it. Sensor noise is metadata, as in MuJoCo (it adds none); cutoff clips
as MuJoCo's does. Not computed yet: a rangefinder in a scene with a mesh a ray could hit (`not_computed`).
"""

from __future__ import annotations

from typing import List

import numpy as np

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.constraint.equality import _mul_quat_axis, _weld_quats
from rigidsim.engine.constraint.record import contact_force
from rigidsim.engine.ray import ray_normal, ray_primitive, ray_scene
from rigidsim.engine.smooth import mul_dof_vec
from rigidsim.engine.collision.params import COLLIDER_ID, GJK_DISTANCE, GJK_MESH, _ANALYTIC, distance_colliders
from rigidsim.engine.tendon import tendon_passive_force
from rigidsim.engine.layout import (
    ACTUATOR_FORCE, ACTUATOR_LENGTH, ACTUATOR_VELOCITY, ACT_GEAR, ACT_TRNID, ACT_TRNTYPE, BODY_DOFADR, BODY_DOFNUM,
    BODY_INERTIA, BODY_IQUAT, BODY_LASTDOF, BODY_MASS, BODY_PARENTID, BODY_ROOTID, CACC, CDOF, CDOF_DOT, CFRC_INT,
    CINERT, CNSTR_EQUALITY, CNSTR_FRICTION_TENDON, CNSTR_LIMIT_JOINT, CNSTR_LIMIT_TENDON, CON_DIST, CON_EFCADR,
    CON_FRAME, CON_GEOM1, CON_POS, CVEL, DOF_MADR, DOF_MROWNNZ, DSBL_GRAVITY, DSBL_SENSOR, DSBL_SPRING, EFCN_NE,
    EFCN_NEFC, EFCN_NF, EFCN_NL, EFC_FORCE, EFC_ID, EFC_MARGIN, EFC_POS, EFC_TYPE, EFC_VEL, EQ_BODY1, EQ_DATA,
    EQ_OBJ1ID, EQ_OBJTYPE, EQ_TYPE, FRAME_BODYID, FRAME_POS, FRAME_QUAT, FXMAT, FXPOS, GEOM_SIZE, GEOM_TYPE,
    JNT_BALL, JNT_DOFADR, JNT_FREE, JNT_QPOSADR, JNT_STIFFNESS, JNT_TYPE, MINVAL, M_COLIND, OPT_CCDITER, OPT_CCDTOL,
    OPT_DISABLEFLAGS, OPT_GRAVITY, OPT_MAGNETIC, QFRC_ACTUATOR, QM, QPOS_SPRING, SENSOR_CONTACTS, SENS_ADR,
    SENS_BODY, SENS_CUTOFF, SENS_DATATYPE, SENS_DELAY, SENS_DIM, SENS_GEOMADR1, SENS_GEOMADR2, SENS_GEOMNUM1,
    SENS_GEOMNUM2, SENS_HISTADR, SENS_INTERP, SENS_INTPRM, SENS_NSAMPLE, SENS_OBJID, SENS_OBJTYPE, SENS_PERIOD,
    SENS_REFBODY, SENS_REFID, SENS_REFTYPE, SENS_SITESIZE, SENS_SITETYPE, SENS_TYPE, SUBTREE_ANGMOM, SUBTREE_COM,
    SUBTREE_LINVEL, SUBTREE_MASS, SZ_NBODY, SZ_NCONMAX, SZ_NJNT, SZ_NSENSOR, SZ_NTENDON, SZ_NU, SZ_NV, TEN_ADR,
    TEN_FIXED, TEN_LENGTH, TEN_LENGTH0, TEN_LENGTHSPRING, TEN_NUM, TEN_RANGE, TEN_STIFFNESS, TEN_VELOCITY,
    TRN_TENDON, WRAP_BODYID, WRAP_OBJID, WRAP_PRM, WRAP_TYPE, XIMAT, XIPOS, XMAT, XPOS, XQUAT,
)

# MuJoCo's mjtSensor codes (4.0)
(TOUCH, ACCELEROMETER, VELOCIMETER, GYRO, FORCE, TORQUE, MAGNETOMETER, RANGEFINDER) = range(8)
(JOINTPOS, JOINTVEL, TENDONPOS, TENDONVEL, ACTUATORPOS, ACTUATORVEL, ACTUATORFRC, JOINTACTFRC, TENDONACTFRC,
 BALLQUAT, BALLANGVEL, JOINTLIMITPOS, JOINTLIMITVEL, JOINTLIMITFRC, TENDONLIMITPOS, TENDONLIMITVEL,
 TENDONLIMITFRC, FRAMEPOS, FRAMEQUAT, FRAMEXAXIS, FRAMEYAXIS, FRAMEZAXIS, FRAMELINVEL, FRAMEANGVEL, FRAMELINACC,
 FRAMEANGACC, SUBTREECOM, SUBTREELINVEL, SUBTREEANGMOM) = range(9, 38)
INSIDESITE, CONTACT = M.SENS_INSIDESITE, M.SENS_CONTACT
E_POTENTIAL, E_KINETIC, CLOCK = 43, 44, 45
DATATYPE_REAL, DATATYPE_POSITIVE = 0, 1
# a contact sensor's data fields (mjtConDataField: found, force, torque, dist, pos, normal, tangent) and
# reductions (none, mindist, maxforce, netforce)
CONDATA_SIZE = (1, 3, 3, 1, 3, 3, 3)
# a rangefinder's (mjtRayDataType: dist, dir, origin, point, normal, depth)
RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)
RAYDATA_NORMAL = 4
REDUCE_NONE, REDUCE_MINDIST, REDUCE_MAXFORCE, REDUCE_NETFORCE = range(4)

# (type1, type2, collider id) of the analytic colliders, for the distance sensors' dispatch
_ANALYTIC_PAIRS = tuple((t1, t2, COLLIDER_ID[name]) for (t1, t2), name in sorted(_ANALYTIC.items())
                        if name != "box_box")  # (MuJoCo measures two boxes by GJK)


def _colliders():
    """The collision driver's (id, collider) table, imported when a distance sensor's kernel is compiled (the
    colliders' module is not loaded for a scene without contacts or distance sensors: start-up)."""
    from rigidsim.engine.collision.driver import _DISPATCH

    return _DISPATCH

# groups of sensors compiled in together (a scene's `mask_of`)
G_READ = 1  # values read off the forward pass: joints, tendons, actuators, ball joints, subtreecom, clock
G_FRAME = 2  # framepos, framequat, frame axes
G_VEL = 4  # velocimeter, gyro, framelinvel, frameangvel: an object's velocity
G_SUBTREE = 8  # subtreelinvel, subtreeangmom: mj_subtreeVel
G_LIMIT = 16  # joint and tendon limits' distance, velocity, force: their constraint rows
G_POST = 32  # accelerometer, force, torque, framelinacc, frameangacc: mj_rnePostConstraint
G_TOUCH = 64  # touch: contact normal forces inside the site's zone
G_ENERGY = 128  # e_potential, e_kinetic
G_MAGNET = 256  # magnetometer
G_TENDON = 512  # with G_POST in a scene with spatial tendons: their forces are external forces of the bodies
G_RAY = 1024  # rangefinder: mj_ray along the site's z axis
G_INSIDE = 2048  # insidesite: is an object's position inside a site's volume
G_CONTACT = 4096  # contact: the contacts that match the sensor's criteria, their forces and frames
G_HISTORY = 8192  # sensors with a history buffer (nsample > 0): read from it, and a sample added each step
G_RECORD = 16384  # the rollout records sensordata (without it: history sensors' buffers advanced only)
G_DISTANCE = 32768  # distance, normal, fromto: mj_geomDistance over the geom pairs (their colliders: KIND_SHIFT)
KIND_SHIFT = 16  # bit KIND_SHIFT + c of a mask: the distance sensors use analytic collider c
GEOMDIST, GEOMNORMAL, GEOMFROMTO = M.SENS_GEOMDIST, M.SENS_GEOMNORMAL, M.SENS_GEOMFROMTO

GROUP_OF = {
    **{t: G_READ for t in (JOINTPOS, JOINTVEL, TENDONPOS, TENDONVEL, ACTUATORPOS, ACTUATORVEL, ACTUATORFRC,
                           JOINTACTFRC, TENDONACTFRC, BALLQUAT, BALLANGVEL, SUBTREECOM, CLOCK)},
    **{t: G_FRAME for t in (FRAMEPOS, FRAMEQUAT, FRAMEXAXIS, FRAMEYAXIS, FRAMEZAXIS)},
    **{t: G_VEL for t in (VELOCIMETER, GYRO, FRAMELINVEL, FRAMEANGVEL)},
    SUBTREELINVEL: G_SUBTREE, SUBTREEANGMOM: G_SUBTREE,
    **{t: G_LIMIT for t in (JOINTLIMITPOS, JOINTLIMITVEL, JOINTLIMITFRC, TENDONLIMITPOS, TENDONLIMITVEL,
                            TENDONLIMITFRC)},
    **{t: G_POST for t in (ACCELEROMETER, FORCE, TORQUE, FRAMELINACC, FRAMEANGACC)},
    TOUCH: G_TOUCH, E_POTENTIAL: G_ENERGY, E_KINETIC: G_ENERGY, MAGNETOMETER: G_MAGNET, RANGEFINDER: G_RAY,
    INSIDESITE: G_INSIDE, CONTACT: G_CONTACT, GEOMDIST: G_DISTANCE, GEOMNORMAL: G_DISTANCE, GEOMFROMTO: G_DISTANCE,
}


def not_computed(model: M.Model) -> List[int]:
    """The sensors of `model` whose values the engine does not compute yet: rangefinders in a scene with a mesh
    or SDF geom a ray sees (rays are not cast against meshes yet), and distance sensors of a pair
    `distance_colliders` cannot measure."""
    from rigidsim.engine.data import ray_visible

    types = np.asarray(model.geom_type)
    meshes = bool(np.any(((types == M.GEOM_MESH) | (types == M.GEOM_SDF)) & (ray_visible(model) != 0)))
    return [i for i in range(model.nsensor) if int(model.sensor_type[i]) not in GROUP_OF
            or (int(model.sensor_type[i]) == RANGEFINDER and meshes)
            or (GROUP_OF[int(model.sensor_type[i])] == G_DISTANCE and distance_colliders(model, i) is None)]


def why_not_computed(model: M.Model, missing: List[int]) -> str:
    """What the engine does not compute of `not_computed`'s sensors, for a message."""
    rays = [i for i in missing if int(model.sensor_type[i]) == RANGEFINDER]
    why = []
    if rays:
        why.append("rangefinders in a scene with mesh geoms (rays are not cast against meshes)")
    if len(rays) < len(missing):
        why.append("distance, normal or fromto sensors between a plane and a mesh, or by GJK with native CCD "
                   "disabled")
    return " or ".join(why)


def mask_of(model: M.Model, history_only: bool = False) -> int:
    """The groups of sensor code a rollout recording `model`'s sensordata compiles in (0: no sensors); with
    `history_only`, those its history sensors need to advance their buffers (0: none)."""
    mask = 0
    for t, (n, _) in zip(model.sensor_type[:model.nsensor], model.sensor_history[:model.nsensor]):
        if n > 0:
            mask |= G_HISTORY
        if n > 0 or not history_only:
            mask |= GROUP_OF.get(int(t), 0)
    for i in range(model.nsensor):
        if GROUP_OF.get(int(model.sensor_type[i])) == G_DISTANCE and (model.sensor_history[i][0] > 0
                                                                      or not history_only):
            for c in distance_colliders(model, i) or ():
                mask |= 1 << (KIND_SHIFT + c)
    if mask & G_POST and any(int(model.wrap_type[model.tendon_adr[t]]) != M.WRAP_JOINT for t in range(model.ntendon)
                             if model.tendon_num[t]):
        mask |= G_TENDON
    return mask


# ----------------------------------------------------------------------------- frames and spatial vectors


@ti.func
def _frame(d: ti.template(), b, objtype, objid):
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
def _quat(m: ti.template(), d: ti.template(), b, objtype, objid, body):
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
def _column(mat, k):
    """Column k (0, 1, 2) of a row-major 3x3 matrix: the frame's x, y or z axis."""
    res = ti.Vector([mat[0], mat[3], mat[6]])
    if k == 1:
        res = ti.Vector([mat[1], mat[4], mat[7]])
    elif k == 2:
        res = ti.Vector([mat[2], mat[5], mat[8]])
    return res


@ti.func
def _pick(first, a, b):
    """a if `first` else b, as the first 3 of a 4-vector (a sensordata value)."""
    res = ti.Vector([b[0], b[1], b[2], 0.0])
    if first:
        res = ti.Vector([a[0], a[1], a[2], 0.0])
    return res


@ti.func
def _ang(v):
    return ti.Vector([v[0], v[1], v[2]])


@ti.func
def _lin(v):
    return ti.Vector([v[3], v[4], v[5]])


@ti.func
def _force_at(torque, force, newpos, oldpos):
    """A force (torque, force) acting at oldpos, as the same force at newpos: its torque about newpos
    (mju_transformSpatial of a force vector)."""
    return torque - sm.cross3(newpos - oldpos, force), force


@ti.func
def _motion(m: ti.template(), d: ti.template(), b, col, objtype, objid, body, local):
    """mj_objectVelocity (col CVEL) or, without its Coriolis term, mj_objectAcceleration (col CACC): the body's
    com-based motion vector `col` moved to the object's position, as (angular, linear), rotated into the object's
    frame when `local`. Zero on a body welded to the world or to a mocap body."""
    pos, mat = _frame(d, b, objtype, objid)
    ang = sm.zero3()
    lin = sm.zero3()
    if m.body_i[body, BODY_LASTDOF] >= 0:
        v = sm.getv(d.body, b, body, col, 6)
        ang = _ang(v)
        lin = _lin(v) - sm.cross3(pos - sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3), ang)
        if local:
            ang = sm.rot_vec_mat_t(ang, mat)
            lin = sm.rot_vec_mat_t(lin, mat)
    return ang, lin


@ti.func
def _acceleration(m: ti.template(), d: ti.template(), b, objtype, objid, body, local):
    """mj_objectAcceleration: the object's (angular, linear) acceleration, with the Coriolis term of its
    frame's rotation (after mj_rnePostConstraint)."""
    ang, lin = _motion(m, d, b, CACC, objtype, objid, body, local)
    vang, vlin = _motion(m, d, b, CVEL, objtype, objid, body, local)
    return ang, lin + sm.cross3(vang, vlin)


# ----------------------------------------------------------------------------- what the stages need


@ti.func
def subtree_vel(m: ti.template(), d: ti.template(), b):
    """mj_subtreeVel: each subtree's linear velocity (its com's) and angular momentum about its com."""
    nbody = m.opt_i[SZ_NBODY]
    for i in range(nbody):
        ang, lin = _motion(m, d, b, CVEL, M.OBJ_BODY, i, i, 0)
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
        _, lin = _motion(m, d, b, CVEL, M.OBJ_BODY, i, i, 0)
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
        t, f = _force_at(torque, force, sm.getv(d.body, b, m.body_i[k, BODY_ROOTID], SUBTREE_COM, 3), at)
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


@ti.func
def _limit_row(m: ti.template(), d: ti.template(), b, kind, objid, col):
    """Column `col` of the first limit row of kind `kind` (joint or tendon) of object objid, 0 without one."""
    res = 0.0
    nefc = d.efc_n[b, EFCN_NEFC]
    r = d.efc_n[b, EFCN_NE] + d.efc_n[b, EFCN_NF]
    while r < nefc:
        if d.efc_i[b, r, EFC_TYPE] == kind and d.efc_i[b, r, EFC_ID] == objid:
            res = d.efc[b, r, col]
            if col == EFC_POS:
                res -= d.efc[b, r, EFC_MARGIN]
            r = nefc
        r += 1
    return res


@ti.func
def _touch(m: ti.template(), d: ti.template(), b, s, site, body):
    """The normal forces of the contacts of the site's body whose force ray meets the site's zone."""
    total = 0.0
    pos, mat = _frame(d, b, M.OBJ_SITE, site)
    size = sm.getm(m.sens_f, s, SENS_SITESIZE, 3)
    for c in range(ti.min(d.ncon[b], m.opt_i[SZ_NCONMAX])):
        b1 = m.geom_i[d.contact_i[b, c, CON_GEOM1], FRAME_BODYID]
        b2 = m.geom_i[d.contact_i[b, c, CON_GEOM1 + 1], FRAME_BODYID]
        if d.contact_i[b, c, CON_EFCADR] >= 0 and (body == b1 or body == b2):
            f = contact_force(d, b, c)
            if f[0] > 0:
                ray, _ = sm.normalize3(sm.getv(d.contact, b, c, CON_FRAME, 3) * f[0])
                if body == b2:
                    ray = -ray
                if ray_primitive(pos, mat, size, m.sens_i[s, SENS_SITETYPE], sm.getv(d.contact, b, c, CON_POS, 3),
                                 ray) >= 0:
                    total += f[0]
    return total


@ti.func
def inside_geom(pos, mat, size, geomtype, point):
    """mju_insideGeom: 1 if `point` is strictly inside the primitive at (pos, mat) (a plane: below it), else 0."""
    v = point - pos
    res = 0
    if geomtype == M.GEOM_SPHERE:
        res = v.dot(v) < size[0] * size[0]
    else:
        p = sm.rot_vec_mat_t(v, mat)
        if geomtype == M.GEOM_CAPSULE:
            dz = p[2] - sm.clip(p[2], -size[1], size[1])
            res = p[0] * p[0] + p[1] * p[1] + dz * dz < size[0] * size[0]
        elif geomtype == M.GEOM_ELLIPSOID:
            res = (p / size).dot(p / size) < 1.0
        elif geomtype == M.GEOM_CYLINDER:
            res = ti.abs(p[2]) < size[1] and p[0] * p[0] + p[1] * p[1] < size[0] * size[0]
        elif geomtype == M.GEOM_BOX:
            res = ti.abs(p[0]) < size[0] and ti.abs(p[1]) < size[1] and ti.abs(p[2]) < size[2]
        elif geomtype == M.GEOM_PLANE:
            res = p[2] < 0
    return res


@ti.func
def _inside_site(m: ti.template(), d: ti.template(), b, s, objtype, objid):
    """insidesite: 1 if the object's position (a massless body with mass below it: its subtree's com) is
    inside the sensor's site (its reference)."""
    pos, _ = _frame(d, b, objtype, objid)
    if objtype == M.OBJ_BODY and objid > 0 and m.body_f[objid, BODY_MASS] < MINVAL and \
            d.body[b, objid, SUBTREE_MASS] >= MINVAL:
        pos = sm.getv(d.body, b, objid, SUBTREE_COM, 3)
    spos, smat = _frame(d, b, M.OBJ_SITE, m.sens_i[s, SENS_REFID])
    return inside_geom(spos, smat, sm.getm(m.sens_f, s, SENS_SITESIZE, 3), m.sens_i[s, SENS_SITETYPE], pos)


@ti.func
def _criterion_matches(m: ti.template(), body, geom, objtype, objid):
    """A contact sensor's criterion against one side of a contact (checkMatch): any (none or a site, whose
    volume is tested apart), that geom, that body, or a body of that subtree."""
    res = 1
    if objtype == M.OBJ_GEOM:
        res = objid == geom
    elif objtype == M.OBJ_BODY:
        res = objid == body
    elif objtype == M.OBJ_XBODY:
        k = body
        while k > objid:
            k = m.body_i[k, BODY_PARENTID]
        res = k == objid
    return res


@ti.func
def _contact_match(m: ti.template(), d: ti.template(), b, s, c):
    """Does contact c match contact sensor s (matchContact)? 0: no; 1: yes, its normal as it is; -1: yes,
    flipped (so that it points away from the first criterion's object, towards the second's)."""
    objtype = m.sens_i[s, SENS_OBJTYPE]
    objid = m.sens_i[s, SENS_OBJID]
    reftype = m.sens_i[s, SENS_REFTYPE]
    refid = m.sens_i[s, SENS_REFID]
    res = 1
    if objtype != 0 or reftype != 0:
        res = 0
        inside = 1
        if objtype == M.OBJ_SITE:
            spos, smat = _frame(d, b, M.OBJ_SITE, objid)
            inside = inside_geom(spos, smat, sm.getm(m.sens_f, s, SENS_SITESIZE, 3), m.sens_i[s, SENS_SITETYPE],
                                 sm.getv(d.contact, b, c, CON_POS, 3))
        if inside:
            g1 = d.contact_i[b, c, CON_GEOM1]
            g2 = d.contact_i[b, c, CON_GEOM1 + 1]
            b1 = m.geom_i[g1, FRAME_BODYID]
            b2 = m.geom_i[g2, FRAME_BODYID]
            m11 = _criterion_matches(m, b1, g1, objtype, objid)
            m12 = _criterion_matches(m, b2, g2, objtype, objid)
            m21 = _criterion_matches(m, b1, g1, reftype, refid)
            m22 = _criterion_matches(m, b2, g2, reftype, refid)
            if (m11 or m12) and (m21 or m22):
                if objtype != 0 and reftype != 0:  # in the contact's order, else reversed (ambiguous: as is)
                    if m11 and m22:
                        res = 1
                    elif m12 and m21:
                        res = -1
                elif objtype != 0:
                    res = 1 if m11 else -1
                else:
                    res = 1 if m22 else -1
    return res


@ti.func
def _contact_criterion(m: ti.template(), d: ti.template(), b, c, reduce):
    """The key a sorted reduction ranks contacts by, smallest first: the distance (mindist) or minus the
    squared norm of the force (maxforce)."""
    res = d.contact[b, c, CON_DIST]
    if reduce == REDUCE_MAXFORCE:
        f = contact_force(d, b, c)
        res = -(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    return res


@ti.func
def _put(out: ti.template(), t, b, p, spec, field: ti.template(), sizes: ti.template(), v, cutoff):
    """Write field `field` of a data spec (its sizes[field] numbers of v, clipped to +-cutoff when it is
    positive) at p if the spec has it; the next address."""
    if spec & (1 << field):
        for k in ti.static(range(3)):
            if ti.static(k < sizes[field]):
                x = v[k]
                if cutoff > 0:
                    x = sm.clip(x, -cutoff, cutoff)
                out[t, b, p + k] = x
        p += ti.static(sizes[field])
    return p


@ti.func
def _rangefinder(m: ti.template(), d: ti.template(), b, s, site, body, out: ti.template(), t, adr):
    """A rangefinder's data at out[t, b, adr:]: along the site's z axis, the distance to the first geom a ray
    sees (-1: none), the direction, the origin, the point hit, the surface normal there, the depth (the fields
    of the sensor's spec)."""
    spec = m.sens_i[s, SENS_INTPRM]
    cutoff = m.sens_f[s, SENS_CUTOFF]
    pos, mat = _frame(d, b, M.OBJ_SITE, site)
    vec = _column(mat, 2)
    dist, geom = ray_scene(m, d, b, pos, vec, body)
    hit = 1.0 if dist >= 0 else 0.0
    normal = sm.zero3()
    if geom >= 0 and spec & (1 << RAYDATA_NORMAL):
        normal = ray_normal(m, d, b, geom, pos + vec * dist)
    p = _put(out, t, b, adr, spec, 0, RAYDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), cutoff)
    p = _put(out, t, b, p, spec, 1, RAYDATA_SIZE, vec * hit, cutoff)
    p = _put(out, t, b, p, spec, 2, RAYDATA_SIZE, pos, cutoff)
    p = _put(out, t, b, p, spec, 3, RAYDATA_SIZE, (pos + vec * dist) * hit, cutoff)
    p = _put(out, t, b, p, spec, 4, RAYDATA_SIZE, normal, cutoff)
    _put(out, t, b, p, spec, 5, RAYDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), cutoff)  # a site's depth: dist


@ti.func
def _put_contact(out: ti.template(), t, b, p, spec, found, f, dist, pos, normal, tangent):
    """One slot of a contact sensor, its fields in MuJoCo's order; the next slot's address."""
    p = _put(out, t, b, p, spec, 0, CONDATA_SIZE, ti.Vector([found, 0.0, 0.0]), 0.0)
    p = _put(out, t, b, p, spec, 1, CONDATA_SIZE, ti.Vector([f[0], f[1], f[2]]), 0.0)
    p = _put(out, t, b, p, spec, 2, CONDATA_SIZE, ti.Vector([f[3], f[4], f[5]]), 0.0)
    p = _put(out, t, b, p, spec, 3, CONDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), 0.0)
    p = _put(out, t, b, p, spec, 4, CONDATA_SIZE, pos, 0.0)
    p = _put(out, t, b, p, spec, 5, CONDATA_SIZE, normal, 0.0)
    p = _put(out, t, b, p, spec, 6, CONDATA_SIZE, tangent, 0.0)
    return p


@ti.func
def _contact_sensor(m: ti.template(), d: ti.template(), b, s, out: ti.template(), t, adr):
    """A contact sensor's slots at out[t, b, adr:]: the matching contacts (all, the nearest or the strongest
    `num` of them, each as found, its force and torque in its frame, distance, position, normal and first
    tangent, flipped to the sensor's side), or their net force and torque about their force-weighted centroid."""
    spec = m.sens_i[s, SENS_INTPRM]
    reduce = m.sens_i[s, SENS_INTPRM + 1]
    num = m.sens_i[s, SENS_INTPRM + 2]
    for k in range(m.sens_i[s, SENS_DIM]):
        out[t, b, adr + k] = 0.0
    ncon = ti.min(d.ncon[b], m.opt_i[SZ_NCONMAX])
    nmatch = 0
    for c in range(ncon):
        if _contact_match(m, d, b, s, c) != 0:
            nmatch += 1
    if reduce == REDUCE_NETFORCE and nmatch > 0:  # (no match: zeros, as MuJoCo 4.0 writes)
        point = sm.zero3()
        total = 0.0
        for c in range(ncon):
            if _contact_match(m, d, b, s, c) != 0:
                f = contact_force(d, b, c)
                w = ti.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
                point += sm.getv(d.contact, b, c, CON_POS, 3) * w
                total += w
        point = point / ti.max(total, MINVAL)
        force = sm.zero3()
        torque = sm.zero3()
        for c in range(ncon):
            flip = _contact_match(m, d, b, s, c)
            if flip != 0:
                f = contact_force(d, b, c) * flip
                frame = sm.getv(d.contact, b, c, CON_FRAME, 9)
                fc = sm.zero3()
                tc = sm.zero3()
                for k in ti.static(range(3)):
                    axis = ti.Vector([frame[3 * k], frame[3 * k + 1], frame[3 * k + 2]])
                    fc += f[k] * axis
                    tc += f[3 + k] * axis
                force += fc
                torque += tc + sm.cross3(sm.getv(d.contact, b, c, CON_POS, 3) - point, fc)
        _put_contact(out, t, b, adr, spec, ti.cast(nmatch, float), ti.Vector([force[0], force[1], force[2], torque[0],
                     torque[1], torque[2]]), 0.0, point, ti.Vector([1.0, 0.0, 0.0]), ti.Vector([0.0, 1.0, 0.0]))
    elif reduce != REDUCE_NETFORCE:
        p = adr
        last_key = 0.0
        last = -1
        for _j in range(ti.min(num, nmatch)):
            # the next contact: in contact order, or the next in (key, index) order for a sorted reduction
            pick = -1
            pick_key = 0.0
            for c in range(ncon):
                if _contact_match(m, d, b, s, c) != 0:
                    if reduce == REDUCE_NONE:
                        if c > last and pick < 0:
                            pick = c
                    else:
                        key = _contact_criterion(m, d, b, c, reduce)
                        after = last < 0 or key > last_key or (key == last_key and c > last)
                        if after and (pick < 0 or key < pick_key):
                            pick = c
                            pick_key = key
            last = pick
            last_key = pick_key
            sign = 1.0 if _contact_match(m, d, b, s, pick) > 0 else -1.0
            f = contact_force(d, b, pick)
            f[2] = f[2] * sign
            f[5] = f[5] * sign
            frame = sm.getv(d.contact, b, pick, CON_FRAME, 9)
            p = _put_contact(out, t, b, p, spec, ti.cast(nmatch, float), f, d.contact[b, pick, CON_DIST],
                             sm.getv(d.contact, b, pick, CON_POS, 3),
                             ti.Vector([frame[0], frame[1], frame[2]]) * sign,
                             ti.Vector([frame[3], frame[4], frame[5]]) * sign)


class _SensorContacts:
    """d with its contact rows swapped for the distance sensors' scratch rows (sens_con): what a collider
    writes through `contact.put` (a compile-time view; every other array is d's)."""

    def __init__(self, d):
        self.contact = d.sens_con
        self._d = d

    def __getattr__(self, name):
        return getattr(self._d, name)


def _ccd():
    """gjk.ccd, imported when a distance sensor's GJK is compiled (as `_begin_mesh`, `_with_meshes`)."""
    from rigidsim.engine.collision.gjk import ccd

    return ccd


def _begin_mesh():
    from rigidsim.engine.collision.support import begin_mesh

    return begin_mesh


def _with_meshes(m, d, on):
    from rigidsim.engine.collision.mesh import with_meshes

    return with_meshes(m, d, on)


@ti.func
def _analytic_id(ta, tb):
    """The analytic collider of geom types ta <= tb (`params._ANALYTIC`), 0 for none."""
    res = 0
    for k in ti.static(range(len(_ANALYTIC_PAIRS))):
        if ta == _ANALYTIC_PAIRS[k][0] and tb == _ANALYTIC_PAIRS[k][1]:
            res = _ANALYTIC_PAIRS[k][2]
    return res


@ti.func
def _geom_distance(m: ti.template(), d: ti.template(), b, g1, g2, distmax, mask: ti.template()):
    """mj_geomDistance of an analytic pair: the collider of the two geoms (in type order) with `distmax` as its
    margin, the smallest distance below distmax (else distmax) and the segment (fromto) from geom g1 to g2
    across it (zeros without one)."""
    flip = m.gcol_i[g1, GEOM_TYPE] > m.gcol_i[g2, GEOM_TYPE]
    ga = g2 if flip else g1
    gb = g1 if flip else g2
    col = _analytic_id(m.gcol_i[ga, GEOM_TYPE], m.gcol_i[gb, GEOM_TYPE])
    k = 0
    for c in ti.static(range(len(_colliders()) if mask & G_DISTANCE else 0)):
        if ti.static(mask & (1 << (KIND_SHIFT + _colliders()[c][0]))):
            if col == ti.static(_colliders()[c][0]):
                k = ti.static(_colliders()[c][1])(
                    _SensorContacts(d), b, 0, SENSOR_CONTACTS,
                    sm.getv(d.geom, b, ga, FXPOS, 3), sm.getv(d.geom, b, ga, FXMAT, 9),
                    sm.getm(m.gcol_f, ga, GEOM_SIZE, 3), sm.getv(d.geom, b, gb, FXPOS, 3),
                    sm.getv(d.geom, b, gb, FXMAT, 9), sm.getm(m.gcol_f, gb, GEOM_SIZE, 3), distmax)
    dist = distmax
    best = -1
    for j in range(k):
        if d.sens_con[b, j, CON_DIST] < dist:
            dist = d.sens_con[b, j, CON_DIST]
            best = j
    fromto = ti.Vector([0.0] * 6)
    if best >= 0:
        pos = sm.getv(d.sens_con, b, best, CON_POS, 3)
        half = sm.getv(d.sens_con, b, best, CON_FRAME, 3) * (0.5 * dist * (-1.0 if flip else 1.0))
        for c in ti.static(range(3)):
            fromto[c] = pos[c] - half[c]
            fromto[3 + c] = pos[c] + half[c]
    if ti.static(mask & (1 << (KIND_SHIFT + GJK_DISTANCE))):
        t1 = m.gcol_i[g1, GEOM_TYPE]
        t2 = m.gcol_i[g2, GEOM_TYPE]
        if col == 0 and t1 != M.GEOM_PLANE and t2 != M.GEOM_PLANE:
            # mj_geomDistanceCCD: the geoms in the sensor's order, no margin, the cutoff bounding GJK
            if ti.static(mask & (1 << (KIND_SHIFT + GJK_MESH))):
                _begin_mesh()(d, b, g1, g2)
            dn, x1, x2, nx, _nf = _ccd()(_with_meshes(m, d, ti.static(bool(mask & (1 << (KIND_SHIFT + GJK_MESH))))),
                                      b, t1, sm.getv(d.geom, b, g1, FXPOS, 3),
                                      sm.getv(d.geom, b, g1, FXMAT, 9), sm.getm(m.gcol_f, g1, GEOM_SIZE, 3), t2,
                                      sm.getv(d.geom, b, g2, FXPOS, 3), sm.getv(d.geom, b, g2, FXMAT, 9),
                                      sm.getm(m.gcol_f, g2, GEOM_SIZE, 3), 0.0, m.opt_f[OPT_CCDTOL],
                                      m.opt_i[OPT_CCDITER], 0, distmax)
            if nx > 0 and dn <= distmax:
                for c in ti.static(range(3)):
                    fromto[c] = x1[c]
                    fromto[3 + c] = x2[c]
            dist = dn if dn < distmax else distmax
    return dist, fromto


@ti.func
def _distance(m: ti.template(), d: ti.template(), b, s, mask: ti.template()):
    """A distance, normal or fromto sensor: the least distance of its geom pairs below its cutoff (else the
    cutoff), and the segment of the first pair that has it."""
    dist = m.sens_f[s, SENS_CUTOFF]
    fromto = ti.Vector([0.0] * 6)
    a1 = m.sens_i[s, SENS_GEOMADR1]
    a2 = m.sens_i[s, SENS_GEOMADR2]
    for g1 in range(a1, a1 + m.sens_i[s, SENS_GEOMNUM1]):
        for g2 in range(a2, a2 + m.sens_i[s, SENS_GEOMNUM2]):
            dn, fn = _geom_distance(m, d, b, g1, g2, m.sens_f[s, SENS_CUTOFF], mask)
            if dn < dist:
                dist = dn
                fromto = fn
    return dist, fromto


# ----------------------------------------------------------------------------- sensordata


@ti.func
def _prepare(m: ti.template(), d: ti.template(), b, mask: ti.template()):
    """What the sensors of `mask` need before any of them: mj_subtreeVel, mj_rnePostConstraint. 1 when the
    sensors are on (MuJoCo's sensor disable flag off)."""
    on = (m.opt_i[OPT_DISABLEFLAGS] & DSBL_SENSOR) == 0  # disabled: zeros (MuJoCo leaves them untouched)
    if ti.static(mask & G_SUBTREE):
        if on:
            subtree_vel(m, d, b)
    if ti.static(mask & G_POST):
        if on:
            rne_post_constraint(m, d, b, ti.static(mask & G_TENDON))
    return on


@ti.func
def _sensor(m: ti.template(), d: ti.template(), b, s, out: ti.template(), t, adr, mask: ti.template(), on):
    """Sensor s's value, computed at the state of the last forward pass, at out[t, b, adr:adr + its dim]."""
    typ = m.sens_i[s, SENS_TYPE]
    objtype = m.sens_i[s, SENS_OBJTYPE]
    objid = m.sens_i[s, SENS_OBJID]
    body = m.sens_i[s, SENS_BODY]
    refid = m.sens_i[s, SENS_REFID]
    val = ti.Vector([0.0] * 4)
    if on:
        if ti.static(mask & G_READ):
            if typ == JOINTPOS:
                val[0] = d.qpos[b, m.jnt_i[objid, JNT_QPOSADR]]
            elif typ == JOINTVEL:
                val[0] = d.qvel[b, m.jnt_i[objid, JNT_DOFADR]]
            elif typ == TENDONPOS:
                val[0] = d.ten[b, objid, TEN_LENGTH]
            elif typ == TENDONVEL:
                val[0] = d.ten[b, objid, TEN_VELOCITY]
            elif typ == ACTUATORPOS:
                val[0] = d.actu[b, objid, ACTUATOR_LENGTH]
            elif typ == ACTUATORVEL:
                val[0] = d.actu[b, objid, ACTUATOR_VELOCITY]
            elif typ == ACTUATORFRC:
                val[0] = d.actu[b, objid, ACTUATOR_FORCE]
            elif typ == JOINTACTFRC:
                val[0] = d.dof[b, m.jnt_i[objid, JNT_DOFADR], QFRC_ACTUATOR]
            elif typ == TENDONACTFRC:
                for a in range(m.opt_i[SZ_NU]):
                    if m.act_i[a, ACT_TRNTYPE] == TRN_TENDON and m.act_i[a, ACT_TRNID] == objid:
                        val[0] = val[0] + d.actu[b, a, ACTUATOR_FORCE]
            elif typ == BALLQUAT:
                qadr = m.jnt_i[objid, JNT_QPOSADR]
                val = sm.normalize4(ti.Vector([d.qpos[b, qadr + c] for c in ti.static(range(4))]))
            elif typ == BALLANGVEL:
                vadr = m.jnt_i[objid, JNT_DOFADR]
                for c in ti.static(range(3)):
                    val[c] = d.qvel[b, vadr + c]
            elif typ == SUBTREECOM:
                for c in ti.static(range(3)):
                    val[c] = d.body[b, objid, SUBTREE_COM + c]
            elif typ == CLOCK:
                val[0] = d.time[b]
        if ti.static(mask & G_MAGNET):
            if typ == MAGNETOMETER:
                _, mat = _frame(d, b, M.OBJ_SITE, objid)
                v = sm.rot_vec_mat_t(ti.Vector([m.opt_f[OPT_MAGNETIC + c] for c in ti.static(range(3))]), mat)
                for c in ti.static(range(3)):
                    val[c] = v[c]
        if ti.static(mask & G_FRAME):
            if typ == FRAMEQUAT:
                q = _quat(m, d, b, objtype, objid, body)
                if refid >= 0:
                    q = sm.mul_quat(sm.neg_quat(_quat(m, d, b, m.sens_i[s, SENS_REFTYPE], refid,
                                                      m.sens_i[s, SENS_REFBODY])), q)
                val = q
            elif typ == FRAMEPOS or typ == FRAMEXAXIS or typ == FRAMEYAXIS or typ == FRAMEZAXIS:
                pos, mat = _frame(d, b, objtype, objid)
                v = pos
                if typ != FRAMEPOS:
                    v = _column(mat, typ - FRAMEXAXIS)
                if refid >= 0:
                    rpos, rmat = _frame(d, b, m.sens_i[s, SENS_REFTYPE], refid)
                    if typ == FRAMEPOS:
                        v = v - rpos
                    v = sm.rot_vec_mat_t(v, rmat)
                for c in ti.static(range(3)):
                    val[c] = v[c]
        if ti.static(mask & G_VEL):
            if typ == VELOCIMETER or typ == GYRO:
                ang, lin = _motion(m, d, b, CVEL, M.OBJ_SITE, objid, body, 1)
                val = _pick(typ == VELOCIMETER, lin, ang)
            elif typ == FRAMELINVEL or typ == FRAMEANGVEL:
                ang, lin = _motion(m, d, b, CVEL, objtype, objid, body, 0)
                if refid >= 0:
                    reftype = m.sens_i[s, SENS_REFTYPE]
                    pos, _ = _frame(d, b, objtype, objid)
                    rpos, rmat = _frame(d, b, reftype, refid)
                    rang, rlin = _motion(m, d, b, CVEL, reftype, refid, m.sens_i[s, SENS_REFBODY], 0)
                    # relative to the reference frame, with the term of its rotation
                    lin = sm.rot_vec_mat_t(lin - rlin + sm.cross3(pos - rpos, rang), rmat)
                    ang = sm.rot_vec_mat_t(ang - rang, rmat)
                val = _pick(typ == FRAMELINVEL, lin, ang)
        if ti.static(mask & G_SUBTREE):
            if typ == SUBTREELINVEL or typ == SUBTREEANGMOM:
                col = SUBTREE_LINVEL if typ == SUBTREELINVEL else SUBTREE_ANGMOM
                for c in ti.static(range(3)):
                    val[c] = d.body[b, objid, col + c]
        if ti.static(mask & G_LIMIT):
            if typ >= JOINTLIMITPOS and typ <= TENDONLIMITFRC:
                kind = CNSTR_LIMIT_JOINT if typ <= JOINTLIMITFRC else CNSTR_LIMIT_TENDON
                which = (typ - JOINTLIMITPOS) % 3
                val[0] = _limit_row(m, d, b, kind, objid,
                                    EFC_POS if which == 0 else (EFC_VEL if which == 1 else EFC_FORCE))
        if ti.static(mask & G_POST):
            if typ == ACCELEROMETER:
                _, lin = _acceleration(m, d, b, M.OBJ_SITE, objid, body, 1)
                val = _pick(True, lin, lin)
            elif typ == FRAMELINACC or typ == FRAMEANGACC:
                ang, lin = _acceleration(m, d, b, objtype, objid, body, 0)
                val = _pick(typ == FRAMELINACC, lin, ang)
            elif typ == FORCE or typ == TORQUE:
                pos, mat = _frame(d, b, M.OBJ_SITE, objid)
                f = sm.getv(d.body, b, body, CFRC_INT, 6)
                tq, fr = _force_at(_ang(f), _lin(f),
                                   pos, sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3))
                val = _pick(typ == FORCE, sm.rot_vec_mat_t(fr, mat), sm.rot_vec_mat_t(tq, mat))
        if ti.static(mask & G_TOUCH):
            if typ == TOUCH:
                val[0] = _touch(m, d, b, s, objid, body)
        if ti.static(mask & G_RAY):
            if typ == RANGEFINDER:
                _rangefinder(m, d, b, s, objid, body, out, t, adr)
        if ti.static(mask & G_INSIDE):
            if typ == INSIDESITE:
                val[0] = _inside_site(m, d, b, s, objtype, objid)
        if ti.static(mask & G_DISTANCE):
            if typ == GEOMDIST or typ == GEOMNORMAL or typ == GEOMFROMTO:
                dist, fromto = _distance(m, d, b, s, mask)
                if typ == GEOMDIST:
                    val[0] = dist
                elif typ == GEOMNORMAL:
                    nrm = ti.Vector([fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]])
                    if nrm[0] != 0 or nrm[1] != 0 or nrm[2] != 0:
                        nrm, _ = sm.normalize3(nrm)
                    val = _pick(True, nrm, nrm)
                else:
                    for c in ti.static(range(6)):
                        out[t, b, adr + c] = fromto[c]
        if ti.static(mask & G_CONTACT):
            if typ == CONTACT:
                _contact_sensor(m, d, b, s, out, t, adr)
        if ti.static(mask & G_ENERGY):
            if typ == E_POTENTIAL:
                val[0] = energy_pos(m, d, b)
            elif typ == E_KINETIC:
                val[0] = energy_vel(m, d, b)
    dim = m.sens_i[s, SENS_DIM]
    cutoff = m.sens_f[s, SENS_CUTOFF]
    dt = m.sens_i[s, SENS_DATATYPE]
    for c in ti.static(range(4)):
        if c < dim and typ != CONTACT and typ != RANGEFINDER and typ != GEOMFROMTO:  # (they wrote theirs)
            x = val[c]
            if cutoff > 0:  # MuJoCo's cutoff: both sides of a real value, the top of a positive one
                if dt == DATATYPE_REAL:
                    x = sm.clip(x, -cutoff, cutoff)
                elif dt == DATATYPE_POSITIVE:
                    x = ti.min(cutoff, x)
            out[t, b, adr + c] = x


@ti.func
def sensors(m: ti.template(), d: ti.template(), b, out: ti.template(), t, o, mask: ti.template()):
    """out[t, b, o:o + nsensordata] = env b's sensordata at the state of its last forward pass. `mask`: the
    groups compiled in (`mask_of`). A sensor with a history (`G_HISTORY`) and a delay, or with an interval
    that has not elapsed since it was last computed, reads its buffer instead (MuJoCo's compute_or_read)."""
    on = _prepare(m, d, b, mask)
    for s in range(m.opt_i[SZ_NSENSOR]):
        adr = o + m.sens_i[s, SENS_ADR]
        read = 0
        if ti.static(mask & G_HISTORY):
            read = _reads_history(m, d, b, s)
            if read:
                _history_read(m, d, b, s, out, t, adr)
        if not read:
            _sensor(m, d, b, s, out, t, adr, mask, on)


# ----------------------------------------------------------------------------- history (MuJoCo 4.0)
# A history sensor's buffer in d.history[b, adr:]: its last compute time, the cursor (where the newest sample
# is: the n samples form a ring, logical index 0 the oldest, n - 1 the newest), the n sample times, the n values
# (dim numbers each). `history_advance` adds a sample each step (mj_advance); `sensors` reads a delayed or
# held value from it (mju_historyRead).


class _BufferRows:
    """d.history as `sensors`' output: out[t, b, k] is history[b, k] (a compile-time view)."""

    def __init__(self, a):
        self.a = a

    def __getitem__(self, idx):
        return self.a[idx[1], idx[2]]


@ti.func
def _phys(cursor, n, logical):
    """The ring slot of logical index `logical` (0: the oldest) when the newest is at `cursor`."""
    return (cursor + 1 + logical) % n


@ti.func
def _find(d: ti.template(), b, base, n, cursor, tq):
    """The logical index i with times[i - 1] < tq <= times[i]: 0 at or before the oldest, n after the newest
    (a binary search over the ring)."""
    res = 0
    if tq > d.history[b, base + 2 + _phys(cursor, n, n - 1)]:
        res = n
    elif tq > d.history[b, base + 2 + _phys(cursor, n, 0)]:
        lo = 0
        hi = n - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if d.history[b, base + 2 + _phys(cursor, n, mid)] < tq:
                lo = mid
            else:
                hi = mid
        res = hi
    return res


@ti.func
def _reads_history(m: ti.template(), d: ti.template(), b, s):
    """Whether sensor s reads its buffer now: it has one, and a delay, or an interval not yet elapsed since
    its last compute."""
    res = 0
    if m.sens_i[s, SENS_NSAMPLE] > 0:
        if m.sens_f[s, SENS_DELAY] > 0:
            res = 1
        elif m.sens_f[s, SENS_PERIOD] > 0:
            res = d.history[b, m.sens_i[s, SENS_HISTADR]] + m.sens_f[s, SENS_PERIOD] > d.time[b]
    return res


@ti.func
def _history_read(m: ti.template(), d: ti.template(), b, s, out: ti.template(), t, adr):
    """out[t, b, adr:adr + dim] = sensor s's value `delay` seconds ago from its buffer: the oldest or newest
    sample outside their range, a sample at its time, else the samples around it held (zoh), or interpolated
    (linear, or cubic: Hermite with finite-difference slopes, 0 at the ends)."""
    n = m.sens_i[s, SENS_NSAMPLE]
    dim = m.sens_i[s, SENS_DIM]
    base = m.sens_i[s, SENS_HISTADR]
    interp = m.sens_i[s, SENS_INTERP]
    cursor = ti.cast(d.history[b, base + 1], ti.i32)
    times = base + 2
    vals = base + 2 + n
    tq = d.time[b] - m.sens_f[s, SENS_DELAY]
    lo = _phys(cursor, n, 0)
    hi = lo
    alpha = 0.0
    i = 0
    if tq <= d.history[b, times + lo] + MINVAL:
        hi = lo
    elif tq >= d.history[b, times + _phys(cursor, n, n - 1)] - MINVAL:
        lo = _phys(cursor, n, n - 1)
        hi = lo
    else:
        i = _find(d, b, base, n, cursor, tq)
        hi = _phys(cursor, n, i)
        lo = hi
        if ti.abs(tq - d.history[b, times + hi]) >= MINVAL:
            lo = _phys(cursor, n, i - 1)
            if interp == 0:
                hi = lo
            else:
                alpha = (tq - d.history[b, times + lo]) / (d.history[b, times + hi] - d.history[b, times + lo])
    h = d.history[b, times + hi] - d.history[b, times + lo]
    a2 = alpha * alpha
    a3 = a2 * alpha
    for k in range(dim):
        vlo = d.history[b, vals + lo * dim + k]
        vhi = d.history[b, vals + hi * dim + k]
        x = vlo
        if lo != hi:
            if interp == 1:
                x = vlo + alpha * (vhi - vlo)
            else:
                slope_lo = 0.0
                if i > 1:
                    p = _phys(cursor, n, i - 2)
                    slope_lo = (vhi - d.history[b, vals + p * dim + k]) / (d.history[b, times + hi]
                                                                           - d.history[b, times + p])
                slope_hi = 0.0
                if i < n - 1:
                    q = _phys(cursor, n, i + 1)
                    slope_hi = (d.history[b, vals + q * dim + k] - vlo) / (d.history[b, times + q]
                                                                           - d.history[b, times + lo])
                x = ((2 * a3 - 3 * a2 + 1) * vlo + (a3 - 2 * a2 + alpha) * h * slope_lo
                     + (-2 * a3 + 3 * a2) * vhi + (a3 - a2) * h * slope_hi)
        out[t, b, adr + k] = x


@ti.func
def _history_insert(d: ti.template(), b, base, n, dim, tq):
    """Make room for a sample at time tq in the buffer at `base` (mju_historyInsert): the slot of a sample
    already at tq, else the oldest's (tq before it, or past the newest: the ring turns), else the samples
    before tq shift down a slot, dropping the oldest. Returns the address of the slot's values."""
    cursor = ti.cast(d.history[b, base + 1], ti.i32)
    times = base + 2
    vals = base + 2 + n
    i = _find(d, b, base, n, cursor, tq)
    slot = -1
    if i < n:
        if ti.abs(tq - d.history[b, times + _phys(cursor, n, i)]) < MINVAL:
            slot = _phys(cursor, n, i)
    if slot < 0:
        if i == 0:
            slot = _phys(cursor, n, 0)
        elif i == n:
            cursor = (cursor + 1) % n
            d.history[b, base + 1] = cursor
            slot = cursor
        else:
            for j in range(i - 1):
                src = _phys(cursor, n, j + 1)
                dst = _phys(cursor, n, j)
                d.history[b, times + dst] = d.history[b, times + src]
                for k in range(dim):
                    d.history[b, vals + dst * dim + k] = d.history[b, vals + src * dim + k]
            slot = _phys(cursor, n, i - 1)
        d.history[b, times + slot] = tq
    return vals + slot * dim


@ti.func
def history_advance(m: ti.template(), d: ti.template(), b, mask: ti.template()):
    """mj_advance's sensor part, before the state moves on: each history sensor adds its value now to its
    buffer, every step, or when its interval has elapsed (its last compute time then moves one period on)."""
    on = _prepare(m, d, b, mask)
    for s in range(m.opt_i[SZ_NSENSOR]):
        n = m.sens_i[s, SENS_NSAMPLE]
        if n > 0:
            base = m.sens_i[s, SENS_HISTADR]
            period = m.sens_f[s, SENS_PERIOD]
            due = 1
            if period > 0:
                due = d.history[b, base] + period <= d.time[b]
                if due:
                    d.history[b, base] = d.history[b, base] + period
            if due:
                slot = _history_insert(d, b, base, n, m.sens_i[s, SENS_DIM], d.time[b])
                _sensor(m, d, b, s, _BufferRows(d.history), 0, slot, mask, on)
