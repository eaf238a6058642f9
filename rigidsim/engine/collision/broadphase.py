"""Which candidate pairs reach a collider: MuJoCo's bounding-sphere test (mj_filterSphere) with the pair's
margin + gap, after an optional sweep-and-prune; and MuJoCo's midphase, which the driver asks of the pairs
that touch.

Sweep-and-prune (``broadphase_traversal: sap``) projects each geom's bounding sphere, padded by the largest
margin + gap of its pairs (GEOM_SAPMARGIN), onto the axis along which the env's geom centres spread most,
sorts the intervals (insertion sort from the previous call's order, so a slowly moving scene sorts in about
linear time) and marks the pair-table rows of the geom pairs whose intervals overlap. Overlap on one axis
is necessary for the spheres to come within the margin, so the marks are a superset of the pairs that
pass the exact test; the driver then walks the table in order, testing the marked rows (and every row with
a plane or a geom without a bounding sphere) exactly. ``all_vs_all`` tests every row. Both give the same
contacts in the same order.

MuJoCo's midphase (mj_collideTree) takes the default pairs of two bodies unless each holds a single geom: it
walks the two bodies' bounding-volume trees (`bvh`) from the roots and sends a geom pair to its collider only
if every node pair on the way passed the separating-axis test of two oriented boxes on their six face axes
(mj_collideOBB): the inner nodes' boxes in the bodies' inertial frames with the bodies' margins, then the
geoms' own boxes (geom_aabb) in the geom frames with the pair's margin + gap. ``midphase`` runs the walk that
`bvh.midphase_paths` recorded for the row, with MuJoCo's arithmetic in MuJoCo's order (for the inner nodes the
axis products of the two body frames, computed once per pair as MuJoCo computes them once per body pair).
The boxes enclose the geoms, so the test drops only pairs that are apart by more than their margins, which the
colliders reject as well, and geoms that touch exactly (to the last bit, as the Panda's finger pads at qpos0),
which a collider can report at distance -1e-17 and a box test, rounded otherwise, finds apart. The driver
therefore runs it after the collider and only for pairs that made contacts: the same contacts as MuJoCo's
order of tests, at the cost of the test for touching pairs alone (run before the collider on every pair that
passes the sphere test, it cost the Panda 8 % more instructions per step).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    FXMAT, FXPOS, GEOM_AABB, GEOM_PAIRADR, GEOM_PAIRNUM, GEOM_RBOUND, GEOM_SAP, GEOM_SAPMARGIN, GEOM_TYPE,
    PAIR_BODY1, PAIR_BVHADR, PAIR_BVHMARGIN, PAIR_BVHNUM, PAIR_GEOM1, PAIR_GEOM2, SZ_NGEOM, XIMAT, XIPOS,
)
from rigidsim.model import GEOM_PLANE

MAXVAL = 1e10  # mjMAXVAL: a box half-size at least this is infinite (a plane's)


@ti.func
def _plane_geom_dist(d: ti.template(), b, gp, g):
    """Signed distance of geom g's centre above plane geom gp."""
    mat = sm.getv(d.geom, b, gp, FXMAT, 9)
    normal = ti.Vector([mat[2], mat[5], mat[8]])
    return sm.dot3(sm.getv(d.geom, b, g, FXPOS, 3) - sm.getv(d.geom, b, gp, FXPOS, 3), normal)


@ti.func
def bounds_overlap(m: ti.template(), d: ti.template(), b, g1, g2, margin):
    """mj_filterSphere: whether the bounding spheres of g1 and g2 (a plane: its half-space) come within
    `margin` (1), or not (0); geoms without a bounding sphere always pass."""
    r1 = m.gcol_f[g1, GEOM_RBOUND]
    r2 = m.gcol_f[g2, GEOM_RBOUND]
    ok = 1
    if r1 > 0 and r2 > 0:
        dif = sm.getv(d.geom, b, g1, FXPOS, 3) - sm.getv(d.geom, b, g2, FXPOS, 3)
        bound = r1 + r2 + margin
        if dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] > bound * bound:
            ok = 0
    else:
        if m.gcol_i[g1, GEOM_TYPE] == GEOM_PLANE and r2 > 0:
            if _plane_geom_dist(d, b, g1, g2) > margin + r2:
                ok = 0
        if m.gcol_i[g2, GEOM_TYPE] == GEOM_PLANE and r1 > 0:
            if _plane_geom_dist(d, b, g2, g1) > margin + r1:
                ok = 0
    return ok


@ti.func
def _infinite(half):
    """1 per half-size of at least mjMAXVAL (a plane's box)."""
    return ti.Vector([half[0] >= MAXVAL, half[1] >= MAXVAL, half[2] >= MAXVAL], ti.i32)


@ti.func
def _box_radius(half, mat, nrm):
    """The half-width of a box (half-sizes `half`, axes the columns of `mat`) along the unit axis `nrm`."""
    return (ti.abs(half[0] * sm.dot3(ti.Vector([mat[0], mat[3], mat[6]]), nrm))
            + ti.abs(half[1] * sm.dot3(ti.Vector([mat[1], mat[4], mat[7]]), nrm))
            + ti.abs(half[2] * sm.dot3(ti.Vector([mat[2], mat[5], mat[8]]), nrm)))


@ti.func
def _geom_boxes_overlap(m: ti.template(), d: ti.template(), b, g1, g2, margin):
    """mj_collideOBB at the walk's leaves: whether the boxes of geoms g1 and g2 (geom_aabb, posed by the geoms)
    overlap within `margin` along each face axis of either box (1), or not (0). A box with every half-size
    infinite always overlaps; the axes of a box with some are tested alone."""
    half1 = sm.getm(m.gcol_f, g1, GEOM_AABB + 3, 3)
    half2 = sm.getm(m.gcol_f, g2, GEOM_AABB + 3, 3)
    inf1 = _infinite(half1)
    inf2 = _infinite(half2)
    ok = 1
    if inf1.min() == 0 and inf2.min() == 0:
        mat1 = sm.getv(d.geom, b, g1, FXMAT, 9)
        mat2 = sm.getv(d.geom, b, g2, FXMAT, 9)
        # the box centres in the world: the geom's rotation applied to the local centre, then its position
        c1 = sm.rot_vec_mat(sm.getm(m.gcol_f, g1, GEOM_AABB, 3), mat1) + sm.getv(d.geom, b, g1, FXPOS, 3)
        c2 = sm.rot_vec_mat(sm.getm(m.gcol_f, g2, GEOM_AABB, 3), mat2) + sm.getv(d.geom, b, g2, FXPOS, 3)
        for j in ti.static(range(2)):
            # the face axes of box j, unless the other box is infinite along some axis
            if (inf2.max() if ti.static(j == 0) else inf1.max()) == 0:
                matj = mat1 if ti.static(j == 0) else mat2
                for k in ti.static(range(3)):
                    nrm = ti.Vector([matj[k], matj[3 + k], matj[6 + k]])
                    dist = ti.abs(sm.dot3(c2, nrm) - sm.dot3(c1, nrm))
                    if _box_radius(half1, mat1, nrm) + _box_radius(half2, mat2, nrm) + margin < dist:
                        ok = 0
    return ok


@ti.func
def _node_boxes_overlap(m: ti.template(), n1, n2, prod, margin):
    """mj_collideOBB at the walk's inner steps: whether node n1's box (in the first body's inertial frame) and
    node n2's (the second's) overlap within `margin`, from `prod` (row 6i + 3j + k: body i's axes and
    position dotted with axis k of body j, MuJoCo's product and offset)."""
    a1 = sm.getm(m.bvh_f, n1, 0, 6)
    a2 = sm.getm(m.bvh_f, n2, 0, 6)
    inf1 = _infinite(ti.Vector([a1[3], a1[4], a1[5]]))
    inf2 = _infinite(ti.Vector([a2[3], a2[4], a2[5]]))
    ok = 1
    if inf1.min() == 0 and inf2.min() == 0:
        for j in ti.static(range(2)):
            if (inf2.max() if ti.static(j == 0) else inf1.max()) == 0:
                for k in ti.static(range(3)):
                    r1 = 6 * 0 + 3 * j + k
                    r2 = 6 * 1 + 3 * j + k
                    proj1 = a1[0] * prod[r1, 0] + a1[1] * prod[r1, 1] + a1[2] * prod[r1, 2] + prod[r1, 3]
                    proj2 = a2[0] * prod[r2, 0] + a2[1] * prod[r2, 1] + a2[2] * prod[r2, 2] + prod[r2, 3]
                    rad1 = ti.abs(a1[3] * prod[r1, 0]) + ti.abs(a1[4] * prod[r1, 1]) + ti.abs(a1[5] * prod[r1, 2])
                    rad2 = ti.abs(a2[3] * prod[r2, 0]) + ti.abs(a2[4] * prod[r2, 1]) + ti.abs(a2[5] * prod[r2, 2])
                    if rad1 + rad2 + margin < ti.abs(proj2 - proj1):
                        ok = 0
    return ok


@ti.func
def midphase(m: ti.template(), d: ti.template(), b, p, g1, g2, margin):
    """MuJoCo's midphase for pair-table row p (geoms g1, g2; `margin`: the pair's margin + gap): 1 when every
    node pair of its walk through the two bodies' trees and then the geoms' own boxes overlap, else 0. The
    tests are independent of each other, so the geoms' boxes go first (no products needed)."""
    ok = _geom_boxes_overlap(m, d, b, g1, g2, margin)
    num = m.pair_i[p, PAIR_BVHNUM]
    if ok and num > 0:
        # MuJoCo's products: per body i, axis j's body and axis k, body i's three axes and its position dotted
        # with axis k of body j (the columns of the bodies' inertial frames)
        mat = ti.Matrix.zero(float, 2, 9)
        pos = ti.Matrix.zero(float, 2, 3)
        prod = ti.Matrix.zero(float, 12, 4)
        for i in ti.static(range(2)):
            body = m.pair_i[p, PAIR_BODY1 + i]
            for c in ti.static(range(9)):
                mat[i, c] = d.body[b, body, XIMAT + c]
            for c in ti.static(range(3)):
                pos[i, c] = d.body[b, body, XIPOS + c]
        for i in ti.static(range(2)):
            for j in ti.static(range(2)):
                for k in ti.static(range(3)):
                    nk = ti.Vector([mat[j, k], mat[j, 3 + k], mat[j, 6 + k]])
                    for q in ti.static(range(3)):
                        prod[6 * i + 3 * j + k, q] = sm.dot3(ti.Vector([mat[i, q], mat[i, 3 + q], mat[i, 6 + q]]), nk)
                    prod[6 * i + 3 * j + k, 3] = sm.dot3(ti.Vector([pos[i, 0], pos[i, 1], pos[i, 2]]), nk)
        bmargin = m.pair_f[p, PAIR_BVHMARGIN]
        q = m.pair_i[p, PAIR_BVHADR]
        end = q + num
        while ok and q < end:
            ok = _node_boxes_overlap(m, m.pair_bvh[q, 0], m.pair_bvh[q, 1], prod, bmargin)
            q += 1
    return ok


@ti.func
def _mark_row(m: ti.template(), d: ti.template(), b, ga, gb):
    """Mark the pair-table row of geoms ga, gb, if they are a candidate pair: a binary search of the lower
    geom's rows, which are contiguous and sorted by the other geom."""
    lo = ti.min(ga, gb)
    hi = ti.max(ga, gb)
    first = m.gcol_i[lo, GEOM_PAIRADR]
    last = first + m.gcol_i[lo, GEOM_PAIRNUM]  # one past
    while first < last:
        mid = (first + last) // 2
        other = ti.max(m.pair_i[mid, PAIR_GEOM1], m.pair_i[mid, PAIR_GEOM2])
        if other < hi:
            first = mid + 1
        else:
            last = mid
    if first < m.gcol_i[lo, GEOM_PAIRADR] + m.gcol_i[lo, GEOM_PAIRNUM]:
        if ti.max(m.pair_i[first, PAIR_GEOM1], m.pair_i[first, PAIR_GEOM2]) == hi:
            d.pair_hit[b, first] = 1


@ti.func
def sweep_and_prune(m: ti.template(), d: ti.template(), b):
    """Mark d.pair_hit[b, row] = 1 for the candidate rows whose padded bounding spheres overlap along the
    axis of widest spread (see the module docstring). Rows must be 0 on entry; the driver clears them."""
    ngeom = m.opt_i[SZ_NGEOM]
    # the axis: largest variance of the sweeping geoms' centres
    n = 0
    mean = sm.zero3()
    for g in range(ngeom):
        if m.gcol_i[g, GEOM_SAP]:
            mean = mean + sm.getv(d.geom, b, g, FXPOS, 3)
            n += 1
    if n > 1:
        mean = mean / n
        var = sm.zero3()
        for g in range(ngeom):
            if m.gcol_i[g, GEOM_SAP]:
                dv = sm.getv(d.geom, b, g, FXPOS, 3) - mean
                var = var + dv * dv
        axis = 0
        if var[1] > var[axis]:
            axis = 1
        if var[2] > var[axis]:
            axis = 2
        # intervals; the order array holds every geom, non-sweeping ones get an empty interval at +inf
        for g in range(ngeom):
            lo = ti.math.inf
            hi = -ti.math.inf
            if m.gcol_i[g, GEOM_SAP]:
                c = d.geom[b, g, FXPOS + axis]
                r = m.gcol_f[g, GEOM_RBOUND] + m.gcol_f[g, GEOM_SAPMARGIN]
                lo = c - r
                hi = c + r
            d.sap_f[b, g, 0] = lo
            d.sap_f[b, g, 1] = hi
        # the previous order, repaired when it is not a permutation (first use: zeros)
        valid = 1
        for k in range(ngeom):
            g = d.sap_i[b, k]
            if g < 0 or g >= ngeom or (k > 0 and g == d.sap_i[b, 0]):
                valid = 0
        if not valid:
            for k in range(ngeom):
                d.sap_i[b, k] = k
        # insertion sort by lower bound
        for k in range(1, ngeom):
            g = d.sap_i[b, k]
            key = d.sap_f[b, g, 0]
            j = k - 1
            while j >= 0 and d.sap_f[b, d.sap_i[b, j], 0] > key:
                d.sap_i[b, j + 1] = d.sap_i[b, j]
                j -= 1
            d.sap_i[b, j + 1] = g
        # sweep
        for k in range(n):
            ga = d.sap_i[b, k]
            hi = d.sap_f[b, ga, 1]
            j = k + 1
            while j < n and d.sap_f[b, d.sap_i[b, j], 0] <= hi:
                _mark_row(m, d, b, ga, d.sap_i[b, j])
                j += 1
