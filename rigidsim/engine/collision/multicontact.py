"""Extra contacts of a convex pair (MuJoCo 4.0.0's multi-contact for cylinders, boxes and capsules).

When GJK/EPA (`gjk.ccd` with multi = 1) finds an overlap, the vertices it came from (EPA's final face, or
the last GJK simplex of the cores in the shallow path) tell which feature of each geom touches: the
distinct support points of each geom (by `gjk.support_index`) make a vertex, an edge or a face.

Face normals: a box's as MuJoCo's box collider of the native ccd (the face all its points share; an edge's
two faces; a corner's three); a cylinder's cap axis (+z for the top cap, -z for the bottom) when all its
points lie on one cap; a capsule has none. Along dir = x2 - x1 (the witness points), a normal of geom 1
must point against dir by more than 0.0888 |dir| and one of geom 2 along it; the most opposed such pair
wins when their dot product is below -0.996: face against face. Otherwise an edge of the geom with the
smaller feature (a capsule's segment through its point, a cylinder's side line from its point to the
other cap, a box's edge or the three edges at its corner) nearly perpendicular to a face normal of the
other (|e . n| < 0.0888): edge against face. Otherwise the one contact stays.

Faces are polygons: a box face's 4 corners, a cylinder cap's 16 rim points (pos + R (r cos_k, -s r sin_k,
s h), s = +1 on the top cap, with 4.0.0's 15-digit tables). The other polygon (or edge) is clipped by the
side planes of the face (Sutherland-Hodgman), points beyond the face's plane dropped; each left point v
with signed distance dd from the face's plane makes a contact with witnesses v + dd * w and v (w: the
other geom's face normal, or the reverse of the face's normal for an edge), distance dd. More than 4
points: the quadrilateral of largest area by a rotating search; an edge left with more than 2: its two
farthest points. In the shallow path the radii and half margins are put back along each contact's
witness direction, as for the one contact.

Scratch: the multi-contact region of ``d.ccd_f[b]`` at `gjk.mc_f(nit)` (`gjk.MC_SIZE` floats).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.support import BOX, CAPSULE, CYLINDER, F_SIMPLEX, NV, _get3, _normalize, _set3, mc_f

FACE_TOL = 0.996
EDGE_TOL = 0.0888
MC_OUT = 2  # up to 4 contacts: dist, x1, x2
MC_FACE1 = 32  # clipping face (16 points)
MC_FACE2 = 80  # clipped polygon or edge (16 points)
MC_PN = 128  # side-plane normals (16) and offsets (16)
MC_PD = 176
MC_PA = 192  # two clipping buffers of 40 points
MC_PB = 312
NPOLY = 40

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
def _feature(d: ti.template(), b, nfeat, geom):
    """The distinct support points of one geom (geom 0: the first, 1: the second) among the nfeat simplex
    vertices: (dim, i0, i1, i2 indices, p0, p1 points). Up to 3 vertices are read (the first repeated to
    fill); an equal index is the same point."""
    col = 3 if geom == 0 else 6
    icol = 10 if geom == 0 else 9
    ja = 1 if nfeat >= 2 else 0
    jb = 2 if nfeat > 2 else 0
    i0 = ti.cast(d.ccd_f[b, F_SIMPLEX + icol], ti.i32)
    i1 = ti.cast(d.ccd_f[b, F_SIMPLEX + ja * NV + icol], ti.i32)
    i2 = ti.cast(d.ccd_f[b, F_SIMPLEX + jb * NV + icol], ti.i32)
    p0 = _get3(d, b, F_SIMPLEX + col)
    p1 = _get3(d, b, F_SIMPLEX + ja * NV + col)
    dim = 3
    if i0 == i1:
        if i0 == i2:
            dim = 1
        else:
            dim = 2
            i1 = i2
            p1 = _get3(d, b, F_SIMPLEX + jb * NV + col)
    elif i2 == i0 or i2 == i1:
        dim = 2
    return dim, ti.Vector([i0, i1, i2]), p0, p1


@ti.func
def _face_normals(gtype, mat, dim, idx, dirn):
    """Candidate face normals of a geom (3 x 3, rows) with their face ids and count."""
    nrm = ti.Matrix.zero(ti.f64, 3, 3)
    fid = ti.Vector([0, 0, 0])
    cnt = 0
    if gtype == CYLINDER:
        if dim == 1:
            s = 1.0 if idx[0] == 0 else -1.0
            for c in ti.static(range(3)):
                nrm[0, c] = s * mat[3 * c + 2]
            fid[0] = idx[0]
            cnt = 1
    elif gtype == BOX:
        shared = 0
        if dim == 3 or dim == 2:
            for k in range(3):
                bit = 1 << k
                allpos = 1
                allneg = 1
                for j in range(dim):
                    if idx[j] & bit:
                        allneg = 0
                    else:
                        allpos = 0
                sgn = 0.0
                if allpos == 1:
                    sgn = 1.0
                elif allneg == 1:
                    sgn = -1.0
                if sgn != 0.0:
                    shared += 1
                    if cnt < 3:
                        for c in ti.static(range(3)):
                            nrm[cnt, c] = sgn * mat[3 * c + k]
                        fid[cnt] = 2 * k + (0 if sgn > 0.0 else 1)
                        cnt += 1
            if (dim == 3 and shared != 1) or (dim == 2 and shared != 2):
                # from the witness direction: a face within the tolerance of it
                cnt = 0
                ln = _normalize(sm.rot_vec_mat_t(dirn, mat))
                for f in range(6):
                    if cnt == 0:
                        k = f // 2
                        sgn = 1.0 if f % 2 == 0 else -1.0
                        if sgn * ln[k] > FACE_TOL:
                            for c in ti.static(range(3)):
                                nrm[0, c] = sgn * mat[3 * c + k]
                            fid[0] = f
                            cnt = 1
        elif dim == 1:
            for k in range(3):
                sgn = 1.0 if (idx[0] >> k) & 1 else -1.0
                for c in ti.static(range(3)):
                    nrm[k, c] = sgn * mat[3 * c + k]
                fid[k] = 2 * k + (0 if sgn > 0.0 else 1)
            cnt = 3
    return nrm, fid, cnt


@ti.func
def _edges(gtype, pos, mat, size, dim, idx, p0, p1):
    """Candidate edges of a geom at its feature: (directions 3 x 3 rows, start point, end points 3 x 3, count)."""
    dirs = ti.Matrix.zero(ti.f64, 3, 3)
    ends = ti.Matrix.zero(ti.f64, 3, 3)
    start = p0
    cnt = 0
    if gtype == CAPSULE:
        z = _axis(mat, 2)
        t = sm.dot3(z, p0 - pos)
        start = p0 + (-t - size[1]) * z
        top = p0 + (size[1] - t) * z
        for c in ti.static(range(3)):
            dirs[0, c] = z[c]
            ends[0, c] = top[c]
        cnt = 1
    elif gtype == CYLINDER:
        ez = -1.0 if idx[0] == 0 else 1.0
        z = _axis(mat, 2)
        e = z * ez
        end = start + (2.0 * size[1]) * e
        for c in ti.static(range(3)):
            dirs[0, c] = e[c]
            ends[0, c] = end[c]
        cnt = 1
    elif gtype == BOX:
        if dim == 2:
            e = _normalize(p1 - p0)
            for c in ti.static(range(3)):
                dirs[0, c] = e[c]
                ends[0, c] = p1[c]
            cnt = 1
        elif dim == 1:
            x = size[0] if idx[0] & 1 else -size[0]
            y = size[1] if idx[0] & 2 else -size[1]
            zz = size[2] if idx[0] & 4 else -size[2]
            for k in range(3):
                sx = -x if k == 0 else x
                sy = -y if k == 1 else y
                sz = -zz if k == 2 else zz
                end = _local_to_world(mat, pos, sx, sy, sz)
                e = _normalize(end - p0)
                for c in ti.static(range(3)):
                    dirs[k, c] = e[c]
                    ends[k, c] = end[c]
            cnt = 3
    return dirs, start, ends, cnt


@ti.func
def _write_face(d: ti.template(), b, off, gtype, pos, mat, size, fid):
    """Polygon of face `fid` of a box or a cylinder at scratch offset `off`; returns its point count."""
    n = 0
    if gtype == BOX:
        for j in range(4):
            code = _box_corner_code(fid, j)
            x = size[0] if code & 1 else -size[0]
            y = size[1] if code & 2 else -size[1]
            z = size[2] if code & 4 else -size[2]
            _set3(d, b, off + 3 * j, _local_to_world(mat, pos, x, y, z))
        n = 4
    elif gtype == CYLINDER:
        s = 1.0 if fid == 0 else -1.0
        for k in range(16):
            _set3(d, b, off + 3 * k, _local_to_world(mat, pos, size[0] * _cos(k), -s * size[0] * _sin(k),
                                                      s * size[1]))
        n = 16
    return n


@ti.func
def _area4(a, b_, c, e):
    ad = e - a
    db = b_ - e
    bc = c - b_
    ca = a - c
    g = sm.cross3(ad, db) + sm.cross3(bc, ca)
    return 0.5 * ti.sqrt(sm.dot3(g, g))


@ti.func
def _clip(d: ti.template(), b, base, nface1, nface2, n, wdir, maxcon):
    """Clip polygon FACE2 (nface2 points) by the side planes of FACE1 (nface1 points, normal n), drop the
    points beyond FACE1's plane and write the contacts (dist, x1, x2) to OUT; returns how many."""
    f1 = base + MC_FACE1
    # side planes through each edge of face 1, perpendicular to it
    for i in range(nface1):
        v1 = _get3(d, b, f1 + 3 * i)
        v2 = _get3(d, b, f1 + 3 * ((i + 1) % nface1))
        pn = _normalize(sm.cross3(v2 - v1, n))
        _set3(d, b, base + MC_PN + 3 * i, pn)
        d.ccd_f[b, base + MC_PD + i] = sm.dot3(pn, v1)
    src = base + MC_PA
    dst = base + MC_PB
    npoly = nface2
    for i in range(nface2):
        _set3(d, b, src + 3 * i, _get3(d, b, base + MC_FACE2 + 3 * i))
    for e in range(nface1):
        a = _get3(d, b, f1 + 3 * e)
        pn = _get3(d, b, base + MC_PN + 3 * e)
        pd = d.ccd_f[b, base + MC_PD + e]
        ncl = 0
        for i in range(npoly):
            p = _get3(d, b, src + 3 * i)
            q = _get3(d, b, src + 3 * ((i + 1) % npoly))
            pq = q - p
            in1 = sm.dot3(p - a, pn) > -1e-15
            in2 = sm.dot3(q - a, pn) > -1e-15
            if in1 and in2:
                if ncl < NPOLY:
                    _set3(d, b, dst + 3 * ncl, q)
                    ncl += 1
            elif in1 or in2:
                den = sm.dot3(pn, pq)
                if den != 0.0:
                    t = (pd - sm.dot3(pn, p)) / den
                    if t >= 0.0 and t <= 1.0 and ncl < NPOLY:
                        _set3(d, b, dst + 3 * ncl, p + pq * t)
                        ncl += 1
                if in2 and ncl < NPOLY:
                    _set3(d, b, dst + 3 * ncl, q)
                    ncl += 1
        tmp = src
        src = dst
        dst = tmp
        npoly = ncl
    # drop the points beyond face 1's plane
    f0 = _get3(d, b, f1)
    m = npoly
    npoly = 0
    for i in range(m):
        p = _get3(d, b, src + 3 * i)
        if sm.dot3(p - f0, n) <= 0.0:
            _set3(d, b, src + 3 * npoly, p)
            npoly += 1
    # the points kept: indices into src
    sel = ti.Vector([0, 1, 2, 3])
    nsel = 0
    if npoly >= 1:
        if maxcon < 5 and npoly > 4:
            ia, ib, ic, idd = 0, 1, 2, 3
            best = _area4(_get3(d, b, src), _get3(d, b, src + 3), _get3(d, b, src + 6), _get3(d, b, src + 9))
            sel = ti.Vector([0, 1, 2, 3])
            while ia < npoly:
                while True:
                    mn = _area4(_get3(d, b, src + 3 * ia), _get3(d, b, src + 3 * ib), _get3(d, b, src + 3 * ic),
                                _get3(d, b, src + 3 * ((idd + 1) % npoly)))
                    if mn <= best:
                        break
                    best = mn
                    idd = (idd + 1) % npoly
                    sel = ti.Vector([ia, ib, ic, idd])
                    while True:
                        mn2 = _area4(_get3(d, b, src + 3 * ia), _get3(d, b, src + 3 * ib),
                                     _get3(d, b, src + 3 * ((ic + 1) % npoly)), _get3(d, b, src + 3 * idd))
                        if mn2 <= best:
                            break
                        best = mn2
                        ic = (ic + 1) % npoly
                        sel = ti.Vector([ia, ib, ic, idd])
                    while True:
                        mn3 = _area4(_get3(d, b, src + 3 * ia), _get3(d, b, src + 3 * ((ib + 1) % npoly)),
                                     _get3(d, b, src + 3 * ic), _get3(d, b, src + 3 * idd))
                        if mn3 <= best:
                            break
                        best = mn3
                        ib = (ib + 1) % npoly
                        sel = ti.Vector([ia, ib, ic, idd])
                if ib == ia:
                    ib = (ib + 1) % npoly
                    if ic == ib:
                        ic = (ic + 1) % npoly
                        if idd == ic:
                            idd = (idd + 1) % npoly
                ia += 1
            nsel = 4
        elif nface2 == 2 and npoly > 2:
            bi = 0
            bj = 1
            dd = 0.0
            for i in range(npoly):
                for j in range(i + 1, npoly):
                    df = _get3(d, b, src + 3 * j) - _get3(d, b, src + 3 * i)
                    d2 = sm.dot3(df, df)
                    if d2 > dd:
                        dd = d2
                        bi = i
                        bj = j
            sel = ti.Vector([bi, bj, 0, 0])
            nsel = 2
        else:
            nsel = ti.min(npoly, 4)
    nsel = ti.min(nsel, maxcon)
    for k in range(nsel):
        v = _get3(d, b, src + 3 * sel[k])
        dd = sm.dot3(v - f0, n)
        o = base + MC_OUT + 7 * k
        d.ccd_f[b, o] = dd
        _set3(d, b, o + 1, v + wdir * dd)
        _set3(d, b, o + 4, v)
    return nsel


@ti.func
def multicontact(d: ti.template(), b, nit, t1, p1, m1, s1, t2, p2, m2, s2, x1, x2, nfeat, maxcon):
    """Up to `maxcon` contacts of the overlap `gjk.ccd` found (witnesses x1, x2; nfeat > 0 simplex vertices
    in scratch), as the module docstring says: written to the OUT rows of the multi-contact region as
    (dist, x1, x2); returns how many (0: keep the one contact)."""
    base = mc_f(nit)
    dim1, idx1, q1a, q1b = _feature(d, b, nfeat, 0)
    dim2, idx2, q2a, q2b = _feature(d, b, nfeat, 1)
    dirv = x2 - x1
    dlen = ti.sqrt(sm.dot3(dirv, dirv))
    n1, f1, c1 = _face_normals(t1, m1, dim1, idx1, dirv * -1.0)
    n2, f2, c2 = _face_normals(t2, m2, dim2, idx2, dirv)
    best = 0.0
    bi = -1
    bj = -1
    for i in range(c1):
        a = ti.Vector([n1[i, 0], n1[i, 1], n1[i, 2]])
        if sm.dot3(a, dirv) < -EDGE_TOL * dlen:
            for j in range(c2):
                c = ti.Vector([n2[j, 0], n2[j, 1], n2[j, 2]])
                if sm.dot3(c, dirv) > EDGE_TOL * dlen:
                    val = sm.dot3(a, c)
                    if val < best:
                        best = val
                        bi = i
                        bj = j
    nout = 0
    if bi >= 0 and best < -FACE_TOL:  # face against face: clip face 2 by face 1
        nf1 = _write_face(d, b, base + MC_FACE1, t1, p1, m1, s1, f1[bi])
        nf2 = _write_face(d, b, base + MC_FACE2, t2, p2, m2, s2, f2[bj])
        nout = _clip(d, b, base, nf1, nf2, ti.Vector([n1[bi, 0], n1[bi, 1], n1[bi, 2]]),
                     ti.Vector([n2[bj, 0], n2[bj, 1], n2[bj, 2]]), maxcon)
    else:
        first = 0 if dim1 <= dim2 else 1
        for attempt in range(2):
            side = first if attempt == 0 else 1 - first  # the geom whose edge meets the other's face
            if nout > 0 or (side == 0 and dim1 == 3) or (side == 1 and dim2 == 3):
                side = -1
            if side >= 0:
                ed = ti.Matrix.zero(ti.f64, 3, 3)
                ends = ti.Matrix.zero(ti.f64, 3, 3)
                start = sm.zero3()
                ce = 0
                fn = n2
                fi = f2
                cf = c2
                if side == 0:
                    ed, start, ends, ce = _edges(t1, p1, m1, s1, dim1, idx1, q1a, q1b)
                else:
                    ed, start, ends, ce = _edges(t2, p2, m2, s2, dim2, idx2, q2a, q2b)
                    fn = n1
                    fi = f1
                    cf = c1
                ei = -1
                fj = -1
                for i in range(cf):
                    for j in range(ce):
                        if ei < 0:
                            val = (ed[j, 0] * fn[i, 0] + ed[j, 1] * fn[i, 1] + ed[j, 2] * fn[i, 2])
                            if ti.abs(val) < EDGE_TOL:
                                ei = j
                                fj = i
                if ei >= 0:
                    nrm = ti.Vector([fn[fj, 0], fn[fj, 1], fn[fj, 2]])
                    nf = 0
                    if side == 0:
                        nf = _write_face(d, b, base + MC_FACE1, t2, p2, m2, s2, fi[fj])
                    else:
                        nf = _write_face(d, b, base + MC_FACE1, t1, p1, m1, s1, fi[fj])
                    _set3(d, b, base + MC_FACE2, start)
                    _set3(d, b, base + MC_FACE2 + 3, ti.Vector([ends[ei, 0], ends[ei, 1], ends[ei, 2]]))
                    if nf >= 3:
                        nout = _clip(d, b, base, nf, 2, nrm, nrm * -1.0, maxcon)
                    if side == 0:  # the face was geom 2's: swap the witnesses
                        for k in range(nout):
                            o = base + MC_OUT + 7 * k
                            w1 = _get3(d, b, o + 1)
                            _set3(d, b, o + 1, _get3(d, b, o + 4))
                            _set3(d, b, o + 4, w1)
    r1 = d.ccd_f[b, base]
    r2 = d.ccd_f[b, base + 1]
    if r1 != 0.0 or r2 != 0.0:  # put the radii and half margins back
        for k in range(nout):
            o = base + MC_OUT + 7 * k
            w1 = _get3(d, b, o + 1)
            w2 = _get3(d, b, o + 4)
            nn = _normalize(w2 - w1)
            if r1 != 0.0:
                w1 = w1 + r1 * nn
            if r2 != 0.0:
                w2 = w2 - r2 * nn
            _set3(d, b, o + 1, w1)
            _set3(d, b, o + 4, w2)
            d.ccd_f[b, o] = d.ccd_f[b, o] - (r1 + r2)
    return nout
