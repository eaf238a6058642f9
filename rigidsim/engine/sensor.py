"""Sensors of one env, as ti.funcs: MuJoCo's engine_sensor (mj_sensorPos, mj_sensorVel, mj_sensorAcc). What the
stages need of the forward pass is `sensor_stages`' (mj_subtreeVel, mj_rnePostConstraint, the energies); objects'
frames and motions `sensor_frame`'s; the contact and insidesite sensors `sensor_contact`'s, the distance sensors
`sensor_distance`'s, the history buffers `sensor_history`'s.

``sensors`` computes the whole sensordata row of env b from what the forward pass left in ``d``: after it, every
stage's inputs are there (poses, velocities, qacc, actuator and constraint forces), so one call after the pass
gives what MuJoCo's three stage calls give inside mj_forward. The rollout kernels call it when they record a frame
(`kernels._record`), ``sensor_kernel`` at the current state.

Only the code a scene's sensors use is compiled in: ``mask_of(model)`` is a bit set of groups (``G_*``), and a
scene without sensors compiles none of it. Sensor noise is metadata, as in MuJoCo (it adds none); cutoff clips
as MuJoCo's does. Not computed yet: `not_computed`.
"""

from __future__ import annotations

from typing import List

import numpy as np

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.constraint.record import contact_force
from rigidsim.engine.ray import ray_normal, ray_primitive, ray_scene
from rigidsim.engine.collision.params import distance_colliders
from rigidsim.engine.sensor_contact import contact_sensor, inside_site, put_fields
from rigidsim.engine.sensor_distance import KIND_SHIFT, distance
from rigidsim.engine.sensor_frame import (
    ang3, force_at, lin3, mat_column, object_acceleration, object_frame, object_motion, object_quat, pick3,
)
from rigidsim.engine.sensor_history import history_insert, history_read, reads_history
from rigidsim.engine.sensor_stages import energy_pos, energy_vel, rne_post_constraint, subtree_vel
from rigidsim.engine.layout import (
    ACTUATOR_FORCE, ACTUATOR_LENGTH, ACTUATOR_VELOCITY, ACT_TRNID, ACT_TRNTYPE, BODY_ROOTID, CFRC_INT,
    CNSTR_LIMIT_JOINT, CNSTR_LIMIT_TENDON, CON_EFCADR, CON_FRAME, CON_GEOM1, CON_POS, CVEL, DSBL_SENSOR, EFCN_NE,
    EFCN_NEFC, EFCN_NF, EFC_FORCE, EFC_ID, EFC_MARGIN, EFC_POS, EFC_TYPE, EFC_VEL, FRAME_BODYID, JNT_DOFADR,
    JNT_QPOSADR, OPT_DISABLEFLAGS, OPT_MAGNETIC, QFRC_ACTUATOR, SENS_ADR, SENS_BODY, SENS_CUTOFF, SENS_DATATYPE,
    SENS_DIM, SENS_HISTADR, SENS_INTPRM, SENS_NSAMPLE, SENS_OBJID, SENS_OBJTYPE, SENS_PERIOD, SENS_REFBODY,
    SENS_REFID, SENS_REFTYPE, SENS_SITESIZE, SENS_SITETYPE, SENS_TYPE, SUBTREE_ANGMOM, SUBTREE_COM, SUBTREE_LINVEL,
    SZ_NCONMAX, SZ_NSENSOR, SZ_NU, TEN_LENGTH, TEN_VELOCITY, TRN_TENDON,
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
# a rangefinder's (mjtRayDataType: dist, dir, origin, point, normal, depth)
RAYDATA_SIZE = (1, 3, 3, 3, 3, 1)
RAYDATA_NORMAL = 4

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
    pos, mat = object_frame(d, b, M.OBJ_SITE, site)
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
def _rangefinder(m: ti.template(), d: ti.template(), b, s, site, body, out: ti.template(), t, adr):
    """A rangefinder's data at out[t, b, adr:]: along the site's z axis, the distance to the first geom a ray
    sees (-1: none), the direction, the origin, the point hit, the surface normal there, the depth (the fields
    of the sensor's spec)."""
    spec = m.sens_i[s, SENS_INTPRM]
    cutoff = m.sens_f[s, SENS_CUTOFF]
    pos, mat = object_frame(d, b, M.OBJ_SITE, site)
    vec = mat_column(mat, 2)
    dist, geom = ray_scene(m, d, b, pos, vec, body)
    hit = 1.0 if dist >= 0 else 0.0
    normal = sm.zero3()
    if geom >= 0 and spec & (1 << RAYDATA_NORMAL):
        normal = ray_normal(m, d, b, geom, pos + vec * dist)
    p = put_fields(out, t, b, adr, spec, 0, RAYDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), cutoff)
    p = put_fields(out, t, b, p, spec, 1, RAYDATA_SIZE, vec * hit, cutoff)
    p = put_fields(out, t, b, p, spec, 2, RAYDATA_SIZE, pos, cutoff)
    p = put_fields(out, t, b, p, spec, 3, RAYDATA_SIZE, (pos + vec * dist) * hit, cutoff)
    p = put_fields(out, t, b, p, spec, 4, RAYDATA_SIZE, normal, cutoff)
    put_fields(out, t, b, p, spec, 5, RAYDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), cutoff)  # a site's depth: dist


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
                _, mat = object_frame(d, b, M.OBJ_SITE, objid)
                v = sm.rot_vec_mat_t(ti.Vector([m.opt_f[OPT_MAGNETIC + c] for c in ti.static(range(3))]), mat)
                for c in ti.static(range(3)):
                    val[c] = v[c]
        if ti.static(mask & G_FRAME):
            if typ == FRAMEQUAT:
                q = object_quat(m, d, b, objtype, objid, body)
                if refid >= 0:
                    q = sm.mul_quat(sm.neg_quat(object_quat(m, d, b, m.sens_i[s, SENS_REFTYPE], refid,
                                                      m.sens_i[s, SENS_REFBODY])), q)
                val = q
            elif typ == FRAMEPOS or typ == FRAMEXAXIS or typ == FRAMEYAXIS or typ == FRAMEZAXIS:
                pos, mat = object_frame(d, b, objtype, objid)
                v = pos
                if typ != FRAMEPOS:
                    v = mat_column(mat, typ - FRAMEXAXIS)
                if refid >= 0:
                    rpos, rmat = object_frame(d, b, m.sens_i[s, SENS_REFTYPE], refid)
                    if typ == FRAMEPOS:
                        v = v - rpos
                    v = sm.rot_vec_mat_t(v, rmat)
                for c in ti.static(range(3)):
                    val[c] = v[c]
        if ti.static(mask & G_VEL):
            if typ == VELOCIMETER or typ == GYRO:
                ang, lin = object_motion(m, d, b, CVEL, M.OBJ_SITE, objid, body, 1)
                val = pick3(typ == VELOCIMETER, lin, ang)
            elif typ == FRAMELINVEL or typ == FRAMEANGVEL:
                ang, lin = object_motion(m, d, b, CVEL, objtype, objid, body, 0)
                if refid >= 0:
                    reftype = m.sens_i[s, SENS_REFTYPE]
                    pos, _ = object_frame(d, b, objtype, objid)
                    rpos, rmat = object_frame(d, b, reftype, refid)
                    rang, rlin = object_motion(m, d, b, CVEL, reftype, refid, m.sens_i[s, SENS_REFBODY], 0)
                    # relative to the reference frame, with the term of its rotation
                    lin = sm.rot_vec_mat_t(lin - rlin + sm.cross3(pos - rpos, rang), rmat)
                    ang = sm.rot_vec_mat_t(ang - rang, rmat)
                val = pick3(typ == FRAMELINVEL, lin, ang)
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
                _, lin = object_acceleration(m, d, b, M.OBJ_SITE, objid, body, 1)
                val = pick3(True, lin, lin)
            elif typ == FRAMELINACC or typ == FRAMEANGACC:
                ang, lin = object_acceleration(m, d, b, objtype, objid, body, 0)
                val = pick3(typ == FRAMELINACC, lin, ang)
            elif typ == FORCE or typ == TORQUE:
                pos, mat = object_frame(d, b, M.OBJ_SITE, objid)
                f = sm.getv(d.body, b, body, CFRC_INT, 6)
                tq, fr = force_at(ang3(f), lin3(f),
                                   pos, sm.getv(d.body, b, m.body_i[body, BODY_ROOTID], SUBTREE_COM, 3))
                val = pick3(typ == FORCE, sm.rot_vec_mat_t(fr, mat), sm.rot_vec_mat_t(tq, mat))
        if ti.static(mask & G_TOUCH):
            if typ == TOUCH:
                val[0] = _touch(m, d, b, s, objid, body)
        if ti.static(mask & G_RAY):
            if typ == RANGEFINDER:
                _rangefinder(m, d, b, s, objid, body, out, t, adr)
        if ti.static(mask & G_INSIDE):
            if typ == INSIDESITE:
                val[0] = inside_site(m, d, b, s, objtype, objid)
        if ti.static(mask & G_DISTANCE):
            if typ == GEOMDIST or typ == GEOMNORMAL or typ == GEOMFROMTO:
                dist, fromto = distance(m, d, b, s, mask)
                if typ == GEOMDIST:
                    val[0] = dist
                elif typ == GEOMNORMAL:
                    nrm = ti.Vector([fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]])
                    if nrm[0] != 0 or nrm[1] != 0 or nrm[2] != 0:
                        nrm, _ = sm.normalize3(nrm)
                    val = pick3(True, nrm, nrm)
                else:
                    for c in ti.static(range(6)):
                        out[t, b, adr + c] = fromto[c]
        if ti.static(mask & G_CONTACT):
            if typ == CONTACT:
                contact_sensor(m, d, b, s, out, t, adr)
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
            read = reads_history(m, d, b, s)
            if read:
                history_read(m, d, b, s, out, t, adr)
        if not read:
            _sensor(m, d, b, s, out, t, adr, mask, on)


# ----------------------------------------------------------------------------- history (MuJoCo 4.0)


class _BufferRows:
    """d.history as `sensors`' output: out[t, b, k] is history[b, k] (a compile-time view)."""

    def __init__(self, a):
        self.a = a

    def __getitem__(self, idx):
        return self.a[idx[1], idx[2]]


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
                slot = history_insert(d, b, base, n, m.sens_i[s, SENS_DIM], d.time[b])
                _sensor(m, d, b, s, _BufferRows(d.history), 0, slot, mask, on)
