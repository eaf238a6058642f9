"""Analytic colliders of MuJoCo's engine_collision_primitive.c: plane with sphere, capsule, cylinder and
box; sphere with sphere, capsule and cylinder; capsule with capsule. Each follows MuJoCo's arithmetic step
for step, so float64 contacts agree with mj_collision's to rounding (capsule-capsule follows the mujoco 4.0.0
binary, which finds the segments' nearest points unlike the 3.12 source). Signatures: see the package docstring.

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
def _clip01(x):
    """x limited to [0, 1] (0 for x below 0, then min(1, x)), as mjc_segWeights clamps a weight."""
    res = x
    if x < 0:
        res = 0.0
    elif x > 1:
        res = 1.0
    return res


@ti.func
def _onto_segment2(s, t, t_b0, t_b1):
    """(s, t) with s limited to segment 2: where s falls off an end, s is that end (0 or 1) and t becomes
    segment 1's point nearest it (t_b0 or t_b1, clipped), as mjc_segWeights does."""
    s_out = s
    t_out = t
    if s < 0:
        s_out = 0.0
        t_out = _clip01(t_b0)
    elif s > 1:
        s_out = 1.0
        t_out = _clip01(t_b1)
    return s_out, t_out


@ti.func
def _seg_weights(a0, a1, b0, b1):
    """mjc_segWeights of mujoco 4.0.0: the weights (t, s) in [0, 1] of the nearest points a0 + t (a1 - a0) and
    b0 + s (b1 - b0) of two segments, as (n, t0, s0, t1, s1) with n pairs (1 or 2).

    A segment shorter than sqrt(mjMINVAL) is its start point (weight 0). Skew segments (sin^2 of the angle
    between them above 1e-8): one pair, the lines' nearest point on segment 1 clamped, then the point of
    segment 2 nearest to it; if that falls off segment 2, its end and the point of segment 1 nearest to that
    end. Parallel or nearly parallel segments: two pairs, from each end of segment 1 (t = 0, then t = 1) to its
    projection on segment 2, a projection beyond segment 2 replaced by segment 2's end there and the point of
    segment 1 nearest to that end. Sums of products run left to right, as the 4.0.0 binary computes them."""
    d1 = a1 - a0
    d2 = b1 - b0
    a = (d1[0] * d1[0] + d1[1] * d1[1]) + d1[2] * d1[2]
    e = (d2[0] * d2[0] + d2[1] * d2[1]) + d2[2] * d2[2]
    r = a0 - b0
    n = 1
    t0 = 0.0
    s0 = 0.0
    t1 = 0.0
    s1 = 0.0
    if a <= MINVAL:  # segment 1 a point: its nearest point on segment 2 (weights 0 for two points)
        if e > MINVAL:
            s0 = _clip01(((r[0] * d2[0] + r[1] * d2[1]) + r[2] * d2[2]) / e)
    else:
        f = (r[0] * d2[0] + r[1] * d2[1]) + r[2] * d2[2]  # d2.r
        c = (d1[0] * r[0] + d1[1] * r[1]) + d1[2] * r[2]  # d1.r
        t_b0 = (-c) / a  # segment 1's point nearest to b0
        if e <= MINVAL:  # segment 2 a point
            t0 = _clip01(t_b0)
        else:
            bb = (d1[0] * d2[0] + d1[1] * d2[1]) + d1[2] * d2[2]  # d1.d2
            t_b1 = (bb - c) / a  # segment 1's point nearest to b1
            nrm = ti.Vector([d1[1] * d2[2] - d1[2] * d2[1], d1[2] * d2[0] - d1[0] * d2[2],
                             d1[0] * d2[1] - d1[1] * d2[0]])
            nn = (nrm[0] * nrm[0] + nrm[1] * nrm[1]) + nrm[2] * nrm[2]
            if nn > (a * 1e-8) * e:  # skew: the lines' nearest point on segment 1, then its nearest on 2
                m = ti.Vector([d2[1] * r[2] - d2[2] * r[1], d2[2] * r[0] - d2[0] * r[2],
                               d2[0] * r[1] - d2[1] * r[0]])  # d2 x r
                t0 = _clip01(((nrm[0] * m[0] + nrm[1] * m[1]) + nrm[2] * m[2]) / nn)
                s0, t0 = _onto_segment2((t0 * bb + f) / e, t0, t_b0, t_b1)
            else:  # parallel: each end of segment 1 with its projection on segment 2
                n = 2
                s0, t0 = _onto_segment2(f / e, 0.0, t_b0, t_b1)
                s1, t1 = _onto_segment2((f + bb) / e, 1.0, t_b0, t_b1)
    return n, t0, s0, t1, s1


@ti.func
def capsule_capsule(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_CapsuleCapsule as mujoco 4.0.0 runs it (its binary, not the 3.12 source): the segments' ends, their
    nearest points by `_seg_weights` (1 pair for skew axes, 2 for parallel or nearly parallel ones), and a
    sphere-sphere test at each pair, in that order: at most 2 contacts. Segments that meet (the nearest points
    closer than mjMINVAL) take the normal across the two axes (`_sphere_sphere_raw`)."""
    axis1 = ti.Vector([size1[1] * mat1[2], size1[1] * mat1[5], size1[1] * mat1[8]])
    axis2 = ti.Vector([size2[1] * mat2[2], size2[1] * mat2[5], size2[1] * mat2[8]])
    a0 = pos1 - axis1
    a1 = axis1 + pos1
    b0 = pos2 - axis2
    b1 = axis2 + pos2
    npair, t0, s0, t1, s1 = _seg_weights(a0, a1, b0, b1)
    d1 = a1 - a0
    d2 = b1 - b0
    n = 0
    for k in range(npair):
        t = t0 if k == 0 else t1
        s = s0 if k == 0 else s1
        p1 = d1 * t + a0
        p2 = d2 * s + b0
        found, dist, pos, normal = _sphere_sphere_raw(margin, p1, mat1, size1[0], p2, mat2, size2[0])
        if found:
            put(d, b, n0 + n, cap, dist, pos, normal, sm.zero3())
            n += 1
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
