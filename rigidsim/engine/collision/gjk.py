"""Convex collision by GJK and EPA, after MuJoCo's native convex collider (mjc_Convex -> mjc_ccd).

MuJoCo collides every convex pair without an analytic function through support functions: GJK finds the
distance between the two shapes (or that they overlap), EPA the penetration depth and the witness points
of an overlap. This module follows that pipeline step by step, with the same tolerances and iteration
limits (``opt.ccd_tolerance``, ``opt.ccd_iterations``), the same branch decisions and the same operation
order, so that float64 contacts agree with mj_collision's.

Support functions: sphere, capsule, ellipsoid, cylinder and box (MuJoCo's geom_size meanings). The pair's
margin inflates each shape by half of it along the support direction. When a sphere or capsule is involved,
or the margin is positive, GJK first measures the distance between the cores: the shapes without margin,
a sphere shrunk to its centre and a capsule to its segment. When the cores are apart by more than the
tolerance, the set-aside radii and half margins are added back along the witness direction (a contact if
the result is negative); only a deeper overlap runs GJK again on the full inflated shapes and then EPA.

MuJoCo 4.0.0 differs from its earlier native collider (the 3.x sources this follows otherwise) in ways
found by experiment and by reading the library's machine code, and kept here: the core-distance stage also
runs for every pair with a margin; GJK has no separate tetrahedron intersection test, measures its duality
gap only from the second step, marks the shapes apart on any positive lower bound while measuring, takes
the next iterate as the origin's projection on the simplex's line or plane, and stops on a norm under
1e-15 when measuring; the subdistance steps compute areas from edge differences and divide by their sum
(also in EPA's witness coordinates), try all three edges of a degenerate triangle, and a segment whose
origin lies beyond its first vertex returns that vertex; the triangle polytope checks its apexes' sides,
rebuilds the hexahedron (or a tetrahedron) when the apex line misses the triangle, uses the mean of its
vertices as centre, falls back to a segment through the origin, and tolerates faces within the
tolerance of the origin; EPA drops a first step whose bound is below the lower one by the tolerance, and
stops when this step's upper bound (not the best so far) is within the tolerance of the lower bound;
coincident start points start GJK along +x. Not reproduced: 4.0.0's hexahedron around a segment
(polytope2), which differs in rare shallow contacts.

A contact, when the (margin-inflated) shapes overlap: witness points x1 on geom 1 and x2 on geom 2; its
position is their midpoint, its normal is x1 - x2 normalized (from geom 1 to geom 2), its distance is the
margin plus the (negative) signed distance that GJK or EPA found.

Scratch storage. GJK's simplex and EPA's polytope (vertices, faces, the face list, the horizon and the
stack that replaces MuJoCo's recursive horizon search) live in two per-env scratch rows that the caller
passes in the data group: ``d.ccd_f[b, :]`` (floats) and ``d.ccd_i[b, :]`` (ints), of at least
`scratch_size(ccd_iterations)` columns each. Their size depends on the iteration limit, a runtime
value, and is far too large for kernel-local matrices (one polytope holds up to 6 * ccd_iterations
faces). Nothing is read before it is written in the same call, so the rows need no initialization.

Height fields: `collision.hfield` cuts the field into triangular prisms and runs `ccd` on each, geom 1 of
type HFIELD being the prism whose 6 vertices it writes to the scratch row (`prism_support`: the best of
the bottom or top triangle's vertices, by the sign of the direction's z; `prism_center`). A prism and a
box without margin are discrete shapes: GJK runs without tolerance and EPA stops on a repeated support
vertex (the box corner, which each vertex records).

This slice: one contact per pair (no multi-contact perturbation, no mesh support, no plane-convex). Geom
type numbers are MuJoCo's.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.layout import MINVAL

HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = 1, 2, 3, 4, 5, 6, 7  # mjtGeom (HFIELD: a prism)

MINVAL2 = MINVAL * MINVAL
MAXVAL2 = 1e20  # mjMAXVAL squared
BIG = 1.7976931348623157e308  # DBL_MAX: "no distance" / "no bound"
EPA_MAX_ITER = 1000  # EPA runs min(ccd_iterations, this) iterations
HORIZON_MAX = 64  # horizon edges kept per EPA step

# polytope status codes (0: built, EPA runs)
_P2_NONCONVEX, _P3_BAD_NORMAL, _P3_INVALID_V4, _P3_INVALID_V5 = 2, 4, 5, 6
_P3_MISSING_ORIGIN, _P3_ORIGIN_ON_FACE, _P4_MISSING_ORIGIN = 7, 8, 10

# ------------------------------------------------------------------------------------------ scratch layout
# floats, per env: a height-field prism (6 vertices, bottom triangle then top triangle, written by the
# height-field collider before each `ccd` with type HFIELD), the GJK simplex (4 vertices), the polytope
# vertices (5 + N), then per face its origin
# projection and squared distance (6N faces), then the multi-contact region (`multicontact`, MC_SIZE). A
# vertex is 11 floats: the Minkowski-difference point, then its points on geom 1 and on geom 2, then which
# feature of geom 2 and of geom 1 it came from (`support_index`: a box's corner, a cylinder's cap, else -1;
# EPA of two discrete shapes stops at a repeated corner of geom 2).
# ints, per env: per face its 3 vertices, 3 neighbours and map slot (6N x 7), the face map (6N), the
# horizon (faces and edges), the horizon search stack (6N).
# The regions whose size depends on the iteration limit N come last, at offsets computed from N.
NV = 11
F_PRISM = 0
F_SIMPLEX = F_PRISM + 18
F_VERTS = F_SIMPLEX + 4 * NV
NFACE_F = 4
NFACE_I = 7
I_HZN = 0
I_FACE = 2 * HORIZON_MAX


MC_SIZE = 432  # multi-contact scratch (see `multicontact`)


def scratch_size(ccd_iterations: int):
    """(floats, ints) per env that `convex`, the multi-contact and the height-field colliders need in
    ``d.ccd_f`` and ``d.ccd_i`` for this iteration limit."""
    n = int(ccd_iterations)
    return F_VERTS + NV * (5 + n) + NFACE_F * 6 * n + MC_SIZE, I_FACE + NFACE_I * 6 * n + 6 * n + 6 * n


@ti.func
def mc_f(nit):
    """Offset of the multi-contact floats for iteration limit nit."""
    return F_VERTS + NV * (5 + nit) + NFACE_F * 6 * nit


@ti.func
def _face_f(nit):
    """Offset of the face floats for iteration limit nit."""
    return F_VERTS + NV * (5 + nit)


@ti.func
def _map_i(nit):
    """Offset of the face map."""
    return I_FACE + NFACE_I * 6 * nit


@ti.func
def _stack_i(nit):
    """Offset of the horizon search stack."""
    return I_FACE + NFACE_I * 6 * nit + 6 * nit


# ------------------------------------------------------------------------------------------ small helpers


@ti.func
def _normalize(v):
    """mju_normalize3: v / |v|; (1, 0, 0) when |v| < MINVAL; v itself when |v| is 1 within MINVAL."""
    norm = ti.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    res = v
    if norm < MINVAL:
        res = ti.Vector([1.0, 0.0, 0.0])
    elif ti.abs(norm - 1.0) > MINVAL:
        inv = 1.0 / norm
        res = ti.Vector([v[0] * inv, v[1] * inv, v[2] * inv])
    return res


@ti.func
def _det3(a, b, c):
    """a . (b x c)."""
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


@ti.func
def _agree(a, b):
    """a and b are both positive or both negative."""
    return (a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)


@ti.func
def _get3(d: ti.template(), b, c):
    return ti.Vector([d.ccd_f[b, c], d.ccd_f[b, c + 1], d.ccd_f[b, c + 2]])


@ti.func
def _set3(d: ti.template(), b, c, v):
    for k in ti.static(range(3)):
        d.ccd_f[b, c + k] = v[k]


@ti.func
def _set_vertex(d: ti.template(), b, c, v, v1, v2, corner, index1):
    _set3(d, b, c, v)
    _set3(d, b, c + 3, v1)
    _set3(d, b, c + 6, v2)
    d.ccd_f[b, c + 9] = corner
    d.ccd_f[b, c + 10] = index1


@ti.func
def _copy_vertex(d: ti.template(), b, dst, src):
    for k in ti.static(range(NV)):
        d.ccd_f[b, dst + k] = d.ccd_f[b, src + k]


# ------------------------------------------------------------------------------------------ support


@ti.func
def support(gtype, pos, mat, size, direction):
    """The point of the geom (type, pos, row-major mat, MuJoCo size) farthest along the unit `direction`.
    A sphere of radius 0 is its centre, a capsule of radius 0 its segment (GJK's shrunk shapes)."""
    res = pos
    if gtype == SPHERE:
        res = size[0] * direction + pos
    else:
        loc = sm.rot_vec_mat_t(direction, mat)
        pt = sm.zero3()
        if gtype == CAPSULE:
            pt = loc * size[0]
            pt[2] = pt[2] + (size[1] if loc[2] >= 0.0 else -size[1])
        elif gtype == ELLIPSOID:
            s = ti.Vector([loc[0] * size[0], loc[1] * size[1], loc[2] * size[2]])
            norm2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2]
            if norm2 < MINVAL2:
                pt = ti.Vector([size[0], 0.0, 0.0])
            else:
                inv = 1.0 / ti.sqrt(norm2)
                pt = ti.Vector([s[0] * (inv * size[0]), s[1] * (inv * size[1]), s[2] * (inv * size[2])])
        elif gtype == CYLINDER:
            n2 = loc[0] * loc[0] + loc[1] * loc[1]
            scl = 0.0
            if n2 >= MINVAL2:
                scl = size[0] / ti.sqrt(n2)
            pt = ti.Vector([scl * loc[0], scl * loc[1], size[1] if loc[2] >= 0.0 else -size[1]])
        else:  # box
            pt = ti.Vector([size[0] if loc[0] >= 0.0 else -size[0], size[1] if loc[1] >= 0.0 else -size[1],
                            size[2] if loc[2] >= 0.0 else -size[2]])
        res = sm.rot_vec_mat(pt, mat) + pos
    return res


@ti.func
def prism_support(d: ti.template(), b, direction):
    """The vertex of the prism in ``d.ccd_f[b, F_PRISM:]`` farthest along `direction`: among the bottom
    triangle's (vertices 0-2) when direction z < 0, else the top's (3-5); the first of equal ones."""
    start = F_PRISM if direction[2] < 0.0 else F_PRISM + 9
    best = sm.dot3(_get3(d, b, start), direction)
    ibest = start
    for i in range(1, 3):
        val = sm.dot3(_get3(d, b, start + 3 * i), direction)
        if val > best:
            best = val
            ibest = start + 3 * i
    return _get3(d, b, ibest)


@ti.func
def prism_center(d: ti.template(), b):
    """The mean of the prism's 6 vertices (summed in order, then scaled by 1/6)."""
    res = sm.zero3()
    for i in range(6):
        res = res + _get3(d, b, F_PRISM + 3 * i)
    return res * (1.0 / 6.0)


@ti.func
def _support2(d: ti.template(), b, gtype, pos, mat, size, direction):
    """`support`, or for type HFIELD the scratch prism's (pos, mat, size unused)."""
    res = sm.zero3()
    if gtype == HFIELD:
        res = prism_support(d, b, direction)
    else:
        res = support(gtype, pos, mat, size, direction)
    return res


@ti.func
def _minkowski(d: ti.template(), b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, direction, opposite):
    """Support of the Minkowski difference (geom 1 along `direction`, geom 2 along `opposite`), each geom
    grown by half its margin g: (point, point on geom 1, point on geom 2). Geom 1 may be a prism (HFIELD)."""
    v1 = _support2(d, b, t1, p1, m1, s1, direction)
    if g1 > 0.0:
        v1 = v1 + direction * (0.5 * g1)
    v2 = support(t2, p2, m2, s2, opposite)
    if g2 > 0.0:
        v2 = v2 + opposite * (0.5 * g2)
    return v1 - v2, v1, v2, support_index(t2, m2, s2, opposite), support_index(t1, m1, s1, direction)


@ti.func
def support_index(gtype, mat, size, direction):
    """Which feature the support point along `direction` is on: a box's corner (bit k: the positive end
    along local axis k), a cylinder's cap (0 the top, +z; 1 the bottom), -1 for other shapes."""
    res = -1.0
    if gtype == BOX:
        loc = sm.rot_vec_mat_t(direction, mat)
        res = 0.0
        for k in ti.static(range(3)):
            if loc[k] >= 0.0 and size[k] > 0.0:
                res += float(1 << k)
    elif gtype == CYLINDER:
        loc = sm.rot_vec_mat_t(direction, mat)
        res = 1.0 if loc[2] < 0.0 else 0.0
    return res


# ------------------------------------------------------------------------------------------ GJK


@ti.func
def _project_origin_plane(v1, v2, v3):
    """The origin projected on the plane of the triangle (v1, v2, v3), and 1 if the triangle is degenerate
    (0 otherwise). Tries the normal from each corner in turn until one gives a usable projection; a zero
    normal at any corner means degenerate."""
    d21 = v2 - v1
    d31 = v3 - v1
    d32 = v3 - v2
    res = sm.zero3()
    ret = 0
    t = 0
    while t < 3:
        a = d32
        c = d21
        base = v2
        if t == 1:
            a = d21
            c = d31
            base = v1
        elif t == 2:
            a = d31
            c = d32
            base = v3
        n = sm.cross3(a, c)
        nv = sm.dot3(n, base)
        nn = sm.dot3(n, n)
        if nn == 0.0:
            ret = 1
            break
        if t == 2 or (nv != 0.0 and nn > MINVAL):
            res = n * (nv / nn)
            break
        t += 1
    return res, ret


@ti.func
def _segment_closest(s1, s2):
    """Barycentric coordinates of the point of segment (s1, s2) closest to the origin. The origin is
    projected on the line and located along the axis where the segment is longest: inside, the two
    coordinates; beyond s1, (1, 0); otherwise, or for a segment shorter than 1e-15, (0, 1)."""
    diff = s2 - s1
    dd = sm.dot3(diff, diff)
    l0 = 0.0
    l1 = 1.0
    if dd >= MINVAL2:
        scl = -(sm.dot3(s2, diff) / dd)
        p = s2 + scl * diff
        mu_max = s1[0] - s2[0]
        pk, ak, bk = p[0], s1[0], s2[0]
        mu = s1[1] - s2[1]
        if ti.abs(mu) >= ti.abs(mu_max):
            mu_max = mu
            pk, ak, bk = p[1], s1[1], s2[1]
        mu = s1[2] - s2[2]
        if ti.abs(mu) >= ti.abs(mu_max):
            mu_max = mu
            pk, ak, bk = p[2], s1[2], s2[2]
        c1 = pk - bk
        c2 = ak - pk
        if _agree(mu_max, c1):
            if _agree(mu_max, c2):
                l0 = c1 / mu_max
                l1 = c2 / mu_max
            else:
                l0 = 1.0
                l1 = 0.0
    return l0, l1


@ti.func
def _triangle_closest(s1, s2, s3, segment_only):
    """Barycentric coordinates of the point of triangle (s1, s2, s3) closest to the origin; with
    `segment_only`, of segment (s1, s2) only (third coordinate 0).

    The origin's projection on the plane is located in the triangle's shadow on the coordinate plane
    where it is largest, by the signed areas of the sub-triangles it forms with each edge (measured
    from the projection), divided by their sum. Outside, or for a degenerate triangle, the closest of
    the candidate edges wins (edges (s2, s3), (s1, s3), (s1, s2) in that order; the first one tried is
    taken, a later one only when strictly closer): the edges whose area disagrees in sign with the
    triangle's, or all three for a degenerate triangle."""
    lam = sm.zero3()
    p = sm.zero3()
    degenerate = 0
    if segment_only == 0:
        p, degenerate = _project_origin_plane(s1, s2, s3)
    inside = 0
    try_edge = ti.Vector([1, 1, 1])
    if segment_only == 1:
        try_edge = ti.Vector([0, 0, 1])
    elif degenerate == 0:
        cc = _area_coords(s1, s2, s3, p)
        c1 = cc[0]
        c2 = cc[1]
        c3 = cc[2]
        mmax = cc[3]
        try_edge = ti.Vector([0 if _agree(mmax, c1) else 1, 0 if _agree(mmax, c2) else 1,
                              0 if _agree(mmax, c3) else 1])
        if try_edge[0] == 0 and try_edge[1] == 0 and try_edge[2] == 0:
            total = c1 + c2 + c3
            lam = ti.Vector([c1 / total, c2 / total, c3 / total])
            inside = 1
    if inside == 0:
        res = sm.zero3()
        dmin = BIG
        for e in range(3):
            if try_edge[e] == 1:
                a = s1
                c = s3
                if e == 0:
                    a = s2
                if e == 2:
                    c = s2
                l0, l1 = _segment_closest(a, c)
                x = l0 * a + l1 * c
                dd = sm.dot3(x, x)
                if e == 0 or dd < dmin:
                    dmin = dd
                    if e == 0:
                        res = ti.Vector([0.0, l0, l1])
                    elif e == 1:
                        res = ti.Vector([l0, 0.0, l1])
                    else:
                        res = ti.Vector([l0, l1, 0.0])
        lam = res
    return lam


@ti.func
def _area_coords(v1, v2, v3, p):
    """Unnormalized affine coordinates of p (in the plane of the triangle) in triangle (v1, v2, v3):
    (C1, C2, C3, M). The triangle is projected on the coordinate plane where its shadow is largest (the
    minor M of largest magnitude, from the edges v2 - v1 and v3 - v1; ties prefer dropping x, then y);
    C1, C2, C3 are the signed areas of the sub-triangles (p, v2, v3), (p, v3, v1), (p, v1, v2) there,
    measured from p. M has the sign of their sum C1 + C2 + C3."""
    d21 = v2 - v1
    d31 = v3 - v1
    m1 = d31[2] * d21[1] - d21[2] * d31[1]
    m2 = d31[2] * d21[0] - d21[2] * d31[0]
    m3 = d21[0] * d31[1] - d21[1] * d31[0]
    mmax = m3
    ia = 0
    ib = 1
    if ti.abs(m1) >= ti.abs(m2) and ti.abs(m1) >= ti.abs(m3):
        mmax = m1
        ia = 1
        ib = 2
    elif ti.abs(m2) >= ti.abs(m3):
        mmax = m2
        ia = 0
        ib = 2
    u1 = v1[ia] - p[ia]
    w1 = v1[ib] - p[ib]
    u2 = v2[ia] - p[ia]
    w2 = v2[ib] - p[ib]
    u3 = v3[ia] - p[ia]
    w3 = v3[ib] - p[ib]
    return ti.Vector([u2 * w3 - u3 * w2, u3 * w1 - u1 * w3, u1 * w2 - u2 * w1, mmax])


@ti.func
def _tri_coords(v1, v2, v3, p):
    """Affine coordinates of p (in the plane of the triangle) in triangle (v1, v2, v3): the signed areas
    of `_area_coords` over their sum."""
    c = _area_coords(v1, v2, v3, p)
    total = c[0] + c[1] + c[2]
    return ti.Vector([c[0] / total, c[1] / total, c[2] / total])


@ti.func
def _simplex_closest(n, s1, s2, s3, s4):
    """Barycentric coordinates (4-vector, zero past n) of the point of the n-simplex s1..sn closest to the
    origin (the signed-volume subdistance algorithm of Montanari et al.): inside a tetrahedron all four;
    otherwise the best of the faces (edges, vertex) that can hold the closest point."""
    lam = ti.Vector([0.0, 0.0, 0.0, 0.0])
    if n == 1:
        lam[0] = 1.0
    else:
        inside = 0
        comp = ti.Vector([0, 0, 0, 0])
        if n == 4:
            c = ti.Vector([-_det3(s2, s3, s4), _det3(s1, s3, s4), -_det3(s1, s2, s4), _det3(s1, s2, s3)])
            det = c[0] + c[1] + c[2] + c[3]
            for i in ti.static(range(4)):
                comp[i] = 1 if _agree(det, c[i]) else 0
            if comp[0] == 1 and comp[1] == 1 and comp[2] == 1 and comp[3] == 1:
                lam = c / det
                inside = 1
        if inside == 0:
            dmin = BIG
            for f in range(4):
                if (n == 4 and comp[f] == 0) or (n < 4 and f == 3):
                    a = s1
                    e = s2
                    g = s4
                    if f == 0:
                        a = s2
                    if f <= 1:
                        e = s3
                    if f == 3:
                        g = s3
                    l3 = _triangle_closest(a, e, g, 1 if n == 2 else 0)
                    x = l3[0] * a + l3[1] * e + l3[2] * g
                    dd = sm.dot3(x, x)
                    if n < 4 or f == 0 or dd < dmin:
                        dmin = dd
                        if f == 0:
                            lam = ti.Vector([0.0, l3[0], l3[1], l3[2]])
                        elif f == 1:
                            lam = ti.Vector([l3[0], 0.0, l3[1], l3[2]])
                        elif f == 2:
                            lam = ti.Vector([l3[0], l3[1], 0.0, l3[2]])
                        else:
                            lam = ti.Vector([l3[0], l3[1], l3[2], 0.0])
    return lam


@ti.func
def _combine(d: ti.template(), b, base, off, lam, n):
    """sum_i<n lam[i] * (column group `off` of simplex vertex i)."""
    res = sm.zero3()
    for i in range(n):
        res = res + lam[i] * _get3(d, b, base + i * NV + off)
    return res


@ti.func
def _gjk(d: ti.template(), b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, x1, x2, cutoff, tol, kmax, discrete):
    """GJK from the initial points x1, x2 of the two geoms. With a positive `cutoff` it measures the
    distance (and stops once the shapes are provably farther apart than the cutoff); otherwise it stops as
    soon as they are provably apart, or once its simplex is a tetrahedron enclosing the origin.
    Returns (dist, x1, x2, nsimplex, separated, nx): the distance (0 inside; BIG when found apart early),
    the witness points, the simplex size left in scratch, whether apart, witness count.

    Each step: the support point along -x_k; a positive lower bound x_k . s_k marks the shapes apart
    (when measuring, that stops only beyond the cutoff); from the second step on, a duality gap
    x_k . (x_k - s_k) under tol^2 / 2 stops; the subdistance step reduces the simplex to the vertices
    that carry the closest point; the next x_k is the origin's projection on the line (2 vertices) or
    plane (3) of the simplex (the weighted vertices when degenerate, or for a single vertex); a norm
    below the threshold (1e-15 for a single vertex, and when measuring or for discrete shapes; the
    tolerance otherwise), or from the second step on a change under 1e-15, stops. The witness points
    are the simplex's points on each geom under the subdistance weights; when the run ends with a
    triangle or less and the shapes are not already marked apart, one more support point decides it."""
    get_dist = 1 if cutoff > 0.0 else 0
    n = 0
    k = 0
    separated = 0
    epsilon = 0.5 * tol * tol
    min_norm = tol
    if discrete == 1:
        epsilon = 0.0
    if discrete == 1 or get_dist == 1:
        min_norm = MINVAL
    x_k = x1 - x2
    x_norm = ti.sqrt(sm.dot3(x_k, x_k))
    if x_norm < MINVAL:  # coincident start points: start along +x
        x_k = ti.Vector([1.0, 0.0, 0.0])
        x_norm = 1.0
    lam = ti.Vector([0.0, 0.0, 0.0, 0.0])
    state = 0  # 0: running; 1: stopped with a simplex; 2: apart (no witness points); 3: tetrahedron
    while k < kmax:
        dneg = x_k * (1.0 / x_norm)
        s_k, a1, a2, corner, ix1 = _minkowski(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, dneg * -1.0, dneg)
        _set_vertex(d, b, F_SIMPLEX + n * NV, s_k, a1, a2, corner, ix1)
        lower = sm.dot3(x_k, s_k)
        if lower > 0.0:
            separated = 1
            if get_dist == 0 or (cutoff < BIG and lower >= cutoff * x_norm):
                state = 2
        if state == 0 and k > 0:
            if sm.dot3(x_k, x_k - s_k) < epsilon:  # Frank-Wolfe duality gap
                state = 1
        if state == 0:
            q1 = _get3(d, b, F_SIMPLEX)
            q2 = _get3(d, b, F_SIMPLEX + NV)
            q3 = _get3(d, b, F_SIMPLEX + 2 * NV)
            q4 = _get3(d, b, F_SIMPLEX + 3 * NV)
            lam4 = _simplex_closest(n + 1, q1, q2, q3, q4)
            # keep the vertices with non-zero weight
            n = 0
            for i in range(4):
                if lam4[i] != 0.0:
                    if n != i:
                        _copy_vertex(d, b, F_SIMPLEX + n * NV, F_SIMPLEX + i * NV)
                    lam[n] = lam4[i]
                    n += 1
            if n < 1:  # should not occur
                state = 2
            elif n == 4:
                state = 3
            else:
                v1 = _get3(d, b, F_SIMPLEX)
                v2 = _get3(d, b, F_SIMPLEX + NV)
                x_new = _combine(d, b, F_SIMPLEX, 0, lam, n)
                if n == 2:
                    diff = v2 - v1
                    dd = sm.dot3(diff, diff)
                    if dd >= MINVAL2:
                        scl = -(sm.dot3(v2, diff) / dd)
                        x_new = scl * diff + v2
                elif n == 3:
                    pp, degenerate = _project_origin_plane(v1, v2, _get3(d, b, F_SIMPLEX + 2 * NV))
                    if degenerate == 0:
                        x_new = pp
                xn = ti.sqrt(sm.dot3(x_new, x_new))
                threshold = min_norm
                if n == 1:
                    threshold = MINVAL
                if xn < threshold or (k > 0 and ti.abs(xn - x_norm) < MINVAL):
                    state = 1
                x_k = x_new
                x_norm = xn
        if state != 0:
            break
        k += 1
    dist = BIG
    nx = 0
    nsimplex = 0
    if state == 2:
        separated = 1
    else:
        if n > 0:
            x1 = _combine(d, b, F_SIMPLEX, 3, lam, n)
            x2 = _combine(d, b, F_SIMPLEX, 6, lam, n)
        if state == 3:
            dist = x_norm if separated == 1 else 0.0
        else:
            dist = x_norm
            if separated == 0 and x_norm >= MINVAL:
                dneg = x_k * (1.0 / x_norm)
                w, _w1, _w2, _c, _i = _minkowski(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, dneg * -1.0, dneg)
                if sm.dot3(x_k, w) > 0.0:
                    separated = 1
        nx = 1
        nsimplex = n
    return dist, x1, x2, nsimplex, separated, nx


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
        dirs = ti.Matrix.zero(ti.f64, 3, 3)
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
        if discrete == 1:  # a support vertex met before (the same box corner; geom 1, a prism, has none): stop
            repeated = 0
            for i in range(nverts - 1):
                if d.ccd_f[b, F_VERTS + i * NV + 9] == d.ccd_f[b, F_VERTS + wi * NV + 9]:
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


# ------------------------------------------------------------------------------------------ the collider


@ti.func
def _inflate(x1, x2, dist, r1, r2):
    """Grow the witness points of two cores apart by r1 and r2 along x2 - x1; the distance shrinks by both."""
    n = _normalize(x2 - x1)
    if r1 != 0.0:
        x1 = x1 + r1 * n
    if r2 != 0.0:
        x2 = x2 - r2 * n
    return x1, x2, dist - (r1 + r2)


@ti.func
def ccd(d: ti.template(), b, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin, tol, nit, multi):
    """Signed distance of the two geoms, each grown by half the margin, and its witness points (mjc_ccd for
    one contact): returns (dist, x1, x2, nx, nfeat); dist < 0 with nx = 1 is an overlap, anything else is
    none (apart, or an overlap EPA could not resolve). GJK starts from pos1 and pos2 (the centres). Geom 1
    may be the scratch prism (type HFIELD, `pos1` its centre, `mat1`, `size1` unused).
    With `multi` = 1, an overlap also leaves for `multicontact` the vertices it came from in the simplex
    slots of the scratch row: nfeat of them (3: EPA's final face; 1 to 3: the last GJK simplex of the cores
    when the radii and half margins put back make the overlap, whose amounts r1, r2 go to the first two
    floats of the multi-contact region); nfeat = 0 otherwise."""
    discrete = 0
    if (margin == 0.0 and (type1 == BOX or type1 == MESH or type1 == HFIELD)
            and (type2 == BOX or type2 == MESH or type2 == HFIELD)):
        discrete = 1
    core1 = 1 if (type1 == SPHERE or type1 == CAPSULE) else 0
    core2 = 1 if (type2 == SPHERE or type2 == CAPSULE) else 0
    dist = 0.0
    x1 = pos1
    x2 = pos2
    nx = 0
    nfeat = 0
    stage = 1  # 0: distance of the cores first; 1: the full shapes, then EPA
    if core1 == 1 or core2 == 1 or margin > 0.0:
        stage = 0
    while stage < 2:
        s1 = size1
        s2 = size2
        g1 = margin
        g2 = margin
        r1 = 0.0
        r2 = 0.0
        if stage == 0:  # cores: no margin, spheres and capsules without their radius
            r1 = 0.5 * margin
            r2 = 0.5 * margin
            g1 = 0.0
            g2 = 0.0
            if core1 == 1:
                r1 = size1[0] + 0.5 * margin
                s1[0] = 0.0
            if core2 == 1:
                r2 = size2[0] + 0.5 * margin
                s2[0] = 0.0
        x1 = pos1
        x2 = pos2
        dist, x1, x2, nsimplex, separated, nx = _gjk(d, b, type1, pos1, mat1, s1, g1, type2, pos2, mat2, s2, g2,
                                                     x1, x2, r1 + r2, tol, nit, discrete)
        if stage == 0:
            if dist > tol:  # shallow: put the radii back; done
                x1, x2, dist = _inflate(x1, x2, dist, r1, r2)
                if dist > 0.0:
                    dist = BIG
                elif multi == 1 and dist < 0.0 and nx > 0:
                    nfeat = nsimplex
                    d.ccd_f[b, mc_f(nit)] = r1
                    d.ccd_f[b, mc_f(nit) + 1] = r2
                stage = 2
        elif dist <= tol and nsimplex > 1 and separated == 0:
            dist = 0.0
            err, nverts, nfaces, center = _polytope(d, b, nit, type1, pos1, mat1, s1, g1, type2, pos2, mat2, s2,
                                                    g2, nsimplex, tol)
            if err == 0:
                nx, dist, x1, x2 = _epa(d, b, nit, type1, pos1, mat1, s1, g1, type2, pos2, mat2, s2, g2, nverts,
                                        nfaces, center, tol, discrete)
                if multi == 1 and nx > 0:
                    nfeat = 3
                    d.ccd_f[b, mc_f(nit)] = 0.0
                    d.ccd_f[b, mc_f(nit) + 1] = 0.0
        stage += 1
    return dist, x1, x2, nx, nfeat


@ti.func
def convex(d: ti.template(), b, n0, cap, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin,
           ccd_tolerance, ccd_iterations):
    """mjc_Convex for a pair with a sphere or an ellipsoid (one contact): GJK, then EPA when the shapes
    overlap deeper than the tolerance. Geoms of MuJoCo types sphere, capsule, ellipsoid, cylinder, box;
    scratch rows ``d.ccd_f[b]`` and ``d.ccd_i[b]`` (see `scratch_size`). Returns the number of contacts."""
    dist, x1, x2, nx, _nf = ccd(d, b, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin, ccd_tolerance,
                                ccd_iterations, 0)
    n = 0
    if dist < 0.0 and nx > 0:
        put(d, b, n0, cap, margin + dist, (x1 + x2) * 0.5, _normalize(x1 - x2), sm.zero3())
        n = 1
    return n
