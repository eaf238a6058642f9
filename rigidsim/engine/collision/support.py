"""GJK/EPA's common ground (see `gjk` for the algorithm): MuJoCo's geom type numbers as the colliders use
them, the per-env scratch rows' layout, small vector helpers (normalization, determinants, area coordinates)
and the support functions of the shapes (the primitives, a height-field prism)."""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.mesh import ccd_mesh_support, has_meshes
from rigidsim.engine.layout import MINVAL


HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = 1, 2, 3, 4, 5, 6, 7  # mjtGeom (HFIELD: a prism)

MINVAL2 = MINVAL * MINVAL
BIG = 1.7976931348623157e308  # DBL_MAX: "no distance" / "no bound"
EPA_MAX_ITER = 1000  # EPA runs min(ccd_iterations, this) iterations
HORIZON_MAX = 64  # horizon edges kept per EPA step


# ------------------------------------------------------------------------------------------ scratch layout
# floats, per env: a height-field prism (6 vertices, bottom triangle then top triangle, written by the
# height-field collider before each `ccd` with type HFIELD), the GJK simplex (4 vertices), the polytope
# vertices (5 + N), then per face its origin
# projection and squared distance (6N faces), then the multi-contact region (`multicontact`, `mc_size`). A
# vertex is 11 floats: the Minkowski-difference point, then its points on geom 1 and on geom 2, then which
# feature of geom 2 and of geom 1 it came from (`support_index`: a box's corner, a cylinder's cap; a mesh's
# vertex; else -1; EPA of two discrete shapes stops at a repeated pair of features).
# ints, per env: the horizon (faces and edges), the mesh support's memory (per geom of the pair: the geom,
# its last hull-graph vertex, its last support vertex; `begin_mesh`), per face its 3 vertices, 3 neighbours
# and map slot (6N x 7), the face map (6N), the horizon search stack (6N).
# The regions whose size depends on the iteration limit N come last, at offsets computed from N.
NV = 11
F_PRISM = 0
F_SIMPLEX = F_PRISM + 18
F_VERTS = F_SIMPLEX + 4 * NV
NFACE_F = 4
NFACE_I = 7
I_HZN = 0
I_MESH = 2 * HORIZON_MAX
I_FACE = I_MESH + 6


def mc_size(npoly: int) -> int:
    """Multi-contact scratch floats (`polygon_clip`'s layout) when no polygon has more than npoly points (16,
    a cylinder's cap, at least)."""
    return 80 + 21 * max(int(npoly), 16)


def scratch_size(ccd_iterations: int, npoly: int = 16):
    """(floats, ints) per env that `convex`, the multi-contact and the height-field colliders need in
    ``d.ccd_f`` and ``d.ccd_i`` for this iteration limit; npoly: the most points of a mesh polygon the
    multi-contact may clip (the model's largest, `model.mesh_polyvertnum`)."""
    n = int(ccd_iterations)
    return F_VERTS + NV * (5 + n) + NFACE_F * 6 * n + mc_size(npoly), I_FACE + NFACE_I * 6 * n + 6 * n + 6 * n


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
def begin_mesh(d: ti.template(), b, g1, g2):
    """Start a pair's mesh support searches afresh (geom 1 is g1, geom 2 is g2; read only for mesh geoms)."""
    d.ccd_i[b, I_MESH] = g1
    d.ccd_i[b, I_MESH + 3] = g2
    for k in ti.static((1, 2, 4, 5)):
        d.ccd_i[b, I_MESH + k] = -1


@ti.func
def _support2(d: ti.template(), b, side, gtype, pos, mat, size, direction):
    """The support point of geom 1 (side 0) or geom 2 (side 1) and its feature (`support_index`): `support`;
    for type HFIELD the scratch prism's (pos, mat, size unused); for a mesh (only compiled in when the group
    carries the mesh arrays, `mesh.with_meshes`) `mesh.ccd_mesh_support` with its vertex index."""
    res = sm.zero3()
    feature = -1.0
    if gtype == HFIELD:
        res = prism_support(d, b, direction)
    else:
        done = 0
        if ti.static(has_meshes(d)):
            if gtype == MESH:
                res, vert = ccd_mesh_support(d.meshes, d, b, I_MESH + 3 * side, pos, mat, direction)
                feature = float(vert)
                done = 1
        if done == 0:
            res = support(gtype, pos, mat, size, direction)
            feature = support_index(gtype, mat, size, direction)
    return res, feature


@ti.func
def _minkowski(d: ti.template(), b, t1, p1, m1, s1, g1, t2, p2, m2, s2, g2, direction, opposite):
    """Support of the Minkowski difference (geom 1 along `direction`, geom 2 along `opposite`), each geom
    grown by half its margin g: (point, point on geom 1, point on geom 2, feature of geom 2, feature of
    geom 1). Geom 1 may be a prism (HFIELD); either geom a mesh when the group carries the mesh arrays."""
    v1, f1 = _support2(d, b, 0, t1, p1, m1, s1, direction)
    if g1 > 0.0:
        v1 = v1 + direction * (0.5 * g1)
    v2, f2 = _support2(d, b, 1, t2, p2, m2, s2, opposite)
    if g2 > 0.0:
        v2 = v2 + opposite * (0.5 * g2)
    return v1 - v2, v1, v2, f2, f1


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
