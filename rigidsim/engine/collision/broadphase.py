"""Which candidate pairs reach a collider: MuJoCo's bounding-sphere test (mj_filterSphere) with the pair's
margin + gap, after an optional sweep-and-prune.

Sweep-and-prune (``broadphase_traversal: sap``) projects each geom's bounding sphere, padded by the largest
margin + gap of its pairs (GEOM_SAPMARGIN), onto the axis along which the env's geom centres spread most,
sorts the intervals (insertion sort from the previous call's order, so a slowly moving scene sorts in about
linear time) and marks the pair-table rows of the geom pairs whose intervals overlap. Overlap on one axis
is necessary for the spheres to come within the margin, so the marks are a superset of the pairs that
pass the exact test; the driver then walks the table in order, testing the marked rows (and every row with
a plane or a geom without a bounding sphere) exactly. ``all_vs_all`` tests every row. Both give the same
contacts in the same order.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    FXMAT, FXPOS, GEOM_PAIRADR, GEOM_PAIRNUM, GEOM_RBOUND, GEOM_SAP, GEOM_SAPMARGIN, GEOM_TYPE, PAIR_GEOM1,
    PAIR_GEOM2, SZ_NGEOM,
)
from rigidsim.model import GEOM_PLANE


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
