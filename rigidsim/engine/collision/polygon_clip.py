"""Polygon clipping for the multi-contact of convex pairs (`multicontact`), after MuJoCo 4.0.0.

One polygon (the clipping face: 4 box corners, 16 cylinder-cap points or a mesh polygon, with its outward normal n) cuts
another (the other geom's face, or an edge given as 2 points): the second polygon is clipped by the side
planes of the first, one after the other (Sutherland-Hodgman), and the points left are kept when they lie
no farther than a margin above the first face's plane. From the kept points at most a few become contacts:

- more than 4 points when at most 4 contacts are wanted: the 4 that span the largest quadrilateral, found
  by advancing its corners around the polygon while the area grows (the area of quadrilateral a, b, c, d
  is half the norm of (a - c) x (b - d));
- an edge left with 3 or more points: its two farthest points;
- otherwise the first points, up to the number of contacts wanted.

Each contact point v becomes a pair of witnesses: x1, v projected on the first face's plane, and x2, x1
moved along a given unit direction w onto the plane through v perpendicular to w; the distance is the
signed length (x1 - v) . w of that move.

The side plane through edge (v1, v2) of the first polygon has the unit normal (v2 - v1) x ((v1 + n) - v1);
a point p is inside it when (p - v1) . normal > -1e-15; an edge PQ of the clipped polygon that crosses it
is cut at P + t (Q - P) with t = dP / (dP - dQ) (dP, dQ: the two ends' signed distances), kept only when t
lies in [0, 1].

Scratch: rows of ``d.ccd_f[b]`` from `base` (`support.mc_f`): the output (`MC_OUT`, 7 floats per contact:
dist, x1, x2), the clipping polygon (`MC_FACE1`, n1 points), the clipped one right after it (`face2_off`, n2
points), then n1 side-plane normals and two buffers of n1 + n2 + 8 points for the clipping passes: at most
`mc_size`(max(n1, n2)) floats (a mesh's polygons have as many points as the model's largest, `support.
scratch_size`).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.support import _get3, _set3, mc_size
from rigidsim.engine.layout import MINVAL

MC_OUT = 2  # up to 4 contacts: dist, x1, x2 (7 floats each)
MC_FACE1 = 32  # the clipping polygon (n1 points), the clipped polygon or edge after it (`face2_off`)
NSPARE = 8  # the clipping buffers hold n1 + n2 + NSPARE points (a convex n2-gon cut by n1 planes keeps n1 + n2)
assert MC_FACE1 + 21 * 16 + 6 * NSPARE <= mc_size(16)  # `mc_size` covers the layout below (n1, n2 <= 16)


@ti.func
def face2_off(base, nface1):
    """Scratch offset of the clipped polygon (or edge) when the clipping one has nface1 points."""
    return base + MC_FACE1 + 3 * nface1


@ti.func
def _unit(v):
    """v / |v| (through the reciprocal), (1, 0, 0) when |v| < 1e-15."""
    res, _n = sm.normalize3(v)
    return res


@ti.func
def _quad_area(a, b, c, e):
    """Area of the planar quadrilateral a, b, c, e: half the norm of (a - c) x (b - e)."""
    u = a - c
    w = b - e
    cx = u[1] * w[2] - u[2] * w[1]
    cy = u[2] * w[0] - u[0] * w[2]
    cz = u[0] * w[1] - u[1] * w[0]
    return ti.sqrt(cx * cx + cy * cy + cz * cz) * 0.5


@ti.func
def _pt(d: ti.template(), b, src, i):
    return _get3(d, b, src + 3 * i)


@ti.func
def _largest_quad(d: ti.template(), b, src, n):
    """Indices (4-vector) of the 4 of the n polygon points at `src` that span the largest quadrilateral:
    starting from points 0, 1, 2, 3, for each first corner a in turn the fourth, then the third, then the
    second corner advance around the polygon while the area strictly grows (the fourth again after each
    growth); a second corner left on a moves on by one, pushing the third and fourth along when they
    coincide."""
    ib = 1
    ic = 2
    idd = 3
    best = _quad_area(_pt(d, b, src, 0), _pt(d, b, src, 1), _pt(d, b, src, 2), _pt(d, b, src, 3))
    res = ti.Vector([0, 1, 2, 3])
    for ia in range(n):
        pa = _pt(d, b, src, ia)
        while True:
            dn = (idd + 1) % n
            m = _quad_area(pa, _pt(d, b, src, ib), _pt(d, b, src, ic), _pt(d, b, src, dn))
            if best >= m:
                break
            best = m
            idd = dn
            while True:
                cn = (ic + 1) % n
                mc = _quad_area(pa, _pt(d, b, src, ib), _pt(d, b, src, cn), _pt(d, b, src, idd))
                if not (best < mc):
                    break
                best = mc
                ic = cn
            while True:
                bn = (ib + 1) % n
                mb = _quad_area(pa, _pt(d, b, src, bn), _pt(d, b, src, ic), _pt(d, b, src, idd))
                if not (best < mb):
                    break
                best = mb
                ib = bn
            res = ti.Vector([ia, ib, ic, idd])
        if ib == ia:
            ib = (ib + 1) % n
            if ic == ib:
                ic = (ic + 1) % n
                if idd == ic:
                    idd = (idd + 1) % n
    return res


@ti.func
def clip(d: ti.template(), b, base, nface1, nface2, n, wdir, maxcon, margin):
    """Clip the polygon (or edge, nface2 = 2) at `face2_off` by the nface1-gon at MC_FACE1 (outward normal n),
    keep the points at most `margin` above its plane, choose at most `maxcon` of them (see the module
    docstring) and write their (dist, x1, x2) to the MC_OUT rows, x2 found along the unit direction `wdir`.
    Returns how many (0: nothing left)."""
    f1 = base + MC_FACE1
    f2 = face2_off(base, nface1)
    pnrm = f2 + 3 * nface2  # side-plane normals, then the two clipping buffers
    cap = nface1 + nface2 + NSPARE
    for i in range(nface1):
        v1 = _get3(d, b, f1 + 3 * i)
        v2 = _get3(d, b, f1 + 3 * ((i + 1) % nface1))
        _set3(d, b, pnrm + 3 * i, _unit(sm.cross3(v2 - v1, (v1 + n) - v1)))
    src = pnrm + 3 * nface1
    dst = src + 3 * cap
    npoly = nface2
    for i in range(nface2):
        _set3(d, b, src + 3 * i, _get3(d, b, f2 + 3 * i))
    for e in range(nface1):
        a = _get3(d, b, f1 + 3 * e)
        pn = _get3(d, b, pnrm + 3 * e)
        ncl = 0
        for i in range(npoly):
            p = _get3(d, b, src + 3 * i)
            q = _get3(d, b, src + 3 * ((i + 1) % npoly))
            dp = sm.dot3(p - a, pn)
            dq = sm.dot3(q - a, pn)
            in1 = dp > -MINVAL
            in2 = dq > -MINVAL
            if in1 and in2:
                if ncl < cap:
                    _set3(d, b, dst + 3 * ncl, q)
                    ncl += 1
            elif in1 or in2:
                den = dp - dq
                if den != 0.0:
                    t = dp / den
                    if t >= 0.0 and t <= 1.0 and ncl < cap:
                        _set3(d, b, dst + 3 * ncl, t * (q - p) + p)
                        ncl += 1
                if in2 and ncl < cap:
                    _set3(d, b, dst + 3 * ncl, q)
                    ncl += 1
        tmp = src
        src = dst
        dst = tmp
        npoly = ncl
    # keep the points no farther than the margin above face 1's plane
    f0 = _get3(d, b, f1)
    m = npoly
    npoly = 0
    for i in range(m):
        p = _get3(d, b, src + 3 * i)
        if sm.dot3(p - f0, n) <= margin:
            _set3(d, b, src + 3 * npoly, p)
            npoly += 1
    sel = ti.Vector([0, 1, 2, 3])
    nsel = 0
    if npoly >= 1:
        if maxcon < 5 and npoly >= 5:
            sel = _largest_quad(d, b, src, npoly)
            nsel = 4
        elif nface2 == 2 and npoly >= 3:
            bi = 0
            bj = 1
            far = 0.0
            for i in range(npoly):
                for j in range(i + 1, npoly):
                    df = _pt(d, b, src, j) - _pt(d, b, src, i)
                    d2 = sm.dot3(df, df)
                    if d2 > far:
                        far = d2
                        bi = i
                        bj = j
            sel = ti.Vector([bi, bj, 0, 0])
            nsel = 2
        else:
            nsel = ti.min(npoly, ti.min(maxcon, 4))
    for k in range(nsel):
        v = _pt(d, b, src, sel[k])
        x1 = v - sm.dot3(v - f0, n) * n
        dist = sm.dot3(x1 - v, wdir)
        o = base + MC_OUT + 7 * k
        d.ccd_f[b, o] = dist
        _set3(d, b, o + 1, x1)
        _set3(d, b, o + 4, x1 - dist * wdir)
    return nsel
