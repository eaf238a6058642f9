"""Analytic colliders of MuJoCo's engine_collision_primitive.c: plane with sphere, capsule, cylinder and
box; sphere with sphere, capsule and cylinder; capsule with capsule. Each follows MuJoCo's arithmetic step
for step, so float64 contacts agree with mj_collision's to rounding. Signatures: see the package docstring.

Two pure helpers do the work MuJoCo's mjraw_PlaneSphere and mjraw_SphereSphere do: each returns
``(found, dist, pos, normal)`` instead of writing a contact, so that a caller can put the contact with its
own tangent or a flipped normal. The colliders that try several candidate points (capsule ends, cylinder
rim points, box corners, parallel capsule ends) loop over them at run time with one `put` in the loop
body, which keeps the compiled kernels small. Constants are literals inside the functions (fastcache keys
a kernel on its functions' source text, not on module-level values).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.layout import MINVAL


@ti.func
def _plane_sphere_raw(margin, pos1, mat1, pos2, radius):
    """A sphere (centre pos2) against the plane through pos1 with normal the z axis of mat1:
    (found 0/1, dist, pos, normal); dist and pos are zero when nothing is found."""
    normal = ti.Vector([mat1[2], mat1[5], mat1[8]])
    cdist = sm.dot3(pos2 - pos1, normal)
    found = 0
    dist = 0.0
    pos = sm.zero3()
    if cdist <= margin + radius:
        dist = cdist - radius
        pos = pos2 + normal * (-dist / 2 - radius)
        found = 1
    return found, dist, pos, normal


@ti.func
def _sphere_sphere_raw(margin, pos1, mat1, radius1, pos2, mat2, radius2):
    """Sphere (pos1, radius1) against sphere (pos2, radius2): (found 0/1, dist, pos, normal from 1 to 2).
    Coincident centres take the normal across the two z axes (mat1, mat2), or (1, 0, 0) when those are
    parallel too."""
    dif = pos1 - pos2
    cdist_sqr = sm.dot3(dif, dif)
    min_dist = margin + radius1 + radius2
    found = 0
    dist = 0.0
    pos = sm.zero3()
    normal = sm.zero3()
    if cdist_sqr <= min_dist * min_dist:
        dist = ti.sqrt(cdist_sqr) - radius1 - radius2
        unit, length = sm.normalize3(pos2 - pos1)
        normal = unit
        if length < MINVAL:
            z1 = ti.Vector([mat1[2], mat1[5], mat1[8]])
            z2 = ti.Vector([mat2[2], mat2[5], mat2[8]])
            across, _ = sm.normalize3(sm.cross3(z1, z2))
            normal = across
        pos = normal * (radius1 + dist / 2) + pos1
        found = 1
    return found, dist, pos, normal


@ti.func
def plane_sphere(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneSphere: at most 1 contact."""
    found, dist, pos, normal = _plane_sphere_raw(margin, pos1, mat1, pos2, size2[0])
    if found:
        put(d, b, n0, cap, dist, pos, normal, sm.zero3())
    return found


@ti.func
def plane_capsule(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneCapsule: each end sphere of the capsule against the plane (the +z end first), at most 2
    contacts, their first tangent the capsule axis."""
    axis = ti.Vector([mat2[2], mat2[5], mat2[8]])
    segment = size2[1] * axis
    n = 0
    for k in range(2):
        end = pos2 + segment if k == 0 else pos2 - segment
        found, dist, pos, normal = _plane_sphere_raw(margin, pos1, mat1, end, size2[0])
        if found:
            put(d, b, n0 + n, cap, dist, pos, normal, axis)
            n += 1
    return n


@ti.func
def plane_cylinder(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneCylinder: up to 4 contacts. The rim point of the disk nearest the plane (none at all if it
    is beyond the margin), the same point of the other disk, then two points of the near disk at +-120
    degrees around the rim from the first, both or neither."""
    normal = ti.Vector([mat1[2], mat1[5], mat1[8]])
    axis = ti.Vector([mat2[2], mat2[5], mat2[8]])
    radius = size2[0]

    # the axis turned to point at the plane
    prjaxis = sm.dot3(normal, axis)
    if prjaxis > 0:
        axis = axis * -1.0
        prjaxis = -prjaxis

    # height of the centre over the plane
    vec = pos2 - pos1
    dist0 = sm.dot3(vec, normal)

    # radial direction of the disk towards the plane (-normal without its axial part), scaled to the
    # radius; the cylinder's x axis when the disks are parallel to the plane
    vec = axis * prjaxis
    vec = vec - normal
    len_sqr = sm.dot3(vec, vec)
    if len_sqr >= MINVAL * MINVAL:
        scl = radius / ti.sqrt(len_sqr)
        vec = vec * scl
    else:
        vec = ti.Vector([mat2[0] * radius, mat2[3] * radius, mat2[6] * radius])
    prjvec = sm.dot3(vec, normal)

    # half-length axis
    axis = axis * size2[1]
    prjaxis = prjaxis * size2[1]

    # sideways rim offset for the two extra points of the near disk
    prjvec1 = -prjvec * 0.5
    side, _ = sm.normalize3(sm.cross3(vec, axis))
    side = side * (radius * ti.sqrt(3.0) / 2)

    n = 0
    near = dist0 + prjaxis + prjvec <= margin
    extra = dist0 + prjaxis + prjvec1 <= margin
    for k in range(4):
        take = False
        dist = 0.0
        pos = sm.zero3()
        if k == 0:  # near disk, nearest rim point
            take = near
            dist = dist0 + prjaxis + prjvec
            pos = pos2 + vec
            pos = pos + axis
        elif k == 1:  # far disk, same rim point
            take = near and (dist0 - prjaxis + prjvec <= margin)
            dist = dist0 - prjaxis + prjvec
            pos = pos2 + vec
            pos = pos - axis
        else:  # near disk, the rim points at +-120 degrees
            take = near and extra
            dist = dist0 + prjaxis + prjvec1
            pos = pos2 + side if k == 2 else pos2 - side
            pos = pos + axis
            pos = pos + vec * -0.5
        if take:
            pos = pos + normal * (-dist * 0.5)
            put(d, b, n0 + n, cap, dist, pos, normal, sm.zero3())
            n += 1
    return n


@ti.func
def plane_box(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneBox: the corners (in MuJoCo's order, x bit fastest) within the margin and on the plane's
    side of the box centre, at most 4."""
    norm = ti.Vector([mat1[2], mat1[5], mat1[8]])
    dist = sm.dot3(pos2 - pos1, norm)
    n = 0
    for i in range(8):
        if n < 4:
            vec = ti.Vector([size2[0] if (i & 1) != 0 else -size2[0],
                             size2[1] if (i & 2) != 0 else -size2[1],
                             size2[2] if (i & 4) != 0 else -size2[2]])
            corner = sm.rot_vec_mat(vec, mat2)
            ldist = sm.dot3(norm, corner)
            if dist + ldist <= margin and ldist <= 0:
                cdist = dist + ldist
                pos = (corner + pos2) + norm * (-cdist / 2)
                put(d, b, n0 + n, cap, cdist, pos, norm, sm.zero3())
                n += 1
    return n


@ti.func
def sphere_sphere(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_SphereSphere: at most 1 contact."""
    found, dist, pos, normal = _sphere_sphere_raw(margin, pos1, mat1, size1[0], pos2, mat2, size2[0])
    if found:
        put(d, b, n0, cap, dist, pos, normal, sm.zero3())
    return found


@ti.func
def sphere_capsule(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_SphereCapsule: the sphere against the nearest point of the capsule's segment, at most 1 contact."""
    length = size2[1]
    axis = ti.Vector([mat2[2], mat2[5], mat2[8]])
    x = sm.clip(sm.dot3(axis, pos1 - pos2), -length, length)
    nearest = axis * x + pos2
    found, dist, pos, normal = _sphere_sphere_raw(margin, pos1, mat1, size1[0], nearest, mat2, size2[0])
    if found:
        put(d, b, n0, cap, dist, pos, normal, sm.zero3())
    return found


@ti.func
def sphere_cylinder(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_SphereCylinder: at most 1 contact, by where the sphere centre projects: beside the side (a sphere
    on the axis), over a cap (that cap as a plane), or beyond the rim (a point on the rim); a centre inside
    the cylinder goes to the nearer of side and cap."""
    radius = size2[0]
    height = size2[1]
    axis = ti.Vector([mat2[2], mat2[5], mat2[8]])

    # axial and radial parts of the sphere centre
    vec = pos1 - pos2
    x = sm.dot3(axis, vec)
    a_proj = axis * x
    p_proj = vec - a_proj
    p_proj_sqr = sm.dot3(p_proj, p_proj)

    collide_side = ti.abs(x) < height
    collide_cap = p_proj_sqr < radius * radius
    if collide_side and collide_cap:  # centre inside: the shallower way out wins
        dist_cap = height - ti.abs(x)
        dist_radius = radius - ti.sqrt(p_proj_sqr)
        if dist_cap < dist_radius:
            collide_side = False
        else:
            collide_cap = False

    found = 0
    dist = 0.0
    pos = sm.zero3()
    normal = sm.zero3()
    if collide_cap:
        # the cap as a plane (the bottom one faces -axis: x and z axes of mat2 negated), normal turned to
        # point from the sphere into the cylinder
        sgn = 1.0 if x > 0 else -1.0
        pos_cap = pos2 + axis * (height if x > 0 else -height)
        mat_cap = ti.Vector([sgn * mat2[0], mat2[1], sgn * mat2[2],
                             sgn * mat2[3], mat2[4], sgn * mat2[5],
                             sgn * mat2[6], mat2[7], sgn * mat2[8]])
        found, dist, pos, normal = _plane_sphere_raw(margin, pos_cap, mat_cap, pos1, size1[0])
        normal = normal * -1.0
    else:
        # side: a sphere of the cylinder's radius on the axis; rim: a point sphere on the rim
        centre = a_proj + pos2
        rad = radius
        if not collide_side:
            rim = p_proj * (radius / ti.sqrt(p_proj_sqr))
            centre = axis * (height if x > 0 else -height)
            centre = centre + rim
            centre = centre + pos2
            rad = 0.0
        found, dist, pos, normal = _sphere_sphere_raw(margin, pos1, mat1, size1[0], centre, mat2, rad)
    if found:
        put(d, b, n0, cap, dist, pos, normal, sm.zero3())
    return found


@ti.func
def capsule_capsule(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_CapsuleCapsule as mujoco 4.0.0 runs it: spheres at the nearest points of the two segments, at most
    2 contacts. Skew axes: one pair of points (the unconstrained closest points, clipped to the segments).
    Parallel or nearly parallel axes (sin^2 of the angle below 1e-8): four candidate pairs,
    each end of segment 1 with its nearest point of segment 2 and each end of segment 2 with its nearest
    point of segment 1; the two deepest of those within the margin, in the order of their point on segment
    1 (for overlapping capsules: the two ends of the overlap).

    The 3.12 source stops at the first two candidates found, and only for axes parallel to mjMINVAL; the
    4.0.0 binary keeps the deepest two and treats axes within 1e-4 rad as parallel (found by experiment,
    tests/test_collision_primitive.py)."""
    axis1 = ti.Vector([mat1[2] * size1[1], mat1[5] * size1[1], mat1[8] * size1[1]])
    axis2 = ti.Vector([mat2[2] * size2[1], mat2[5] * size2[1], mat2[8] * size2[1]])
    dif = pos1 - pos2

    # normal equations of min |pos1 + x1 axis1 - pos2 - x2 axis2|
    ma = sm.dot3(axis1, axis1)
    mb = -sm.dot3(axis1, axis2)
    mc = sm.dot3(axis2, axis2)
    u = -sm.dot3(axis1, dif)
    v = sm.dot3(axis2, dif)
    det = ma * mc - mb * mb
    skew = ti.abs(det) >= MINVAL and ti.abs(det) >= 1e-8 * ma * mc  # sin^2(angle) >= 1e-8

    # skew axes: the closest points, clipped to the segments
    x1 = 0.0
    x2 = 0.0
    if skew:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1:
            x2 = 1.0
            x1 = sm.clip((u - mb) / ma, -1.0, 1.0)
        elif x2 < -1:
            x2 = -1.0
            x1 = sm.clip((u + mb) / ma, -1.0, 1.0)

    # the candidates (1 when skew, else 4), the deepest two kept: best, then next
    nfound = 0
    dist_best = 0.0
    pos_best = sm.zero3()
    normal_best = sm.zero3()
    x1_best = 0.0
    dist_next = 0.0
    pos_next = sm.zero3()
    normal_next = sm.zero3()
    x1_next = 0.0
    for k in range(1 if skew else 4):
        if not skew:
            # k = 0, 1: end +1, -1 of segment 1; k = 2, 3: end +1, -1 of segment 2
            end = 1.0 if k % 2 == 0 else -1.0
            if k < 2:
                x1 = end
                x2 = sm.clip((v - end * mb) / mc, -1.0, 1.0)
            else:
                x2 = end
                x1 = sm.clip((u - end * mb) / ma, -1.0, 1.0)
        p1 = axis1 * x1 + pos1
        p2 = axis2 * x2 + pos2
        found, dist, pos, normal = _sphere_sphere_raw(margin, p1, mat1, size1[0], p2, mat2, size2[0])
        if found:
            if nfound == 0 or dist < dist_best:
                dist_next, pos_next, normal_next, x1_next = dist_best, pos_best, normal_best, x1_best
                dist_best, pos_best, normal_best, x1_best = dist, pos, normal, x1
            elif nfound == 1 or dist < dist_next:
                dist_next, pos_next, normal_next, x1_next = dist, pos, normal, x1
            nfound += 1

    n = ti.min(nfound, 2)
    next_first = n == 2 and x1_next < x1_best
    for j in range(n):
        take_best = (j == 0) != next_first
        put(d, b, n0 + j, cap, dist_best if take_best else dist_next, pos_best if take_best else pos_next,
            normal_best if take_best else normal_next, sm.zero3())
    return n


@ti.func
def plane_ellipsoid(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_PlaneConvex for an ellipsoid: its support point along the plane's inward normal (the unit sphere's
    support scaled by the semi-axes, normalized, scaled again, as MuJoCo's ccd support does), one contact
    when it lies within `margin` of the plane."""
    normal = ti.Vector([mat1[2], mat1[5], mat1[8]])
    local = sm.rot_vec_mat_t(-normal, mat2)
    res, _ = sm.normalize3(ti.Vector([local[0] * size2[0], local[1] * size2[1], local[2] * size2[2]]))
    res = ti.Vector([res[0] * size2[0], res[1] * size2[1], res[2] * size2[2]])
    vert = sm.rot_vec_mat(res, mat2) + pos2
    dist = sm.dot3(normal, vert - pos1)
    n = 0
    if dist <= margin:
        put(d, b, n0, cap, dist, vert + normal * (-0.5 * dist), normal, sm.zero3())
        n = 1
    return n
