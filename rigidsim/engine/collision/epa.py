"""EPA, after MuJoCo 4.0.0's native collider (see `gjk` for the pipeline and what 4.0.0 changed): the initial
polytope around GJK's final simplex (segment, triangle or tetrahedron), then its expansion towards the
origin until the penetration depth and witness points converge. State lives in the scratch rows
(`support`'s layout)."""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.support import (
    BIG, EPA_MAX_ITER, F_SIMPLEX, F_VERTS, HORIZON_MAX, I_FACE, I_HZN, MINVAL2, NFACE_F, NFACE_I, NV, _copy_vertex,
    _det3, _face_f, _get3, _map_i, _minkowski, _project_origin_plane, _set3, _set_vertex, _stack_i, _tri_coords,
)
from rigidsim.engine.layout import MINVAL



# polytope status codes (0: built, EPA runs)
_P2_NONCONVEX, _P3_BAD_NORMAL, _P3_INVALID_V4, _P3_INVALID_V5 = 2, 4, 5, 6
_P3_MISSING_ORIGIN, _P3_ORIGIN_ON_FACE, _P4_MISSING_ORIGIN = 7, 8, 10


# ------------------------------------------------------------------------------------------ EPA


@ti.func
def _same_side(p0, p1, p2, p3):
    """p3 and the origin lie strictly on the same side of the plane (p0, p1, p2)."""
    n = sm.cross3(p1 - p0, p2 - p0)
    dot1 = sm.dot3(n, p3 - p0)
    dot2 = sm.dot3(n, p0 * -1.0)
    return (dot1 > 0.0 and dot2 > 0.0) or (dot1 < 0.0 and dot2 < 0.0)


@ti.func
def _origin_in_tetra(p0, p1, p2, p3):
    return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0) and _same_side(p2, p3, p0, p1)
            and _same_side(p3, p0, p1, p2))


@ti.func
def _rot120(axis):
    """Rotation matrix (row-major 9-vector) by 120 degrees about `axis`."""
    u = axis / ti.sqrt(sm.dot3(axis, axis))
    s = 0.86602540378
    c = -0.5
    return ti.Vector([c + u[0] * u[0] * (1 - c), u[0] * u[1] * (1 - c) - u[2] * s, u[0] * u[2] * (1 - c) + u[1] * s,
                      u[1] * u[0] * (1 - c) + u[2] * s, c + u[1] * u[1] * (1 - c), u[1] * u[2] * (1 - c) - u[0] * s,
                      u[0] * u[2] * (1 - c) - u[1] * s, u[1] * u[2] * (1 - c) + u[0] * s, c + u[2] * u[2] * (1 - c)])


@ti.func
def _ray_hits_triangle(v1, v2, v3, v4, v5):
    """The line v1 -> v2 passes through triangle (v3, v4, v5) (the three signed volumes agree)."""
    d12 = v2 - v1
    d13 = v3 - v1
    d14 = v4 - v1
    d15 = v5 - v1
    vol1 = _det3(d13, d14, d12)
    vol2 = _det3(d14, d15, d12)
    vol3 = _det3(d15, d13, d12)
    return (vol1 >= 0.0 and vol2 >= 0.0 and vol3 >= 0.0) or (vol1 <= 0.0 and vol2 <= 0.0 and vol3 <= 0.0)


@ti.func
def _point_on_triangle(v1, v2, v3, p):
    """p lies on triangle (v1, v2, v3) (within MINVAL)."""
    lam = _tri_coords(v1, v2, v3, p)
    res = False
    if lam[0] >= 0.0 and lam[1] >= 0.0 and lam[2] >= 0.0:
        pr = v1 * lam[0] + v2 * lam[1] + v3 * lam[2]
        diff = pr - p
        res = ti.sqrt(sm.dot3(diff, diff)) < MINVAL
    return res


# faces of the initial polytopes: vertices a, b, c and the neighbours across edges ab, bc, ca, packed
# 3 bits each (a | b << 3 | c << 6 | n0 << 9 | n1 << 12 | n2 << 15)
def _pack(a, b, c, n0, n1, n2):
    return a | b << 3 | c << 6 | n0 << 9 | n1 << 12 | n2 << 15


# tetrahedron from a 3-simplex (vertices 0..3)
_TETRA = (_pack(0, 1, 2, 1, 3, 2), _pack(0, 3, 1, 2, 3, 0), _pack(0, 2, 3, 0, 3, 1), _pack(3, 2, 1, 2, 0, 1))
# hexahedron around a segment (0, 1) with three points 2, 3, 4 about it
_HEX2 = (_pack(0, 2, 3, 1, 3, 2), _pack(0, 4, 2, 2, 4, 0), _pack(0, 3, 4, 0, 5, 1),
         _pack(1, 3, 2, 5, 0, 4), _pack(1, 2, 4, 3, 1, 5), _pack(1, 4, 3, 4, 2, 3))
# hexahedron on a triangle (0, 1, 2) with apexes 4 (along its normal) and 3 (against it)
_HEX3 = (_pack(4, 0, 1, 1, 3, 2), _pack(4, 2, 0, 2, 4, 0), _pack(4, 1, 2, 0, 5, 1),
         _pack(3, 1, 0, 5, 0, 4), _pack(3, 0, 2, 3, 1, 5), _pack(3, 2, 1, 4, 2, 3))


@ti.func
def _face_code(shape, f):
    """Packed face f of the initial polytope of a `shape`-simplex."""
    code = 0
    for j in ti.static(range(6)):
        if f == j:
            if ti.static(j < 4):
                if shape == 4:
                    code = _TETRA[j]
            if shape == 2:
                code = _HEX2[j]
            elif shape == 3:
                code = _HEX3[j]
    return code


@ti.func
def _attach_face(d: ti.template(), b, nit, fi, v1, v2, v3, n0, n1, n2, center):
    """Write face fi (vertices v1, v2, v3; neighbours n0, n1, n2) with the origin's projection on its plane
    made to point outwards; returns its squared distance from the origin (0 for a degenerate face)."""
    fb = I_FACE + fi * NFACE_I
    d.ccd_i[b, fb] = v1
    d.ccd_i[b, fb + 1] = v2
    d.ccd_i[b, fb + 2] = v3
    d.ccd_i[b, fb + 3] = n0
    d.ccd_i[b, fb + 4] = n1
    d.ccd_i[b, fb + 5] = n2
    a = _get3(d, b, F_VERTS + v1 * NV)
    p, ret = _project_origin_plane(_get3(d, b, F_VERTS + v3 * NV), _get3(d, b, F_VERTS + v2 * NV), a)
    dist2 = 0.0
    if ret == 0:
        if sm.dot3(p, a - center) < 0.0:
            p = p * -1.0
        dist2 = sm.dot3(p, p)
        ff = _face_f(nit) + fi * NFACE_F
        _set3(d, b, ff, p)
        d.ccd_f[b, ff + 3] = dist2
        d.ccd_i[b, fb + 6] = -1
    return dist2


@ti.func
def _delete_face(d: ti.template(), b, nit, fi, nmap):
    """Remove face fi from the face map (its slot takes the last entry) and mark it deleted; returns nmap."""
    fb = I_FACE + fi * NFACE_I
    slot = d.ccd_i[b, fb + 6]
    if slot >= 0:
        nmap -= 1
        last = d.ccd_i[b, _map_i(nit) + nmap]
        d.ccd_i[b, _map_i(nit) + slot] = last
        d.ccd_i[b, I_FACE + last * NFACE_I + 6] = slot
    d.ccd_i[b, fb + 6] = -2
    return nmap


@ti.func
def _horizon(d: ti.template(), b, nit, face, w, nmap):
    """Delete `face` and, depth first, every face visible from w connected to it; the edges between deleted
    and kept faces (the horizon) are listed in visiting order. Returns (number of horizon edges, nmap).
    An explicit stack of (face, entry edge, next neighbour) replaces the recursion."""
    nmap = _delete_face(d, b, nit, face, nmap)
    nedges = 0
    d.ccd_i[b, _stack_i(nit)] = face * 16  # entry edge 0, next neighbour 0: visits neighbours 0, 1, 2
    sp = 1
    while sp > 0:
        top = d.ccd_i[b, _stack_i(nit) + sp - 1]
        f = top >> 4
        e = (top >> 2) & 3
        kk = top & 3
        if kk == 3:
            sp -= 1
        else:
            d.ccd_i[b, _stack_i(nit) + sp - 1] = top + 1
            i = (e + kk) % 3
            fb = I_FACE + f * NFACE_I
            adj = d.ccd_i[b, fb + 3 + i]
            ab = I_FACE + adj * NFACE_I
            if d.ccd_i[b, ab + 6] > -2:
                vert = d.ccd_i[b, fb + (i + 1) % 3]
                edge = 2
                if d.ccd_i[b, ab] == vert:
                    edge = 0
                elif d.ccd_i[b, ab + 1] == vert:
                    edge = 1
                af = _face_f(nit) + adj * NFACE_F
                if sm.dot3(_get3(d, b, af), w) - d.ccd_f[b, af + 3] > MINVAL:  # visible: delete, go deeper
                    nmap = _delete_face(d, b, nit, adj, nmap)
                    d.ccd_i[b, _stack_i(nit) + sp] = adj * 16 + edge * 4 + 1
                    sp += 1
                elif nedges < HORIZON_MAX:
                    d.ccd_i[b, I_HZN + 2 * nedges] = adj
                    d.ccd_i[b, I_HZN + 2 * nedges + 1] = edge
                    nedges += 1
    return nedges, nmap


@ti.func
def _epa_support(d: ti.template(), b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, direction, dnorm, vi):
    """Support point along `direction` (of norm dnorm; +x when too short) stored as polytope vertex vi."""
    dr = ti.Vector([1.0, 0.0, 0.0])
    if dnorm > MINVAL:
        dr = ti.Vector([direction[0] / dnorm, direction[1] / dnorm, direction[2] / dnorm])
    v, v1, v2, corner, ix1 = _minkowski(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, dr, dr * -1.0)
    _set_vertex(d, b, F_VERTS + vi * NV, v, v1, v2, corner, ix1)
    return v


@ti.func
def _origin_on_edge(a, c):
    """The origin lies on segment (a, c): a and c on opposite sides of it, and its projection on the line
    (from c) within 1e-15 of it."""
    res = False
    if sm.dot3(a, c) < 0.0:
        diff = c - a
        dd = sm.dot3(diff, diff)
        if dd >= MINVAL2:
            t = -(sm.dot3(c, diff) / dd)
            p = t * diff + c
            res = sm.dot3(p, p) < MINVAL2
    return res


@ti.func
def _ray_volumes(v1, v2, v3, v4, v5):
    """Signed volumes of the line v1 -> v2 against the edges (v3, v4), (v4, v5), (v5, v3) of a triangle."""
    d12 = v2 - v1
    d13 = v3 - v1
    d14 = v4 - v1
    d15 = v5 - v1
    return ti.Vector([_det3(d13, d14, d12), _det3(d14, d15, d12), _det3(d15, d13, d12)])


@ti.func
def _hexa_order(vol):
    """Where the line between a triangle's two apexes misses the triangle (volumes `vol` against its edges
    (t0, t1), (t1, t2), (t2, t0)), the polytope is rebuilt. Returns (slots, hexa): the polytope vertices
    (t0, t1, t2, apex along +n, apex along -n) packed 3 bits each, in the scratch numbering (triangle
    0, 1, 2; apex along -n 3, along +n 4). With one volume positive and the other two below -1e-15, a
    hexahedron on the triangle (that edge's far vertex, both apexes) with that edge's ends as apexes;
    otherwise (hexa 0) the tetrahedron of the edge with the least volume and both apexes (slots 0, 1, 3,
    4)."""
    slots = 0 | 1 << 3 | 2 << 6 | 4 << 9 | 3 << 12
    hexa = 1
    if vol[0] > 0.0 and vol[1] < -MINVAL and vol[2] < -MINVAL:
        slots = 2 | 3 << 3 | 4 << 6 | 0 << 9 | 1 << 12
    elif vol[1] > 0.0 and vol[0] < -MINVAL and vol[2] < -MINVAL:
        slots = 0 | 3 << 3 | 4 << 6 | 1 << 9 | 2 << 12
    elif vol[2] > 0.0 and vol[1] < -MINVAL and vol[0] < -MINVAL:
        slots = 1 | 3 << 3 | 4 << 6 | 2 << 9 | 0 << 12
    else:
        hexa = 0
        if vol[1] >= vol[0] and vol[2] >= vol[0]:
            slots = 0 | 1 << 3 | 4 << 9 | 3 << 12
        elif vol[0] >= vol[1] and vol[2] >= vol[1]:
            slots = 1 | 2 << 3 | 4 << 9 | 3 << 12
        else:
            slots = 2 | 0 << 3 | 4 << 9 | 3 << 12
    return slots, hexa


@ti.func
def _slot(packed, k):
    return (packed >> (3 * k)) & 7


@ti.func
def _polytope(d: ti.template(), b, nit, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, nsimplex, tol):
    """The initial polytope around GJK's simplex (2, 3 or 4 vertices in scratch): a tetrahedron, or a
    hexahedron built with extra support points around a segment or on both sides of a triangle. A
    tetrahedron or segment hexahedron with the origin on a face falls back to that face's triangle.

    From a triangle: the support points along both normals (apexes) must lie off the triangle's plane on
    their side (by 1e-15 of the normal's length); when the line between them misses the triangle the
    hexahedron is rebuilt on another triangle or becomes a tetrahedron (`_hexa_order`); its centre is
    the mean of its vertices. With the origin on a face of it, the triangle falls back to the segment
    of it that holds the origin (once; not when the triangle came from a segment). A face that does not
    separate the origin from the rest of the polytope is tolerated when the origin is within the
    tolerance of its plane.
    Returns (status, vertex count, face count, centre); status 0 when EPA can run."""
    shape = nsimplex
    allow_edge = 1
    err = 0
    nverts = 0
    nfaces = 0
    center = sm.zero3()
    done = 0
    while done == 0:
        nverts = 0
        nfaces = 0
        dirs = ti.Matrix.zero(float, 3, 3)
        norms = ti.Vector([0.0, 0.0, 0.0])
        nsup = 0
        nrm = sm.zero3()
        nn = 0.0
        v1 = _get3(d, b, F_SIMPLEX)
        v2 = _get3(d, b, F_SIMPLEX + NV)
        v3 = _get3(d, b, F_SIMPLEX + 2 * NV)
        if shape == 4:
            center = (v1 + v2 + v3 + _get3(d, b, F_SIMPLEX + 3 * NV)) * 0.25
            nverts = 4
        elif shape == 2:
            center = (v1 + v2) * 0.5
            diff = v2 - v1
            value = BIG
            index = 0
            for i in ti.static(range(3)):
                if ti.abs(diff[i]) < value:
                    value = ti.abs(diff[i])
                    index = i
            ax = sm.zero3()
            ax[index] = 1.0
            r = _rot120(diff)
            e1 = sm.cross3(ax, diff)
            e2 = sm.rot_vec_mat(e1, r)
            e3 = sm.rot_vec_mat(e2, r)
            for c in ti.static(range(3)):
                dirs[0, c] = e1[c]
                dirs[1, c] = e2[c]
                dirs[2, c] = e3[c]
            norms = ti.Vector([ti.sqrt(sm.dot3(e1, e1)), ti.sqrt(sm.dot3(e2, e2)), ti.sqrt(sm.dot3(e3, e3))])
            nverts = 2
            nsup = 3
        else:
            nrm = sm.cross3(v2 - v1, v3 - v1)
            nn = ti.sqrt(sm.dot3(nrm, nrm))
            if nn < MINVAL:
                err = _P3_BAD_NORMAL
            for c in ti.static(range(3)):
                dirs[0, c] = -nrm[c]
                dirs[1, c] = nrm[c]
            norms = ti.Vector([nn, nn, 0.0])
            nverts = 3
            nsup = 2
        # code slot -> scratch vertex; the face table used
        smap = 0 | 1 << 3 | 2 << 6 | 3 << 9 | 4 << 12
        fshape = shape
        if err == 0:
            for i in range(nverts):
                _copy_vertex(d, b, F_VERTS + i * NV, F_SIMPLEX + i * NV)
            for j in range(nsup):
                _epa_support(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2,
                             ti.Vector([dirs[j, 0], dirs[j, 1], dirs[j, 2]]), norms[j], nverts)
                nverts += 1
            if shape == 3:
                v4 = _get3(d, b, F_VERTS + 4 * NV)
                v5 = _get3(d, b, F_VERTS + 3 * NV)
                if _point_on_triangle(v1, v2, v3, v4):
                    err = _P3_INVALID_V4
                elif _point_on_triangle(v1, v2, v3, v5):
                    err = _P3_INVALID_V5
                elif sm.dot3(nrm, v4 - v1) < nn * MINVAL or sm.dot3(nrm * -1.0, v5 - v1) < nn * MINVAL:
                    err = _P3_ORIGIN_ON_FACE
                else:
                    vol = _ray_volumes(v4, v5, v1, v2, v3)
                    slots = 0 | 1 << 3 | 2 << 6 | 4 << 9 | 3 << 12
                    hexa = 1
                    if not ((vol[0] >= 0.0 and vol[1] >= 0.0 and vol[2] >= 0.0)
                            or (vol[0] <= 0.0 and vol[1] <= 0.0 and vol[2] <= 0.0)):
                        slots, hexa = _hexa_order(vol)
                    q0 = _get3(d, b, F_VERTS + _slot(slots, 0) * NV)
                    q1 = _get3(d, b, F_VERTS + _slot(slots, 1) * NV)
                    q3 = _get3(d, b, F_VERTS + _slot(slots, 3) * NV)
                    q4 = _get3(d, b, F_VERTS + _slot(slots, 4) * NV)
                    if hexa == 1:
                        center = (q0 + q1 + _get3(d, b, F_VERTS + _slot(slots, 2) * NV) + q3 + q4) * 0.2
                        smap = (_slot(slots, 0) | _slot(slots, 1) << 3 | _slot(slots, 2) << 6 | _slot(slots, 4) << 9
                                | _slot(slots, 3) << 12)
                    else:
                        center = (q0 + q1 + q3 + q4) * 0.25
                        smap = _slot(slots, 0) | _slot(slots, 1) << 3 | _slot(slots, 3) << 6 | _slot(slots, 4) << 9
                        fshape = 4
        fail = -1
        if err == 0:
            nf = 4 if fshape == 4 else 6
            for f in range(nf):
                code = _face_code(fshape, f)
                dist2 = _attach_face(d, b, nit, f, _slot(smap, code & 7), _slot(smap, (code >> 3) & 7),
                                     _slot(smap, (code >> 6) & 7), (code >> 9) & 7, (code >> 12) & 7,
                                     (code >> 15) & 7, center)
                nfaces += 1
                if dist2 < MINVAL2:
                    if fail < 0:
                        fail = f
                    if shape != 3:
                        break
        again = 0
        if err == 0 and fail >= 0:
            if shape == 3:
                ea = -1
                eb = -1
                if allow_edge == 1:
                    if _origin_on_edge(v1, v2):
                        ea, eb = 0, 1
                    elif _origin_on_edge(v2, v3):
                        ea, eb = 1, 2
                    elif _origin_on_edge(v3, v1):
                        ea, eb = 2, 0
                if ea >= 0:  # continue from the segment that holds the origin
                    _copy_vertex(d, b, F_SIMPLEX, F_VERTS + ea * NV)
                    _copy_vertex(d, b, F_SIMPLEX + NV, F_VERTS + eb * NV)
                    shape = 2
                    again = 1
                else:
                    err = _P3_ORIGIN_ON_FACE
            else:  # continue from the triangle of the failed face
                code = _face_code(shape, fail)
                for c in ti.static(range(3)):
                    _copy_vertex(d, b, F_SIMPLEX + c * NV, F_VERTS + ((code >> (3 * c)) & 7) * NV)
                if shape == 2:
                    allow_edge = 0
                shape = 3
                again = 1
        if again == 0:
            if err == 0 and shape == 4:
                if not _origin_in_tetra(v1, v2, v3, _get3(d, b, F_SIMPLEX + 3 * NV)):
                    err = _P4_MISSING_ORIGIN
            if err == 0 and shape == 2:
                if not _ray_hits_triangle(v1, v2, _get3(d, b, F_VERTS + 2 * NV), _get3(d, b, F_VERTS + 3 * NV),
                                          _get3(d, b, F_VERTS + 4 * NV)):
                    err = _P2_NONCONVEX
            if err == 0 and shape == 3:  # every face must separate the origin from the polytope, or nearly
                tol2 = tol * tol
                for f in range(nfaces):
                    code = _face_code(fshape, f)
                    opp = 3 - f
                    if fshape == 3:
                        opp = 2 - f % 3
                    fb = I_FACE + f * NFACE_I
                    if not _same_side(_get3(d, b, F_VERTS + d.ccd_i[b, fb] * NV),
                                      _get3(d, b, F_VERTS + d.ccd_i[b, fb + 1] * NV),
                                      _get3(d, b, F_VERTS + d.ccd_i[b, fb + 2] * NV),
                                      _get3(d, b, F_VERTS + _slot(smap, opp) * NV)):
                        if d.ccd_f[b, _face_f(nit) + f * NFACE_F + 3] >= tol2:
                            err = _P3_MISSING_ORIGIN
            done = 1
    if err == 0:
        for i in range(nfaces):
            d.ccd_i[b, _map_i(nit) + i] = i
            d.ccd_i[b, I_FACE + i * NFACE_I + 6] = i
    return err, nverts, nfaces, center


@ti.func
def _epa(d: ti.template(), b, nit, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, nverts, nfaces, center, tol, discrete):
    """Expand the polytope towards the boundary of the Minkowski difference until the face nearest the
    origin is within `tol` of it. Returns (found, dist, x1, x2): the signed distance (minus the face's
    distance from the origin) and the witness points on geom 1 and geom 2."""
    nmap = nfaces
    upper = BIG
    upper2 = BIG
    face = -1
    pface = -1
    maxfaces = 6 * nit
    epa_tol = tol
    if discrete == 1:
        epa_tol = MINVAL
    kmax = ti.min(nit, EPA_MAX_ITER)
    k = 0
    while k < kmax:
        pface = face
        lower2 = BIG
        for i in range(nmap):
            fi = d.ccd_i[b, _map_i(nit) + i]
            dd = d.ccd_f[b, _face_f(nit) + fi * NFACE_F + 3]
            if dd < lower2:
                face = fi
                lower2 = dd
        if lower2 > upper2 or face < 0:
            face = pface
            break
        if lower2 <= 0.0:  # origin on a face's plane
            break
        lower = ti.sqrt(lower2)
        fv = _get3(d, b, _face_f(nit) + face * NFACE_F)
        wi = nverts
        w = _epa_support(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, fv, lower, wi)
        nverts += 1
        upper_k = sm.dot3(fv, w) / lower
        if upper_k < upper:
            upper = upper_k
            upper2 = upper * upper
        if upper_k - lower < epa_tol:  # this step's bound (MuJoCo 4.0.0), not the best one so far
            if k == 0 and upper < lower - epa_tol:
                face = -1
            break
        if discrete == 1:  # a support vertex met before (the same box corner or mesh vertex of geom 2 and of
            # geom 1; a prism's feature is always -1): stop
            repeated = 0
            for i in range(nverts - 1):
                if (d.ccd_f[b, F_VERTS + i * NV + 9] == d.ccd_f[b, F_VERTS + wi * NV + 9]
                        and d.ccd_f[b, F_VERTS + i * NV + 10] == d.ccd_f[b, F_VERTS + wi * NV + 10]):
                    repeated = 1
            if repeated == 1:
                break
        nedges, nmap = _horizon(d, b, nit, face, w, nmap)
        if nedges < 3:
            face = -1
            break
        if nedges > maxfaces - nfaces:
            break
        base = nfaces
        for i in range(nedges):
            hf = d.ccd_i[b, I_HZN + 2 * i]
            he = d.ccd_i[b, I_HZN + 2 * i + 1]
            hb = I_FACE + hf * NFACE_I
            a = d.ccd_i[b, hb + he]
            c = d.ccd_i[b, hb + (he + 1) % 3]
            d.ccd_i[b, hb + 3 + he] = base + i
            dist2 = _attach_face(d, b, nit, base + i, wi, c, a, base + (i + nedges - 1) % nedges, hf,
                                 base + (i + 1) % nedges, center)
            nfaces += 1
            if dist2 == 0.0:
                face = -1
                break
            if dist2 >= lower2 and dist2 <= upper2:
                d.ccd_i[b, _map_i(nit) + nmap] = base + i
                d.ccd_i[b, I_FACE + (base + i) * NFACE_I + 6] = nmap
                nmap += 1
        if nmap == 0 or face < 0:
            break
        k += 1
    found = 0
    dist = 0.0
    x1 = sm.zero3()
    x2 = sm.zero3()
    if face >= 0:
        fb = I_FACE + face * NFACE_I
        ia = F_VERTS + d.ccd_i[b, fb] * NV
        ib = F_VERTS + d.ccd_i[b, fb + 1] * NV
        ic = F_VERTS + d.ccd_i[b, fb + 2] * NV
        ff = _face_f(nit) + face * NFACE_F
        lam = _tri_coords(_get3(d, b, ia), _get3(d, b, ib), _get3(d, b, ic), _get3(d, b, ff))
        x1 = lam[0] * _get3(d, b, ia + 3) + lam[1] * _get3(d, b, ib + 3) + lam[2] * _get3(d, b, ic + 3)
        x2 = lam[0] * _get3(d, b, ia + 6) + lam[1] * _get3(d, b, ib + 6) + lam[2] * _get3(d, b, ic + 6)
        dist = -ti.sqrt(d.ccd_f[b, ff + 3])
        found = 1
        for c in range(3):  # the final face, for the multi-contact: the simplex slots are free now
            _copy_vertex(d, b, F_SIMPLEX + c * NV, F_VERTS + d.ccd_i[b, fb + c] * NV)
    return found, dist, x1, x2
