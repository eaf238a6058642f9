"""MuJoCo's midphase, the part that depends on the model alone (numpy only, no Taichi): each body's
bounding-volume hierarchy, built as MuJoCo's compiler builds it (mjModel's body_bvhadr, body_bvhnum, bvh_child,
bvh_nodeid, bvh_depth, bvh_aabb for bodies), and, for each candidate pair the midphase takes, the node pairs
that its tree walk (mj_collideTree) tests before it reaches the pair's two geoms.

The tree of a body holds its geoms that can collide (contype or conaffinity set). A node's box is the
axis-aligned box, in the body's inertial frame, around the corners of its geoms' boxes (geom_aabb, in the
geom frames); a flat box is widened by mjEPS either side. A node of several geoms splits them at the median
of their centres along the box's longest edge (an edge longer by mjEPS or more wins), ties broken by geom
order; its children are numbered depth first, the lower half first.

The walk starts at the two roots and, at each step, goes down the tree whose node is not a leaf, or the
one whose node's box has the larger surface (x*y + y*z + z*x with MuJoCo's x = half-size minus centre, the
second body's tree on a tie; the first body is the lower-numbered). It stops at the first node pair whose
boxes are apart: the pair of geoms is tested only when every node pair on its path (`midphase_paths`) passed.
The tests themselves run in the kernel (`collision.broadphase`).
"""

from __future__ import annotations

import functools
from typing import Dict, List, Tuple

import numpy as np

from rigidsim import model as M
from rigidsim.loaders.spatial import rot_vec_quat

EPS = 1e-14  # mjEPS


def _node_box(elems, geom_pos, geom_quat, geom_aabb, ipos, qinv) -> List[float]:
    """The box (centre, half-sizes) in the inertial frame around the corners of the geoms `elems`' boxes."""
    big = np.finfo(np.float64).max
    lo, hi = [big, big, big], [-big, -big, -big]
    for g in elems:
        c, h = [float(x) for x in geom_aabb[g, :3]], [float(x) for x in geom_aabb[g, 3:]]
        aamm = [c[0] - h[0], c[1] - h[1], c[2] - h[2], c[0] + h[0], c[1] + h[1], c[2] + h[2]]
        pos = [float(x) for x in geom_pos[g]]
        quat = [float(x) for x in geom_quat[g]]
        for v in range(8):
            vert = [aamm[3] if v & 1 else aamm[0], aamm[4] if v & 2 else aamm[1], aamm[5] if v & 4 else aamm[2]]
            box = rot_vec_quat(vert, quat)
            box = [box[k] + (pos[k] - ipos[k]) for k in range(3)]
            vert = rot_vec_quat(box, qinv)
            lo = [min(lo[k], vert[k]) for k in range(3)]
            hi = [max(hi[k], vert[k]) for k in range(3)]
    for k in range(3):
        if abs(lo[k] - hi[k]) < EPS:
            lo[k] -= EPS
            hi[k] += EPS
    return [(hi[k] + lo[k]) / 2 for k in range(3)] + [(hi[k] - lo[k]) / 2 for k in range(3)]


def body_trees(model: M.Model) -> Dict[str, np.ndarray]:
    """The bodies' hierarchies as MuJoCo's mjModel holds them: body_bvhadr / body_bvhnum per body (-1 / 0 for a
    body without colliding geoms), and per node bvh_child [n, 2] (local indices, -1: none), bvh_nodeid (the
    geom of a leaf, else -1), bvh_depth and bvh_aabb [n, 6]."""
    nbody = model.nbody
    geom_pos, geom_quat = np.asarray(model.geom_pos), np.asarray(model.geom_quat)
    geom_aabb = np.asarray(model.geom_aabb).reshape(-1, 6)
    contype, conaff = np.asarray(model.geom_contype), np.asarray(model.geom_conaffinity)
    adr = np.full(nbody, -1, np.int32)
    num = np.zeros(nbody, np.int32)
    child: List[List[int]] = []
    nodeid: List[int] = []
    depth: List[int] = []
    aabb: List[List[float]] = []
    for b in range(nbody):
        first, n = int(model.body_geomadr[b]), int(model.body_geomnum[b])
        if n == 0:
            continue
        ipos = [float(x) for x in model.body_ipos[b]]
        iq = [float(x) for x in model.body_iquat[b]]
        qinv = [iq[0], -iq[1], -iq[2], -iq[3]]
        elems = [g for g in range(first, first + n) if contype[g] or conaff[g]]
        lpos = {g: rot_vec_quat([float(geom_pos[g, k]) - ipos[k] for k in range(3)], qinv) for g in elems}
        base = len(nodeid)

        def make(sub, lev):
            if not sub:
                return -1
            box = _node_box(sub, geom_pos, geom_quat, geom_aabb, ipos, qinv)
            index = len(nodeid) - base
            child.append([-1, -1])
            nodeid.append(-1)
            depth.append(lev)
            aabb.append(box)
            if len(sub) == 1:
                nodeid[base + index] = sub[0]
                return index
            edges = [2 * box[3], 2 * box[4], 2 * box[5]]  # as MuJoCo: the AAMM's extents
            axis = 0
            if edges[1] >= edges[0] + EPS:
                axis = 1
            if edges[2] >= edges[axis] + EPS:
                axis = 2

            def cmp(g1, g2):
                if abs(lpos[g1][axis] - lpos[g2][axis]) > EPS:
                    return -1 if lpos[g1][axis] < lpos[g2][axis] else 1
                return (g1 > g2) - (g1 < g2)

            ordered = sorted(sub, key=functools.cmp_to_key(cmp))
            mid = len(sub) // 2
            if mid > 0:
                child[base + index][0] = make(ordered[:mid], lev + 1)
            if mid != len(sub):
                child[base + index][1] = make(ordered[mid:], lev + 1)
            return index

        make(elems, 0)
        if len(nodeid) > base:
            adr[b], num[b] = base, len(nodeid) - base
    n = len(nodeid)
    return {"body_bvhadr": adr, "body_bvhnum": num, "bvh_child": np.array(child, np.int32).reshape(n, 2),
            "bvh_nodeid": np.array(nodeid, np.int32), "bvh_depth": np.array(depth, np.int32),
            "bvh_aabb": np.array(aabb, np.float64).reshape(n, 6)}


def _surface(trees: Dict[str, np.ndarray]) -> np.ndarray:
    """Per node, MuJoCo's 'surface' of its box in the walk: x*y + y*z + z*x with x = half-size - centre."""
    a = trees["bvh_aabb"]
    x, y, z = a[:, 3] - a[:, 0], a[:, 4] - a[:, 1], a[:, 5] - a[:, 2]
    return x * y + y * z + z * x


def _toward(node: int, leaf: int, parent: Dict[int, int]) -> int:
    """The child of `node` on the way down to `leaf` (local indices of one tree; `parent`: its nodes' parents)."""
    up = leaf
    while parent[up] != node:
        up = parent[up]
    return up


def midphase_paths(model: M.Model, trees: Dict[str, np.ndarray],
                   pairs: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each geom pair (rows of `pairs`, [n, 2]): its bodies in MuJoCo's order (lower id first) [n, 2] and
    the nodes its walk tests before the geoms' own leaves, as global node pairs [k, 2] with each pair's first
    row and count [n, 2]. A pair whose geom is in no tree gets no path (the caller keeps it off the midphase)."""
    surface = _surface(trees)
    child, nodeid = trees["bvh_child"], trees["bvh_nodeid"]
    adr_of, num_of = trees["body_bvhadr"], trees["body_bvhnum"]
    gbody = np.asarray(model.geom_bodyid)
    parents: Dict[int, Dict[int, int]] = {}
    leaf_of: Dict[int, int] = {}
    for b in np.flatnonzero(num_of > 0).tolist():
        a = int(adr_of[b])
        par = {}
        for k in range(int(num_of[b])):
            for c in child[a + k]:
                if c >= 0:
                    par[int(c)] = k
            if nodeid[a + k] >= 0:
                leaf_of[int(nodeid[a + k])] = k
        parents[b] = par
    bodies = np.zeros((len(pairs), 2), np.int32)
    span = np.zeros((len(pairs), 2), np.int32)
    nodes: List[Tuple[int, int]] = []
    for r, (ga, gb) in enumerate(np.asarray(pairs).tolist()):
        if gbody[ga] > gbody[gb]:
            ga, gb = gb, ga
        b1, b2 = int(gbody[ga]), int(gbody[gb])
        bodies[r] = (b1, b2)
        span[r, 0] = len(nodes)
        if ga not in leaf_of or gb not in leaf_of:
            continue
        a1, a2 = int(adr_of[b1]), int(adr_of[b2])
        l1, l2 = leaf_of[ga], leaf_of[gb]
        n1 = n2 = 0
        while (n1, n2) != (l1, l2):
            nodes.append((a1 + n1, a2 + n2))
            leaf1 = child[a1 + n1, 0] < 0 and child[a1 + n1, 1] < 0
            leaf2 = child[a2 + n2, 0] < 0 and child[a2 + n2, 1] < 0
            if not leaf1 and (leaf2 or surface[a1 + n1] > surface[a2 + n2]):
                n1 = _toward(n1, l1, parents[b1])
            else:
                n2 = _toward(n2, l2, parents[b2])
        span[r, 1] = len(nodes) - span[r, 0]
    return bodies, span, np.array(nodes, np.int32).reshape(-1, 2)


def midphase_tables(model: M.Model, tab: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """What the kernel's midphase reads, for the candidate pairs of `tab` (`collision.params.pair_table`):
    'span' [n, 2]: the first row and count of each pair's walk in 'nodes' [k, 2] (`midphase_paths`), count -1
    for the rows MuJoCo's midphase does not take (explicit pairs, two single-geom bodies, the midphase
    disabled); 'boxes' [ngeom + nbvh, 7]: the geoms' geom_aabb (rows 0 .. ngeom-1), then the trees' nodes'
    boxes, each with its body's margin in column 6 (halved o_margin under the override flag, so that two
    bodies' sum is MuJoCo's assigned margin); the walks' node ids count from row ngeom."""
    geom = np.asarray(tab["geom"]).reshape(-1, 2)
    n, ngeom = len(geom), model.ngeom
    trees = body_trees(model)
    on = np.zeros(n, bool)
    if n and not int(model.opt.disableflags) & M.DSBL_MIDPHASE:
        gbody = np.asarray(model.geom_bodyid)
        geomnum = np.asarray(model.body_geomnum)[gbody]
        on = ~np.asarray(tab["explicit"], bool) & ~((geomnum[geom[:, 0]] == 1) & (geomnum[geom[:, 1]] == 1))
    _, span, nodes = midphase_paths(model, trees, geom[on])
    full_span = np.zeros((n, 2), np.int32)
    full_span[:, 1] = -1
    full_span[on] = span
    nnode = len(trees["bvh_aabb"])
    boxes = np.zeros((ngeom + nnode, 7))
    boxes[:ngeom, :6] = np.asarray(model.geom_aabb, np.float64).reshape(ngeom, 6)
    boxes[ngeom:, :6] = trees["bvh_aabb"]
    node_body = np.zeros(nnode, np.int64)
    for b in np.flatnonzero(trees["body_bvhnum"] > 0).tolist():
        a = int(trees["body_bvhadr"][b])
        node_body[a:a + int(trees["body_bvhnum"][b])] = b
    boxes[ngeom:, 6] = np.asarray(model.body_margin, np.float64)[node_body]
    if model.opt.enableflags & M.ENBL_OVERRIDE:
        boxes[ngeom:, 6] = model.opt.o_margin / 2
    return {"span": full_span, "nodes": nodes + ngeom, "boxes": boxes}
