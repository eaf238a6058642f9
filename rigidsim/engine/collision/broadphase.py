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
axis products of the two body frames, which MuJoCo computes once per body pair, are recomputed per node pair:
the same numbers). The boxes enclose the geoms, so the test drops only pairs that are apart by more than their
margins, which the colliders reject as well, and geoms that touch exactly (to the last bit, as the Panda's
finger pads at qpos0), which a collider can report at distance -1e-17 and a box test, rounded otherwise, finds
apart. The driver
therefore runs it after the collider and only for pairs that made contacts: the same contacts as MuJoCo's
order of tests, at the cost of the test for touching pairs alone (run before the collider on every pair that
passes the sphere test, it cost the Panda 8 % more instructions per step).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    BVH_MARGIN, FRAME_BODYID, FXMAT, FXPOS, GEOM_PAIRADR, GEOM_PAIRNUM, GEOM_RBOUND, GEOM_SAP, GEOM_SAPMARGIN,
    GEOM_TYPE, PAIR_BVHADR, PAIR_BVHNUM, PAIR_GEOM1, PAIR_GEOM2, SZ_NGEOM, XIMAT, XIPOS,
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
def _boxes_overlap(a1, a2, pos1, mat1, pos2, mat2, margin, inner: ti.template()):
    """mj_collideOBB: whether box 1 (centre a1[0:3] and half-sizes a1[3:6] in the frame pos1, mat1, a row-major
    rotation) and box 2 overlap within `margin` along each face axis of either box (1), or not (0). A box with
    every half-size infinite always overlaps; the axes of a box with some are tested alone. `inner`: MuJoCo's
    arithmetic for the walk's inner nodes (a box's projection from the products of its frame's axes with the
    axis, plus its frame's position's), else its leaves' (the box centre posed in the world, projected)."""
    inf1 = ti.Vector([a1[3] >= MAXVAL, a1[4] >= MAXVAL, a1[5] >= MAXVAL], ti.i32)
    inf2 = ti.Vector([a2[3] >= MAXVAL, a2[4] >= MAXVAL, a2[5] >= MAXVAL], ti.i32)
    c1 = sm.rot_vec_mat(ti.Vector([a1[0], a1[1], a1[2]]), mat1) + pos1
    c2 = sm.rot_vec_mat(ti.Vector([a2[0], a2[1], a2[2]]), mat2) + pos2
    ok = 1
    if inf1.min() == 0 and inf2.min() == 0:
        for jk in range(6):  # axis k of box j (a loop, not unrolled: compiled code size)
            j = jk // 3
            k = jk - 3 * j
            other_inf = inf2.max()
            nrm = ti.Vector([mat1[k], mat1[3 + k], mat1[6 + k]])
            if j == 1:
                other_inf = inf1.max()
                nrm = ti.Vector([mat2[k], mat2[3 + k], mat2[6 + k]])
            if ok and other_inf == 0:
                # per box, its three axes dotted with the axis: MuJoCo's products
                p1 = ti.Vector([sm.dot3(ti.Vector([mat1[q], mat1[3 + q], mat1[6 + q]]), nrm)
                                for q in ti.static(range(3))])
                p2 = ti.Vector([sm.dot3(ti.Vector([mat2[q], mat2[3 + q], mat2[6 + q]]), nrm)
                                for q in ti.static(range(3))])
                proj1 = sm.dot3(c1, nrm)
                proj2 = sm.dot3(c2, nrm)
                if ti.static(inner):
                    proj1 = a1[0] * p1[0] + a1[1] * p1[1] + a1[2] * p1[2] + sm.dot3(pos1, nrm)
                    proj2 = a2[0] * p2[0] + a2[1] * p2[1] + a2[2] * p2[2] + sm.dot3(pos2, nrm)
                rad1 = ti.abs(a1[3] * p1[0]) + ti.abs(a1[4] * p1[1]) + ti.abs(a1[5] * p1[2])
                rad2 = ti.abs(a2[3] * p2[0]) + ti.abs(a2[4] * p2[1]) + ti.abs(a2[5] * p2[2])
                if rad1 + rad2 + margin < ti.abs(proj2 - proj1):
                    ok = 0
    return ok


@ti.func
def midphase(m: ti.template(), d: ti.template(), b, p, g1, g2, margin):
    """MuJoCo's midphase for pair-table row p (geoms g1, g2; `margin`: the pair's margin + gap): 1 when the
    geoms' own boxes and every node pair of its walk through the two bodies' trees overlap, else 0 (the tests
    are independent of each other; the leaves' go first)."""
    ok = _boxes_overlap(sm.getm(m.bvh_f, g1, 0, 6), sm.getm(m.bvh_f, g2, 0, 6),
                        sm.getv(d.geom, b, g1, FXPOS, 3), sm.getv(d.geom, b, g1, FXMAT, 9),
                        sm.getv(d.geom, b, g2, FXPOS, 3), sm.getv(d.geom, b, g2, FXMAT, 9), margin, False)
    num = m.pair_i[p, PAIR_BVHNUM]
    if ok and num > 0:
        # the walk's first body is the lower-numbered one
        body1 = ti.min(m.geom_i[g1, FRAME_BODYID], m.geom_i[g2, FRAME_BODYID])
        body2 = ti.max(m.geom_i[g1, FRAME_BODYID], m.geom_i[g2, FRAME_BODYID])
        pos1 = sm.getv(d.body, b, body1, XIPOS, 3)
        mat1 = sm.getv(d.body, b, body1, XIMAT, 9)
        pos2 = sm.getv(d.body, b, body2, XIPOS, 3)
        mat2 = sm.getv(d.body, b, body2, XIMAT, 9)
        q = m.pair_i[p, PAIR_BVHADR]
        end = q + num
        while ok and q < end:
            n1 = m.pair_bvh[q, 0]
            n2 = m.pair_bvh[q, 1]
            # the bodies' margins, summed as MuJoCo sums them (each node row carries its body's)
            bmargin = m.bvh_f[n1, BVH_MARGIN] + m.bvh_f[n2, BVH_MARGIN]
            ok = _boxes_overlap(sm.getm(m.bvh_f, n1, 0, 6), sm.getm(m.bvh_f, n2, 0, 6), pos1, mat1, pos2, mat2,
                                bmargin, True)
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
