"""Extra contacts of a pair among cylinders, boxes, capsules and meshes (MuJoCo 4.0.0's multi-contact).

When GJK/EPA (`gjk.ccd` with multi = 1) finds an overlap, the vertices it came from (EPA's final face, or
the last GJK simplex of the cores when the radii and half margins put back make the overlap) tell which
feature of each geom touches: the support points of each geom, with their feature index (`support_index`:
a box's corner, a cylinder's cap, -1 for a capsule; a mesh's vertex), read as three (the first repeated
when fewer), make a vertex (one distinct index), an edge (two) or a face (three). A mesh without polygons
keeps the one contact.

Face normals of a geom at its feature:
- a cylinder touching with one cap only: that cap's axis (+z for the top cap, -z for the bottom);
- a box: the face its three corners share; the faces its two edge corners share (any number); the three faces
  at a corner; and when three corners share no single face, or an edge's corners share none, the face whose
  normal is within 0.996 of the witness direction (the contact normal, pointing away from the geom);
- a capsule: none;
- a mesh (its hull polygons, MuJoCo's, `mesh.mesh_feature_faces`): every polygon at its vertex, in the
  vertex's polygon-map order; the first two polygons its two edge vertices share; of those, the first its
  third vertex shares too.
With dir = x2 - x1 (the witness points), a face of geom 1 may face one of geom 2 when its normal n1 has
n1 . dir < -0.0888 |dir| and n2 . dir > 0.0888 |dir|; of those pairs, the one with the least n1 . n2 wins
when below -0.996: the face of geom 2 is clipped by the face of geom 1 (`polygon_clip.clip`, witnesses
found along n2).

Otherwise an edge of one geom may lie along a face of the other: edges are a capsule's surface line through
its witness point (along its axis, over its length), a cylinder's side line from its support point (put back
on its cap's rim when the pair has a margin) to the other cap, a box's edge between its two corners or the
three edges leaving its corner, a mesh's edge between its two vertices or, at a vertex, one edge per polygon
there (in map order) towards the vertex before it in that polygon's loop. A geom's edges are tried when its
feature is not a face and the other geom has face normals: the first face normal n (in order) that points
towards the edge's geom (its component along the witness direction from the face's geom to the edge's geom
above 1e-15) with an edge e (in order) such that |n . e| < 0.0888 wins. Geom 2's edges are tried first when
geom 2's feature has fewer points than geom 1's or geom 2 has no face normals, geom 1's first otherwise; the
other geom's when the first try finds nothing. The edge (its 2 points) is clipped by the face, witnesses along
the face's inward normal. Otherwise the one contact stays.

Faces are polygons: a box face's 4 corners (MuJoCo's order), a cylinder cap's 16 rim points (pos + R (r cos_k,
-s r sin_k, s h), s = +1 on the top cap, 4.0.0's 15-digit tables), a mesh polygon's points in the reverse
order of its loop. The clipped points become the contacts (`polygon_clip`, which keeps the points no farther
above the clipping face than the sum of the two half margins below): at most 4 (2 with a capsule). Finally
each geom but a capsule is grown by half the pair's margin along the face normal of the contact (witness
points moved, distances reduced); a capsule's witness points already carry its radius and half margin.

Meshes are read through the data group with the model's mesh arrays (`mesh.with_meshes`, compiled in only
for scenes with mesh pairs), the pair's geoms from the mesh support's memory (`support.begin_mesh`); a
mesh's normals and edges at a vertex are computed when visited (a vertex may have any number).

Scratch: the multi-contact region of ``d.ccd_f[b]`` at `support.mc_f(nit)` (`polygon_clip`'s layout, sized
for the model's largest mesh polygon).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.mesh import (has_meshes, mesh_feature_faces, mesh_feature_normal, mesh_point,
                                            mesh_polygon, mesh_vertex_edge)
from rigidsim.engine.collision.polygon_clip import MC_FACE1, MC_OUT, _unit, clip, face2_off
from rigidsim.engine.collision.support import (BOX, CAPSULE, CYLINDER, F_SIMPLEX, I_MESH, MESH, NV, _get3, _set3,
                                               mc_f)
from rigidsim.engine.layout import GEOM_POLYNUM, GEOM_VERTADR, MVERT_POLYMAPNUM

FACE_TOL = 0.996
EDGE_TOL = 0.0888

_COS = (1.0, 0.923879532511287, 0.707106781186548, 0.38268343236509, 0.0, -0.38268343236509,
        -0.707106781186547, -0.923879532511287, -1.0, -0.923879532511287, -0.707106781186548, -0.38268343236509,
        0.0, 0.38268343236509, 0.707106781186547, 0.923879532511287)
_SIN = (0.0, 0.38268343236509, 0.707106781186547, 0.923879532511287, 1.0, 0.923879532511287,
        0.707106781186548, 0.38268343236509, 0.0, -0.38268343236509, -0.707106781186547, -0.923879532511287,
        -1.0, -0.923879532511287, -0.707106781186548, -0.38268343236509)
# box faces 0..5 (+x, -x, +y, -y, +z, -z): the sign bits (x 1, y 2, z 4: positive) of their 4 corners
_BOX_FACE = ((7, 3, 1, 5), (2, 6, 4, 0), (2, 3, 7, 6), (4, 5, 1, 0), (6, 7, 5, 4), (3, 2, 0, 1))


@ti.func
def _cos(k):
    res = 0.0
    for j in ti.static(range(16)):
        if k == j:
            res = _COS[j]
    return res


@ti.func
def _sin(k):
    res = 0.0
    for j in ti.static(range(16)):
        if k == j:
            res = _SIN[j]
    return res


@ti.func
def _box_corner_code(face, k):
    res = 0
    for f in ti.static(range(6)):
        for j in ti.static(range(4)):
            if face == f and k == j:
                res = _BOX_FACE[f][j]
    return res


@ti.func
def _axis(mat, k):
    """Column k of the row-major rotation: local axis k in the world."""
    return ti.Vector([mat[k], mat[3 + k], mat[6 + k]])


@ti.func
def _local_to_world(mat, pos, x, y, z):
    return ti.Vector([mat[0] * x + mat[1] * y + mat[2] * z, mat[3] * x + mat[4] * y + mat[5] * z,
                      mat[6] * x + mat[7] * y + mat[8] * z]) + pos


@ti.func
def _corner(mat, pos, size, code):
    """Box corner `code` (bit k set: the positive end along local axis k) in the world."""
    return _local_to_world(mat, pos, size[0] if code & 1 else -size[0], size[1] if code & 2 else -size[1],
                           size[2] if code & 4 else -size[2])


@ti.func
def _row(mat3, i):
    return ti.Vector([mat3[i, 0], mat3[i, 1], mat3[i, 2]])


@ti.func
def _set_row(mat3: ti.template(), i, v):
    for c in ti.static(range(3)):
        mat3[i, c] = v[c]


@ti.func
def _feature(d: ti.template(), b, nfeat, geom):
    """The support points of one geom (geom 0: the first, 1: the second) among the nfeat simplex vertices:
    (dim, indices (3), first point). Three vertices are read, the first repeated to fill; equal indices are
    the same point: one index is a vertex (dim 1), two an edge (dim 2; its second index moved to slot 1),
    three a face (dim 3)."""
    col = 3 if geom == 0 else 6
    icol = 10 if geom == 0 else 9
    ja = 1 if nfeat >= 2 else 0
    jb = 2 if nfeat > 2 else 0
    i0 = ti.cast(d.ccd_f[b, F_SIMPLEX + icol], ti.i32)
    i1 = ti.cast(d.ccd_f[b, F_SIMPLEX + ja * NV + icol], ti.i32)
    i2 = ti.cast(d.ccd_f[b, F_SIMPLEX + jb * NV + icol], ti.i32)
    dim = 3
    if i0 == i1:
        if i0 == i2:
            dim = 1
        else:
            dim = 2
            i1 = i2
    elif i2 == i0 or i2 == i1:
        dim = 2
    return dim, ti.Vector([i0, i1, i2]), _get3(d, b, F_SIMPLEX + col)


@ti.func
def _box_face_near(mat, dirn):
    """The box face whose normal is within FACE_TOL of the direction: (normal, face id, 1), or count 0."""
    ln = _unit(sm.rot_vec_mat_t(dirn, mat))
    nrm = sm.zero3()
    fid = 0
    cnt = 0
    for f in range(6):
        if cnt == 0:
            k = f // 2
            sgn = 1.0 if f % 2 == 0 else -1.0
            if sgn * ln[k] > FACE_TOL:
                nrm = sgn * _axis(mat, k)
                fid = f
                cnt = 1
    return nrm, fid, cnt


@ti.func
def _face_normals(gtype, mat, dim, idx, dirn):
    """Face normals of a geom at its feature (rows of a 3 x 3), their face ids and count; `dirn` points
    away from the geom along the witness direction (for a box whose feature shares no face)."""
    nrm = ti.Matrix.zero(float, 3, 3)
    fid = ti.Vector([0, 0, 0])
    cnt = 0
    if gtype == CYLINDER:
        if dim == 1:
            _set_row(nrm, 0, (1.0 if idx[0] == 0 else -1.0) * _axis(mat, 2))
            fid[0] = idx[0]
            cnt = 1
    elif gtype == BOX:
        if dim == 3 or dim == 2:
            sgns = sm.zero3()
            for k in ti.static(range(3)):
                bit = 1 << k
                allpos = 1
                allneg = 1
                for j in ti.static(range(3)):  # an edge's third index repeats one of its two
                    if idx[j] & bit:
                        allneg = 0
                    else:
                        allpos = 0
                if allpos == 1:
                    sgns[k] = 1.0
                elif allneg == 1:
                    sgns[k] = -1.0
            for k in ti.static(range(3)):
                if sgns[k] != 0.0:
                    if cnt < 3:
                        _set_row(nrm, cnt, sgns[k] * _axis(mat, k))
                        fid[cnt] = 2 * k + (0 if sgns[k] > 0.0 else 1)
                    cnt += 1
            if (dim == 3 and cnt != 1) or (dim == 2 and cnt == 0):
                nb, fb, cb = _box_face_near(mat, dirn)
                _set_row(nrm, 0, nb)
                fid[0] = fb
                cnt = cb
        else:
            for k in ti.static(range(3)):
                sgn = 1.0 if (idx[0] >> k) & 1 else -1.0
                _set_row(nrm, k, sgn * _axis(mat, k))
                fid[k] = 2 * k + (0 if sgn > 0.0 else 1)
            cnt = 3
    return nrm, fid, cnt


@ti.func
def _edges(d: ti.template(), gtype, g, pos, mat, size, dim, idx, p0, wit, margin):
    """Edges of a geom at its feature (first support point p0, witness point `wit`): (unit directions 3 x 3
    rows, start point, end points 3 x 3, count). A mesh vertex's edges (as many as its polygons) are not in
    the rows: `_edge` computes them."""
    dirs = ti.Matrix.zero(float, 3, 3)
    ends = ti.Matrix.zero(float, 3, 3)
    start = p0
    cnt = 0
    if gtype == CAPSULE:  # the surface line through the witness point
        z = _axis(mat, 2)
        t = sm.dot3(wit - pos, z)
        start = (-t - size[1]) * z + wit
        _set_row(dirs, 0, z)
        _set_row(ends, 0, (size[1] - t) * z + wit)
        cnt = 1
    elif gtype == CYLINDER:  # the side line from the support point's cap to the other cap
        s = -1.0 if idx[0] == 0 else 1.0
        e = s * _axis(mat, 2)
        if margin > 0.0:  # back on the cap's rim
            dv = p0 - pos
            lx = mat[0] * dv[0] + mat[3] * dv[1] + mat[6] * dv[2]
            ly = mat[1] * dv[0] + mat[4] * dv[1] + mat[7] * dv[2]
            r2 = lx * lx + ly * ly
            scl = 0.0
            if r2 >= 1e-30:
                scl = size[0] / ti.sqrt(r2)
            start = _local_to_world(mat, pos, lx * scl, ly * scl, -s * size[1])
        _set_row(dirs, 0, e)
        _set_row(ends, 0, (size[1] + size[1]) * e + start)
        cnt = 1
    elif gtype == BOX:
        start = _corner(mat, pos, size, idx[0])
        if dim == 2:
            end = _corner(mat, pos, size, idx[1])
            _set_row(dirs, 0, _unit(end - start))
            _set_row(ends, 0, end)
            cnt = 1
        else:  # the three edges leaving the corner
            for k in ti.static(range(3)):
                end = _corner(mat, pos, size, idx[0] ^ (1 << k))
                _set_row(dirs, k, _unit(end - start))
                _set_row(ends, k, end)
            cnt = 3
    if ti.static(has_meshes(d)):
        if gtype == MESH:  # the edge between two vertices, or those leaving one (one per polygon there)
            start = mesh_point(d.meshes, g, pos, mat, idx[0])
            if dim == 2:
                end = mesh_point(d.meshes, g, pos, mat, idx[1])
                _set_row(dirs, 0, _unit(end - start))
                _set_row(ends, 0, end)
                cnt = 1
            else:
                cnt = d.meshes.mesh_vert_i[d.meshes.gcol_i[g, GEOM_VERTADR] + idx[0], MVERT_POLYMAPNUM]
    return dirs, start, ends, cnt


@ti.func
def _edge(d: ti.template(), gtype, g, pos, mat, dim, idx, dirs, ends, start, i):
    """Edge i of `_edges`' answer: (unit direction, end point)."""
    j = ti.min(i, 2)
    e = _row(dirs, j)
    end = _row(ends, j)
    if ti.static(has_meshes(d)):
        if gtype == MESH and dim != 2:
            e, end = mesh_vertex_edge(d.meshes, g, pos, mat, idx[0], start, i)
    return e, end


@ti.func
def _normal(d: ti.template(), gtype, g, mat, nrm, fid, madr, i):
    """Face normal i of a geom's feature (`_face_normals`, a mesh's `mesh.mesh_feature_faces`) and its face
    id (a mesh's: its polygon)."""
    j = ti.min(i, 2)
    res = _row(nrm, j)
    face = fid[j]
    if ti.static(has_meshes(d)):
        if gtype == MESH:
            res, face = mesh_feature_normal(d.meshes, g, mat, fid, madr, i)
    return res, face


@ti.func
def _write_face(d: ti.template(), b, off, gtype, g, pos, mat, size, fid):
    """Polygon of face `fid` of a box, a cylinder or a mesh at scratch offset `off`; returns its point count.
    A mesh polygon's points go in reverse order of its loop."""
    n = 0
    if gtype == BOX:
        for j in range(4):
            _set3(d, b, off + 3 * j, _corner(mat, pos, size, _box_corner_code(fid, j)))
        n = 4
    elif gtype == CYLINDER:
        s = 1.0 if fid == 0 else -1.0
        for k in range(16):
            _set3(d, b, off + 3 * k, _local_to_world(mat, pos, size[0] * _cos(k), s * (size[0] * -_sin(k)),
                                                      s * size[1]))
        n = 16
    if ti.static(has_meshes(d)):
        if gtype == MESH:
            adr, n = mesh_polygon(d.meshes, g, fid)
            for j in range(n):
                _set3(d, b, off + 3 * j, mesh_point(d.meshes, g, pos, mat, d.meshes.mesh_polyvert[adr + n - 1 - j, 0]))
    return n


@ti.func
def _edge_on_face(d: ti.template(), tf, gf, matf, fn, ff, madrf, cf, te, ge, pose, mate, dime, idxe, ed, ee, es,
                  ce, dvec):
    """The first face normal i of one geom (type tf: `_normal`'s arguments) with dvec . normal > 1e-15 and
    edge j of the other (type te: `_edge`'s arguments) with |normal . edge| < EDGE_TOL: (j, i), or (-1, -1)."""
    ej = -1
    fi = -1
    for i in range(cf):
        if fi < 0:
            c, _f = _normal(d, tf, gf, matf, fn, ff, madrf, i)
            if sm.dot3(dvec, c) > 1e-15:
                for j in range(ce):
                    if fi < 0:
                        e, _end = _edge(d, te, ge, pose, mate, dime, idxe, ed, ee, es, j)
                        if ti.abs(sm.dot3(c, e)) < EDGE_TOL:
                            ej = j
                            fi = i
    return ej, fi


@ti.func
def _clip_edge(d: ti.template(), b, base, tf, gf, pf, mf, sf, nrm, face, start, end, maxcon, margin):
    """An edge (start, end) clipped by face `face` (outward normal nrm) of the other geom, witnesses along -nrm."""
    nf = _write_face(d, b, base + MC_FACE1, tf, gf, pf, mf, sf, face)
    f2 = face2_off(base, nf)
    _set3(d, b, f2, start)
    _set3(d, b, f2 + 3, end)
    return clip(d, b, base, nf, 2, nrm, -nrm, maxcon, margin)


@ti.func
def multicontact(d: ti.template(), b, nit, t1, p1, m1, s1, t2, p2, m2, s2, x1, x2, nfeat, maxcon, margin):
    """Up to `maxcon` contacts of the overlap `gjk.ccd` found (witnesses x1, x2; nfeat > 0 simplex vertices
    in scratch; the pair's margin), as the module docstring says: written to the MC_OUT rows of the
    multi-contact region as (dist, x1, x2), dist without the margin; returns how many (0: keep the one
    contact). Mesh geoms need the data group with the mesh arrays (`mesh.with_meshes`; the geoms are the
    pair's, `support.begin_mesh`); a mesh without polygons keeps the one contact."""
    base = mc_f(nit)
    g1 = 0
    g2 = 0
    usable = 1
    if ti.static(has_meshes(d)):
        g1 = d.ccd_i[b, I_MESH]
        g2 = d.ccd_i[b, I_MESH + 3]
        if (t1 == MESH and d.meshes.gcol_i[g1, GEOM_POLYNUM] == 0) or (
                t2 == MESH and d.meshes.gcol_i[g2, GEOM_POLYNUM] == 0):
            usable = 0
    nout = 0
    if usable == 1:
        nout = _multicontact(d, b, base, g1, g2, t1, p1, m1, s1, t2, p2, m2, s2, x1, x2, nfeat, maxcon, margin)
    return nout


@ti.func
def _multicontact(d: ti.template(), b, base, g1, g2, t1, p1, m1, s1, t2, p2, m2, s2, x1, x2, nfeat, maxcon,
                  margin):
    dim1, idx1, q1 = _feature(d, b, nfeat, 0)
    dim2, idx2, q2 = _feature(d, b, nfeat, 1)
    dirv = x2 - x1
    dneg = x1 - x2
    n1, f1, c1 = _face_normals(t1, m1, dim1, idx1, dneg)
    n2, f2, c2 = _face_normals(t2, m2, dim2, idx2, dirv)
    madr1 = -1
    madr2 = -1
    if ti.static(has_meshes(d)):
        if t1 == MESH:
            f1, madr1, c1 = mesh_feature_faces(d.meshes, g1, dim1, idx1)
        if t2 == MESH:
            f2, madr2, c2 = mesh_feature_faces(d.meshes, g2, dim2, idx2)
    thr = ti.sqrt(sm.dot3(dirv, dirv)) * EDGE_TOL
    best = -FACE_TOL
    bi = -1
    bj = -1
    for i in range(c1):
        a, _fa = _normal(d, t1, g1, m1, n1, f1, madr1, i)
        if sm.dot3(dirv, a) < -thr:
            for j in range(c2):
                c, _fc = _normal(d, t2, g2, m2, n2, f2, madr2, j)
                if sm.dot3(dirv, c) > thr:
                    val = sm.dot3(a, c)
                    if val < best:
                        best = val
                        bi = i
                        bj = j
    mode = 0  # 1: face against face; 2: an edge of geom 1 on a face of geom 2; 3: the other way round
    ej = -1
    fi = -1
    e1d, e1s, e1e, ce1 = _edges(d, t1, g1, p1, m1, s1, dim1, idx1, q1, x1, margin)
    e2d, e2s, e2e, ce2 = _edges(d, t2, g2, p2, m2, s2, dim2, idx2, q2, x2, margin)
    if bi >= 0:
        mode = 1
    else:
        edge2_first = c1 != 0 and dim2 != 3 and (dim2 < dim1 or c2 == 0)
        if edge2_first:
            ej, fi = _edge_on_face(d, t1, g1, m1, n1, f1, madr1, c1, t2, g2, p2, m2, dim2, idx2, e2d, e2e, e2s, ce2,
                                   dneg)
            if fi >= 0:
                mode = 3
            elif dim1 != 3 and c2 != 0:
                ej, fi = _edge_on_face(d, t2, g2, m2, n2, f2, madr2, c2, t1, g1, p1, m1, dim1, idx1, e1d, e1e, e1s,
                                       ce1, dirv)
                if fi >= 0:
                    mode = 2
        else:
            if dim1 != 3 and c2 != 0:
                ej, fi = _edge_on_face(d, t2, g2, m2, n2, f2, madr2, c2, t1, g1, p1, m1, dim1, idx1, e1d, e1e, e1s,
                                       ce1, dirv)
                if fi >= 0:
                    mode = 2
            if mode == 0 and dim2 != 3 and c1 != 0:
                ej, fi = _edge_on_face(d, t1, g1, m1, n1, f1, madr1, c1, t2, g2, p2, m2, dim2, idx2, e2d, e2e, e2s,
                                       ce2, dneg)
                if fi >= 0:
                    mode = 3
    hm1 = 0.5 * margin if t1 != CAPSULE else 0.0
    hm2 = 0.5 * margin if t2 != CAPSULE else 0.0
    nout = 0
    grow = sm.zero3()  # the direction geom 1 grows along
    if mode == 1:
        na, fa = _normal(d, t1, g1, m1, n1, f1, madr1, bi)
        nb, fb = _normal(d, t2, g2, m2, n2, f2, madr2, bj)
        nf1 = _write_face(d, b, base + MC_FACE1, t1, g1, p1, m1, s1, fa)
        nf2 = _write_face(d, b, face2_off(base, nf1), t2, g2, p2, m2, s2, fb)
        nout = clip(d, b, base, nf1, nf2, na, nb, maxcon, hm1 + hm2)
        grow = -nb
    elif mode == 2:  # geom 2's face clips geom 1's edge; the witnesses are swapped after
        nrm, face = _normal(d, t2, g2, m2, n2, f2, madr2, fi)
        _e, end = _edge(d, t1, g1, p1, m1, dim1, idx1, e1d, e1e, e1s, ej)
        nout = _clip_edge(d, b, base, t2, g2, p2, m2, s2, nrm, face, e1s, end, maxcon, hm1 + hm2)
        for k in range(nout):
            o = base + MC_OUT + 7 * k
            w1 = _get3(d, b, o + 1)
            _set3(d, b, o + 1, _get3(d, b, o + 4))
            _set3(d, b, o + 4, w1)
        grow = -nrm
    elif mode == 3:
        nrm, face = _normal(d, t1, g1, m1, n1, f1, madr1, fi)
        _e, end = _edge(d, t2, g2, p2, m2, dim2, idx2, e2d, e2e, e2s, ej)
        nout = _clip_edge(d, b, base, t1, g1, p1, m1, s1, nrm, face, e2s, end, maxcon, hm1 + hm2)
        grow = nrm
    if hm1 != 0.0 or hm2 != 0.0:  # grow both geoms by half the margin
        for k in range(nout):
            o = base + MC_OUT + 7 * k
            if hm1 != 0.0:
                _set3(d, b, o + 1, hm1 * grow + _get3(d, b, o + 1))
            if hm2 != 0.0:
                _set3(d, b, o + 4, -hm2 * grow + _get3(d, b, o + 4))
            d.ccd_f[b, o] = d.ccd_f[b, o] - (hm1 + hm2)
    return nout
