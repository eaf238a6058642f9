"""Lay compiled elements out into the `Model` arrays (MuJoCo's CopyTree and friends)."""

from __future__ import annotations


import numpy as np

from rigidsim.errors import InputError
from rigidsim import model as M
from rigidsim.loaders import mesh as meshlib
from rigidsim.loaders import setconst
from rigidsim.loaders import spatial as sp
from rigidsim.loaders.fuse import fuse_static
from rigidsim.loaders.mjcf_defaults import where as _where
from rigidsim.loaders.sensors import SENSORS, write_sensors

_DISABLE = ("constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper", "gravity",
            "clampctrl", "warmstart", "filterparent", "actuation", "refsafe", "sensor", "midphase",
            "eulerdamp", "autoreset", "nativeccd", "island", "multiccd")
_ENABLE = ("override", "energy", "fwdinv", "invdiscrete", "sleep", "diagexact", "ipc", "speculative")

def fail(cp, el, msg):
    raise InputError(msg, where=_where(el, cp.fn))


def assemble(cp) -> M.Model:
    sc = cp.sc
    bodies = sc.bodies
    # assets
    hull = _meshes_needing_hull(sc)
    cp.meshes = [meshlib.compile_mesh(r, sc, cp.c, needhull=r.name in hull) for r in sc.meshes]
    cp.mesh_ids = cp.index(sc.meshes, "mesh")
    cp.hfields = [meshlib.compile_hfield(r, sc, cp.c) for r in sc.hfields]
    cp.hfield_ids = cp.index(sc.hfields, "hfield")
    if cp.c["discardvisual"]:
        _discard_visual(cp)
    # bodies: compile in id order
    bodies[0].weldid = 0
    for i, b in enumerate(bodies):
        cp.compile_body(b, i)
    if cp.c["fusestatic"]:
        fuse_static(cp)
        bodies = sc.bodies
    nbody = len(bodies)
    joints = [j for b in bodies for j in b.joints]
    geoms = [g for b in bodies for g in b.geoms]
    sites = [s for b in bodies for s in b.sites]
    cp.body_ids = cp.index(bodies, "body")
    cp.jnt_ids = cp.index(joints, "joint")
    cp.geom_ids = cp.index(geoms, "geom")
    cp.site_ids = cp.index(sites, "site")
    cp.joints, cp.geoms, cp.sites = joints, geoms, sites
    nq = sum(M.JNT_NQ[j.type] for j in joints)
    nv = sum(M.JNT_NV[j.type] for j in joints)
    nmocap = sum(1 for b in bodies if b.mocap)
    nmeshvert = sum(len(m.vert) for m in cp.meshes)
    nmeshface = sum(len(m.face) for m in cp.meshes)
    nmeshgraph = sum(len(m.graph) for m in cp.meshes if m.graph is not None)
    nmeshpoly = sum(len(m.poly) for m in cp.meshes)
    nmeshpolyvert = sum(len(p) for m in cp.meshes for p in m.poly)
    nhdata = sum(h.nrow * h.ncol for h in cp.hfields)
    tendons, wraps = _tendons(cp)
    nwrap = len(wraps)
    sizes = dict(nq=nq, nv=nv, nbody=nbody, njnt=len(joints), ngeom=len(geoms), nsite=len(sites),
                 nmesh=len(cp.meshes), nmeshvert=nmeshvert, nmeshface=nmeshface, nmeshgraph=nmeshgraph,
                 nmeshpoly=nmeshpoly, nmeshpolyvert=nmeshpolyvert, nmeshpolymap=nmeshpolyvert,
                 npolygonmax=max((len(p) for m in cp.meshes for p in m.poly), default=0),
                 nhfield=len(cp.hfields), nmat=len(getattr(sc, "materials", [])),
                 nhfielddata=nhdata, npair=len(sc.pairs), nexclude=len(sc.excludes), neq=len(sc.equalities),
                 ntendon=len(tendons), nwrap=nwrap, nu=len(sc.actuators), nkey=len(sc.keys), nmocap=nmocap)
    # count activations
    na = sum(1 for a in sc.actuators if a.spec["dyntype"] != M.DYN_NONE)
    sizes["na"] = na
    sens_dims = [s.dim or SENSORS[s.tag][4] for s in sc.sensors]
    sizes["nsensor"] = len(sc.sensors)
    sizes["nsensordata"] = sum(sens_dims)
    # each sensor's history buffer: its last compute time, the cursor, nsample times and nsample values
    sizes["nhistory"] = sum(2 + s.history[0] * (1 + d) for s, d in zip(sc.sensors, sens_dims) if s.history[0] > 0)
    m = M.Model.empty(**sizes)
    A = m.arrays
    _tree(cp, m, bodies, joints)
    _geoms_sites(cp, m, bodies, geoms, sites)
    _assets(cp, m)
    _pairs(cp, m)
    _equalities(cp, m)
    _write_tendons(cp, m, tendons, wraps)
    _actuators(cp, m)
    write_sensors(cp, m)
    _options(cp, m)
    m.names["body"] = [b.name for b in bodies]
    m.names["body"][0] = "world"
    m.names["jnt"] = [j.name for j in joints]
    m.names["geom"] = [g.name for g in geoms]
    m.names["site"] = [s.name for s in sites]
    m.names["mesh"] = [r.name for r in sc.meshes]
    m.names["hfield"] = [r.name for r in sc.hfields]
    m.names["eq"] = [r.name for r in sc.equalities]
    m.names["tendon"] = [t.name for t in tendons]
    m.names["actuator"] = [a.name for a in sc.actuators]
    m.names["sensor"] = [s.name for s in sc.sensors]
    m.names["key"] = [k.name for k in sc.keys]
    for kind in ("eq", "tendon", "actuator", "sensor", "key"):
        seen = set()
        recs = {"eq": sc.equalities, "tendon": tendons, "actuator": sc.actuators, "sensor": sc.sensors,
                "key": sc.keys}[kind]
        for r in recs:
            if r.name:
                if r.name in seen:
                    fail(cp, r.el, f"repeated {kind} name '{r.name}'")
                seen.add(r.name)
    # settotalmass
    stm = cp.c["settotalmass"]
    if stm > 0:
        tot = float(A["body_mass"][1:].sum())
        if tot > 0:
            scale = stm / tot
            A["body_mass"] *= scale
            A["body_inertia"] *= scale
    setconst.set_constants(cp, m)
    _keys(cp, m)
    return m


def _meshes_needing_hull(sc):
    """Names of the meshes MuJoCo builds a convex-hull graph for: used by a mesh (or SDF) geom that
    can collide (contype or conaffinity set, or named in a <pair>); convex inertia and meshes without
    faces get one in the mesh compiler."""
    paired = {p.geom1 for p in sc.pairs} | {p.geom2 for p in sc.pairs}
    return {g.spec["mesh"] for b in sc.bodies for g in b.geoms
            if g.spec.get("mesh") and g.spec.get("type") in (M.GEOM_MESH, M.GEOM_SDF)
            and (g.spec["contype"] or g.spec["conaffinity"] or (g.name and g.name in paired))}


def _discard_visual(cp):
    """Drop geoms that cannot collide (contype = conaffinity = 0) unless referenced, as MuJoCo does."""
    sc = cp.sc
    used = {p.geom1 for p in sc.pairs} | {p.geom2 for p in sc.pairs}
    for t in sc.tendons:
        used |= {w.name for w in t.path if w.kind == "geom"}
    for b in sc.bodies:
        b.geoms = [g for g in b.geoms
                   if g.spec["contype"] or g.spec["conaffinity"] or (g.name and g.name in used)]
    meshes_used = {g.spec["mesh"] for b in sc.bodies for g in b.geoms if g.spec["mesh"]}
    keep = [i for i, r in enumerate(sc.meshes) if r.name in meshes_used]
    sc.meshes = [sc.meshes[i] for i in keep]
    cp.meshes = [cp.meshes[i] for i in keep]
    cp.mesh_ids = cp.index(sc.meshes, "mesh")


def _tree(cp, m, bodies, joints):
    A = m.arrays
    jntadr = dofadr = qposadr = 0
    mocapid = 0
    lastdof = {}
    gid = 0
    for i, b in enumerate(bodies):
        b.id = i
        A["body_parentid"][i] = b.parent if i > 0 else 0
        A["body_weldid"][i] = b.weldid
        if b.mocap:
            A["body_mocapid"][i] = mocapid
            mocapid += 1
        else:
            A["body_mocapid"][i] = -1
        A["body_jntnum"][i] = len(b.joints)
        A["body_jntadr"][i] = jntadr if b.joints else -1
        A["body_dofnum"][i] = b.dofnum if i > 0 else 0
        A["body_dofadr"][i] = dofadr if (i > 0 and b.dofnum) else -1
        A["body_geomnum"][i] = len(b.geoms)
        A["body_geomadr"][i] = gid if b.geoms else -1
        gid += len(b.geoms)
        A["body_pos"][i] = b.pos
        A["body_quat"][i] = b.quat
        A["body_ipos"][i] = b.ipos if i > 0 else [0, 0, 0]
        A["body_iquat"][i] = b.iquat if i > 0 else [1, 0, 0, 0]
        A["body_mass"][i] = b.mass if i > 0 else 0.0
        A["body_inertia"][i] = b.inertia if i > 0 else [0, 0, 0]
        A["body_gravcomp"][i] = b.gravcomp
        A["body_contype"][i] = b.contype
        A["body_conaffinity"][i] = b.conaffinity
        A["body_margin"][i] = b.margin
        nfree = sum(1 for j in b.joints if j.type == M.JNT_FREE)
        if nfree > 1 or (nfree == 1 and len(b.joints) > 1):
            fail(cp, b.el, "a free joint can only appear by itself in a body")
        if nfree and i > 0 and b.parent != 0:
            fail(cp, b.el, "a free joint can only be used in a top-level body (child of the world)")
        A["body_rootid"][i] = i if (i == 0 or b.parent == 0) else A["body_rootid"][b.parent]
        lastdof[i] = lastdof[b.parent] if i > 0 else -1
        ipos = A["body_ipos"][i]
        iquat = A["body_iquat"][i]
        sf = sp.sameframe(ipos, iquat)
        A["body_sameframe"][i] = sf
        par = A["body_parentid"][i]
        simple = sf == 1 and (A["body_rootid"][i] == i or (A["body_parentid"][par] == 0 and
                                                            A["body_dofnum"][par] == 0))
        A["body_simple"][i] = 1 if simple else 0
        if i > 0 and par > 0:
            A["body_simple"][par] = 0
        rotfound = False
        for j in b.joints:
            jid = jntadr
            j.id = jid
            j.qposadr, j.dofadr, j.body = qposadr, dofadr, i
            A["jnt_type"][jid] = j.type
            A["jnt_group"][jid] = j.spec["group"]
            A["jnt_limited"][jid] = j.limited
            A["jnt_actfrclimited"][jid] = j.actfrclimited
            A["jnt_actgravcomp"][jid] = j.spec["actuatorgravcomp"]
            A["jnt_qposadr"][jid] = qposadr
            A["jnt_dofadr"][jid] = dofadr
            A["jnt_bodyid"][jid] = i
            A["jnt_pos"][jid] = j.pos
            A["jnt_axis"][jid] = j.axis
            A["jnt_stiffness"][jid] = j.spec["stiffness"]
            A["jnt_range"][jid] = j.range
            A["jnt_actfrcrange"][jid] = j.actfrcrange
            A["jnt_solref"][jid] = j.spec["solreflimit"]
            A["jnt_solimp"][jid] = j.spec["solimplimit"]
            A["jnt_margin"][jid] = j.spec["margin"]
            aligned = sum(1 for x in j.axis if abs(x) > sp.EPS) == 1
            if rotfound or not sp.is_null_pos(j.pos) or (j.type in (M.JNT_HINGE, M.JNT_SLIDE) and not aligned):
                A["body_simple"][i] = 0
            if j.type in (M.JNT_BALL, M.JNT_HINGE):
                rotfound = True
            q0 = A["qpos0"]
            qs = A["qpos_spring"]
            if j.type == M.JNT_FREE:
                q0[qposadr:qposadr + 3] = b.pos
                q0[qposadr + 3:qposadr + 7] = b.quat
                qs[qposadr:qposadr + 7] = q0[qposadr:qposadr + 7]
            elif j.type == M.JNT_BALL:
                q0[qposadr:qposadr + 4] = [1, 0, 0, 0]
                qs[qposadr:qposadr + 4] = [1, 0, 0, 0]
            else:
                q0[qposadr] = j.ref
                qs[qposadr] = j.springref
            for _ in range(M.JNT_NV[j.type]):
                A["dof_bodyid"][dofadr] = i
                A["dof_jntid"][dofadr] = jid
                A["dof_solref"][dofadr] = j.spec["solreffriction"]
                A["dof_solimp"][dofadr] = j.spec["solimpfriction"]
                A["dof_frictionloss"][dofadr] = j.spec["frictionloss"]
                A["dof_armature"][dofadr] = j.spec["armature"]
                A["dof_damping"][dofadr] = j.spec["damping"]
                A["dof_parentid"][dofadr] = lastdof[i]
                lastdof[i] = dofadr
                dofadr += 1
            jntadr += 1
            qposadr += M.JNT_NQ[j.type]
        if A["body_simple"][i] and A["body_dofnum"][i]:
            A["body_simple"][i] = 2 if all(j.type == M.JNT_SLIDE for j in b.joints) else 1
    ntree = 0
    for d in range(m.nv):
        if A["dof_parentid"][d] == -1:
            ntree += 1
        A["dof_treeid"][d] = ntree - 1
    for i in range(m.nbody):
        w = A["body_weldid"][i]
        A["body_treeid"][i] = A["dof_treeid"][A["body_dofadr"][w]] if A["body_dofnum"][w] else -1
    nM = 0
    for d in range(m.nv):
        A["dof_Madr"][d] = nM
        j = d
        while j >= 0:
            nM += 1
            j = A["dof_parentid"][j]
    m.sizes["nM"] = nM
    # body_simple and dof_simplenum
    for d in range(m.nv - 1, -1, -1):
        b = A["dof_bodyid"][d]
        if A["body_simple"][b]:
            nxt = A["dof_simplenum"][d + 1] if d + 1 < m.nv else 0
            A["dof_simplenum"][d] = 1 + nxt
        else:
            A["dof_simplenum"][d] = 0


def _geoms_sites(cp, m, bodies, geoms, sites):
    A = m.arrays
    materials = getattr(cp.sc, "materials", [])
    mat_ids = {name: i for i, (name, _) in enumerate(materials) if name}
    for i, (_, rgba) in enumerate(materials):
        A["mat_rgba"][i] = rgba
    for gid, g in enumerate(geoms):
        b = bodies[g.body]
        s = g.spec
        g.id = gid
        A["geom_type"][gid] = s["type"]
        A["geom_contype"][gid] = s["contype"]
        A["geom_conaffinity"][gid] = s["conaffinity"]
        A["geom_condim"][gid] = s["condim"]
        A["geom_bodyid"][gid] = g.body
        A["geom_dataid"][gid] = g.dataid
        A["geom_rgba"][gid] = s.get("rgba", (0.5, 0.5, 0.5, 1.0))
        A["geom_matid"][gid] = mat_ids.get(s.get("material", ""), -1)
        A["geom_group"][gid] = s["group"]
        A["geom_priority"][gid] = s["priority"]
        A["geom_size"][gid] = g.size
        A["geom_aabb"][gid] = g.aabb
        A["geom_pos"][gid] = g.pos
        A["geom_quat"][gid] = g.quat
        A["geom_friction"][gid] = s["friction"]
        A["geom_solmix"][gid] = s["solmix"]
        A["geom_solref"][gid] = s["solref"]
        A["geom_solimp"][gid] = s["solimp"]
        A["geom_margin"][gid] = s["margin"]
        A["geom_gap"][gid] = s["gap"]
        A["geom_rbound"][gid] = g.rbound
        A["geom_sameframe"][gid] = sp.sameframe(g.pos, g.quat, b.ipos, b.iquat) if g.body > 0 else \
            sp.sameframe(g.pos, g.quat, [0, 0, 0], [1, 0, 0, 0])
    for sid, s in enumerate(sites):
        b = bodies[s.body]
        s.id = sid
        A["site_type"][sid] = s.spec["type"]
        A["site_bodyid"][sid] = s.body
        A["site_group"][sid] = s.spec["group"]
        A["site_size"][sid] = s.size
        A["site_pos"][sid] = s.pos
        A["site_quat"][sid] = s.quat
        A["site_sameframe"][sid] = sp.sameframe(s.pos, s.quat, b.ipos, b.iquat) if s.body > 0 else \
            sp.sameframe(s.pos, s.quat, [0, 0, 0], [1, 0, 0, 0])


def _assets(cp, m):
    A = m.arrays
    va = fa = ga = pa = pva = 0
    for i, r in enumerate(cp.meshes):
        if r.graph is None:
            A["mesh_graphadr"][i] = -1
        else:
            A["mesh_graphadr"][i] = ga
            A["mesh_graph"][ga:ga + len(r.graph)] = r.graph
            A["mesh_extrema"][i] = r.extrema
            ga += len(r.graph)
        # polygons: vertex lists back to back; per mesh vertex, the polygons (mesh-local ids, ascending)
        # holding it, back to back in vertex order: the map has one entry per polygon vertex, so a mesh's
        # map starts where its polygons' vertices do
        A["mesh_polyadr"][i] = pa
        A["mesh_polynum"][i] = len(r.poly)
        nv = len(r.vert)
        ma = pva
        for k, p in enumerate(r.poly):
            A["mesh_polyvertadr"][pa + k] = pva
            A["mesh_polyvertnum"][pa + k] = len(p)
            A["mesh_polyvert"][pva:pva + len(p)] = p
            pva += len(p)
        A["mesh_polymapadr"][va:va + nv] = ma
        if r.poly:
            A["mesh_polynormal"][pa:pa + len(r.poly)] = r.polynormal
            pv = np.concatenate([np.asarray(p, dtype=np.int64) for p in r.poly])
            pid = np.repeat(np.arange(len(r.poly)), [len(p) for p in r.poly])
            cnt = np.bincount(pv, minlength=nv)
            A["mesh_polymapnum"][va:va + nv] = cnt
            A["mesh_polymapadr"][va:va + nv] += np.concatenate([[0], np.cumsum(cnt)[:-1]])
            A["mesh_polymap"][ma:pva] = pid[np.argsort(pv, kind="stable")]
        pa += len(r.poly)
        A["mesh_vertadr"][i] = va
        A["mesh_vertnum"][i] = len(r.vert)
        A["mesh_faceadr"][i] = fa
        A["mesh_facenum"][i] = len(r.face)
        A["mesh_vert"][va:va + len(r.vert)] = r.vert
        A["mesh_face"][fa:fa + len(r.face)] = r.face
        A["mesh_pos"][i] = r.pos
        A["mesh_quat"][i] = r.quat
        A["mesh_scale"][i] = r.scale
        va += len(r.vert)
        fa += len(r.face)
    adr = 0
    for i, h in enumerate(cp.hfields):
        A["hfield_size"][i] = h.size
        A["hfield_nrow"][i] = h.nrow
        A["hfield_ncol"][i] = h.ncol
        A["hfield_adr"][i] = adr
        A["hfield_data"][adr:adr + h.nrow * h.ncol] = h.data
        adr += h.nrow * h.ncol


def _pairs(cp, m):
    A = m.arrays
    sc = cp.sc
    rows = []
    for p in sc.pairs:
        s = p.spec
        if s["condim"] not in (1, 3, 4, 6):
            fail(cp, p.el, f"invalid condim {s['condim']} in contact pair")
        g1 = cp.lookup(cp.geom_ids, p.geom1, "geom", p.el)
        g2 = cp.lookup(cp.geom_ids, p.geom2, "geom", p.el)
        b1, b2 = cp.geoms[g1].body, cp.geoms[g2].body
        if b1 > b2:
            g1, g2, b1, b2 = g2, g1, b2, b1
        rows.append(((b1 << 16) + b2, g1, g2, s))
    # MuJoCo orders pairs and excludes by body signature (stable)
    for i, (sig, g1, g2, s) in enumerate(sorted(rows, key=lambda r: r[0])):
        A["pair_dim"][i] = s["condim"]
        A["pair_geom1"][i] = g1
        A["pair_geom2"][i] = g2
        A["pair_signature"][i] = sig
        A["pair_solref"][i] = s["solref"]
        A["pair_solreffriction"][i] = s["solreffriction"]
        A["pair_solimp"][i] = s["solimp"]
        A["pair_margin"][i] = s["margin"]
        A["pair_gap"][i] = s["gap"]
        A["pair_friction"][i] = s["friction"]
    sigs = []
    for e in sc.excludes:
        b1 = _body_id(cp, e.body1, e.el)
        b2 = _body_id(cp, e.body2, e.el)
        if b1 > b2:
            b1, b2 = b2, b1
        sigs.append((b1 << 16) + b2)
    A["exclude_signature"][:] = sorted(sigs)


def _body_id(cp, name, el):
    return cp.body_id(name, el)


def _equalities(cp, m):
    A = m.arrays
    sc = cp.sc
    ten_ids = cp.tendon_ids
    for i, e in enumerate(sc.equalities):
        s = e.spec
        A["eq_active0"][i] = s["active"]
        A["eq_solref"][i] = s["solref"]
        A["eq_solimp"][i] = s["solimp"]
        data = np.zeros(12)
        data[1], data[10] = 1.0, 1.0  # MuJoCo's initial equality data (polycoef 0 1 0 0 0, torquescale 1)
        if e.tag in ("connect", "weld"):
            A["eq_type"][i] = M.EQ_CONNECT if e.tag == "connect" else M.EQ_WELD
            if e.objtype == "body":
                A["eq_objtype"][i] = M.OBJ_BODY
                o1 = _body_id(cp, e.name1, e.el)
                o2 = _body_id(cp, e.name2, e.el) if e.name2 else 0  # body2="" is the world, as absent
            else:
                A["eq_objtype"][i] = M.OBJ_SITE
                o1 = cp.lookup(cp.site_ids, e.name1, "site", e.el)
                o2 = cp.lookup(cp.site_ids, e.name2, "site", e.el)
            if e.objtype == "body" or e.el.get("anchor") is not None:
                data[0:3] = e.anchor
            if e.tag == "weld":
                if e.relpose is not None:
                    data[3:10] = e.relpose
                data[10] = e.torquescale
        elif e.tag == "joint":
            A["eq_type"][i] = M.EQ_JOINT
            A["eq_objtype"][i] = 0
            o1 = cp.lookup(cp.jnt_ids, e.name1, "joint", e.el)
            o2 = cp.lookup(cp.jnt_ids, e.name2, "joint", e.el) if e.name2 is not None else -1
            for o in (o1, o2):
                if o >= 0 and cp.joints[o].type not in (M.JNT_HINGE, M.JNT_SLIDE):
                    fail(cp, e.el, "only hinge and slide joints are allowed in a joint equality")
            data[0:5] = e.polycoef
        else:
            A["eq_type"][i] = M.EQ_TENDON
            A["eq_objtype"][i] = 0
            o1 = cp.lookup(ten_ids, e.name1, "tendon", e.el)
            o2 = cp.lookup(ten_ids, e.name2, "tendon", e.el) if e.name2 is not None else -1
            data[0:5] = e.polycoef
        if o1 == o2:
            fail(cp, e.el, f"element '{e.name1}' is repeated in equality constraint")
        A["eq_obj1id"][i] = o1
        A["eq_obj2id"][i] = o2
        A["eq_data"][i] = data


def _tendons(cp):
    sc = cp.sc
    cp.tendon_ids = cp.index(sc.tendons, "tendon")
    wraps = []
    for t in sc.tendons:
        if not t.path:
            fail(cp, t.el, f"tendon '{t.name}' has an empty path")
        t.adr = len(wraps)
        spatial = t.kind == "spatial"
        if spatial and len(t.path) < 2:
            fail(cp, t.el, "a spatial tendon path needs at least two objects")
        for k, w in enumerate(t.path):
            if w.kind == "joint":
                wraps.append((1, cp.lookup(cp.jnt_ids, w.name, "joint", w.el), w.prm))
            elif w.kind == "site":
                wraps.append((3, cp.lookup(cp.site_ids, w.name, "site", w.el), 0.0))
            elif w.kind == "pulley":
                if w.prm is None or w.prm < 0:
                    fail(cp, w.el, "pulley needs a non-negative 'divisor'")
                wraps.append((2, -1, w.prm))
            else:
                fail(cp, w.el, "tendon wrapping around geoms is not supported by rigidsim")
        t.num = len(t.path)
        s = t.spec
        lim = s["limited"]
        if lim == 2 and not cp.c["autolimits"] and (s["range"][0] or s["range"][1]):
            fail(cp, t.el, "tendon has 'range' but not 'limited'; set compiler autolimits='true'")
        t.is_limited = lim == 1 or (lim == 2 and s["range"][0] < s["range"][1])
        if t.is_limited and s["range"][0] >= s["range"][1]:
            fail(cp, t.el, "invalid limits in tendon")
    return sc.tendons, wraps


def _write_tendons(cp, m, tendons, wraps):
    A = m.arrays
    for i, t in enumerate(tendons):
        s = t.spec
        A["tendon_adr"][i] = t.adr
        A["tendon_num"][i] = t.num
        A["tendon_limited"][i] = t.is_limited
        A["tendon_solref_lim"][i] = s["solreflimit"]
        A["tendon_solimp_lim"][i] = s["solimplimit"]
        A["tendon_solref_fri"][i] = s["solreffriction"]
        A["tendon_solimp_fri"][i] = s["solimpfriction"]
        A["tendon_range"][i] = s["range"]
        A["tendon_margin"][i] = s["margin"]
        A["tendon_stiffness"][i] = s["stiffness"]
        A["tendon_damping"][i] = s["damping"]
        A["tendon_armature"][i] = s["armature"]
        A["tendon_frictionloss"][i] = s["frictionloss"]
        sl = list(s["springlength"])
        if t.el.get("springlength") is not None and len(t.el.get("springlength").split()) == 1:
            sl[1] = sl[0]
        if sl[0] > sl[1]:
            fail(cp, t.el, "invalid springlength in tendon")
        A["tendon_lengthspring"][i] = sl
    for k, (typ, obj, prm) in enumerate(wraps):
        A["wrap_type"][k] = typ
        A["wrap_objid"][k] = obj
        A["wrap_prm"][k] = prm


def _actuators(cp, m):
    A = m.arrays
    sc = cp.sc
    actadr = 0
    for i, a in enumerate(sc.actuators):
        s = a.spec
        trn = {"joint": M.TRN_JOINT, "jointinparent": M.TRN_JOINTINPARENT, "tendon": M.TRN_TENDON,
               "cranksite": M.TRN_SLIDERCRANK, "site": M.TRN_SITE, "body": M.TRN_BODY}[a.trn]
        A["actuator_trntype"][i] = trn
        id2 = -1
        if trn in (M.TRN_JOINT, M.TRN_JOINTINPARENT):
            id1 = cp.lookup(cp.jnt_ids, a.target, "joint", a.el, "actuator transmission")
        elif trn == M.TRN_TENDON:
            id1 = cp.lookup(cp.tendon_ids, a.target, "tendon", a.el, "actuator transmission")
        elif trn == M.TRN_SLIDERCRANK:
            id1 = cp.lookup(cp.site_ids, a.target, "site", a.el, "actuator transmission")
            id2 = cp.lookup(cp.site_ids, a.slidersite, "site", a.el, "actuator slidersite")
            if s["cranklength"] <= 0:
                fail(cp, a.el, "crank length must be positive in a slider-crank actuator")
        elif trn == M.TRN_SITE:
            id1 = cp.lookup(cp.site_ids, a.target, "site", a.el, "actuator transmission")
            if a.refsite is not None:
                id2 = cp.lookup(cp.site_ids, a.refsite, "site", a.el, "actuator refsite")
        else:
            id1 = _body_id(cp, a.target, a.el)
        A["actuator_trnid"][i] = [id1, id2]
        # inheritrange
        if (s["gaintype"] == M.GAIN_FIXED and s["biastype"] == M.BIAS_AFFINE and
                s["gainprm"][0] == -s["biasprm"][1] and s["inheritrange"] > 0):
            key = "ctrlrange" if s["dyntype"] in (M.DYN_NONE, M.DYN_FILTEREXACT) else "actrange"
            if trn == M.TRN_JOINT:
                j = cp.joints[id1]
                if j.type not in (M.JNT_HINGE, M.JNT_SLIDE):
                    fail(cp, a.el, "inheritrange can only be used with hinge and slide joints")
                rng = j.range
            elif trn == M.TRN_TENDON:
                rng = cp.sc.tendons[id1].spec["range"]
            else:
                fail(cp, a.el, "inheritrange can only be used with joint and tendon transmissions")
            if rng[0] == rng[1]:
                fail(cp, a.el, f"inheritrange used but target '{a.target}' has no range defined")
            mean, rad = 0.5 * (rng[1] + rng[0]), 0.5 * (rng[1] - rng[0]) * s["inheritrange"]
            s[key] = [mean - rad, mean + rad]
        for lk, rk, what in (("forcelimited", "forcerange", "force"), ("ctrllimited", "ctrlrange", "ctrl"),
                             ("actlimited", "actrange", "act")):
            if s[lk] == 2 and not cp.c["autolimits"] and (s[rk][0] or s[rk][1]):
                fail(cp, a.el, f"actuator has '{rk}' but not '{lk}'; set compiler autolimits='true', give "
                               f"{lk} explicitly, or remove {rk}")
        lim = {k: s[k] == 1 or (s[k] == 2 and s[r][0] < s[r][1])
               for k, r in (("forcelimited", "forcerange"), ("ctrllimited", "ctrlrange"),
                            ("actlimited", "actrange"))}
        for k, r, what in (("forcelimited", "forcerange", "force"), ("ctrllimited", "ctrlrange", "control"),
                           ("actlimited", "actrange", "act")):
            if lim[k] and s[r][0] >= s[r][1]:
                fail(cp, a.el, f"invalid {what} range for actuator")
        if lim["actlimited"] and s["dyntype"] == M.DYN_NONE:
            fail(cp, a.el, "actrange specified but dyntype is 'none' in actuator")
        if s["dyntype"] in (M.DYN_MUSCLE, M.DYN_USER) or s["gaintype"] in (M.GAIN_MUSCLE, M.GAIN_USER) or \
                s["biastype"] in (M.BIAS_MUSCLE, M.BIAS_USER):
            fail(cp, a.el, "muscle and user actuator dynamics/gain/bias are not supported by rigidsim")
        A["actuator_dyntype"][i] = s["dyntype"]
        A["actuator_gaintype"][i] = s["gaintype"]
        A["actuator_biastype"][i] = s["biastype"]
        nact = 1 if s["dyntype"] != M.DYN_NONE else 0
        A["actuator_actadr"][i] = actadr if nact else -1
        A["actuator_actnum"][i] = nact
        actadr += nact
        A["actuator_group"][i] = s["group"]
        A["actuator_ctrllimited"][i] = lim["ctrllimited"]
        A["actuator_forcelimited"][i] = lim["forcelimited"]
        A["actuator_actlimited"][i] = lim["actlimited"]
        A["actuator_actearly"][i] = s["actearly"]
        A["actuator_dynprm"][i] = s["dynprm"]
        A["actuator_gainprm"][i] = s["gainprm"]
        A["actuator_biasprm"][i] = s["biasprm"]
        A["actuator_ctrlrange"][i] = s["ctrlrange"]
        A["actuator_forcerange"][i] = s["forcerange"]
        A["actuator_actrange"][i] = s["actrange"]
        A["actuator_gear"][i] = s["gear"]
        A["actuator_cranklength"][i] = s["cranklength"]


def _options(cp, m):
    sc = cp.sc
    o = m.opt
    for k, v in sc.option.items():
        if isinstance(v, list):
            v = tuple(float(x) for x in v)
            cur = getattr(o, k)
            if len(v) < len(cur):
                v = v + tuple(cur[len(v):])
        setattr(o, k, v)
    dis, en = 0, 0
    for name, on in sc.flags.items():
        if name in _DISABLE:
            if not on:
                dis |= 1 << _DISABLE.index(name)
        elif name in _ENABLE:
            if on:
                en |= 1 << _ENABLE.index(name)
    o.disableflags, o.enableflags = dis, en
    o.explicit = frozenset(list(sc.option) + list(sc.flags))


def _keys(cp, m):
    A = m.arrays
    sc = cp.sc
    mocap_bodies = [b for b in sc.bodies if b.mocap]
    for i, k in enumerate(sc.keys):
        A["key_time"][i] = k.time if k.time is not None else 0.0
        for attr, field, n, dflt in (("qpos", "key_qpos", m.nq, A["qpos0"]), ("qvel", "key_qvel", m.nv, None),
                                     ("act", "key_act", m.na, None), ("ctrl", "key_ctrl", m.nu, None),
                                     ("mpos", "key_mpos", 3 * m.nmocap, None),
                                     ("mquat", "key_mquat", 4 * m.nmocap, None)):
            v = getattr(k, attr)
            if v is not None and len(v) > n:
                fail(cp, k.el, f"keyframe '{k.name}': {attr} has {len(v)} values, expected at most {n}")
            flat = A[field][i].reshape(-1)  # a view: writes land in the key's row
            if dflt is not None:
                flat[:] = dflt
            elif attr in ("mpos", "mquat") and mocap_bodies:
                flat[:] = np.asarray([b.pos if attr == "mpos" else b.quat for b in mocap_bodies], float).reshape(-1)
            if v is not None:
                # a shorter keyframe sets its first values and keeps the defaults after them, as MuJoCo 4.0
                # does; mocap poses are taken whole bodies at a time (a partial pose is left out)
                per = {"mpos": 3, "mquat": 4}.get(attr, 1)
                cut = len(v) // per * per
                flat[:cut] = np.asarray(v[:cut], dtype=float)
        part = getattr(k, "partial", None)
        if part:  # a keyframe of an attached model: its joints' and actuators' values over the defaults
            for j, r in enumerate(cp.joints):
                qa, da, t = A["jnt_qposadr"][j], A["jnt_dofadr"][j], A["jnt_type"][j]
                if id(r) in part["qpos"]:
                    A["key_qpos"][i, qa:qa + M.JNT_NQ[t]] = part["qpos"][id(r)]
                if id(r) in part["qvel"]:
                    A["key_qvel"][i, da:da + M.JNT_NV[t]] = part["qvel"][id(r)]
            for u, r in enumerate(sc.actuators):
                if id(r) in part["ctrl"]:
                    A["key_ctrl"][i, u] = part["ctrl"][id(r)]
        # quaternions in keyframes are normalized (identity when zero)
        for j in range(m.njnt):
            t, qa = A["jnt_type"][j], A["jnt_qposadr"][j]
            if t in (M.JNT_BALL, M.JNT_FREE):
                a = qa + (3 if t == M.JNT_FREE else 0)
                A["key_qpos"][i, a:a + 4] = _normalize4(A["key_qpos"][i, a:a + 4])
        for b in range(m.nmocap):
            A["key_mquat"][i, b] = _normalize4(A["key_mquat"][i, b])


def _normalize4(q):
    n = float(np.sqrt(np.sum(np.asarray(q) ** 2)))
    if n < 1e-15:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.asarray(q) / n
