"""Convex collision by GJK and EPA, after MuJoCo's native convex collider (mjc_Convex -> mjc_ccd).

MuJoCo collides every convex pair without an analytic function through support functions: GJK finds the
distance between the two shapes (or that they overlap), EPA the penetration depth and the witness points
of an overlap. This module follows that pipeline step by step, with the same tolerances and iteration
limits (``opt.ccd_tolerance``, ``opt.ccd_iterations``), the same branch decisions and the same operation
order, so that float64 contacts agree with mj_collision's.

Support functions: sphere, capsule, ellipsoid, cylinder and box (MuJoCo's geom_size meanings); a mesh
(`mesh.ccd_mesh_support`) when the data group carries the model's mesh arrays (`mesh.with_meshes`; the
caller starts each pair's searches with `support.begin_mesh`). The pair's
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
coincident start points start GJK along +x; in the core-distance stage (no margin) a sphere's point and a
capsule's segment count as discrete shapes, like a box, a mesh or a prism. Not reproduced: 4.0.0's
hexahedron around a segment (polytope2), which differs in rare shallow contacts.

A contact, when the (margin-inflated) shapes overlap: witness points x1 on geom 1 and x2 on geom 2; its
position is their midpoint, its normal is x1 - x2 normalized (from geom 1 to geom 2), its distance is the
margin plus the (negative) signed distance that GJK or EPA found.

Scratch storage. GJK's simplex and EPA's polytope (vertices, faces, the face list, the horizon and the
stack that replaces MuJoCo's recursive horizon search) live in two per-env scratch rows that the caller
passes in the data group: ``d.ccd_f[b, :]`` (floats) and ``d.ccd_i[b, :]`` (ints), of at least
`support.scratch_size(ccd_iterations)` columns each (the layout lives in `support`, with the support
functions and the small helpers GJK and EPA share; EPA itself is `epa`). Their size depends on the
iteration limit, a runtime value, and is far too large for kernel-local matrices (one polytope holds
up to 6 * ccd_iterations faces). Nothing is read before it is written in the same call, so the rows need no initialization.

Height fields: `collision.hfield` cuts the field into triangular prisms and runs `ccd` on each, geom 1 of
type HFIELD being the prism whose 6 vertices it writes to the scratch row (`prism_support`: the best of
the bottom or top triangle's vertices, by the sign of the direction's z; `prism_center`). A prism and a
box or a mesh without margin are discrete shapes: GJK runs without tolerance and EPA stops on a repeated
pair of support features (the box corner or mesh vertex of each geom, which each vertex records).

This module: one contact per pair (the multi-contact is `multicontact`; plane-mesh is `mesh`). Geom type
numbers are MuJoCo's.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.collision.epa import _epa, _polytope
from rigidsim.engine.collision.support import (
    BIG, BOX, CAPSULE, F_SIMPLEX, HFIELD, MESH, MINVAL2, NV, SPHERE, _agree, _area_coords, _copy_vertex, _det3, _get3,
    _minkowski, _normalize, _project_origin_plane, _set_vertex,
)
from rigidsim.engine.layout import MINVAL


# ------------------------------------------------------------------------------------------ GJK


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
    dist = BIG
    nx = 0
    nsimplex = 0
    # one pass per support point, so that the support code (every geom type's) is compiled once: phase 0,
    # the steps (until a stop or kmax steps: `finished`, then the run's outcome); phase 1, the one more
    # support point of the docstring's last sentence; 2, done
    phase = 0
    finished = 0
    while phase < 2:
        if phase == 0 and k >= kmax:
            finished = 1
        if finished == 0:
            dneg = x_k * (1.0 / x_norm)
            s_k, a1, a2, corner, ix1 = _minkowski(d, b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, dneg * -1.0, dneg)
            if phase == 1:
                if sm.dot3(x_k, s_k) > 0.0:
                    separated = 1
                phase = 2
            else:
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
                    finished = 1
                else:
                    k += 1
        if finished == 1 and phase == 0:
            phase = 2
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
                        phase = 1
                        finished = 0
                nx = 1
                nsimplex = n
    return dist, x1, x2, nsimplex, separated, nx


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
def ccd(d: ti.template(), b, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin, tol, nit, multi,
        cutoff=0.0):
    """Signed distance of the two geoms, each grown by half the margin, and its witness points (mjc_ccd for
    one contact): returns (dist, x1, x2, nx, nfeat); dist < 0 with nx = 1 is an overlap, anything else is
    none (apart, or an overlap EPA could not resolve). With `cutoff` > 0 (mjCCDConfig's dist_cutoff: a distance
    query, mj_geomDistanceCCD, margin 0) a separation up to the cutoff is returned too, with its witness
    points; beyond it BIG. GJK starts from pos1 and pos2 (the centres). Geom 1
    may be the scratch prism (type HFIELD, `pos1` its centre, `mat1`, `size1` unused).
    With `multi` = 1, an overlap also leaves for `multicontact` the vertices it came from in the simplex
    slots of the scratch row: nfeat of them (3: EPA's final face; 1 to 3: the last GJK simplex of the cores
    when the radii and half margins put back make the overlap); nfeat = 0 otherwise."""
    discrete = 0
    if (margin == 0.0 and (type1 == BOX or type1 == MESH or type1 == HFIELD)
            and (type2 == BOX or type2 == MESH or type2 == HFIELD)):
        discrete = 1
    core1 = 1 if (type1 == SPHERE or type1 == CAPSULE) else 0
    core2 = 1 if (type2 == SPHERE or type2 == CAPSULE) else 0
    # the cores have no margin, and a point or a segment is discrete too (MuJoCo 4.0.0)
    discrete_core = 1 if ((core1 == 1 or type1 == BOX or type1 == MESH or type1 == HFIELD)
                          and (core2 == 1 or type2 == BOX or type2 == MESH or type2 == HFIELD)) else 0
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
                                                     x1, x2, cutoff + r1 + r2, tol, nit,
                                                     discrete_core if stage == 0 else discrete)
        if stage == 0:
            if dist > tol:  # shallow: put the radii back; done
                x1, x2, dist = _inflate(x1, x2, dist, r1, r2)
                if dist > cutoff:
                    dist = BIG
                elif multi == 1 and dist < 0.0 and nx > 0:
                    nfeat = nsimplex
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
        stage += 1
    return dist, x1, x2, nx, nfeat


@ti.func
def convex(d: ti.template(), b, n0, cap, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin,
           ccd_tolerance, ccd_iterations):
    """mjc_Convex for a pair with a sphere or an ellipsoid (one contact): GJK, then EPA when the shapes
    overlap deeper than the tolerance. Geoms of MuJoCo types sphere, capsule, ellipsoid, cylinder, box (and
    mesh, with `mesh.with_meshes` and `support.begin_mesh`); scratch rows ``d.ccd_f[b]`` and ``d.ccd_i[b]``
    (see `support.scratch_size`). Returns the number of contacts."""
    dist, x1, x2, nx, _nf = ccd(d, b, type1, pos1, mat1, size1, type2, pos2, mat2, size2, margin, ccd_tolerance,
                                ccd_iterations, 0)
    n = 0
    if dist < 0.0 and nx > 0:
        put(d, b, n0, cap, margin + dist, (x1 + x2) * 0.5, _normalize(x1 - x2), sm.zero3())
        n = 1
    return n
