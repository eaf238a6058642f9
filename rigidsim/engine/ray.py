"""Ray-shape intersections of one env, as ti.funcs (MuJoCo's engine_ray, primitives): the distance along a ray
pnt + x vec (x >= 0, in units of |vec|) to the first point of a geom-shaped volume, -1 when the ray misses it.
A ray that starts inside the volume hits its surface on the way out. The touch sensor's zone test uses them.

Each shape is given by its centre `pos`, orientation `mat` (row-major 3x3, columns the shape's axes) and MuJoCo's
size vector; the ray is mapped into the shape's frame first. `ray_scene` is mj_ray (the rangefinder's): every
geom a ray sees, planes and height fields included."""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    FRAME_BODYID, FRAME_RAY, FXMAT, FXPOS, GEOM_HFIELDID, GEOM_SIZE, GEOM_TYPE, HFIELD_ADR, HFIELD_NCOL, HFIELD_NROW,
    HFIELD_SIZE, SZ_NGEOM,
)
from rigidsim.model import (
    GEOM_BOX, GEOM_CAPSULE, GEOM_CYLINDER, GEOM_ELLIPSOID, GEOM_HFIELD, GEOM_PLANE, GEOM_SPHERE,
)

MINVAL = 1e-15  # mjMINVAL


@ti.func
def _quad(a, b, c):
    """The roots x0 <= x1 of a x^2 + 2 b x + c = 0 and the smallest non-negative one (-1: none; also when there
    are no real roots or a is ~0, then both roots are -1)."""
    x0 = -1.0
    x1 = -1.0
    best = -1.0
    det = b * b - a * c
    if det >= 0 and a >= MINVAL:
        det = ti.sqrt(det)
        x0 = (-b - det) / a
        x1 = (-b + det) / a
        if x0 >= 0:
            best = x0
        elif x1 >= 0:
            best = x1
    return x0, x1, best


@ti.func
def _sphere(dif, vec, r2):
    """Ray from `dif` (relative to the centre) along `vec` against a ball of squared radius r2."""
    _, _, x = _quad(vec.dot(vec), vec.dot(dif), dif.dot(dif) - r2)
    return x


@ti.func
def _nearer(x, sol):
    """The nearer of two distances, -1 meaning none."""
    return sol if sol >= 0 and (x < 0 or sol < x) else x


@ti.func
def _capsule(p, v, size):
    x = -1.0
    if _sphere(p, v, (size[0] + size[1]) ** 2) >= 0:
        _, _, sol = _quad(v[0] * v[0] + v[1] * v[1], v[0] * p[0] + v[1] * p[1], p[0] * p[0] + p[1] * p[1] - size[0] ** 2)
        if sol >= 0 and ti.abs(p[2] + sol * v[2]) <= size[1]:
            x = sol
        for side in ti.static((-1.0, 1.0)):  # the end caps' half balls
            dif = ti.Vector([p[0], p[1], p[2] - side * size[1]])
            r0, r1, _ = _quad(v.dot(v), v.dot(dif), dif.dot(dif) - size[0] ** 2)
            for r in ti.static((0, 1)):
                root = r0 if r == 0 else r1
                if root >= 0 and side * (p[2] + root * v[2]) >= size[1]:
                    x = _nearer(x, root)
    return x


@ti.func
def _ellipsoid(p, v, size):
    s = ti.Vector([1.0 / size[0] ** 2, 1.0 / size[1] ** 2, 1.0 / size[2] ** 2])
    _, _, x = _quad((s * v * v).sum(), (s * v * p).sum(), (s * p * p).sum() - 1.0)
    return x


@ti.func
def _cylinder(p, v, size):
    x = -1.0
    if _sphere(p, v, size[0] ** 2 + size[1] ** 2) >= 0:
        if ti.abs(v[2]) > MINVAL:
            for side in ti.static((-1.0, 1.0)):  # the flat ends
                sol = (side * size[1] - p[2]) / v[2]
                if sol >= 0:
                    q0 = p[0] + sol * v[0]
                    q1 = p[1] + sol * v[1]
                    if q0 * q0 + q1 * q1 <= size[0] ** 2:
                        x = _nearer(x, sol)
        _, _, sol = _quad(v[0] * v[0] + v[1] * v[1], v[0] * p[0] + v[1] * p[1], p[0] * p[0] + p[1] * p[1] - size[0] ** 2)
        if sol >= 0 and ti.abs(p[2] + sol * v[2]) <= size[1]:
            x = _nearer(x, sol)
    return x


@ti.func
def _box(p, v, size):
    x = -1.0
    if _sphere(p, v, size.dot(size)) >= 0:
        for i in ti.static(range(3)):
            j = ti.static((i + 1) % 3)
            k = ti.static((i + 2) % 3)
            if ti.abs(v[i]) > MINVAL:
                for side in ti.static((-1.0, 1.0)):
                    sol = (side * size[i] - p[i]) / v[i]
                    if sol >= 0 and ti.abs(p[j] + sol * v[j]) <= size[j] and ti.abs(p[k] + sol * v[k]) <= size[k]:
                        x = _nearer(x, sol)
    return x


@ti.func
def ray_primitive(pos, mat, size, geomtype, pnt, vec):
    """mju_rayGeom for the primitive volumes (sphere, capsule, ellipsoid, cylinder, box): the distance along
    pnt + x vec to the shape, -1 when it misses."""
    x = -1.0
    if geomtype == GEOM_SPHERE:
        x = _sphere(pnt - pos, vec, size[0] ** 2)
    else:
        p = sm.rot_vec_mat_t(pnt - pos, mat)  # into the shape's frame
        v = sm.rot_vec_mat_t(vec, mat)
        if geomtype == GEOM_CAPSULE:
            x = _capsule(p, v, size)
        elif geomtype == GEOM_ELLIPSOID:
            x = _ellipsoid(p, v, size)
        elif geomtype == GEOM_CYLINDER:
            x = _cylinder(p, v, size)
        elif geomtype == GEOM_BOX:
            x = _box(p, v, size)
    return x


# ----------------------------------------------------------------------------- rays against a scene (rangefinder)


@ti.func
def _box_all(p, v, size):
    """A ray from p along v (the box's frame) against a box: (the nearest distance or -1, each face's distance
    (faces -x, +x, -y, +y, -z, +z) or -1 where the ray does not cross that face)."""
    x = -1.0
    allx = ti.Vector([-1.0] * 6)
    if _sphere(p, v, size.dot(size)) >= 0:
        for i in ti.static(range(3)):
            j = ti.static((i + 1) % 3)
            k = ti.static((i + 2) % 3)
            if ti.abs(v[i]) > MINVAL:
                for s in ti.static(range(2)):
                    side = ti.static(2.0 * s - 1.0)
                    sol = (side * size[i] - p[i]) / v[i]
                    if sol >= 0 and ti.abs(p[j] + sol * v[j]) <= size[j] and ti.abs(p[k] + sol * v[k]) <= size[k]:
                        x = _nearer(x, sol)
                        allx[2 * i + s] = sol
    return x, allx


@ti.func
def _plane(p, v, size):
    """The front face of a plane (its +z side), within its rectangle when its size is positive."""
    x = -1.0
    if v[2] <= -MINVAL:
        sol = -p[2] / v[2]
        if sol >= 0:
            q0 = p[0] + sol * v[0]
            q1 = p[1] + sol * v[1]
            if (size[0] <= 0 or ti.abs(q0) <= size[0]) and (size[1] <= 0 or ti.abs(q1) <= size[1]):
                x = sol
    return x


@ti.func
def _triangle(v0, v1, v2, p, v, b0, b1):
    """A ray against a triangle: the ray's crossing of the triangle's plane when the ray, projected along itself
    on the plane (b0, b1) normal to it, passes inside the triangle; -1 otherwise."""
    x = -1.0
    d0 = v0 - p
    d1 = v1 - p
    d2 = v2 - p
    p0 = ti.Vector([b0.dot(d0), b1.dot(d0)])
    p1 = ti.Vector([b0.dot(d1), b1.dot(d1)])
    p2 = ti.Vector([b0.dot(d2), b1.dot(d2)])
    same = False
    for a in ti.static(range(2)):
        if (p0[a] > 0 and p1[a] > 0 and p2[a] > 0) or (p0[a] < 0 and p1[a] < 0 and p2[a] < 0):
            same = True
    if not same:
        a00 = p0[0] - p2[0]
        a01 = p1[0] - p2[0]
        a10 = p0[1] - p2[1]
        a11 = p1[1] - p2[1]
        det = a00 * a11 - a01 * a10
        if ti.abs(det) >= MINVAL:
            t0 = (a11 * -p2[0] - a01 * -p2[1]) / det
            t1 = (-a10 * -p2[0] + a00 * -p2[1]) / det
            if t0 >= 0 and t1 >= 0 and t0 + t1 <= 1:
                nrm = sm.cross3(v0 - v2, v1 - v2)
                denom = v.dot(nrm)
                if ti.abs(denom) >= MINVAL:
                    x = -(p - v2).dot(nrm) / denom
    return x


@ti.func
def _hfield(m: ti.template(), hid, pos, mat, pnt, vec):
    """mj_rayHfield: a ray against a height field's base box, its triangles and the sides of its top box."""
    nrow = m.hfield_i[hid, HFIELD_NROW]
    ncol = m.hfield_i[hid, HFIELD_NCOL]
    adr = m.hfield_i[hid, HFIELD_ADR]
    size = sm.getm(m.hfield_f, hid, HFIELD_SIZE, 4)
    zaxis = ti.Vector([mat[2], mat[5], mat[8]])
    p = sm.rot_vec_mat_t(pnt - (pos - zaxis * size[3] * 0.5), mat)
    v = sm.rot_vec_mat_t(vec, mat)
    x, _ = _box_all(p, v, ti.Vector([size[0], size[1], size[3] * 0.5]))
    pt = sm.rot_vec_mat_t(pnt - (pos + zaxis * size[2] * 0.5), mat)
    top, allx = _box_all(pt, v, ti.Vector([size[0], size[1], size[2] * 0.5]))
    if top >= 0:
        lp = sm.rot_vec_mat_t(pnt - pos, mat)
        # a basis (b0, b1) of the plane normal to the ray
        b0 = ti.Vector([1.0, 1.0, 1.0])
        if ti.abs(v[0]) >= ti.abs(v[1]) and ti.abs(v[0]) >= ti.abs(v[2]):
            b0[0] = 0.0
        elif ti.abs(v[1]) >= ti.abs(v[2]):
            b0[1] = 0.0
        else:
            b0[2] = 0.0
        b1, _ = sm.normalize3(b0 - v * (v.dot(b0) / v.dot(v)))
        b0, _ = sm.normalize3(sm.cross3(b1, v))
        # the part of the ray inside the top box, over the grid
        s0 = 0.0
        s1 = top
        for i in ti.static(range(6)):
            if allx[i] > s1:
                s0 = top
                s1 = allx[i]
        dx = 2.0 * size[0] / (ncol - 1)
        dy = 2.0 * size[1] / (nrow - 1)
        sx0 = (lp[0] + s0 * v[0] + size[0]) / dx
        sx1 = (lp[0] + s1 * v[0] + size[0]) / dx
        sy0 = (lp[1] + s0 * v[1] + size[1]) / dy
        sy1 = (lp[1] + s1 * v[1] + size[1]) / dy
        cmin = ti.max(0, ti.cast(ti.floor(ti.min(sx0, sx1)), ti.i32) - 1)
        cmax = ti.min(ncol - 1, ti.cast(ti.ceil(ti.max(sx0, sx1)), ti.i32) + 1)
        rmin = ti.max(0, ti.cast(ti.floor(ti.min(sy0, sy1)), ti.i32) - 1)
        rmax = ti.min(nrow - 1, ti.cast(ti.ceil(ti.max(sy0, sy1)), ti.i32) + 1)
        for r in range(rmin, rmax):
            for c in range(cmin, cmax):
                va = ti.Vector([dx * c - size[0], dy * r - size[1], m.hfield_data[adr + r * ncol + c] * size[2]])
                vb = ti.Vector([dx * (c + 1) - size[0], dy * r - size[1],
                                m.hfield_data[adr + r * ncol + c + 1] * size[2]])
                vc = ti.Vector([dx * (c + 1) - size[0], dy * (r + 1) - size[1],
                                m.hfield_data[adr + (r + 1) * ncol + c + 1] * size[2]])
                vd = ti.Vector([dx * c - size[0], dy * (r + 1) - size[1],
                                m.hfield_data[adr + (r + 1) * ncol + c] * size[2]])
                x = _nearer(x, _triangle(va, vb, vc, lp, v, b0, b1))
                x = _nearer(x, _triangle(va, vc, vd, lp, v, b0, b1))
        for i in ti.static(range(4)):  # the top box's sides, below the edge of the grid along them
            if allx[i] >= 0 and (allx[i] < x or x < 0):
                z = (lp[2] + allx[i] * v[2]) / size[2]
                y = 0.0
                y0 = 0.0
                z0 = 0.0
                z1 = 0.0
                if ti.static(i < 2):
                    y = (lp[1] + allx[i] * v[1] + size[1]) / dy
                    y0 = ti.max(0.0, ti.min(nrow - 2.0, ti.floor(y)))
                    col = 0 if i == 0 else ncol - 1
                    z0 = m.hfield_data[adr + ti.cast(ti.round(y0), ti.i32) * ncol + col]
                    z1 = m.hfield_data[adr + ti.cast(ti.round(y0 + 1), ti.i32) * ncol + col]
                else:
                    y = (lp[0] + allx[i] * v[0] + size[0]) / dx
                    y0 = ti.max(0.0, ti.min(ncol - 2.0, ti.floor(y)))
                    row = 0 if i == 2 else (nrow - 1) * ncol
                    z0 = m.hfield_data[adr + ti.cast(ti.round(y0), ti.i32) + row]
                    z1 = m.hfield_data[adr + ti.cast(ti.round(y0 + 1), ti.i32) + row]
                if z < z0 * (y0 + 1 - y) + z1 * (y - y0):
                    x = allx[i]
    return x


@ti.func
def ray_scene(m: ti.template(), d: ti.template(), b, pnt, vec, bodyexclude):
    """mj_ray (every geom group, static geoms included): the distance along pnt + x vec to the nearest geom a
    ray sees (not transparent, not on body `bodyexclude`), -1 for none, and that geom (-1 for none). Meshes are
    not cast against: the engine computes no ray of a scene with visible mesh geoms (`sensor.not_computed`)."""
    x = -1.0
    hit = -1
    for g in range(m.opt_i[SZ_NGEOM]):
        if m.geom_i[g, FRAME_RAY] != 0 and m.geom_i[g, FRAME_BODYID] != bodyexclude:
            pos = sm.getv(d.geom, b, g, FXPOS, 3)
            mat = sm.getv(d.geom, b, g, FXMAT, 9)
            gt = m.gcol_i[g, GEOM_TYPE]
            sol = -1.0
            if gt == GEOM_PLANE:
                sol = _plane(sm.rot_vec_mat_t(pnt - pos, mat), sm.rot_vec_mat_t(vec, mat),
                             sm.getm(m.gcol_f, g, GEOM_SIZE, 3))
            elif gt == GEOM_HFIELD:
                sol = _hfield(m, m.gcol_i[g, GEOM_HFIELDID], pos, mat, pnt, vec)
            else:
                sol = ray_primitive(pos, mat, sm.getm(m.gcol_f, g, GEOM_SIZE, 3), gt, pnt, vec)
            if sol >= 0 and (x < 0 or sol < x):
                x = sol
                hit = g
    return x, hit


@ti.func
def _box_face_normal(rel):
    """The outward normal (box frame) of the face a point on a box's surface lies on, from its coordinates over
    the half-sizes `rel`: the axis where one is largest in magnitude, with its sign."""
    n = ti.Vector([0.0, 0.0, 0.0])
    k = 0
    if ti.abs(rel[1]) > ti.abs(rel[k]):
        k = 1
    if ti.abs(rel[2]) > ti.abs(rel[k]):
        k = 2
    n[k] = 1.0 if rel[k] > 0 else -1.0
    return n


@ti.func
def _hfield_normal(m: ti.template(), hid, q):
    """The normal (field frame) of height field hid at the point q (field frame) where a ray met it: its base
    box's face below the grid, a side of its top box at the grid's edge, else the grid triangle's (the cell's
    first triangle below its diagonal from (col, row) to (col + 1, row + 1), its second above)."""
    nrow = m.hfield_i[hid, HFIELD_NROW]
    ncol = m.hfield_i[hid, HFIELD_NCOL]
    adr = m.hfield_i[hid, HFIELD_ADR]
    size = sm.getm(m.hfield_f, hid, HFIELD_SIZE, 4)
    n = sm.zero3()
    tol = 1e-9 * (size[0] + size[1] + size[2] + size[3])
    if q[2] < 0:  # the base box
        n = _box_face_normal(ti.Vector([q[0] / size[0], q[1] / size[1], (q[2] + 0.5 * size[3]) / (0.5 * size[3])]))
    elif ti.abs(ti.abs(q[0]) - size[0]) <= tol:
        n[0] = 1.0 if q[0] > 0 else -1.0
    elif ti.abs(ti.abs(q[1]) - size[1]) <= tol:
        n[1] = 1.0 if q[1] > 0 else -1.0
    else:
        dx = 2.0 * size[0] / (ncol - 1)
        dy = 2.0 * size[1] / (nrow - 1)
        c = ti.min(ncol - 2, ti.max(0, ti.cast(ti.floor((q[0] + size[0]) / dx), ti.i32)))
        r = ti.min(nrow - 2, ti.max(0, ti.cast(ti.floor((q[1] + size[1]) / dy), ti.i32)))
        u = (q[0] + size[0]) / dx - c
        w = (q[1] + size[1]) / dy - r
        va = ti.Vector([dx * c - size[0], dy * r - size[1], m.hfield_data[adr + r * ncol + c] * size[2]])
        vc = ti.Vector([dx * (c + 1) - size[0], dy * (r + 1) - size[1],
                        m.hfield_data[adr + (r + 1) * ncol + c + 1] * size[2]])
        vo = ti.Vector([dx * (c + 1) - size[0], dy * r - size[1], m.hfield_data[adr + r * ncol + c + 1] * size[2]])
        if u < w:
            vo = ti.Vector([dx * c - size[0], dy * (r + 1) - size[1],
                            m.hfield_data[adr + (r + 1) * ncol + c] * size[2]])
            n, _ = sm.normalize3(sm.cross3(va - vo, vc - vo))
        else:
            n, _ = sm.normalize3(sm.cross3(va - vc, vo - vc))
    return n


@ti.func
def ray_normal(m: ti.template(), d: ti.template(), b, g, point):
    """The outward surface normal (world frame) of geom g at `point`, where a ray met it (mj_ray's normal): the
    plane's z axis, the sphere's radius, the capsule's side or end cap, the ellipsoid's gradient, the cylinder's
    side or flat face, the box's face, the height field's (`_hfield_normal`)."""
    pos = sm.getv(d.geom, b, g, FXPOS, 3)
    mat = sm.getv(d.geom, b, g, FXMAT, 9)
    size = sm.getm(m.gcol_f, g, GEOM_SIZE, 3)
    gt = m.gcol_i[g, GEOM_TYPE]
    q = sm.rot_vec_mat_t(point - pos, mat)
    n = sm.zero3()
    if gt == GEOM_PLANE:
        n[2] = 1.0
    elif gt == GEOM_SPHERE:
        n = q
    elif gt == GEOM_CAPSULE:
        n = q
        if ti.abs(q[2]) <= size[1]:
            n[2] = 0.0
        else:
            n[2] = q[2] - (size[1] if q[2] > 0 else -size[1])
    elif gt == GEOM_ELLIPSOID:
        n = q / (size * size)
    elif gt == GEOM_CYLINDER:
        flat = ti.abs(ti.abs(q[2]) - size[1]) * size[0] < ti.abs(ti.sqrt(q[0] * q[0] + q[1] * q[1]) - size[0]) * size[1]
        if flat:
            n[2] = 1.0 if q[2] > 0 else -1.0
        else:
            n = ti.Vector([q[0], q[1], 0.0])
    elif gt == GEOM_BOX:
        n = _box_face_normal(q / size)
    elif gt == GEOM_HFIELD:
        n = _hfield_normal(m, m.gcol_i[g, GEOM_HFIELDID], q)
    n, _ = sm.normalize3(n)
    return sm.rot_vec_mat(n, mat)
