"""Box colliders of MuJoCo's engine_collision_box.c: sphere-box, capsule-box and box-box.

Each follows MuJoCo's arithmetic (same formulas, same operation order), so float64 contacts agree with
mj_collision's to rounding. Signatures: see the package docstring; geom 1 is the sphere or capsule (the
lower geom type), geom 2 the box, and box-box normals point from box 1 to box 2.

Code size matters here (compile time and cached-kernel load time), so loops that MuJoCo writes out per
axis, corner or clipping plane are runtime loops over small local vectors and matrices indexed at run time.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.layout import MINVAL

_HUGE = 1e10  # mjMAXVAL: the "no separation found yet" value of the box-box axis search

# box-box tolerances (MuJoCo's float64 values), all in units of the rounding error they absorb:
_SEP_SLACK = 1e-13  # separation slack per unit of summed half-sizes
_PAR_SIN2 = 1e-16  # squared sine under which an edge-cross direction is rounding noise and skipped
_AMBIG_COMP = 1e-9  # axis component under which the supporting edge's side is undecided (try both)
_DUP_REL2 = 1e-14  # squared in-plane distance, relative to the face's squared half-diagonal, of a duplicate
_EDGE_BIAS = 1e-6  # relative handicap of edge axes against face axes in the axis search
_NVERT = 12  # clipped-polygon capacity (an incident quad clipped by 4 side planes has at most 8 corners)


@ti.func
def _sphere_box_raw(d: ti.template(), b, slot, cap, margin, center_w, radius, pos2, mat2, size2):
    """mjraw_SphereBox: a sphere (world centre `center_w`, `radius`) against the box (pos2, mat2, half-sizes
    size2); writes contact row `slot` and returns 1, or 0 when the gap exceeds `margin`."""
    center = sm.rot_vec_mat_t(center_w - pos2, mat2)  # sphere centre in the box frame
    clamped = center
    for k in range(3):
        if size2[k] > 0.0:
            clamped[k] = sm.clip(center[k], -size2[k], size2[k])
    out, dist = sm.normalize3(clamped - center)
    n = 0
    if dist - radius <= margin:
        pos = sm.zero3()  # contact point, box frame
        normal = sm.zero3()
        if dist <= MINVAL:
            # centre inside the box: push out through the nearest face
            closest = (size2[0] + size2[1] + size2[2]) * 2.0
            face = 0
            for f in range(6):
                side = 1.0 if f % 2 == 1 else -1.0
                gap = ti.abs(side * size2[f // 2] - center[f // 2])
                if closest > gap:
                    closest = gap
                    face = f
            nearest = sm.zero3()
            nearest[face // 2] = -1.0 if face % 2 == 1 else 1.0
            pos = center + nearest * ((radius - closest) / 2.0)
            normal = sm.rot_vec_mat(nearest, mat2)
            dist = -closest
        else:
            deepest = center + out * radius
            pos = clamped * 0.5 + deepest * 0.5
            normal = sm.rot_vec_mat(out, mat2)
        put(d, b, slot, cap, dist - radius, sm.rot_vec_mat(pos, mat2) + pos2, normal, sm.zero3())
        n = 1
    return n


@ti.func
def sphere_box(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_SphereBox: sphere (geom 1) against box (geom 2), at most 1 contact."""
    return _sphere_box_raw(d, b, n0, cap, margin, pos1, size1[0], pos2, mat2, size2)


# ----------------------------------------------------------------------------- capsule : box


@ti.func
def capsule_box(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_CapsuleBox: capsule (geom 1) against box (geom 2), at most 2 contacts (mj_maxContact reserves 4).

    In the box frame, the point of the capsule's segment closest to the box is found among the segment's
    two ends (against the faces) and the segment against each of the 12 box edges; a second segment
    point is picked from how the segment lies relative to the closest corner, edge or face (MuJoCo's
    heuristic, whose integer codes this keeps). Each point is then collided as a sphere with the box."""
    radius = size1[0]
    halflength = size1[1]
    pos = sm.rot_vec_mat_t(pos1 - pos2, mat2)  # capsule centre, box frame
    axis = sm.rot_vec_mat_t(ti.Vector([mat1[2], mat1[5], mat1[8]]), mat2)
    halfaxis = axis * halflength

    # octant of the segment direction: bit k set when halfaxis[k] > 0
    axisdir = 0
    for k in range(3):
        if halfaxis[k] > 0.0:
            axisdir += 1 << k

    bestdistmax = margin + 2.0 * (radius + halflength + size2[0] + size2[1] + size2[2])
    bestdist = bestdistmax
    bestsegmentpos = 0.0  # segment parameter in [-1, 1] of the closest point
    bestboxpos = 0.0  # edge parameter in [-1, 1] of the closest point on the box
    cltype = -4  # -3 / -1: segment end (-1 / +1) nearest a face; 0..8: an edge (3 * box end + segment end)
    clface = -1  # the face axis clamped for that segment end (-1: the end is inside the box)
    clcorner = 0  # corner bits of the closest edge's lower end (or upper end, when that is the closest)
    cledge = 0  # axis of the closest edge

    # each segment end against the box faces (ends outside more than one slab do not count)
    for e in range(2):
        end = -1.0 if e == 0 else 1.0
        p = pos + halfaxis * end
        q = p
        nclamp = 0
        clamped_axis = -1
        for k in range(3):
            if q[k] < -size2[k]:
                nclamp += 1
                clamped_axis = k
                q[k] = -size2[k]
            elif q[k] > size2[k]:
                nclamp += 1
                clamped_axis = k
                q[k] = size2[k]
        if nclamp <= 1:
            dq = q - p
            dd = sm.dot3(dq, dq)
            if dd < bestdist:
                bestdist = dd
                bestsegmentpos = end
                cltype = -3 if e == 0 else -1
                clface = clamped_axis

    # the segment against each box edge: edge along axis j, from the corner with bit j clear
    for j in range(3):
        for corner in range(8):
            if (corner & (1 << j)) == 0:
                start = ti.Vector([size2[0] if (corner & 1) != 0 else -size2[0],
                                   size2[1] if (corner & 2) != 0 else -size2[1],
                                   size2[2] if (corner & 4) != 0 else -size2[2]])
                start[j] = 0.0  # the edge's midpoint
                dif = start - pos
                # closest points of the lines start + x1 * size2[j] e_j and pos + x2 * halfaxis
                ma = size2[j] * size2[j]
                mb = -size2[j] * halfaxis[j]
                mc = size1[1] * size1[1]
                u = -size2[j] * dif[j]
                v = sm.dot3(halfaxis, dif)
                det = ma * mc - mb * mb
                if ti.abs(det) >= MINVAL:
                    idet = 1.0 / det
                    x1 = (mc * u - mb * v) * idet
                    x2 = (ma * v - mb * u) * idet
                    s1 = 1  # 0 / 1 / 2: x1 clamped low / free / clamped high
                    s2 = 1
                    if x1 > 1.0:
                        x1 = 1.0
                        s1 = 2
                        x2 = (v - mb) * (1.0 / mc)
                    elif x1 < -1.0:
                        x1 = -1.0
                        s1 = 0
                        x2 = (v + mb) * (1.0 / mc)
                    if x2 > 1.0 or x2 < -1.0:
                        if x2 > 1.0:
                            x2 = 1.0
                            s2 = 2
                            x1 = (u - mb) * (1.0 / ma)
                        else:
                            x2 = -1.0
                            s2 = 0
                            x1 = (u + mb) * (1.0 / ma)
                        if x1 > 1.0:
                            x1 = 1.0
                            s1 = 2
                        elif x1 < -1.0:
                            x1 = -1.0
                            s1 = 0
                    gap = start - pos + halfaxis * (-x2)
                    gap[j] = gap[j] + size2[j] * x1
                    dd = sm.dot3(gap, gap)
                    if dd < bestdist - MINVAL:
                        bestdist = dd
                        bestsegmentpos = x2
                        bestboxpos = x1
                        kind = s1 * 3 + s2
                        clcorner = corner + (1 << j) * (kind // 6)
                        cledge = j
                        cltype = kind

    n = 0
    if cltype != -4:
        secondpos = -4.0  # offset along the segment of the second point; below -3: none
        mul = 0.0
        if cltype >= 0 and cltype // 3 != 1:
            # closest to a box corner
            rel = axisdir ^ clcorner
            if rel != 0 and rel != 7:  # otherwise the segment points at (or away from) the corner
                dp = 0.0
                de = 0.0
                if rel == 1 or rel == 2 or rel == 4:
                    mul = 1.0
                    de = 1.0 - bestsegmentpos
                    dp = 1.0 + bestsegmentpos
                else:
                    mul = -1.0
                    rel = 7 - rel
                    dp = 1.0 - bestsegmentpos
                    de = 1.0 + bestsegmentpos
                ax = 0
                if rel == 2:
                    ax = 1
                elif rel == 4:
                    ax = 2
                ax1 = (ax + 1) % 3
                ax2 = (ax + 2) % 3
                if axis[ax] * axis[ax] > 0.5:
                    # along the box edge from the corner, no farther than its other end
                    secondpos = de
                    lim = 2.0 * size2[ax] / ti.abs(halfaxis[ax])
                    if lim < secondpos:
                        secondpos = lim
                    secondpos *= mul
                else:
                    # across a face from the corner, no farther than the face's far sides
                    secondpos = dp
                    lim = 2.0 * size2[ax1] / ti.abs(halfaxis[ax1])
                    if lim < secondpos:
                        secondpos = lim
                    lim = 2.0 * size2[ax2] / ti.abs(halfaxis[ax2])
                    if lim < secondpos:
                        secondpos = lim
                    secondpos *= -mul
        elif cltype >= 0:
            # closest to the inside of a box edge
            rel = (axisdir ^ clcorner) & (7 - (1 << cledge))
            if rel == 1 or rel == 2 or rel == 4:  # crossing the edge (not a T)
                ax = cledge
                ax1 = (ax + 1) % 3
                ax2 = (ax + 2) % 3
                if ti.abs(axis[ax1]) > ti.abs(axis[ax2]):
                    ax1 = ax2
                ax2 = 3 - ax - ax1  # the face axis the segment is closer to lying in
                if (rel & (1 << ax2)) != 0:
                    mul = 1.0
                    secondpos = 1.0 - bestsegmentpos
                else:
                    mul = -1.0
                    secondpos = 1.0 + bestsegmentpos
                lim = 2.0 * size2[ax2] / ti.abs(halfaxis[ax2])
                if lim < secondpos:
                    secondpos = lim
                e2 = 0.0
                if ((axisdir & (1 << ax)) != 0) == ((rel & (1 << ax2)) != 0):
                    e2 = 1.0 - bestboxpos
                else:
                    e2 = 1.0 + bestboxpos
                lim = size2[ax] * e2 / ti.abs(halfaxis[ax])
                if lim < secondpos:
                    secondpos = lim
                secondpos *= mul
        elif clface != -1:
            # a segment end nearest a face: the other way along the segment, while above that face
            mul = 1.0 if cltype == -3 else -1.0
            secondpos = 2.0
            other = pos + halfaxis * (-mul)
            for k in range(3):
                if k != clface:
                    lim = (size2[k] - other[k]) / halfaxis[k] * mul
                    if lim > 0.0 and lim < secondpos:
                        secondpos = lim
                    lim = (-size2[k] - other[k]) / halfaxis[k] * mul
                    if lim > 0.0 and lim < secondpos:
                        secondpos = lim
            secondpos *= mul

        # a sphere of the capsule's radius at each chosen segment point, against the box
        for s in range(2):
            if s == 0 or secondpos > -3.0:
                t = bestsegmentpos if s == 0 else secondpos + bestsegmentpos
                center_w = sm.rot_vec_mat(pos + halfaxis * t, mat2) + pos2
                n += _sphere_box_raw(d, b, n0 + n, cap, margin, center_w, radius, pos2, mat2, size2)
    return n


# ----------------------------------------------------------------------------- box : box


@ti.func
def _edge_axis(rot, i, j):
    """Unnormalized e_i x (column j of rot) in box 1's frame (component i is zero), as MuJoCo forms it."""
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    axis = sm.zero3()
    axis[i1] = -rot[3 * i2 + j]
    axis[i2] = rot[3 * i1 + j]
    return axis


@ti.func
def box_box(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, margin):
    """mjc_BoxBox: box against box, at most 8 contacts.

    A separating-axis search over the 15 candidate directions (3 face normals of each box, 9 edge
    cross products) finds the direction of largest separation; none beyond the margin means contact.
    Face directions win near-ties. For an edge direction, one contact at the midpoint of the two
    supporting edges' closest points. For a face direction, the incident box's face most opposed to
    the reference face is clipped to the reference face's side planes, and each clipped corner within
    the margin is a contact, halfway between the reference plane and the incident face."""
    pos21 = sm.rot_vec_mat_t(pos2 - pos1, mat1)  # box 2's centre in box 1's frame
    pos12 = sm.rot_vec_mat_t(pos1 - pos2, mat2)  # box 1's centre in box 2's frame
    rot = ti.Vector([mat1[r] * mat2[c] + mat1[3 + r] * mat2[3 + c] + mat1[6 + r] * mat2[6 + c]
                     for r in ti.static(range(3)) for c in ti.static(range(3))])  # mat1' mat2
    rotabs = ti.abs(rot)

    septol = margin + _SEP_SLACK * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2])

    # axis search: code 0..2 face of box 1, 3..5 face of box 2, 6 + 3 i + j edge i of box 1 x edge j of box 2
    sep_best = -_HUGE
    sep_face = -_HUGE
    code = -1
    code_face = -1
    separated = False
    for c in range(15):
        if c == 6:
            sep_face = sep_best
            code_face = code
        if c < 3:
            radius2 = rotabs[3 * c] * size2[0] + rotabs[3 * c + 1] * size2[1] + rotabs[3 * c + 2] * size2[2]
            sep = ti.abs(pos21[c]) - size1[c] - radius2
            if sep > septol:
                separated = True
            elif sep > sep_best:
                sep_best = sep
                code = c
        elif c < 6:
            j = c - 3
            radius1 = rotabs[j] * size1[0] + rotabs[3 + j] * size1[1] + rotabs[6 + j] * size1[2]
            sep = ti.abs(pos12[j]) - size2[j] - radius1
            if sep > septol:
                separated = True
            elif sep > sep_best:
                sep_best = sep
                code = c
        else:
            i = (c - 6) // 3
            j = (c - 6) % 3
            i1 = (i + 1) % 3
            i2 = (i + 2) % 3
            ax1 = -rot[3 * i2 + j]
            ax2 = rot[3 * i1 + j]
            norm2 = ax1 * ax1 + ax2 * ax2
            if norm2 >= _PAR_SIN2:
                inv = 1.0 / ti.sqrt(norm2)
                ax1 *= inv
                ax2 *= inv
                radius1 = size1[i1] * ti.abs(ax1) + size1[i2] * ti.abs(ax2)
                j1 = (j + 1) % 3
                j2 = (j + 2) % 3
                a2_1 = ax1 * rot[3 * i1 + j1] + ax2 * rot[3 * i2 + j1]
                a2_2 = ax1 * rot[3 * i1 + j2] + ax2 * rot[3 * i2 + j2]
                radius2 = size2[j1] * ti.abs(a2_1) + size2[j2] * ti.abs(a2_2)
                sep = ti.abs(ax1 * pos21[i1] + ax2 * pos21[i2]) - radius1 - radius2
                if sep > septol:
                    separated = True
                elif sep - _EDGE_BIAS * ti.abs(sep) > sep_best and sep > sep_face:
                    sep_best = sep
                    code = c
        if separated:
            break

    n = 0
    if not separated and code >= 0:
        if code >= 6:
            # an edge direction nearly along the best face normal, and not clearly deeper: take the face
            axis, _ = sm.normalize3(_edge_axis(rot, (code - 6) // 3, (code - 6) % 3))
            face_dot = 0.0
            if code_face < 3:
                face_dot = ti.abs(axis[code_face])
            else:
                f = code_face - 3
                face_dot = ti.abs(axis[0] * rot[f] + axis[1] * rot[3 + f] + axis[2] * rot[6 + f])
            if face_dot > 0.99 and sep_best < sep_face + 0.05 * ti.abs(sep_face) + MINVAL:
                code = code_face
                sep_best = sep_face

        if code >= 6:
            n = _box_box_edge(d, b, n0, cap, pos1, mat1, size1, size2, rot, pos21, code - 6, septol)
        else:
            n = _box_box_face(d, b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, rot, pos21, pos12, code,
                              margin)
    return n


@ti.func
def _box_box_edge(d: ti.template(), b, n0, cap, pos1, mat1, size1, size2, rot, pos21, e, septol):
    """Edge-edge contact for edge axis `e` = 3 i + j (edge i of box 1, edge j of box 2): 1 contact or 0."""
    i = e // 3
    j = e % 3
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    j1 = (j + 1) % 3
    j2 = (j + 2) % 3
    axis, _ = sm.normalize3(_edge_axis(rot, i, j))
    if sm.dot3(axis, pos21) < 0.0:
        axis = -axis  # from box 1 towards box 2
    a2 = sm.rot_vec_mat_t(axis, rot)  # the axis in box 2's frame

    # a near-zero axis component leaves the supporting edge's side undecided: try both sides
    amb1 = -1
    if ti.abs(axis[i1]) < _AMBIG_COMP:
        amb1 = i1
    elif ti.abs(axis[i2]) < _AMBIG_COMP:
        amb1 = i2
    amb2 = -1
    if ti.abs(a2[j1]) < _AMBIG_COMP:
        amb2 = j1
    elif ti.abs(a2[j2]) < _AMBIG_COMP:
        amb2 = j2

    d2 = ti.Vector([rot[j], rot[3 + j], rot[6 + j]])  # box 2's edge direction
    bb = d2[i]  # cosine between the two edge directions
    denom = 1.0 - bb * bb
    best = _HUGE
    w1 = sm.zero3()
    w2 = sm.zero3()
    for v in range(4):
        flip1 = v // 2
        flip2 = v % 2
        if (flip1 == 0 or amb1 >= 0) and (flip2 == 0 or amb2 >= 0):
            # box 1's edge: the corner furthest along +axis; box 2's: furthest along -axis
            c1 = sm.zero3()
            c1[i1] = size1[i1] if axis[i1] >= 0.0 else -size1[i1]
            c1[i2] = size1[i2] if axis[i2] >= 0.0 else -size1[i2]
            if flip1 == 1:
                c1[amb1] = -c1[amb1]
            cc = sm.zero3()
            cc[j1] = -size2[j1] if a2[j1] >= 0.0 else size2[j1]
            cc[j2] = -size2[j2] if a2[j2] >= 0.0 else size2[j2]
            if flip2 == 1:
                cc[amb2] = -cc[amb2]
            c2 = sm.rot_vec_mat(cc, rot) + pos21
            # closest points of the two edge segments, each clamp re-solving the other parameter
            ev = c2 - c1
            d1e = ev[i]
            d2e = sm.dot3(d2, ev)
            s = 0.0
            if denom >= MINVAL:
                s = (d1e - bb * d2e) / denom
            s = sm.clip(s, -size1[i], size1[i])
            t = sm.clip(bb * s - d2e, -size2[j], size2[j])
            s = sm.clip(d1e + bb * t, -size1[i], size1[i])
            p1 = c1
            p1[i] = p1[i] + s
            p2 = c2 + d2 * t
            gap = p2 - p1
            gap2 = sm.dot3(gap, gap)
            if gap2 < best:
                best = gap2
                w1 = p1
                w2 = p2

    dist = sm.dot3(w2 - w1, axis)
    n = 0
    if dist <= septol:
        mid = ti.Vector([0.5 * (w1[0] + w2[0]), 0.5 * (w1[1] + w2[1]), 0.5 * (w1[2] + w2[2])])
        put(d, b, n0, cap, dist, sm.rot_vec_mat(mid, mat1) + pos1, sm.rot_vec_mat(axis, mat1), sm.zero3())
        n = 1
    return n


@ti.func
def _box_box_face(d: ti.template(), b, n0, cap, pos1, mat1, size1, pos2, mat2, size2, rot, pos21, pos12,
                  code, margin):
    """Face contacts for face axis `code` (0..2: a face of box 1, 3..5: of box 2): up to 8 contacts."""
    ref1 = code < 3  # box 1 owns the reference face
    a = code
    sizeref = size1
    sizeinc = size2
    posref = pos1
    matref = mat1
    posoi = pos21  # incident box's centre in the reference frame
    rinc = rot  # rinc[3 r + c]: component r of incident axis c, reference frame
    if not ref1:
        a = code - 3
        sizeref = size2
        sizeinc = size1
        posref = pos2
        matref = mat2
        posoi = pos12
        rinc = ti.Vector([rot[0], rot[3], rot[6], rot[1], rot[4], rot[7], rot[2], rot[5], rot[8]])

    sgn = 1.0 if posoi[a] >= 0.0 else -1.0  # side of the reference box the incident box is on
    binc = 0  # incident face axis: the incident axis most along the reference normal
    for k in range(1, 3):
        if ti.abs(rinc[3 * a + k]) > ti.abs(rinc[3 * a + binc]):
            binc = k
    tinc = -1.0 if sgn * rinc[3 * a + binc] > 0.0 else 1.0  # that face's side, facing the reference face

    # incident face as (x, y, z): x, y along the reference face's axes ax, ay, z the height above it
    ax = (a + 1) % 3
    ay = (a + 2) % 3
    bu = (binc + 1) % 3
    bv = (binc + 2) % 3
    cx = sm.zero3()
    du = sm.zero3()
    dv = sm.zero3()
    for r in range(3):
        c = ax if r == 0 else (ay if r == 1 else a)
        cx[r] = posoi[c] + tinc * sizeinc[binc] * rinc[3 * c + binc]
        du[r] = sizeinc[bu] * rinc[3 * c + bu]
        dv[r] = sizeinc[bv] * rinc[3 * c + bv]
    cx[2] = sgn * cx[2] - sizeref[a]
    du[2] = du[2] * sgn
    dv[2] = dv[2] * sgn

    # two polygon buffers, rows 0.. and _NVERT..; `base` is the current one
    poly = ti.Matrix.zero(float, 2 * _NVERT, 3)
    for k in range(4):
        su = 1.0 if (k == 0 or k == 3) else -1.0
        sv = 1.0 if k < 2 else -1.0
        for r in range(3):
            poly[k, r] = cx[r] + su * du[r] + sv * dv[r]
    base = 0
    nvert = 4

    # Sutherland-Hodgman against sign * x <= sizeref[ax], then sign * y <= sizeref[ay]
    dcut = ti.Vector.zero(float, _NVERT)
    for plane in range(4):
        coord = plane // 2
        sign = 1.0 if plane % 2 == 0 else -1.0
        limit = sizeref[ax] if coord == 0 else sizeref[ay]
        inside = True
        for k in range(nvert):
            dcut[k] = sign * poly[base + k, coord] - limit
            if dcut[k] > 0.0:
                inside = False
        if not inside:
            spare = _NVERT - base
            nout = 0
            for k in range(nvert):
                k1 = 0 if k + 1 == nvert else k + 1
                dp = dcut[k]
                dq = dcut[k1]
                if dp <= 0.0 and nout < _NVERT:
                    for r in range(3):
                        poly[spare + nout, r] = poly[base + k, r]
                    nout += 1
                if ((dp < 0.0 and dq > 0.0) or (dp > 0.0 and dq < 0.0)) and nout < _NVERT:
                    t = dp / (dp - dq)
                    for r in range(3):
                        poly[spare + nout, r] = poly[base + k, r] + t * (poly[base + k1, r] - poly[base + k, r])
                    nout += 1
            base = spare
            nvert = nout

    # normal from geom 1 to geom 2
    nsign = sgn if ref1 else -sgn
    normal = ti.Vector([nsign * matref[a], nsign * matref[3 + a], nsign * matref[6 + a]])

    # corners within the margin band, skipping near-duplicates (in-plane) of corners already taken
    dupe2 = _DUP_REL2 * (sizeref[ax] * sizeref[ax] + sizeref[ay] * sizeref[ay])
    kept = ti.Matrix.zero(float, _NVERT, 2)
    n = 0
    for k in range(nvert):
        x = poly[base + k, 0]
        y = poly[base + k, 1]
        z = poly[base + k, 2]
        if z <= margin:
            dupe = False
            for q in range(n):
                dx = kept[q, 0] - x
                dy = kept[q, 1] - y
                if dx * dx + dy * dy < dupe2:
                    dupe = True
            if not dupe:
                kept[n, 0] = x
                kept[n, 1] = y
                posc = sm.zero3()
                posc[ax] = x
                posc[ay] = y
                posc[a] = sgn * (sizeref[a] + 0.5 * z)
                put(d, b, n0 + n, cap, z, sm.rot_vec_mat(posc, matref) + posref, normal, sm.zero3())
                n += 1
    return n
