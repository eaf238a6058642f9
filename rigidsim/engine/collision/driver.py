"""mj_collision for one env: the candidate pairs of the pair table that pass the broadphase (`broadphase`:
optional sweep-and-prune, then MuJoCo's bounding-sphere test with the pair's margin + gap) to their
colliders, the contacts appended in pair-table order, each completed with its geoms, its pair row and
MuJoCo's frame. The contacts of pairs that MuJoCo's midphase takes (`broadphase.midphase`) are kept only
when it passes them; it runs after the collider, for the pairs that touch alone (it can change only those).

``d.ncon[b]`` is the number of contacts found and ``d.nbroad[b]`` the number of pairs that passed the
bounding test (the broadphase's output); rows past the buffer's capacity are counted but not written, so
the caller sees an overflow as ``ncon > capacity`` and stops with the option to raise.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision import box as BX
from rigidsim.engine.collision import primitive as P
from rigidsim.engine.collision.hfield import gjk_pair
from rigidsim.engine.collision.mesh import plane_mesh
from rigidsim.engine.collision.broadphase import bounds_overlap, midphase, sweep_and_prune
from rigidsim.engine.collision.contact import make_frame
from rigidsim.engine.collision.params import BUILT, COLLIDER_ID, MIDPHASE_BIT, SAP_BIT
from rigidsim.engine.layout import (
    CON_FRAME, CON_GEOM1, CON_GEOM2, CON_PAIR, CON_POS, FXMAT, FXPOS, GEOM_RBOUND, GEOM_SIZE, GEOM_TYPE, NDCON,
    OPT_CCDITER, OPT_CCDTOL, OPT_PRUNETOL, OPT_SAP, PAIR_COLLIDER, PAIR_GAP, PAIR_GEOM1, PAIR_GEOM2, PAIR_MARGIN,
    PAIR_BVHNUM, PAIR_SWEPT, SZ_NPAIR,
)

# (id, ti.func) of every built analytic collider, in COLLIDERS order: the dispatch is unrolled over this at
# compile time; the GJK/EPA colliders (convex, hfield: `hfield.gjk_pair`) take the geom types and the ccd
# settings besides
_DISPATCH = tuple((COLLIDER_ID[name], getattr(P, name, None) or getattr(BX, name)) for name in
                  sorted(BUILT - {"convex", "convex_multi", "hfield", "plane_mesh", "mesh", "mesh_multi",
                                 "hfield_mesh"},
                         key=COLLIDER_ID.get))
CONVEX = COLLIDER_ID["convex"]
CONVEX_MULTI = COLLIDER_ID["convex_multi"]
HFIELD = COLLIDER_ID["hfield"]
PLANE_MESH = COLLIDER_ID["plane_mesh"]
MESH = COLLIDER_ID["mesh"]
MESH_MULTI = COLLIDER_ID["mesh_multi"]
HFIELD_MESH = COLLIDER_ID["hfield_mesh"]


def _uses(kinds: int, collider: int) -> bool:
    """Whether the compile-time mask `kinds` includes `collider`."""
    return bool((kinds >> collider) & 1)


@ti.func
def _prune(m: ti.template(), d: ti.template(), b, n, k, cap):
    """contact_pruning_tolerance (Genesis's option; 0 with MuJoCo compatibility): of a pair's contacts in rows
    n .. n+k-1, keep each one farther than the tolerance from every contact kept before it, in the
    collider's order, moving the kept rows up; returns how many remain. Rows past `cap` are not pruned
    (they were never written: the caller reports the overflow)."""
    tol = m.opt_f[OPT_PRUNETOL]
    kept = k
    if tol > 0 and k > 1 and n + k <= cap:
        kept = 1
        for j in range(1, k):
            r = n + j
            pos = sm.getv(d.contact, b, r, CON_POS, 3)
            far = 1
            for i in range(kept):
                dp = pos - sm.getv(d.contact, b, n + i, CON_POS, 3)
                if dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2] < tol * tol:
                    far = 0
            if far:
                if kept != j:
                    for c in range(NDCON):
                        d.contact[b, n + kept, c] = d.contact[b, r, c]
                kept += 1
    return kept


@ti.func
def collision(m: ti.template(), d: ti.template(), b, cap, kinds: ti.template()):
    """Env b's contacts from its geom poses (kinematics first): rows 0 .. ncon-1 of d.contact/d.contact_i.
    `kinds`: the collider ids the model's pair table uses (a bit mask, see `params.kinds_of`), with bit 0
    (`params.SAP_BIT`) when its options ask for sweep-and-prune and the top bit (`params.MIDPHASE_BIT`) when
    MuJoCo's midphase takes some of its rows; only those colliders are compiled in, so a
    scene of capsules on a plane does not carry GJK/EPA or box-box code."""
    n = 0
    nb = 0
    sap = 0
    if ti.static(kinds & SAP_BIT):  # compiled in only for scenes whose options ask for it
        sap = m.opt_i[OPT_SAP]
        if sap:
            sweep_and_prune(m, d, b)
    for p in range(m.opt_i[SZ_NPAIR]):
        candidate = 1
        if sap and m.pair_i[p, PAIR_SWEPT]:  # two swept geoms: a candidate only if the sweep marked it
            candidate = d.pair_hit[b, p]
            if candidate:
                d.pair_hit[b, p] = 0
        col = 0
        g1 = 0
        g2 = 0
        margin = 0.0
        if candidate:
            col = m.pair_i[p, PAIR_COLLIDER]
            g1 = m.pair_i[p, PAIR_GEOM1]
            g2 = m.pair_i[p, PAIR_GEOM2]
            margin = m.pair_f[p, PAIR_MARGIN] + m.pair_f[p, PAIR_GAP]
        if col != 0 and bounds_overlap(m, d, b, g1, g2, margin):
            nb += 1
            pos1 = sm.getv(d.geom, b, g1, FXPOS, 3)
            mat1 = sm.getv(d.geom, b, g1, FXMAT, 9)
            size1 = sm.getm(m.gcol_f, g1, GEOM_SIZE, 3)
            pos2 = sm.getv(d.geom, b, g2, FXPOS, 3)
            mat2 = sm.getv(d.geom, b, g2, FXMAT, 9)
            size2 = sm.getm(m.gcol_f, g2, GEOM_SIZE, 3)
            k = 0
            for c in ti.static(range(len(_DISPATCH))):
                if ti.static(_uses(kinds, _DISPATCH[c][0])):
                    if col == ti.static(_DISPATCH[c][0]):
                        k = ti.static(_DISPATCH[c][1])(d, b, n, cap, pos1, mat1, size1, pos2, mat2, size2, margin)
            if ti.static(_uses(kinds, PLANE_MESH)):
                if col == PLANE_MESH:
                    k = plane_mesh(m, d, b, n, cap, pos1, mat1, size1, g2, pos2, mat2, margin)
            if ti.static(_uses(kinds, CONVEX) or _uses(kinds, HFIELD) or _uses(kinds, CONVEX_MULTI)
                         or _uses(kinds, MESH) or _uses(kinds, MESH_MULTI) or _uses(kinds, HFIELD_MESH)):
                if (col == CONVEX or col == HFIELD or col == CONVEX_MULTI or col == MESH or col == MESH_MULTI
                        or col == HFIELD_MESH):
                    # GJK/EPA (one copy); for HFIELD and HFIELD_MESH geom 1 is the height field; CONVEX_MULTI and
                    # MESH_MULTI add the multi-contact; MESH, MESH_MULTI and HFIELD_MESH (a mesh and a convex
                    # geom, mesh or height field) compile in the mesh support; HFIELD and HFIELD_MESH the field's
                    k = gjk_pair(m, d, b, n, cap, 1 if (col == HFIELD or col == HFIELD_MESH) else 0, g1,
                                 m.gcol_i[g1, GEOM_TYPE], pos1, mat1, size1, g2, m.gcol_i[g2, GEOM_TYPE], pos2, mat2,
                                 size2, m.gcol_f[g2, GEOM_RBOUND], margin, m.opt_f[OPT_CCDTOL], m.opt_i[OPT_CCDITER],
                                 1 if (col == CONVEX_MULTI or col == MESH_MULTI) else 0,
                                 ti.static(_uses(kinds, CONVEX_MULTI) or _uses(kinds, MESH_MULTI)),
                                 ti.static(_uses(kinds, MESH) or _uses(kinds, MESH_MULTI)
                                           or _uses(kinds, HFIELD_MESH)),
                                 ti.static(_uses(kinds, HFIELD) or _uses(kinds, HFIELD_MESH)))
            if ti.static(kinds & MIDPHASE_BIT):  # compiled in for scenes with rows of MuJoCo's midphase
                # the midphase after the collider: it changes only pairs that touch (see `broadphase`), so
                # it runs only for those, and drops their contacts when its boxes are apart
                if k > 0 and m.pair_i[p, PAIR_BVHNUM] >= 0:
                    k = k * midphase(m, d, b, p, g1, g2, margin)
            k = _prune(m, d, b, n, k, cap)
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
