"""mj_collision for one env: every candidate pair of the pair table through the bounding-sphere test
(MuJoCo's mj_filterSphere, inflated by the pair's margin + gap) to its collider, the contacts appended in
pair-table order, each completed with its geoms, its pair row and MuJoCo's frame.

``d.ncon[b]`` is the number of contacts found and ``d.nbroad[b]`` the number of pairs that passed the
bounding test (the broadphase's output); rows past the buffer's capacity are counted but not written, so
the caller sees an overflow as ``ncon > capacity`` and stops with the option to raise.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision import primitive as P
from rigidsim.engine.collision.contact import make_frame
from rigidsim.engine.collision.params import COLLIDER_ID
from rigidsim.model import GEOM_PLANE
from rigidsim.engine.layout import (
    CON_FRAME, CON_GEOM1, CON_GEOM2, CON_PAIR, FXMAT, FXPOS, GEOM_RBOUND, GEOM_SIZE, GEOM_TYPE,
    PAIR_COLLIDER, PAIR_GAP, PAIR_GEOM1, PAIR_GEOM2, PAIR_MARGIN, SZ_NPAIR,
)

PLANE_SPHERE = COLLIDER_ID["plane_sphere"]


@ti.func
def _plane_geom_dist(d: ti.template(), b, gp, g):
    """Signed distance of geom g's centre above plane geom gp."""
    mat = sm.getv(d.geom, b, gp, FXMAT, 9)
    normal = ti.Vector([mat[2], mat[5], mat[8]])
    return sm.dot3(sm.getv(d.geom, b, g, FXPOS, 3) - sm.getv(d.geom, b, gp, FXPOS, 3), normal)


@ti.func
def _bounds_overlap(m: ti.template(), d: ti.template(), b, g1, g2, margin):
    """mj_filterSphere: whether the bounding spheres of g1 and g2 (a plane: its half-space) come within
    `margin`."""
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
def collision(m: ti.template(), d: ti.template(), b, cap):
    """Env b's contacts from its geom poses (kinematics first): rows 0 .. ncon-1 of d.contact/d.contact_i."""
    n = 0
    nb = 0
    for p in range(m.opt_i[SZ_NPAIR]):
        col = m.pair_i[p, PAIR_COLLIDER]
        g1 = m.pair_i[p, PAIR_GEOM1]
        g2 = m.pair_i[p, PAIR_GEOM2]
        margin = m.pair_f[p, PAIR_MARGIN] + m.pair_f[p, PAIR_GAP]
        if col != 0 and _bounds_overlap(m, d, b, g1, g2, margin):
            nb += 1
            pos1 = sm.getv(d.geom, b, g1, FXPOS, 3)
            mat1 = sm.getv(d.geom, b, g1, FXMAT, 9)
            size1 = sm.getm(m.gcol_f, g1, GEOM_SIZE, 3)
            pos2 = sm.getv(d.geom, b, g2, FXPOS, 3)
            mat2 = sm.getv(d.geom, b, g2, FXMAT, 9)
            size2 = sm.getm(m.gcol_f, g2, GEOM_SIZE, 3)
            k = 0
            if col == PLANE_SPHERE:
                k = P.plane_sphere(d, b, n, cap, pos1, mat1, size1, pos2, mat2, size2, margin)
            for j in range(k):
                r = n + j
                if r < cap:
                    d.contact_i[b, r, CON_GEOM1] = g1
                    d.contact_i[b, r, CON_GEOM2] = g2
                    d.contact_i[b, r, CON_PAIR] = p
                    frame = make_frame(sm.getv(d.contact, b, r, CON_FRAME, 3),
                                       sm.getv(d.contact, b, r, CON_FRAME + 3, 3))
                    sm.setv(d.contact, b, r, CON_FRAME, frame)
            n += k
    d.ncon[b] = n
    d.nbroad[b] = nb
