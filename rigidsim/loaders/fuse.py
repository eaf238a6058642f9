"""``<compiler fusestatic="true">``: static bodies merged into their parents, as MuJoCo 4.0 does.

Runs after every body is compiled (geoms placed, inertias computed) and
before the tree arrays are laid out. A body is fused when it has no joints,
is not a mocap body, and its name is not referenced by another element
(exclude, connect/weld equality, body transmission, a body/xbody sensor
object or reference, a subtree sensor). Bodies are visited in id order;
fusing one:

- moves its geoms and sites to the end of its parent's lists, their frames
  re-expressed in the parent's frame;
- puts its child bodies, re-expressed likewise, in its place among the
  parent's children (so a chain of static bodies collapses into the nearest
  moving ancestor, or the world, and the depth-first body order is kept);
- adds its mass and inertia to the parent's (centre of mass, parallel-axis
  terms, new principal axes), unless the parent is the world or it has no
  mass (below 1e-15);
- drops its name; the parent's contype/conaffinity/margin are recomputed.

With ``inertiafromgeom="true"`` a parent that absorbed a body takes its
inertia from all its geoms afterwards (so a fused body's explicit inertial
counts only when the parent ends up with no geom to infer from), as MuJoCo
4.0 does (found by comparing with it; the merge above is what the other
modes show). A named
body carrying the site of a force or torque sensor is kept.

Then ids are reassigned in the remaining order: parents, children, the
geoms' and sites' body ids, and weld ids (own id for a body with joints or
mocap, else the parent's).
"""

from __future__ import annotations

from rigidsim.loaders import spatial as sp

MINVAL = 1e-15

_BODY_TYPES = ("body", "xbody")


def referenced_bodies(sc) -> set:
    """Names of bodies that other elements refer to: MuJoCo keeps those bodies."""
    names = set()
    for e in sc.excludes:
        names.update((e.body1, e.body2))
    for q in sc.equalities:
        if q.tag in ("connect", "weld") and q.objtype == "body":
            names.update((q.name1, q.name2))
    for a in sc.actuators:
        if a.trn == "body":
            names.add(a.target)
    for s in sc.sensors:
        at = s.attrs
        if "body" in at:
            names.add(at["body"])
        if at.get("objtype") in _BODY_TYPES and "objname" in at:
            names.add(at["objname"])
        if at.get("reftype") in _BODY_TYPES and "refname" in at:
            names.add(at["refname"])
    names.discard(None)
    return names


def _ft_sites(sc) -> set:
    return {s.attrs.get("site") for s in sc.sensors if s.tag in ("force", "torque")} - {None}


def _changeframe(pos, quat, bpos, bquat):
    return sp.frameaccum(bpos, bquat, pos, quat)


def _merge_inertia(cp, par, body):
    ipos_b, iquat_b = _changeframe(body.ipos, body.iquat, body.pos, body.quat)
    mass = [par.mass, body.mass]
    inertia = [list(par.inertia), list(body.inertia)]
    ipos = [list(par.ipos), ipos_b]
    iquat = [list(par.iquat), iquat_b]
    tot = 0.0
    com = [0.0, 0.0, 0.0]
    for j in range(2):
        tot += mass[j]
        for k in range(3):
            com[k] += mass[j] * ipos[j][k]
    if tot < MINVAL:
        par.mass, par.inertia, par.ipos, par.iquat = 0.0, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
        return
    com = [com[0] / tot, com[1] / tot, com[2] / tot]
    toti = [0.0] * 6
    for j in range(2):
        d = [ipos[j][0] - com[0], ipos[j][1] - com[1], ipos[j][2] - com[2]]
        a = sp.global_inertia(inertia[j], iquat[j])
        b = sp.offcenter(mass[j], d)
        toti = [toti[k] + (a[k] + b[k]) for k in range(6)]
    val, q = sp.full_inertia(toti)
    if val is None:
        cp.fail(body.el, "error 'inertia must have positive eigenvalues' in fusing static body inertias")
    par.mass, par.ipos, par.inertia, par.iquat = tot, com, val, q


def fuse_static(cp) -> None:
    sc = cp.sc
    if sc.skins:
        cp.fail(sc.skins[0], "<skin> together with compiler fusestatic is not supported by rigidsim (the skin's "
                             "bones would decide which bodies stay); remove one of them")
    bodies = list(sc.bodies)
    keep = referenced_bodies(sc)
    ft_sites = _ft_sites(sc)
    absorbed = []
    # work on object references; indices are rebuilt at the end
    parent = {id(b): bodies[b.parent] for b in bodies[1:]}
    kids = {id(b): [bodies[c] for c in b.children] for b in bodies}
    i = 1
    while i < len(bodies):
        body = bodies[i]
        if body.joints or body.mocap or (body.name and (body.name in keep or
                                                        any(s.name in ft_sites for s in body.sites if s.name))):
            i += 1
            continue
        par = parent[id(body)]
        if par is not bodies[0] and all(p is not par for p in absorbed):
            absorbed.append(par)
        if par is not bodies[0] and body.mass >= MINVAL:
            _merge_inertia(cp, par, body)
        children = kids[id(body)]
        for c in children:
            c.pos, c.quat = _changeframe(c.pos, c.quat, body.pos, body.quat)
            parent[id(c)] = par
        siblings = kids[id(par)]
        k = next(n for n, x in enumerate(siblings) if x is body)
        siblings[k:k + 1] = children
        for g in body.geoms:
            g.pos, g.quat = _changeframe(g.pos, g.quat, body.pos, body.quat)
            par.geoms.append(g)
        for s in body.sites:
            s.pos, s.quat = _changeframe(s.pos, s.quat, body.pos, body.quat)
            par.sites.append(s)
        body.geoms, body.sites = [], []
        par.contype = par.conaffinity = 0
        par.margin = 0.0
        for g in par.geoms:
            par.contype |= g.spec["contype"]
            par.conaffinity |= g.spec["conaffinity"]
            par.margin = max(par.margin, g.spec["margin"])
        del bodies[i]
    index = {id(b): n for n, b in enumerate(bodies)}
    for n, b in enumerate(bodies):
        b.children = [index[id(c)] for c in kids[id(b)]]
        for g in b.geoms:
            g.body = n
        for s in b.sites:
            s.body = n
        if n == 0:
            continue
        b.parent = index[id(parent[id(b)])]
        b.weldid = n if (b.joints or b.mocap) else bodies[b.parent].weldid
    sc.bodies = bodies
    if cp.c["inertiafromgeom"] == 1:
        for b in absorbed:
            cp.inertia_from_geoms(b)
