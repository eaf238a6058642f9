"""Distance, normal and fromto sensors, as ti.funcs (mj_geomDistance): the least distance of a sensor's
geom pairs below its cutoff and the segment across it, from the analytic colliders with the cutoff as margin
(into the scratch contact rows sens_con) or from GJK and EPA without margin (mj_geomDistanceCCD). Which pairs
take which: `collision.params.distance_colliders`."""

from rigidsim.engine.lang import ti

from rigidsim import model as M
from rigidsim.engine import math as sm
from rigidsim.engine.collision.params import COLLIDER_ID, GJK_DISTANCE, GJK_MESH, _ANALYTIC
from rigidsim.engine.layout import (
    CON_DIST, CON_FRAME, CON_POS, FXMAT, FXPOS, GEOM_SIZE, GEOM_TYPE, OPT_CCDITER, OPT_CCDTOL, SENSOR_CONTACTS,
    SENS_CUTOFF, SENS_GEOMADR1, SENS_GEOMADR2, SENS_GEOMNUM1, SENS_GEOMNUM2,
)

KIND_SHIFT = 16  # bit KIND_SHIFT + c of a sensor mask: the distance sensors use collider c

# (type1, type2, collider id) of the analytic colliders, for the distance sensors' dispatch
_ANALYTIC_PAIRS = tuple((t1, t2, COLLIDER_ID[name]) for (t1, t2), name in sorted(_ANALYTIC.items())
                        if name != "box_box")  # (MuJoCo measures two boxes by GJK)


def _colliders():
    """The collision driver's (id, collider) table, imported when a distance sensor's kernel is compiled (the
    colliders' module is not loaded for a scene without contacts or distance sensors: start-up)."""
    from rigidsim.engine.collision.driver import _DISPATCH

    return _DISPATCH


class _SensorContacts:
    """d with its contact rows swapped for the distance sensors' scratch rows (sens_con): what a collider
    writes through `contact.put` (a compile-time view; every other array is d's)."""

    def __init__(self, d):
        self.contact = d.sens_con
        self._d = d

    def __getattr__(self, name):
        return getattr(self._d, name)


def _ccd():
    """gjk.ccd, imported when a distance sensor's GJK is compiled (as `_begin_mesh`, `_with_meshes`)."""
    from rigidsim.engine.collision.gjk import ccd

    return ccd


def _begin_mesh():
    from rigidsim.engine.collision.support import begin_mesh

    return begin_mesh


def _with_meshes(m, d, on):
    from rigidsim.engine.collision.mesh import with_meshes

    return with_meshes(m, d, on)


@ti.func
def _analytic_id(ta, tb):
    """The analytic collider of geom types ta <= tb (`params._ANALYTIC`), 0 for none."""
    res = 0
    for k in ti.static(range(len(_ANALYTIC_PAIRS))):
        if ta == _ANALYTIC_PAIRS[k][0] and tb == _ANALYTIC_PAIRS[k][1]:
            res = _ANALYTIC_PAIRS[k][2]
    return res


@ti.func
def _geom_distance(m: ti.template(), d: ti.template(), b, g1, g2, distmax, mask: ti.template()):
    """mj_geomDistance of an analytic pair: the collider of the two geoms (in type order) with `distmax` as its
    margin, the smallest distance below distmax (else distmax) and the segment (fromto) from geom g1 to g2
    across it (zeros without one)."""
    flip = m.gcol_i[g1, GEOM_TYPE] > m.gcol_i[g2, GEOM_TYPE]
    ga = g2 if flip else g1
    gb = g1 if flip else g2
    col = _analytic_id(m.gcol_i[ga, GEOM_TYPE], m.gcol_i[gb, GEOM_TYPE])
    k = 0
    for c in ti.static(range(len(_colliders()))):  # (compiled only into kernels with distance sensors)
        if ti.static(mask & (1 << (KIND_SHIFT + _colliders()[c][0]))):
            if col == ti.static(_colliders()[c][0]):
                k = ti.static(_colliders()[c][1])(
                    _SensorContacts(d), b, 0, SENSOR_CONTACTS,
                    sm.getv(d.geom, b, ga, FXPOS, 3), sm.getv(d.geom, b, ga, FXMAT, 9),
                    sm.getm(m.gcol_f, ga, GEOM_SIZE, 3), sm.getv(d.geom, b, gb, FXPOS, 3),
                    sm.getv(d.geom, b, gb, FXMAT, 9), sm.getm(m.gcol_f, gb, GEOM_SIZE, 3), distmax)
    dist = distmax
    best = -1
    for j in range(k):
        if d.sens_con[b, j, CON_DIST] < dist:
            dist = d.sens_con[b, j, CON_DIST]
            best = j
    fromto = ti.Vector([0.0] * 6)
    if best >= 0:
        pos = sm.getv(d.sens_con, b, best, CON_POS, 3)
        half = sm.getv(d.sens_con, b, best, CON_FRAME, 3) * (0.5 * dist * (-1.0 if flip else 1.0))
        for c in ti.static(range(3)):
            fromto[c] = pos[c] - half[c]
            fromto[3 + c] = pos[c] + half[c]
    if ti.static(mask & (1 << (KIND_SHIFT + GJK_DISTANCE))):
        t1 = m.gcol_i[g1, GEOM_TYPE]
        t2 = m.gcol_i[g2, GEOM_TYPE]
        if col == 0 and t1 != M.GEOM_PLANE and t2 != M.GEOM_PLANE:
            # mj_geomDistanceCCD: the geoms in the sensor's order, no margin, the cutoff bounding GJK
            if ti.static(mask & (1 << (KIND_SHIFT + GJK_MESH))):
                _begin_mesh()(d, b, g1, g2)
            dn, x1, x2, nx, _nf = _ccd()(_with_meshes(m, d, ti.static(bool(mask & (1 << (KIND_SHIFT + GJK_MESH))))),
                                      b, t1, sm.getv(d.geom, b, g1, FXPOS, 3),
                                      sm.getv(d.geom, b, g1, FXMAT, 9), sm.getm(m.gcol_f, g1, GEOM_SIZE, 3), t2,
                                      sm.getv(d.geom, b, g2, FXPOS, 3), sm.getv(d.geom, b, g2, FXMAT, 9),
                                      sm.getm(m.gcol_f, g2, GEOM_SIZE, 3), 0.0, m.opt_f[OPT_CCDTOL],
                                      m.opt_i[OPT_CCDITER], 0, distmax)
            if nx > 0 and dn <= distmax:
                for c in ti.static(range(3)):
                    fromto[c] = x1[c]
                    fromto[3 + c] = x2[c]
            dist = dn if dn < distmax else distmax
    return dist, fromto


@ti.func
def distance(m: ti.template(), d: ti.template(), b, s, mask: ti.template()):
    """A distance, normal or fromto sensor: the least distance of its geom pairs below its cutoff (else the
    cutoff), and the segment of the first pair that has it."""
    dist = m.sens_f[s, SENS_CUTOFF]
    fromto = ti.Vector([0.0] * 6)
    a1 = m.sens_i[s, SENS_GEOMADR1]
    a2 = m.sens_i[s, SENS_GEOMADR2]
    for g1 in range(a1, a1 + m.sens_i[s, SENS_GEOMNUM1]):
        for g2 in range(a2, a2 + m.sens_i[s, SENS_GEOMNUM2]):
            dn, fn = _geom_distance(m, d, b, g1, g2, m.sens_f[s, SENS_CUTOFF], mask)
            if dn < dist:
                dist = dn
                fromto = fn
    return dist, fromto
