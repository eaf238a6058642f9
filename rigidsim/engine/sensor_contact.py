"""Contact and insidesite sensors, as ti.funcs (MuJoCo 4.0's mjSENS_CONTACT, mjSENS_INSIDESITE): which
contacts match a contact sensor's criteria (a site's volume, a body, a subtree, a geom; the normal's side), its
slots (found, force, torque, dist, pos, normal, tangent) for all, the nearest or the strongest matches, or their
net force; whether a point is inside a site's volume (mju_insideGeom). `put_fields` writes a data spec's fields
(the rangefinder's too)."""

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.constraint.record import contact_force
from rigidsim.engine.sensor_frame import object_frame
from rigidsim.engine.layout import (
    BODY_MASS, BODY_PARENTID, CON_DIST, CON_FRAME, CON_GEOM1, CON_POS, FRAME_BODYID, MINVAL, SENS_DIM, SENS_INTPRM,
    SENS_OBJID, SENS_OBJTYPE, SENS_REFID, SENS_REFTYPE, SENS_SITESIZE, SENS_SITETYPE, SUBTREE_COM, SUBTREE_MASS,
    SZ_NCONMAX,
)

# a contact sensor's data fields (mjtConDataField: found, force, torque, dist, pos, normal, tangent) and
# reductions (none, mindist, maxforce, netforce)
CONDATA_SIZE = (1, 3, 3, 1, 3, 3, 3)
REDUCE_NONE, REDUCE_MINDIST, REDUCE_MAXFORCE, REDUCE_NETFORCE = range(4)


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
def inside_site(m: ti.template(), d: ti.template(), b, s, objtype, objid):
    """insidesite: 1 if the object's position (a massless body with mass below it: its subtree's com) is
    inside the sensor's site (its reference)."""
    pos, _ = object_frame(d, b, objtype, objid)
    if objtype == M.OBJ_BODY and objid > 0 and m.body_f[objid, BODY_MASS] < MINVAL and \
            d.body[b, objid, SUBTREE_MASS] >= MINVAL:
        pos = sm.getv(d.body, b, objid, SUBTREE_COM, 3)
    spos, smat = object_frame(d, b, M.OBJ_SITE, m.sens_i[s, SENS_REFID])
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
            spos, smat = object_frame(d, b, M.OBJ_SITE, objid)
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
def put_fields(out: ti.template(), t, b, p, spec, field: ti.template(), sizes: ti.template(), v, cutoff):
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
def _put_contact(out: ti.template(), t, b, p, spec, found, f, dist, pos, normal, tangent):
    """One slot of a contact sensor, its fields in MuJoCo's order; the next slot's address."""
    p = put_fields(out, t, b, p, spec, 0, CONDATA_SIZE, ti.Vector([found, 0.0, 0.0]), 0.0)
    p = put_fields(out, t, b, p, spec, 1, CONDATA_SIZE, ti.Vector([f[0], f[1], f[2]]), 0.0)
    p = put_fields(out, t, b, p, spec, 2, CONDATA_SIZE, ti.Vector([f[3], f[4], f[5]]), 0.0)
    p = put_fields(out, t, b, p, spec, 3, CONDATA_SIZE, ti.Vector([dist, 0.0, 0.0]), 0.0)
    p = put_fields(out, t, b, p, spec, 4, CONDATA_SIZE, pos, 0.0)
    p = put_fields(out, t, b, p, spec, 5, CONDATA_SIZE, normal, 0.0)
    p = put_fields(out, t, b, p, spec, 6, CONDATA_SIZE, tangent, 0.0)
    return p


@ti.func
def contact_sensor(m: ti.template(), d: ti.template(), b, s, out: ti.template(), t, adr):
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
