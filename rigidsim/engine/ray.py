"""Ray-shape intersections of one env, as ti.funcs (MuJoCo's engine_ray, primitives): the distance along a ray
pnt + x vec (x >= 0, in units of |vec|) to the first point of a geom-shaped volume, -1 when the ray misses it.
A ray that starts inside the volume hits its surface on the way out. The touch sensor's zone test uses them.

Each shape is given by its centre `pos`, orientation `mat` (row-major 3x3, columns the shape's axes) and MuJoCo's
size vector; the ray is mapped into the shape's frame first."""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.model import GEOM_BOX, GEOM_CAPSULE, GEOM_CYLINDER, GEOM_ELLIPSOID, GEOM_SPHERE

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
