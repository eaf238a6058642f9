"""Height field against a convex geom, after MuJoCo 4.0.0's height-field collider (mjc_ConvexHField).

The field is a grid of nrow x ncol samples over the rectangle [-sx, sx] x [-sy, sy] of its geom's frame;
sample (r, c) lies at (2 sx c / (ncol - 1) - sx, 2 sy r / (nrow - 1) - sy) with elevation sample * sz,
and the solid reaches down to the base at -sb (hfield_size = sx, sy, sz, sb). Everything is computed in
the field's frame, where the other geom has position mat1' (pos2 - pos1) and rotation mat1' mat2:

1. Bounding tests: the other geom's bounding sphere (rbound + margin) against the box [-sx, sx] x
   [-sy, sy] x [-sb, sz], then its axis-aligned box (its support points along +-x, +-y, +-z, grown by
   the margin) against the same box; either test failing ends the pair.
2. The sub-grid of cells under that grown box (floor / ceil of its ends in cell units, clamped).
3. Each cell splits into two triangles; each triangle makes a triangular prism: three bottom vertices at
   -sb and the three surface points above them (not raised by the margin: 4.0.0 differs from the 3.x
   sources there). Walking a row, every new surface point replaces the oldest vertex, alternating
   between the next row and this one (the sliding window of MuJoCo's prism constructor). A prism whose
   top lies wholly below the grown box's bottom is skipped.
4. The other prisms go to GJK/EPA (`gjk.ccd` with geom 1 the prism, held in the scratch row
   ``d.ccd_f[b]``, GJK starting from the mean of its vertices; both shapes grown by half the margin, as
   in `gjk.convex`), one contact per prism at most, 50 (mjMAXCONPAIR) per pair at most. A contact is
   `gjk.convex`'s: distance the margin plus the signed distance, position the witnesses' midpoint, normal
   from the prism to the geom; both taken back to the world frame.

A mesh geom ('hfield_mesh') takes the same path with GJK/EPA's mesh support (`mesh.ccd_mesh_support`):
its bounding radius is the model's geom_rbound, its box comes from that support's six searches, whose
memory (last vertex, last climb) the prisms' runs then inherit, as MuJoCo's one ccd object does; one
contact per prism (no multi-contact), as for the other geoms.

`gjk_pair` holds both GJK/EPA colliders (this one and `gjk.convex`) around one call of `gjk.ccd`, whose
code is large: the collision kernel inlines it once (the driver sends both kinds of pairs there).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.collision.gjk import ccd
from rigidsim.engine.collision.mesh import ccd_mesh_support, with_meshes
from rigidsim.engine.collision.support import (CAPSULE, F_PRISM, HFIELD, I_MESH, MESH, _get3, _normalize, begin_mesh,
                                               mc_f, prism_center, support)
from rigidsim.engine.collision.multicontact import MC_OUT, multicontact
from rigidsim.engine.layout import GEOM_HFIELDID, HFIELD_ADR, HFIELD_NCOL, HFIELD_NROW, HFIELD_SIZE


@ti.func
def _mat_t_mat(a, c):
    """a' c for row-major 9-vectors."""
    res = ti.Vector([0.0] * 9)
    for i in ti.static(range(3)):
        for j in ti.static(range(3)):
            res[3 * i + j] = a[i] * c[j] + a[3 + i] * c[3 + j] + a[6 + i] * c[6 + j]
    return res


@ti.func
def _add_vertex(m: ti.template(), d: ti.template(), b, adr, ncol, r, c, i, dx, dy, sx, sy, sz):
    """Slide the prism window by one vertex: vertices 1, 2 -> 0, 1 and 4, 5 -> 3, 4; the new surface point of
    row r + 1 - i, column c becomes vertex 5 (top) and its footprint vertex 2 (the bottom keeps its z)."""
    for k in ti.static(range(3)):
        d.ccd_f[b, F_PRISM + k] = d.ccd_f[b, F_PRISM + 3 + k]
        d.ccd_f[b, F_PRISM + 3 + k] = d.ccd_f[b, F_PRISM + 6 + k]
        d.ccd_f[b, F_PRISM + 9 + k] = d.ccd_f[b, F_PRISM + 12 + k]
        d.ccd_f[b, F_PRISM + 12 + k] = d.ccd_f[b, F_PRISM + 15 + k]
    row = r + 1 - i
    x = dx * c - sx
    y = dy * row - sy
    d.ccd_f[b, F_PRISM + 6] = x
    d.ccd_f[b, F_PRISM + 7] = y
    d.ccd_f[b, F_PRISM + 15] = x
    d.ccd_f[b, F_PRISM + 16] = y
    d.ccd_f[b, F_PRISM + 17] = m.hfield_data[adr + row * ncol + c, 0] * sz


@ti.func
def gjk_pair(m: ti.template(), d: ti.template(), b, n0, cap, hf, g1, type1, pos1, mat1, size1, g2, type2, pos2,
             mat2, size2, rbound2, margin, ccd_tolerance, ccd_iterations, multi, with_multi: ti.template(),
             with_mesh: ti.template(), with_hfield: ti.template()):
    """The two GJK/EPA colliders with one `gjk.ccd` between them (its code is large: one copy in the
    kernel): hf = 0, `gjk.convex` (geom types type1, type2; one contact); hf = 1, the height-field geom g1
    against a geom of type2 (size2, bounding radius rbound2), as the module docstring says (at most 50
    contacts; type2 may be a mesh when `with_mesh`). With multi = 1 (hf = 0), `multicontact`'s extra contacts of a convex or mesh pair (up to 4; 2
    with a capsule), compiled in only when `with_multi` (a compile-time flag: the scene has such pairs). Mesh geoms
    (g1, g2: the geoms) are supported only when `with_mesh` (compile time: the scene has mesh pairs for
    GJK/EPA); their searches start afresh for each pair. The height-field code is compiled in only when
    `with_hfield` (compile time: the scene has height-field pairs; hf = 1 needs it). Contacts go to rows n0..
    of env b; returns how many."""
    if ti.static(with_mesh):
        begin_mesh(d, b, g1, g2)
    n = 0
    lpos = pos2  # geom 2 in the frame of the GJK run: the world's, or the field's
    lmat = mat2
    adr = 0
    ncol = 1
    sx = 0.0
    sy = 0.0
    sz = 0.0
    cmin = 0
    cmax = 0
    rmax = 0
    dx = 0.0
    dy = 0.0
    zmin = 0.0
    r = 0
    j = 0
    active = 1
    if ti.static(with_hfield):
        if hf == 1:
            active = 0
            h = m.gcol_i[g1, GEOM_HFIELDID]
            nrow = m.hfield_i[h, HFIELD_NROW]
            ncol = m.hfield_i[h, HFIELD_NCOL]
            adr = m.hfield_i[h, HFIELD_ADR]
            sx = m.hfield_f[h, HFIELD_SIZE]
            sy = m.hfield_f[h, HFIELD_SIZE + 1]
            sz = m.hfield_f[h, HFIELD_SIZE + 2]
            sb = m.hfield_f[h, HFIELD_SIZE + 3]
            lpos = sm.rot_vec_mat_t(pos2 - pos1, mat1)
            radius = rbound2 + margin
            if not ((sx < lpos[0] - radius) or (-sx > lpos[0] + radius) or (sy < lpos[1] - radius)
                    or (-sy > lpos[1] + radius) or (sz < lpos[2] - radius) or (-sb > lpos[2] + radius)):
                lmat = _mat_t_mat(mat1, mat2)
                lo = sm.zero3()
                hi = sm.zero3()
                for q in range(6):  # the bounding box, grown by the margin: +x, -x, +y, -y, +z, -z
                    k = q // 2
                    e = sm.zero3()
                    e[k] = 1.0 - 2.0 * (q % 2)
                    val = 0.0
                    done = 0
                    if ti.static(with_mesh):  # a mesh: its GJK/EPA support, whose memory the prisms' runs inherit
                        if type2 == MESH:
                            pt, _vert = ccd_mesh_support(m, d, b, I_MESH + 3, lpos, lmat, e)
                            val = pt[k]
                            done = 1
                    if done == 0:
                        val = support(type2, lpos, lmat, size2, e)[k]
                    if q % 2 == 0:
                        hi[k] = margin + val
                    else:
                        lo[k] = val - margin
                if not ((lo[0] > sx) or (hi[0] < -sx) or (lo[1] > sy) or (hi[1] < -sy) or (lo[2] > sz)
                        or (hi[2] < -sb)):
                    cmin = ti.max(0, ti.cast(ti.floor((lo[0] + sx) / (2.0 * sx) * (ncol - 1)), ti.i32))
                    cmax = ti.min(ncol - 1, ti.cast(ti.ceil((hi[0] + sx) / (2.0 * sx) * (ncol - 1)), ti.i32))
                    rmin = ti.max(0, ti.cast(ti.floor((lo[1] + sy) / (2.0 * sy) * (nrow - 1)), ti.i32))
                    rmax = ti.min(nrow - 1, ti.cast(ti.ceil((hi[1] + sy) / (2.0 * sy) * (nrow - 1)), ti.i32))
                    dx = (2.0 * sx) / (ncol - 1)
                    dy = (2.0 * sy) / (nrow - 1)
                    zmin = lo[2]
                    for k in ti.static(range(3)):
                        d.ccd_f[b, F_PRISM + 3 * k + 2] = -sb
                    r = rmin
                    j = 2 * cmin
                    if rmin < rmax and cmin < cmax:
                        active = 1
    # one step per prism vertex (hf = 1: row r, step j = 2 column + triangle; the first two steps of a row
    # only fill the window) or the one convex pair (hf = 0)
    while active == 1:
        test = 1
        t1 = type1
        p1 = pos1
        if ti.static(with_hfield):
            if hf == 1:
                t1 = HFIELD
                _add_vertex(m, d, b, adr, ncol, r, j // 2, j % 2, dx, dy, sx, sy, sz)
                if j < 2 * (cmin + 1) or (d.ccd_f[b, F_PRISM + 11] < zmin and d.ccd_f[b, F_PRISM + 14] < zmin
                                          and d.ccd_f[b, F_PRISM + 17] < zmin):
                    test = 0
                else:
                    p1 = prism_center(d, b)
                j += 1
                if j == 2 * (cmax + 1):
                    j = 2 * cmin
                    r += 1
                    if r == rmax:
                        active = 0
            else:
                active = 0
        else:
            active = 0
        if test == 1:
            # (`ccd` reads the mesh arrays beside the data group when the scene has mesh pairs)
            dist, x1, x2, nx, nfeat = ccd(with_meshes(m, d, with_mesh), b, t1, p1, mat1, size1, type2, lpos, lmat,
                                          size2, margin, ccd_tolerance, ccd_iterations, multi)
            nmc = 0
            if ti.static(with_multi):
                if multi == 1 and nfeat > 0 and dist < 0.0 and nx > 0:
                    maxcon = 2 if (type1 == CAPSULE or type2 == CAPSULE) else 4
                    nmc = multicontact(with_meshes(m, d, with_mesh), b, ccd_iterations, t1, p1, mat1, size1, type2,
                                       lpos, lmat, size2, x1, x2, nfeat, maxcon, margin)
            if nmc > 0:
                base = mc_f(ccd_iterations) + MC_OUT
                dmin = d.ccd_f[b, base]
                for k in range(1, nmc):
                    dmin = ti.min(dmin, d.ccd_f[b, base + 7 * k])
                if dmin < 0.0:  # MuJoCo keeps them all when the least distance is negative, none otherwise
                    for k in range(nmc):
                        o = base + 7 * k
                        w1 = _get3(d, b, o + 1)
                        w2 = _get3(d, b, o + 4)
                        put(d, b, n0 + n, cap, margin + d.ccd_f[b, o], (w1 + w2) * 0.5, _normalize(w1 - w2),
                            sm.zero3())
                        n += 1
            elif dist < 0.0 and nx > 0:
                cpos = (x1 + x2) * 0.5
                cnrm = _normalize(x1 - x2)
                if ti.static(with_hfield):
                    if hf == 1:  # back to the world frame
                        cpos = sm.rot_vec_mat(cpos, mat1) + pos1
                        cnrm = sm.rot_vec_mat(cnrm, mat1)
                put(d, b, n0 + n, cap, margin + dist, cpos, cnrm, sm.zero3())
                n += 1
                if n >= 50:
                    active = 0
    return n


@ti.func
def hfield(m: ti.template(), d: ti.template(), b, n0, cap, g1, pos1, mat1, type2, pos2, mat2, size2, rbound2,
           margin, ccd_tolerance, ccd_iterations):
    """Contacts of height-field geom g1 (world pose pos1, mat1) with a sphere, capsule, ellipsoid, cylinder or
    box (MuJoCo type2, pos2, mat2, size2, bounding radius rbound2), in rows n0.. of env b; returns how many
    (at most 50). Uses the scratch rows ``d.ccd_f[b]``, ``d.ccd_i[b]`` (`support.scratch_size`)."""
    return gjk_pair(m, d, b, n0, cap, 1, g1, HFIELD, pos1, mat1, size2, -1, type2, pos2, mat2, size2, rbound2,
                    margin, ccd_tolerance, ccd_iterations, 0, False, False, True)
