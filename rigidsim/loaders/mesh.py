"""Mesh and height-field assets.

Meshes: binary STL, OBJ and MSH files (`mesh_io`) or inline ``vertex`` /
``face``, with ``scale``, ``refpos``/``refquat`` and ``inertia``
(legacy, the default, exact, convex, shell), compiled as MuJoCo 4.0 does:
STL corners merged, the user transform applied, the mesh re-expressed in its
own frame (origin at the centre of mass of the solid, or of the surface for
``shell``; axes along the principal axes), ``mesh_pos``/``mesh_quat`` holding
that frame, vertices stored in it. The convex hull (scipy's qhull, as
MuJoCo's) is only built where the compiled fields need it: ``convex``
inertia, meshes given without faces and meshes that collide; with it come
MuJoCo's hull polygons (`hull_polygons`: coplanar hull triangles joined, in
MuJoCo's order) and the extreme hull vertices along 27 directions
(`hull_extrema`).

Height fields: inline ``elevation`` (row-major, nrow x ncol, its first row the
field's top edge, +y: stored in reverse row order, as MuJoCo's XML reader stores
it, so that sample row 0 lies at -y) or a blank ``nrow`` x ``ncol`` field,
normalized to [0, 1] by its minimum and maximum (in float32) as MuJoCo does;
PNG and custom binary files are refused.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np

from rigidsim.errors import InputError
from rigidsim.loaders import spatial as sp
from rigidsim.loaders import inputs, model_cache
from rigidsim.loaders.mesh_io import MeshFileError, decode_mesh, merge_repeated
from rigidsim.loaders.mjcf_defaults import where
from rigidsim.loaders.records import Rec

EPS = 1e-14
MINVAL = 1e-15
CONVEX, EXACT, LEGACY, SHELL = 0, 1, 2, 3

# (resolved file, mtime, size, righthand) -> ((vert, face, merge), sha256 of the file or None): panda variants
# share files
_cache: dict = {}


def mesh_path(rec, scene, compiler) -> Path:
    f = rec.file.replace("\\", "/")
    if compiler.get("strippath"):
        f = Path(f).name
    p = Path(f)
    if p.is_absolute():
        return p
    d = Path(compiler.get("meshdir") or "")
    if not d.is_absolute():
        d = Path(scene.basedir) / d
    return d / p


def _load(rec, scene, compiler, righthand, w):
    path = mesh_path(rec, scene, compiler)
    if not inputs.is_file(path):
        raise InputError(f"<mesh> '{rec.name}': mesh file '{rec.file}' not found (looked for {path})", where=w)
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size, righthand)
    hit = _cache.get(key)
    try:
        if hit is None:
            data = path.read_bytes()
            hit = _cache[key] = (decode_mesh(path.suffix, data, righthand),
                                 inputs.digest(data) if inputs.active() else None)
        if inputs.active():  # the compiled-model cache notes the file (its digest kept with the decoded mesh)
            if hit[1] is None:
                hit = _cache[key] = (hit[0], inputs.digest(path.read_bytes()))
            inputs.note_read(path, hit[1])
    except MeshFileError as e:
        raise InputError(f"<mesh> '{rec.name}': {e} ({path})", where=w) from None
    except OSError as e:
        raise InputError(f"<mesh> '{rec.name}': cannot read mesh file {path}: {e.strerror}", where=w) from None
    return hit[0]


def compile_mesh(rec, scene, compiler, needhull=False):
    """Compile one <mesh>; ``needhull``: a colliding geom uses it (MuJoCo then builds its hull graph)."""
    w = where(rec.el, scene.filename)

    def fail(msg):
        raise InputError(f"<mesh> '{rec.name}': {msg}", where=w)

    scale = [float(x) for x in rec.scale]
    righthand = scale[0] * scale[1] * scale[2] > 0
    face = None
    if rec.file is not None:
        if rec.vertex is not None:
            fail("repeated vertex specification (both a file and 'vertex')")
        vert, face, merge = _load(rec, scene, compiler, righthand, w)
        if rec.face is not None:
            if len(face):
                fail("repeated face specification (both a file and 'face')")
            face = None
        if merge:
            vert, face = merge_repeated(vert, face)
    else:
        if rec.vertex is None:
            fail("no vertices (give a file or 'vertex')")
        if len(rec.vertex) % 3:
            fail("vertex data must be a multiple of 3")
        vert = np.asarray(rec.vertex, dtype=np.float64).astype(np.float32).reshape(-1, 3)
    if face is None or not len(face):
        face = None
        if rec.face is not None and len(rec.face):
            if len(rec.face) % 3:
                fail("face data must be a multiple of 3")
            face = np.asarray(rec.face, dtype=np.int64).reshape(-1, 3)
            if not righthand:
                face = face[:, [0, 2, 1]]
    if len(vert) < 4:
        fail("at least 4 vertices required")
    if not np.all(np.isfinite(vert)):
        fail("vertex coordinates must be finite")
    if face is not None and (face.min() < 0 or face.max() >= len(vert)):
        bad = int(np.argmax((face < 0).any(1) | (face >= len(vert)).any(1)))
        fail(f"in face {bad}, a vertex index does not exist (the mesh has {len(vert)} vertices)")
    inertia = int(getattr(rec, "inertia", LEGACY))
    v = vert.astype(np.float64)
    hull = graph = None
    polys = []
    if face is None or inertia == CONVEX or needhull:
        maxhullvert = _maxhullvert(rec, fail)
        graph, hull = model_cache.hull(v, maxhullvert, lambda: convex_hull(v, fail, maxhullvert))
        polys = hull_polygons(v, hull)  # from qhull's outward triangles, before any rewinding
        if not righthand:  # left-handed scale: the hull's triangles are rewound with the mesh's faces,
            hull = np.ascontiguousarray(hull[:, [0, 2, 1]])  # each polygon's loop reversed after its first
            polys = [[p[0]] + p[:0:-1] for p in polys]
            graph[len(graph) - hull.size:] = hull.ravel()
    if face is None:
        face = hull
    face = np.ascontiguousarray(face, dtype=np.int32)
    if inertia == EXACT:
        _check_orientation(v, face, fail)
    v = _user_transform(v, rec, scale)
    pos, quat, vol, boxsz = _mass_frame(v, face, hull, inertia, fail)
    # vertices in the mesh frame: v -> R' (v - com)
    rmat = np.array(sp.quat2mat([quat[0], -quat[1], -quat[2], -quat[3]])).reshape(3, 3)
    vc = v - np.asarray(pos)
    vm = vc @ rmat.T
    aamm = list(vm.min(0)) + list(vm.max(0))
    vert32 = vm.astype(np.float32)
    extrema = hull_extrema(vert32, graph[2 + graph[0]:2 + 2 * graph[0]]) if graph is not None else None
    return Rec(vert=vert32, face=face, pos=list(pos), quat=list(quat), scale=scale,
               aamm=[float(x) for x in aamm], volume=vol, boxsz=boxsz, graph=graph,
               poly=polys, polynormal=polygon_normals(vm, polys), extrema=extrema)


def _maxhullvert(rec, fail):
    """The ``maxhullvert`` attribute of the <mesh> element (-1: no limit)."""
    el = getattr(rec, "el", None)
    txt = el.get("maxhullvert") if el is not None and hasattr(el, "get") else None
    if txt is None:
        return -1
    try:
        n = int(txt)
    except ValueError:
        fail(f"maxhullvert must be an integer, got '{txt}'")
    if n != -1 and n < 4:
        fail("maxhullvert must be larger than 3")
    return n


def _user_transform(v, rec, scale):
    """refpos / refquat (the mesh is moved by their inverse), then the scale."""
    if rec.refpos is not None and any(rec.refpos):
        v = v - np.asarray(rec.refpos, dtype=np.float64)
    if rec.refquat is not None and list(rec.refquat) != [1.0, 0.0, 0.0, 0.0]:
        q = list(rec.refquat)
        sp.normvec(q)
        m = np.array(sp.quat2mat(q)).reshape(3, 3)
        v = v @ m  # rows: m' v
    if scale != [1.0, 1.0, 1.0]:
        v = v * np.asarray(scale)
    return v


def _seqsum(x):
    """Sum along axis 0 in sequence (as the compiler's loop accumulates), not pairwise."""
    return np.cumsum(x, axis=0)[-1] if len(x) else np.zeros(np.shape(x)[1:])


def _triangles(v, face):
    a, b, c = v[face[:, 0]], v[face[:, 1]], v[face[:, 2]]
    center = (a + b + c) / 3
    nrm = np.cross(b - a, c - a)
    ln = np.sqrt(nrm[:, 0] * nrm[:, 0] + nrm[:, 1] * nrm[:, 1] + nrm[:, 2] * nrm[:, 2])
    ok = ln >= MINVAL
    area = np.where(ok, ln / 2, 0.0)
    normal = np.where(ok[:, None], nrm / np.where(ok, ln, 1.0)[:, None], 0.0)
    return area, normal, center


def _mass_frame(v, face, hull, inertia, fail):
    """Centre of mass, principal frame, volume (surface for shell) and equivalent box half-sizes."""
    area, normal, center = _triangles(v, face)
    tot = _seqsum(area)
    if tot < MINVAL:
        fail("mesh surface area is too small")
    facecen = _seqsum(area[:, None] * center) / tot
    f = hull if inertia == CONVEX else face
    if inertia == CONVEX:
        area, normal, center = _triangles(v, f)
    if inertia == SHELL:
        w = area
    else:
        vec = center - facecen
        w = (vec[:, 0] * normal[:, 0] + vec[:, 1] * normal[:, 1] + vec[:, 2] * normal[:, 2]) * area / 3
        if inertia == LEGACY:
            w = np.abs(w)
    total = _seqsum(w)
    if inertia != SHELL and total < MINVAL:
        fail("mesh volume is negative (misoriented triangles)" if total < 0 else
             "mesh volume is too small; try inertia='shell'")
    com = _seqsum(w[:, None] * (center * 3.0 / 4.0 + facecen / 4.0))
    if total >= MINVAL:
        com = com / total
    # second moments about the centre of mass
    vc = v - com
    d, e, g = vc[f[:, 0]], vc[f[:, 1]], vc[f[:, 2]]
    area, normal, center = _triangles(vc, f)
    if inertia == SHELL:
        w = area
    else:
        w = (center[:, 0] * normal[:, 0] + center[:, 1] * normal[:, 1] + center[:, 2] * normal[:, 2]) * area / 3
        if inertia == LEGACY:
            w = np.abs(w)
    total = float(_seqsum(w))
    c = 12.0 if inertia == SHELL else 20.0
    P = []
    for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
        t = (2 * (d[:, i] * d[:, j] + e[:, i] * e[:, j] + g[:, i] * g[:, j])
             + d[:, i] * e[:, j] + d[:, j] * e[:, i] + d[:, i] * g[:, j] + d[:, j] * g[:, i]
             + e[:, i] * g[:, j] + e[:, j] * g[:, i])
        P.append(float(_seqsum(w / c * t)))
    full = [P[1] + P[2], P[0] + P[2], P[0] + P[1], -P[3], -P[4], -P[5]]
    mat = [full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]]
    ev, quat = sp.eig3_mesh(mat)
    if ev[2] <= 0:
        fail("eigenvalue of mesh inertia must be positive")
    atol, rtol = 1e-9, 1e-6
    if (ev[0] + ev[1] < ev[2] * (1 - rtol) - atol or ev[0] + ev[2] < ev[1] * (1 - rtol) - atol
            or ev[1] + ev[2] < ev[0] * (1 - rtol) - atol):
        fail("eigenvalues of mesh inertia violate A + B >= C")
    boxsz = [0.5 * float(np.sqrt(6 * (ev[1] + ev[2] - ev[0]) / total)),
             0.5 * float(np.sqrt(6 * (ev[0] + ev[2] - ev[1]) / total)),
             0.5 * float(np.sqrt(6 * (ev[0] + ev[1] - ev[2]) / total))]
    return [float(x) for x in com], quat, total, boxsz


def _check_orientation(v, face, fail):
    """Exact inertia needs consistently oriented faces: no directed edge may repeat."""
    area, _, _ = _triangles(v, face)
    f = face[area > np.sqrt(MINVAL)]
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]).astype(np.int64)
    key = edges[:, 0] * (len(v) + 1) + edges[:, 1]
    u, cnt = np.unique(key, return_counts=True)
    if np.any(cnt > 1):
        k = int(u[np.argmax(cnt > 1)])
        fail(f"faces have inconsistent orientation; check the faces containing vertices "
             f"{k // (len(v) + 1) + 1} and {k % (len(v) + 1) + 1}")


def convex_hull(v, fail, maxhullvert=-1):
    """MuJoCo's convex-hull graph of the vertices ``v`` (n, 3) and its outward triangles.

    Returns ``(graph, faces)``: ``graph`` is the int32 array MuJoCo stores per mesh in
    ``mesh_graph`` - ``numvert, numface, vert_edgeadr[numvert], vert_globalid[numvert],
    edge_localid[numvert + 3 numface], face_globalid[3 numface]`` - and ``faces`` the
    (numface, 3) triangles (mesh vertex ids) of ``face_globalid``.

    The hull is qhull's (scipy bundles the same library MuJoCo links) run with
    MuJoCo's options ("Qt", plus "Q9 TA<n-4>" for ``maxhullvert``), and the graph
    is laid out in qhull's own orders, which the collision code depends on:

    * hull vertices in qhull's vertex-list order (``vert_globalid``); scipy shows it
      through the Voronoi regions of ``_Qhull.get_voronoi_diagram`` (one region per
      vertex, in list order);
    * faces in qhull's facet-list order, vertices as qhull holds them (decreasing
      vertex id), with the first two swapped where that makes the triangle point
      outwards (qhull's ``toporient``);
    * per hull vertex, its adjacent hull vertices (hull-local ids) in the order they
      first appear walking the vertex's neighbouring facets, then -1. Without facet
      merges qhull builds the neighbour sets from the final facet list, so they are
      in facet-list order. When coplanar facets were merged while the hull was built,
      qhull kept them up to date incrementally and the order follows the build's
      history; it is read back then from qhull's Voronoi-ridge walk, one run per hull
      vertex restricted to it ("QV<point>"), see `_edges_from_ridges`.
    """
    from scipy.spatial import QhullError
    from scipy.spatial._qhull import _Qhull

    v = np.ascontiguousarray(v, dtype=np.float64)
    opts = b"" if maxhullvert is None or maxhullvert < 0 else b"Q9 TA%d" % (maxhullvert - 4)

    def run(extra=b""):
        try:
            q = _Qhull(b"i", v, (opts + b" " + extra).strip(), required_options=b"Qt")
        except (QhullError, ValueError) as e:
            fail(f"qhull error: {str(e).splitlines()[0] if str(e) else 'degenerate vertices'}")
        try:
            q.triangulate()
            simp, _, eq, _, _ = q.get_simplex_facet_array()
            _, ridges, _, regions, point_region = q.get_voronoi_diagram()
        finally:
            q.close()
        return simp.astype(np.int64), eq, np.asarray(ridges, dtype=np.int64), len(regions), point_region

    simp, eq, ridges, nregion, point_region = run()
    hullv = np.unique(simp)
    if len(hullv) != nregion:
        fail("could not construct the convex hull graph (qhull kept vertices outside its facets)")
    gid = hullv[np.argsort(point_region[hullv], kind="stable")]  # qhull's vertex-list order
    nv, nf = len(gid), len(simp)
    loc = np.full(len(v), -1, dtype=np.int64)
    loc[gid] = np.arange(nv)
    # outward triangles: qhull's vertex order, first two swapped where it points inwards
    a, b, c = v[simp[:, 0]], v[simp[:, 1]], v[simp[:, 2]]
    inward = (np.cross(b - a, c - a) * eq[:, :3]).sum(1) < 0
    faces = simp.copy()
    faces[inward] = faces[inward][:, [1, 0, 2]]
    # facets around each hull vertex, in facet-list order
    vf = np.argsort(simp.ravel(), kind="stable")
    cnt = np.bincount(simp.ravel(), minlength=len(v))
    start = np.concatenate([[0], np.cumsum(cnt)])
    fac = (vf // 3).tolist()
    simpl = simp.tolist()
    nbr = {}
    for p in gid.tolist():
        nbr[p] = fac[start[p]:start[p + 1]]
    edges = {}
    for p in gid.tolist():
        seen, out = {p}, []
        for f in nbr[p]:
            for x in simpl[f]:
                if x not in seen:
                    seen.add(x)
                    out.append(x)
        edges[p] = out
    if not _ridges_agree(gid.tolist(), nbr, simpl, nf, ridges):
        edges = _edges_from_ridges(run, gid.tolist(), nbr, simpl, nf, edges)
    graph = np.empty(2 + 3 * nv + 6 * nf, dtype=np.int32)
    graph[0], graph[1] = nv, nf
    el = []
    adr = np.empty(nv, dtype=np.int64)
    for i, p in enumerate(gid.tolist()):
        adr[i] = len(el)
        el.extend(loc[edges[p]].tolist())
        el.append(-1)
    if len(el) != nv + 3 * nf:
        fail("could not construct the convex hull graph (the hull is not a closed triangulated surface)")
    graph[2:2 + nv] = adr
    graph[2 + nv:2 + 2 * nv] = gid
    graph[2 + 2 * nv:2 + 3 * nv + 3 * nf] = el
    graph[2 + 3 * nv + 3 * nf:] = faces.ravel()
    return graph, faces.astype(np.int32)


def _ridge_walk(order, nbr, simpl, last):
    """The (atvertex, vertex) pairs qhull's Voronoi-ridge walk reports for neighbour lists ``nbr``.

    qhull visits the vertices in list order; for each, its neighbouring facets in
    order (all but the facet-list's last one, whose Voronoi index equals the facet
    count and is skipped), and in them the vertices not visited before, reporting
    those that share at least two of the visited facets with it.
    """
    done = set()
    out = []
    for p in order:
        done.add(p)
        fs = [f for f in nbr[p] if f != last]
        share = {}
        for f in fs:
            for x in simpl[f]:
                share[x] = share.get(x, 0) + 1
        met = set()
        for f in fs:
            for x in simpl[f]:
                if x not in done and x not in met:
                    met.add(x)
                    if share[x] >= 2:
                        out.append((p, x))
    return out


def _ridges_agree(order, nbr, simpl, nf, ridges):
    return [tuple(r) for r in ridges.tolist()] == _ridge_walk(order, nbr, simpl, nf - 1)


def _edges_from_ridges(run, order, nbr, simpl, nf, edges):
    """Neighbour order of each hull vertex read back from qhull when facet merges reordered it.

    A run restricted to one vertex ("QV<point>") reports that vertex's adjacent
    vertices in the order they first appear among its neighbouring facets, except
    the two that it shares with the last facet of the list (see `_ridge_walk`). Their
    place cannot be read back through scipy: each is put next to the third vertex of
    its other facet around the vertex, before or after it as they stand in that facet
    (right when that facet is the one that first brought the third vertex). For
    these at most 3 vertices of such meshes the order can differ from MuJoCo's.
    """
    last = nf - 1
    out = {}
    for p in order:
        simp2, _, ridges, _, _ = run(b"QV%d" % p)
        if simp2.tolist() != simpl:
            return edges  # the restricted run built another hull: keep facet-list order
        lst = [int(x) for a, x in ridges.tolist() if a == p]
        if last in nbr[p]:
            for bvert in [x for x in simpl[last] if x != p and x not in lst]:
                other = [f for f in nbr[p] if f != last and bvert in simpl[f]]
                f = simpl[other[0]] if other else simpl[last]
                cvert = [x for x in f if x != p and x != bvert][0]
                if cvert in lst:
                    k = lst.index(cvert)
                    lst.insert(k + 1 if f.index(cvert) < f.index(bvert) else k, bvert)
                else:
                    lst.append(bvert)
        if sorted(lst) != sorted(edges[p]):
            return edges
        out[p] = lst
    return out


def compile_hfield(rec, scene, compiler):
    w = where(rec.el, scene.filename)
    if rec.size is None or any(s <= 0 for s in rec.size):
        raise InputError(f"<hfield> '{rec.name}': size needs 4 positive numbers "
                         f"(radius_x radius_y elevation_z base_z)", where=w)
    if rec.file is not None:
        if rec.nrow or rec.ncol or rec.elevation is not None:
            raise InputError(f"<hfield> '{rec.name}' is specified from a file and manually", where=w)
        raise InputError(f"<hfield> '{rec.name}': height fields read from files ({rec.file}) are not "
                         f"supported by rigidsim; give nrow, ncol and elevation inline", where=w)
    nrow, ncol = int(rec.nrow or 0), int(rec.ncol or 0)
    if nrow < 1 or ncol < 1:
        raise InputError(f"<hfield> '{rec.name}': nrow and ncol must be positive", where=w)
    if rec.elevation is not None:
        if len(rec.elevation) != nrow * ncol:
            raise InputError(f"<hfield> '{rec.name}': elevation has {len(rec.elevation)} values, expected "
                             f"nrow*ncol = {nrow * ncol}", where=w)
        # the XML text runs top to bottom: row i is stored as row nrow - 1 - i (MuJoCo's XML reader)
        data = np.asarray(rec.elevation, dtype=np.float32).reshape(nrow, ncol)[::-1].ravel()
    else:
        data = np.zeros(nrow * ncol, dtype=np.float32)
    emin, emax = data.min(), data.max()
    data = data - emin
    if emax - emin > EPS:
        data = data / (emax - emin)  # float32 / float32, as MuJoCo's float samples
    return Rec(size=list(rec.size), nrow=nrow, ncol=ncol, data=data.astype(np.float32))


# ----------------------------------------------------------------------------- hull polygons
# MuJoCo groups the hull's triangles by their normal's direction, in spherical angles rounded to
# ANGLE_TOL, joins each group's triangles along shared edges into boundary loops and stores each
# loop as a polygon (vertex ids in loop order). The groups live in a C++ hash map (libc++'s, which
# the MuJoCo library carries) and are written in its iteration order, reproduced by `_HashOrder`.

ANGLE_TOL = 0.01


def _round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _normal_key(p1, p2, p3):
    """The rounded (azimuth, polar) angles of a triangle's normal, or None for a degenerate one."""
    a0, a1, a2 = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    b0, b1, b2 = p3[0] - p1[0], p3[1] - p1[1], p3[2] - p1[2]
    n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if ln < MINVAL:
        return None
    n0, n1, n2 = n0 / ln + 0.0, n1 / ln + 0.0, n2 / ln + 0.0
    if abs(n2) > 1.0 - 1e-7:  # along z: the azimuth is undefined, use 0
        return (0.0, _round_half_away(math.pi / ANGLE_TOL) if n2 < 0 else 0.0)
    return (_round_half_away(math.atan2(n1, n0) / ANGLE_TOL), _round_half_away(math.acos(n2) / ANGLE_TOL))


def _dbits(x):
    """libc++'s std::hash<double>: the bit pattern, 0 for both zeros."""
    return 0 if x == 0.0 else struct.unpack("<Q", struct.pack("<d", x))[0]


_M64 = (1 << 64) - 1


def _pair_hash(key):
    """MuJoCo 4.0's hash of a (theta, phi) key: the second's std::hash folded into the first's, with the
    golden-ratio constant and shifts of the common hash-combine recipe (64-bit wrap-around)."""
    h = _dbits(key[0])
    return h ^ ((_dbits(key[1]) + 0x9E3779B9 + ((h << 6) & _M64) + (h >> 2)) & _M64)


def _next_prime(n):
    if n <= 2:
        return 2
    n |= 1
    while any(n % d == 0 for d in range(3, int(math.isqrt(n)) + 1, 2)):
        n += 2
    return n


class _HashOrder:
    """Iteration order of a libc++ ``std::unordered_map`` with unique keys, given the keys' hashes in
    insertion order (max load factor 1): one singly linked list of nodes, each bucket remembering the
    node before its first one; a node for an empty bucket goes to the list's front, otherwise to the
    front of its bucket's run; growing re-buckets the list in order, moving nodes to existing runs."""

    HEAD = -1

    def __init__(self):
        self.hash = []
        self.next = {self.HEAD: None}
        self.bucket = []

    def _idx(self, h, bc):
        return h & (bc - 1) if bc & (bc - 1) == 0 else h % bc

    def _rehash(self, n):
        n = 2 if n == 1 else (_next_prime(n) if n & (n - 1) else n)
        if n <= len(self.bucket):
            return
        nxt, bk = self.next, [None] * n
        self.bucket = bk
        pp = self.HEAD
        cp = nxt[pp]
        if cp is None:
            return
        ph = self._idx(self.hash[cp], n)
        bk[ph] = pp
        pp, cp = cp, nxt[cp]
        while cp is not None:
            ch = self._idx(self.hash[cp], n)
            if ch == ph:
                pp = cp
            elif bk[ch] is None:
                bk[ch] = pp
                pp, ph = cp, ch
            else:
                nxt[pp] = nxt[cp]
                nxt[cp] = nxt[bk[ch]]
                nxt[bk[ch]] = cp
            cp = nxt[pp]

    def insert(self, h):
        nd = len(self.hash)
        self.hash.append(h)
        bc = len(self.bucket)
        if nd + 1 > bc or bc == 0:
            pow2 = bc > 2 and bc & (bc - 1) == 0
            self._rehash(max(2 * bc + (not pow2), nd + 1))
            bc = len(self.bucket)
        c = self._idx(h, bc)
        nxt, pn = self.next, self.bucket[c]
        if pn is None:
            nxt[nd] = nxt[self.HEAD]
            nxt[self.HEAD] = nd
            self.bucket[c] = self.HEAD
            if nxt[nd] is not None:
                self.bucket[self._idx(self.hash[nxt[nd]], bc)] = nd
        else:
            nxt[nd] = nxt[pn]
            nxt[pn] = nd

    def order(self):
        out, cp = [], self.next[self.HEAD]
        while cp is not None:
            out.append(cp)
            cp = self.next[cp]
        return out


class _Group:
    """The triangles of one normal direction: directed boundary edges, each tagged with its island
    (a connected patch; islands are renumbered densely when a triangle joins two of them)."""

    def __init__(self, a, b, c):
        self.edges = [(a, b), (b, c), (c, a)]
        self.island = [0, 0, 0]
        self.nisland = 1

    def _merge(self, i1, i2):
        lo, hi = min(i1, i2), max(i1, i2)
        self.island[:] = [lo if k == hi else (k - 1 if k > hi else k) for k in self.island]
        return lo

    def add(self, a, b, c):
        edges, isl = self.edges, self.island
        island = -1
        new = []
        for u, w in ((a, b), (b, c), (c, a)):
            try:
                i = edges.index((w, u))  # the opposite edge is on the boundary: the triangle attaches there
            except ValueError:
                new.append((u, w))
                continue
            k = isl[i]
            del edges[i], isl[i]
            if island == -1:
                island = k
            elif k != island:
                self.nisland -= 1
                island = self._merge(island, k)
        if island == -1:
            island = self.nisland
            self.nisland += 1
        for e in new:
            edges.append(e)
            isl.append(island)

    def loops(self):
        edges, isl = self.edges, self.island
        out = []
        for i in range(self.nisland):
            j = next((j for j in range(len(edges)) if isl[j] == i), None)
            if j is None:
                continue
            path = [edges[j][0], edges[j][1]]
            cur = path[-1]
            for _ in range(len(edges)):
                # the loop is followed from the first matching edge after the list's first one
                k = next((k for k in range(1, len(edges)) if isl[k] == i and edges[k][0] == cur), None)
                if k is None:
                    continue
                cur = edges[k][1]
                if cur == path[0]:
                    out.append(path)
                    break
                path.append(cur)
        return out


def hull_polygons(v, faces):
    """MuJoCo's polygons of a hull: ``v`` (n, 3) the vertices in the mesh's original frame (before
    refpos/refquat/scale: the rounded angles are taken there), ``faces`` qhull's outward hull triangles
    (mesh vertex ids, as the graph holds them for a right-handed scale). Returns the polygons (lists of
    vertex ids, at least 3) in MuJoCo's order.

    Each group (one rounded normal) collects the directed boundary edges of its triangles: a triangle
    that has the reverse of a boundary edge is glued there (that edge leaves the boundary), its other
    edges are appended. A group's loops are walked from each island's first edge, always taking the
    first boundary edge out of the current vertex; a walk that does not close is dropped."""
    vl = v.tolist()
    groups, keys = {}, []
    order = _HashOrder()
    for a, b, c in faces.tolist():
        key = _normal_key(vl[a], vl[b], vl[c])
        if key is None:
            continue
        g = groups.get(key)
        if g is None:
            groups[key] = _Group(a, b, c)
            keys.append(key)
            order.insert(_pair_hash(key))
        else:
            g.add(a, b, c)
    return [p for k in order.order() for p in groups[keys[k]].loops() if len(p) >= 3]


def polygon_normals(v, polys):
    """Unit normal of each polygon by Newell's method over its whole outline (``v`` in the mesh frame);
    (1, 0, 0) for a degenerate one."""
    out = np.zeros((len(polys), 3))
    if not polys:
        return out
    cnt = np.array([len(p) for p in polys])
    idx = np.concatenate(polys)
    start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    nxt = np.arange(len(idx)) + 1
    nxt[start + cnt - 1] = start  # each vertex to the next one around its polygon
    a, b = v[idx], v[idx[nxt]]
    terms = np.stack([(a[:, 1] - b[:, 1]) * (a[:, 2] + b[:, 2]), (a[:, 2] - b[:, 2]) * (a[:, 0] + b[:, 0]),
                      (a[:, 0] - b[:, 0]) * (a[:, 1] + b[:, 1])], 1)
    n = np.add.reduceat(terms, start, axis=0)
    ln = np.sqrt(n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2])
    ok = ln >= EPS
    return np.where(ok[:, None], n / np.where(ok, ln, 1.0)[:, None], [1.0, 0.0, 0.0])


def hull_extrema(vert, gid):
    """Per direction (cx, cy, cz) in {-1, 0, 1}^3 (x slowest), the hull-local id of the first hull vertex
    farthest along it, in float32 as MuJoCo computes it from the stored vertices."""
    p = vert[gid].astype(np.float32)
    d = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)],
                 dtype=np.float32)
    dots = (p[:, 0:1] * d[:, 0] + p[:, 1:2] * d[:, 1]) + p[:, 2:3] * d[:, 2]  # (nhull, 27), float32
    return np.argmax(dots, axis=0).astype(np.int32)
