"""The sensors of a scene as MuJoCo compiles them (mjCSensor::Compile): each sensor's type, object and reference
(objects of every kind a sensor takes), data spec and dimension, address in sensordata, cutoff and history, and
the checks MuJoCo makes of them."""

from __future__ import annotations

from rigidsim import model as M

# sensor tag -> (mjtSensor, object kind, datatype, needstage, dim)
SENSORS = {
    "touch": (0, "site", 1, 3, 1), "accelerometer": (1, "site", 0, 3, 3), "velocimeter": (2, "site", 0, 2, 3),
    "gyro": (3, "site", 0, 2, 3), "force": (4, "site", 0, 3, 3), "torque": (5, "site", 0, 3, 3),
    "magnetometer": (6, "site", 0, 1, 3), "rangefinder": (7, "site", 0, 1, 1),
    "jointpos": (9, "joint", 0, 1, 1), "jointvel": (10, "joint", 0, 2, 1),
    "tendonpos": (11, "tendon", 0, 1, 1), "tendonvel": (12, "tendon", 0, 2, 1),
    "actuatorpos": (13, "actuator", 0, 1, 1), "actuatorvel": (14, "actuator", 0, 2, 1),
    "actuatorfrc": (15, "actuator", 0, 3, 1), "jointactuatorfrc": (16, "joint", 0, 3, 1),
    "tendonactuatorfrc": (17, "tendon", 0, 3, 1), "ballquat": (18, "joint", 3, 1, 4),
    "ballangvel": (19, "joint", 0, 2, 3), "jointlimitpos": (20, "joint", 0, 1, 1),
    "jointlimitvel": (21, "joint", 0, 2, 1), "jointlimitfrc": (22, "joint", 0, 3, 1),
    "tendonlimitpos": (23, "tendon", 0, 1, 1), "tendonlimitvel": (24, "tendon", 0, 2, 1),
    "tendonlimitfrc": (25, "tendon", 0, 3, 1), "framepos": (26, "frame", 0, 1, 3),
    "framequat": (27, "frame", 3, 1, 4), "framexaxis": (28, "frame", 2, 1, 3),
    "frameyaxis": (29, "frame", 2, 1, 3), "framezaxis": (30, "frame", 2, 1, 3),
    "framelinvel": (31, "frame", 0, 2, 3), "frameangvel": (32, "frame", 0, 2, 3),
    "framelinacc": (33, "frame", 0, 3, 3), "frameangacc": (34, "frame", 0, 3, 3),
    "subtreecom": (35, "body", 0, 1, 3), "subtreelinvel": (36, "body", 0, 2, 3),
    "subtreeangmom": (37, "body", 0, 2, 3), "insidesite": (38, "inside", 1, 1, 1), "distance": (39, "distance", 0, 1, 1),
    "normal": (40, "distance", 2, 1, 3), "fromto": (41, "distance", 0, 1, 6), "contact": (42, "contact", 0, 3, 1),
    "e_potential": (43, None, 0, 1, 1),
    "e_kinetic": (44, None, 0, 1, 1), "clock": (45, None, 0, 1, 1),
}
_OBJTYPES = {"body": M.OBJ_BODY, "xbody": M.OBJ_XBODY, "geom": M.OBJ_GEOM, "site": M.OBJ_SITE,
             "camera": 7}


def write_sensors(cp, m):
    """The sensor arrays of `m` (MuJoCo's sensor_*: type, data spec, objects, dims, addresses, cutoff, history)."""
    A = m.arrays
    adr = hadr = 0
    for i, s in enumerate(cp.sc.sensors):
        typ, kind, dt, stage, dim = SENSORS[s.tag]
        at = s.attrs
        objtype, objid, reftype, refid = 0, -1, 0, -1
        if kind == "site":
            objtype, objid = M.OBJ_SITE, cp.lookup(cp.site_ids, at.get("site"), "site", s.el)
        elif kind == "joint":
            objtype, objid = M.OBJ_JOINT, cp.lookup(cp.jnt_ids, at.get("joint"), "joint", s.el)
            jt = cp.joints[objid].type
            if s.tag in ("ballquat", "ballangvel") and jt != M.JNT_BALL:
                cp.fail(s.el, f"<{s.tag}> requires a ball joint")
            if s.tag in ("jointpos", "jointvel", "jointlimitpos", "jointlimitvel", "jointlimitfrc",
                         "jointactuatorfrc") and jt not in (M.JNT_HINGE, M.JNT_SLIDE):
                cp.fail(s.el, f"<{s.tag}> requires a hinge or slide joint")
            if s.tag.startswith("jointlimit") and not A["jnt_limited"][objid]:
                cp.fail(s.el, f"<{s.tag}>: joint '{at.get('joint')}' must be limited")
        elif kind == "tendon":
            objtype, objid = M.OBJ_TENDON, cp.lookup(cp.tendon_ids, at.get("tendon"), "tendon", s.el)
            if s.tag.startswith("tendonlimit") and not A["tendon_limited"][objid]:
                cp.fail(s.el, f"<{s.tag}>: tendon '{at.get('tendon')}' must be limited")
        elif kind == "actuator":
            ids = {a.name: k for k, a in enumerate(cp.sc.actuators) if a.name}
            objtype, objid = M.OBJ_ACTUATOR, cp.lookup(ids, at.get("actuator"), "actuator", s.el)
        elif kind == "body":
            objtype, objid = M.OBJ_BODY, cp.body_id(at.get("body"), s.el)
        elif kind == "frame":
            objtype, objid = _frame_obj(cp, s, at.get("objtype"), at.get("objname"), "obj")
            if at.get("refname") is not None or at.get("reftype") is not None:
                reftype, refid = _frame_obj(cp, s, at.get("reftype"), at.get("refname"), "ref")
        elif kind == "inside":  # the object whose position is tested against the site's volume
            objtype, objid = _frame_obj(cp, s, at.get("objtype"), at.get("objname"), "obj")
            reftype, refid = M.OBJ_SITE, cp.lookup(cp.site_ids, at.get("site"), "site", s.el)
        elif kind == "distance":  # the two geoms, or every geom of each of two bodies
            objtype, objid = _distance_side(cp, s, "1")
            reftype, refid = _distance_side(cp, s, "2")
            if (objtype, objid) == (reftype, refid):
                cp.fail(s.el, f"<{s.tag}>: the two geoms or bodies must differ")
            for t, g in ((objtype, objid), (reftype, refid)):
                if t == M.OBJ_GEOM and A["geom_type"][g] == M.GEOM_HFIELD:
                    cp.fail(s.el, f"<{s.tag}>: height fields have no distance (MuJoCo refuses them too)")
        elif kind == "contact":  # the contacts' matching criteria: (site | body1 | subtree1 | geom1), then
            objtype, objid = _contact_criterion(cp, s, ("site", "body1", "subtree1", "geom1"))
            reftype, refid = _contact_criterion(cp, s, ("body2", "subtree2", "geom2"))
        else:  # clock, e_potential, e_kinetic: no object (MuJoCo 4.0: objid -1)
            objtype = 0
        if s.cutoff > 0 and dt in (2, 3) and s.tag != "normal":  # mjDATATYPE_AXIS, _QUATERNION (a normal
            # sensor's cutoff is its distance's bound)
            cp.fail(s.el, f"<{s.tag}> cutoff='{at.get('cutoff')}': a cutoff cannot apply to an axis or a quaternion "
                           "(MuJoCo refuses it too)")
        A["sensor_type"][i] = typ
        A["sensor_intprm"][i] = s.intprm
        A["sensor_datatype"][i] = dt
        # a contact sensor needs the position stage only without force or torque in its data and without a
        # reduction by them (maxforce, netforce) (MuJoCo 4.0)
        A["sensor_needstage"][i] = 1 if s.tag == "contact" and not s.intprm[0] & 6 and s.intprm[1] < 2 else stage
        A["sensor_objtype"][i] = objtype
        A["sensor_objid"][i] = objid
        A["sensor_reftype"][i] = reftype
        A["sensor_refid"][i] = refid
        A["sensor_dim"][i] = s.dim or dim
        A["sensor_adr"][i] = adr
        A["sensor_cutoff"][i] = s.cutoff
        A["sensor_noise"][i] = s.noise
        A["sensor_history"][i] = s.history
        A["sensor_historyadr"][i] = hadr if s.history[0] > 0 else -1
        A["sensor_delay"][i] = s.delay
        A["sensor_interval"][i] = s.interval
        adr += s.dim or dim
        if s.history[0] > 0:
            hadr += 2 + s.history[0] * (1 + (s.dim or dim))


def _distance_side(cp, s, k):
    """(objtype, objid) of side k ('1' or '2') of a distance, normal or fromto sensor: geom{k} or body{k}."""
    geom, body = s.attrs.get("geom" + k), s.attrs.get("body" + k)
    if (geom is None) == (body is None):
        cp.fail(s.el, f"<{s.tag}> needs exactly one of geom{k} and body{k}")
    if geom is not None:
        return M.OBJ_GEOM, cp.lookup(cp.geom_ids, geom, "geom", s.el)
    return M.OBJ_BODY, cp.body_id(body, s.el)


def _contact_criterion(cp, s, attrs):
    """(objtype, objid) of a contact sensor's first or second matching criterion: the one of `attrs` given (a
    site's volume, a body, a subtree (MuJoCo's xbody) or a geom), or (0, -1) for any contact."""
    given = [a for a in attrs if s.attrs.get(a) is not None]
    if len(given) > 1:
        cp.fail(s.el, f"<contact> takes at most one of {', '.join(attrs)}; it has {', '.join(given)}")
    if not given:
        return 0, -1
    a = given[0]
    name = s.attrs[a]
    if a == "site":
        return M.OBJ_SITE, cp.lookup(cp.site_ids, name, "site", s.el)
    if a == "geom1" or a == "geom2":
        return M.OBJ_GEOM, cp.lookup(cp.geom_ids, name, "geom", s.el)
    return (M.OBJ_XBODY if a.startswith("subtree") else M.OBJ_BODY), cp.body_id(name, s.el)


def _frame_obj(cp, s, otype, oname, what):
    if otype is None or oname is None:
        cp.fail(s.el, f"<{s.tag}> requires {what}type and {what}name")
    if otype not in _OBJTYPES or otype == "camera":
        cp.fail(s.el, f"<{s.tag}> {what}type '{otype}' is not supported (body, xbody, geom or site)")
    t = _OBJTYPES[otype]
    if t in (M.OBJ_BODY, M.OBJ_XBODY):
        return t, cp.body_id(oname, s.el)
    if t == M.OBJ_GEOM:
        return t, cp.lookup(cp.geom_ids, oname, "geom", s.el)
    return t, cp.lookup(cp.site_ids, oname, "site", s.el)
