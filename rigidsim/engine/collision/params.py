"""Per candidate pair, on the host (numpy, no Taichi): which collider, in which geom order, how many contacts
at most, and the contact parameters, mixed once at put_model since they depend on the two geoms alone.

MuJoCo mixes the parameters of two geoms (mj_contactParam) when it writes each contact; the result is the
same for every contact of a pair, so the kernels read it from the pair table instead. An explicit
``<pair>`` brings its own condim, friction, solref, solreffriction, solimp, margin and gap. Without one:
the geom of higher priority gives all of condim, solref, solimp and friction; at equal priority condim and
friction are the maxima, solref and solimp are mixed with solmix weights (solref element-wise minima when
either is a direct, non-positive reference), margin and gap are the sums. With the override flag, margin,
solref, solreffriction, solimp and friction are the <option>'s o_ values (o_solref for both references). Friction is at least mjMINMU.
"""

from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from rigidsim import model as M

MINVAL = 1e-15
MINMU = 1e-5  # mjMINMU: the least friction coefficient a contact carries

# collider ids of PAIR_COLLIDER; the driver dispatches on them. NONE: the pair has no collider built yet.
COLLIDERS = ("none", "plane_sphere", "plane_capsule", "plane_cylinder", "plane_box", "sphere_sphere",
             "sphere_capsule", "sphere_cylinder", "sphere_box", "capsule_capsule", "capsule_box", "box_box", "plane_ellipsoid", "convex")
COLLIDERS += ("hfield",)  # height field against a convex geom (GJK/EPA per prism)
COLLIDERS += ("plane_mesh",)  # plane against a mesh (collision.mesh)
COLLIDERS += ("convex_multi",)  # GJK/EPA with MuJoCo 4.0.0's multi-contact (collision.multicontact)
COLLIDERS += ("mesh",)  # a mesh against a convex geom or mesh through GJK/EPA, one contact (collision.mesh support)
COLLIDERS += ("mesh_multi",)  # the same with MuJoCo 4.0.0's multi-contact (a mesh against a capsule, cylinder, box, mesh)
COLLIDERS += ("hfield_mesh",)  # height field against a mesh (GJK/EPA per prism with the mesh support)
COLLIDER_ID = {name: k for k, name in enumerate(COLLIDERS)}

_P, _S, _C, _E, _Y, _B = M.GEOM_PLANE, M.GEOM_SPHERE, M.GEOM_CAPSULE, M.GEOM_ELLIPSOID, M.GEOM_CYLINDER, M.GEOM_BOX
# MuJoCo's collision function of each type pair (type1 <= type2) that is analytic (plane-ellipsoid is MuJoCo's
# plane-convex function, which for an ellipsoid is one support point)
_ANALYTIC = {
    (_P, _S): "plane_sphere", (_P, _C): "plane_capsule", (_P, _E): "plane_ellipsoid", (_P, _Y): "plane_cylinder", (_P, _B): "plane_box",
    (_S, _S): "sphere_sphere", (_S, _C): "sphere_capsule", (_S, _Y): "sphere_cylinder", (_S, _B): "sphere_box",
    (_C, _C): "capsule_capsule", (_C, _B): "capsule_box", (_B, _B): "box_box",
}
TYPE_NAMES = {M.GEOM_PLANE: "plane", M.GEOM_HFIELD: "hfield", M.GEOM_SPHERE: "sphere", M.GEOM_CAPSULE: "capsule",
              M.GEOM_ELLIPSOID: "ellipsoid", M.GEOM_CYLINDER: "cylinder", M.GEOM_BOX: "box", M.GEOM_MESH: "mesh",
              M.GEOM_SDF: "sdf"}

# contacts a collider returns at most (mj_maxContact for the analytic pairs)
MAX_CONTACTS = {"plane_sphere": 1, "plane_capsule": 2, "plane_cylinder": 4, "plane_box": 4, "sphere_sphere": 1,
                "sphere_capsule": 1, "sphere_cylinder": 1, "sphere_box": 1, "capsule_capsule": 2, "capsule_box": 4,
                "box_box": 8, "plane_ellipsoid": 1, "convex": 1}
MAX_CONTACTS["hfield"] = 50  # mjMAXCONPAIR
MAX_CONTACTS["plane_mesh"] = 4  # MuJoCo 4.0.0 (3.x: 3): the support vertex and up to 3 polygon corners
MAX_CONTACTS["convex_multi"] = 4  # MuJoCo 4.0.0: 4 (2 with a capsule)
MAX_CONTACTS["mesh"] = 1
MAX_CONTACTS["mesh_multi"] = 4  # as convex_multi: 4 (2 with a capsule)
MAX_CONTACTS["hfield_mesh"] = 50  # mjMAXCONPAIR, one contact per prism

# colliders that exist in the engine (the driver dispatches to them); the others are refused as unsupported
BUILT = {"plane_sphere", "plane_capsule", "plane_cylinder", "plane_box", "sphere_sphere", "sphere_capsule",
         "sphere_cylinder", "sphere_box", "capsule_capsule", "capsule_box", "box_box", "plane_ellipsoid", "convex"}
BUILT |= {"hfield"}
BUILT |= {"plane_mesh"}
BUILT |= {"convex_multi"}  # GJK/EPA and MuJoCo 4.0.0's multi-contact (collision.multicontact)
BUILT |= {"mesh", "mesh_multi"}  # GJK/EPA with the mesh support, one contact or the multi-contact
BUILT |= {"hfield_mesh"}  # the height-field collider with the mesh support


def collider_of(type1: int, type2: int, multiccd: bool = True) -> str:
    """MuJoCo's collider for two geom types, by name: the analytic ones; 'convex' (native GJK/EPA, one contact:
    a sphere or an ellipsoid is involved, or multiccd is off); 'convex_multi' (the same with MuJoCo 4.0.0's
    extra contacts from the touching faces and edges, collision.multicontact); 'plane_mesh'; 'mesh' (a mesh
    against a sphere, capsule, ellipsoid, cylinder, box or mesh through GJK/EPA, one contact: a sphere or an
    ellipsoid is involved, or multiccd is off) and 'mesh_multi' (the other mesh pairs, with multi-contact);
    'hfield' (a height field against a sphere, capsule, ellipsoid, cylinder or box), 'hfield_mesh' (against a
    mesh: the same prisms with the mesh support), 'hfield_sdf' (not built), 'sdf'."""
    t1, t2 = min(type1, type2), max(type1, type2)
    if (t1, t2) in _ANALYTIC:
        return _ANALYTIC[(t1, t2)]
    if t1 == M.GEOM_HFIELD or t2 == M.GEOM_HFIELD:  # 'hfield': against a primitive; 'hfield_mesh'
        return "hfield" if t2 in (_S, _C, _E, _Y, _B) else f"hfield_{TYPE_NAMES[t2]}"
    if t1 == M.GEOM_SDF or t2 == M.GEOM_SDF:
        return "sdf"
    one = t1 in (M.GEOM_SPHERE, M.GEOM_ELLIPSOID) or t2 in (M.GEOM_SPHERE, M.GEOM_ELLIPSOID) or not multiccd
    if t2 == M.GEOM_MESH:
        if t1 == M.GEOM_PLANE:
            return "plane_mesh"
        return "mesh" if one else "mesh_multi"
    return "convex" if one else "convex_multi"


def _mix(model: M.Model, g1: int, g2: int):
    """mj_contactParam for two geoms: (condim, friction[5], solref[2], solimp[5])."""
    p1, p2 = int(model.geom_priority[g1]), int(model.geom_priority[g2])
    if p1 != p2:
        g = g1 if p1 > p2 else g2
        condim = int(model.geom_condim[g])
        solref = np.array(model.geom_solref[g], float)
        solimp = np.array(model.geom_solimp[g], float)
        fri = np.array(model.geom_friction[g], float)
    else:
        condim = max(int(model.geom_condim[g1]), int(model.geom_condim[g2]))
        s1, s2 = float(model.geom_solmix[g1]), float(model.geom_solmix[g2])
        if s1 >= MINVAL and s2 >= MINVAL:
            mix = s1 / (s1 + s2)
        elif s1 < MINVAL and s2 < MINVAL:
            mix = 0.5
        elif s1 < MINVAL:
            mix = 0.0
        else:
            mix = 1.0
        r1, r2 = np.array(model.geom_solref[g1], float), np.array(model.geom_solref[g2], float)
        solref = mix * r1 + (1 - mix) * r2 if (r1[0] > 0 and r2[0] > 0) else np.minimum(r1, r2)
        solimp = mix * np.array(model.geom_solimp[g1], float) + (1 - mix) * np.array(model.geom_solimp[g2], float)
        fri = np.maximum(np.array(model.geom_friction[g1], float), np.array(model.geom_friction[g2], float))
    friction = np.array([fri[0], fri[0], fri[1], fri[2], fri[2]])
    return condim, friction, solref, solimp


def pair_table(model: M.Model, pairs: np.ndarray, explicit: np.ndarray) -> Dict[str, np.ndarray]:
    """For the candidate pairs [n, 2] (from `collision_pairs`) and their explicit flags: 'geom' [n, 2] in
    MuJoCo's collider order, 'collider' [n] (names), 'maxcon' [n], 'dim' [n], 'margin', 'gap' [n],
    'friction' [n, 5], 'solref', 'solreffriction' [n, 2], 'solimp' [n, 5], 'explicit' [n] (bool)."""
    n = len(pairs)
    out = {"geom": np.zeros((n, 2), np.int32), "collider": np.empty(n, object), "maxcon": np.zeros(n, np.int64),
           "dim": np.zeros(n, np.int32), "margin": np.zeros(n), "gap": np.zeros(n), "friction": np.zeros((n, 5)),
           "solref": np.zeros((n, 2)), "solreffriction": np.zeros((n, 2)), "solimp": np.zeros((n, 5)),
           "explicit": np.asarray(explicit, bool).reshape(n)}
    gtype = np.asarray(model.geom_type)
    explicit_rows: Dict[Tuple[int, int], int] = {}
    for k in range(model.npair):
        a, b = int(model.pair_geom1[k]), int(model.pair_geom2[k])
        explicit_rows.setdefault((min(a, b), max(a, b)), k)
    for r, (a, b) in enumerate(np.asarray(pairs).tolist()):
        ip = explicit_rows.get((a, b)) if explicit[r] else None
        if ip is not None:  # the <pair>'s own order, then the lower type first
            a, b = int(model.pair_geom1[ip]), int(model.pair_geom2[ip])
        if gtype[a] > gtype[b]:
            a, b = b, a
        out["geom"][r] = (a, b)
        name = collider_of(int(gtype[a]), int(gtype[b]), not (model.opt.disableflags & M.DSBL_MULTICCD))
        out["collider"][r] = name
        out["maxcon"][r] = MAX_CONTACTS.get(name, 0)
        if ip is not None:
            out["dim"][r] = model.pair_dim[ip]
            out["margin"][r] = model.pair_margin[ip]
            out["gap"][r] = model.pair_gap[ip]
            out["friction"][r] = model.pair_friction[ip]
            out["solref"][r] = model.pair_solref[ip]
            out["solimp"][r] = model.pair_solimp[ip]
            srf = np.asarray(model.pair_solreffriction[ip], float)
            out["solreffriction"][r] = srf if (srf[0] or srf[1]) else 0.0
        else:
            out["dim"][r], out["friction"][r], out["solref"][r], out["solimp"][r] = _mix(model, a, b)
            out["margin"][r] = float(model.geom_margin[a]) + float(model.geom_margin[b])
            out["gap"][r] = float(model.geom_gap[a]) + float(model.geom_gap[b])
    o = model.opt
    if o.enableflags & M.ENBL_OVERRIDE:  # <option><flag override="enable"/>: the o_ values for every contact
        out["margin"][:] = o.o_margin
        out["solref"][:] = o.o_solref
        out["solreffriction"][:] = o.o_solref  # MuJoCo assigns both references through the override
        out["solimp"][:] = o.o_solimp
        out["friction"][:] = o.o_friction
    out["friction"] = np.maximum(out["friction"], MINMU)
    return out


def unbuilt(model: M.Model, pairs: np.ndarray, explicit: np.ndarray) -> Dict[str, list]:
    """{'ellipsoid-box': [geom names], ...}: the candidate pairs whose collider is not built yet, by kind."""
    tab = pair_table(model, pairs, explicit)
    gtype = np.asarray(model.geom_type)
    names = model.names.get("geom", [])
    out: Dict[str, list] = {}
    for (a, b), col in zip(tab["geom"].tolist(), tab["collider"]):
        if col not in BUILT:
            kind = f"{TYPE_NAMES[int(gtype[a])]}-{TYPE_NAMES[int(gtype[b])]}"
            label = "/".join((names[g] if g < len(names) and names[g] else f"#{g}") for g in (a, b))
            out.setdefault(kind, []).append(label)
    return out


SAP_BIT = 1  # bit 0 of a collider mask (collider 0 is "none"): sweep-and-prune is compiled in
MIDPHASE_BIT = 1 << 31  # the top bit of a collider mask: MuJoCo's midphase box test is compiled in
assert len(COLLIDERS) < 31


def kinds_of(collider_ids) -> int:
    """The collider ids (nonzero) a pair table uses as a bit mask (bit k: collider k): the collision kernel's
    compile-time `kinds` (an int, so the kernel cache can key on it)."""
    mask = 0
    for c in collider_ids:
        if int(c) != 0:
            mask |= 1 << int(c)
    return mask


# ----------------------------------------------------------------------------- distance sensors (mj_geomDistance)


def _distance_pairs(model: M.Model, i: int):
    """The geom pairs of distance sensor i, in MuJoCo's order (its first side's geoms, then the second's)."""
    def geoms(t, o):
        return range(int(model.body_geomadr[o]), int(model.body_geomadr[o] + model.body_geomnum[o])) \
            if t == M.OBJ_BODY else (int(o),)
    return [(g1, g2) for g1 in geoms(model.sensor_objtype[i], model.sensor_objid[i])
            for g2 in geoms(model.sensor_reftype[i], model.sensor_refid[i])]


# distance, normal and fromto sensors (mjtSensor)
DISTANCE_SENSORS = (M.SENS_GEOMDIST, M.SENS_GEOMNORMAL, M.SENS_GEOMFROMTO)
# the distance sensors' GJK distance (mj_geomDistanceCCD), and with it the mesh support: their KIND_SHIFT bits
GJK_DISTANCE, GJK_MESH = COLLIDER_ID["convex"], COLLIDER_ID["mesh"]
_GJK_TYPES = (M.GEOM_SPHERE, M.GEOM_CAPSULE, M.GEOM_ELLIPSOID, M.GEOM_CYLINDER, M.GEOM_BOX, M.GEOM_MESH)


def distance_colliders(model: M.Model, i: int):
    """What distance sensor i's geom pairs are measured with: the analytic colliders (mj_geomDistance calls
    them with the cutoff as margin; two planes have none), GJK_DISTANCE for the pairs of MuJoCo's convex and
    box-box colliders (mj_geomDistanceCCD: GJK and EPA with the cutoff as GJK's bound), GJK_MESH besides when
    one of those is a mesh. None when a pair needs what the engine does not compute: a plane against a mesh,
    or GJK pairs with MuJoCo's native CCD off (libccd)."""
    out = set()
    for g1, g2 in _distance_pairs(model, i):
        t = tuple(sorted((int(model.geom_type[g1]), int(model.geom_type[g2]))))
        if t == (M.GEOM_PLANE, M.GEOM_PLANE):
            continue
        name = _ANALYTIC.get(t)
        if name is not None and name != "box_box":
            out.add(COLLIDER_ID[name])
        elif t[0] in _GJK_TYPES and not int(model.opt.disableflags) & M.DSBL_NATIVECCD:
            out.add(GJK_DISTANCE)
            if t[1] == M.GEOM_MESH:
                out.add(GJK_MESH)
        else:
            return None
    return out


def distance_gjk(model: M.Model) -> bool:
    """Whether a distance sensor of `model` measures a pair by GJK (it needs the GJK/EPA scratch rows)."""
    return any(GJK_DISTANCE in (distance_colliders(model, i) or ()) for i in range(model.nsensor)
               if int(model.sensor_type[i]) in DISTANCE_SENSORS)
