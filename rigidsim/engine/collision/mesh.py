"""Mesh geoms: MuJoCo's mesh support point and its plane-mesh collider (mjc_PlaneConvex for a mesh geom), as
MuJoCo 4.0.0 computes them.

Mesh data (model group `m`): ``m.mesh_vert[row, 0:3]`` are MuJoCo's float32 vertices widened to float64, in
the mesh frame (= the geom frame); ``m.mesh_graph[k, 0]`` is MuJoCo's convex-hull graph, per mesh: numvert,
numface, vert_edgeadr[numvert], vert_globalid[numvert], edge_localid[numvert + 3 numface] (each vertex's
neighbours, in local ids, ended by -1), face_globalid[3 numface]. MuJoCo's hull polygons (coplanar hull
triangles merged): ``m.mesh_poly_f[p, MPOLY_NORMAL:+3]`` the outward unit normal of global polygon p,
``m.mesh_poly_i[p, MPOLY_VERTADR / MPOLY_VERTNUM]`` its vertex loop in ``m.mesh_polyvert[k, 0]`` (mesh-local
vertex ids, counter-clockwise about the normal); ``m.mesh_vert_i[row, MVERT_POLYMAPADR / MVERT_POLYMAPNUM]``
the polygons of vertex row `row` in ``m.mesh_polymap[k, 0]`` (mesh-local polygon ids). Per geom:
``m.gcol_i[g, GEOM_VERTADR / GEOM_VERTNUM / GEOM_GRAPHADR / GEOM_POLYADR / GEOM_POLYNUM]``.

Support (`mesh_support`, MuJoCo's ccd support for a mesh): the vertex with the largest dot product with a
direction given in the mesh frame. A mesh without a graph, or with fewer than 10 vertices
(mjMESH_HILLCLIMB_MIN), is searched exhaustively (the first maximum wins); otherwise the search climbs the
hull graph from a warm-start vertex (the hull's first one without), moving to a better neighbour while
one exists, scanning the rest of the current vertex's list after a move, as MuJoCo does.

Plane-mesh, as MuJoCo 4.0.0 does it (its 3.x graph-neighbourhood contacts, maxplanemesh = 3 and the spread
filter are gone):

1. the support vertex s along the plane's inward normal; no contact when it lies beyond the margin,
   else the first contact (at s, moved half its distance back along the normal);
2. among MuJoCo's polygons at s (its polygon map, in that order), the one whose normal has the largest dot
   product with that direction (the first of equals);
3. its vertex loop from s; a polygon of more than four is first pruned to a quadrilateral of large area
   with s as its first corner (the other three corners start at the next three vertices and move forward
   while the area grows: the last corner, then the third, then the second, repeated until the last corner
   stops);
4. a contact at each other corner (in that order) that lies within the margin of the plane and below the
   mesh centre along the inward normal (a positive dot product with the mesh-frame direction).

So a pair gives at most four contacts; a mesh without polygons gives the first one only.

Quadrants notes: runtime loops only (no unrolling over vertices or polygons); one `put` for the first
contact and one in the loop over the others.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.layout import (GEOM_GRAPHADR, GEOM_POLYADR, GEOM_POLYNUM, GEOM_VERTADR, GEOM_VERTNUM,
                                    MPOLY_NORMAL, MPOLY_VERTADR, MPOLY_VERTNUM, MVERT_POLYMAPADR,
                                    MVERT_POLYMAPNUM)


@ti.func
def mesh_vertex(m: ti.template(), row):
    """Vertex row `row` of m.mesh_vert (mesh frame, float32 values widened)."""
    return ti.Vector([m.mesh_vert[row, 0], m.mesh_vert[row, 1], m.mesh_vert[row, 2]])


@ti.func
def _vdot(a, v):
    """a . v summed left to right, as MuJoCo's mesh searches do."""
    return a[0] * v[0] + a[1] * v[1] + a[2] * v[2]


@ti.func
def mesh_support(m: ti.template(), g, ldir, warm):
    """MuJoCo's ccd support of mesh geom g along `ldir` (mesh frame, not necessarily unit):
    (meshindex, vert). `vert` is the support vertex (index within the mesh's vertices: row vertadr + vert of
    m.mesh_vert). `meshindex` is what MuJoCo records for a warm start: the vertex's local id in the hull
    graph when the graph is climbed, else `vert` itself (exhaustive search). `warm`: the previous call's
    meshindex for the same geom (-1: none; only the graph climb uses it)."""
    vadr = m.gcol_i[g, GEOM_VERTADR]
    nvert = m.gcol_i[g, GEOM_VERTNUM]
    gadr = m.gcol_i[g, GEOM_GRAPHADR]
    meshindex = -1
    vert = -1
    if gadr < 0 or nvert < 10:  # mjMESH_HILLCLIMB_MIN
        best = -1e10
        for i in range(nvert):
            vd = _vdot(ldir, mesh_vertex(m, vadr + i))
            if vd > best:
                best = vd
                vert = i
        meshindex = vert
    else:
        numvert = m.mesh_graph[gadr, 0]
        gid = gadr + 2 + numvert  # vert_globalid
        eid = gadr + 2 + 2 * numvert  # edge_localid
        ib = warm
        if ib < 0:
            ib = 0
        best = _vdot(ldir, mesh_vertex(m, vadr + m.mesh_graph[gid + ib, 0]))
        change = 1
        while change:
            change = 0
            i = m.mesh_graph[gadr + 2 + ib, 0]  # the list of the vertex this pass started from
            loc = m.mesh_graph[eid + i, 0]
            while loc >= 0:
                vd = _vdot(ldir, mesh_vertex(m, vadr + m.mesh_graph[gid + loc, 0]))
                if vd > best:
                    best = vd
                    ib = loc
                    change = 1
                i += 1
                loc = m.mesh_graph[eid + i, 0]
        meshindex = ib
        vert = m.mesh_graph[gid + ib, 0]
    return meshindex, vert


@ti.func
def _poly_vertex(m: ti.template(), vadr, pva, n, i):
    """Vertex i (taken modulo n) of the polygon whose n vertex ids start at slot pva of m.mesh_polyvert."""
    return mesh_vertex(m, vadr + m.mesh_polyvert[pva + i % n, 0])


@ti.func
def _quad_area(a, b, c, d):
    """Twice the area of the quadrilateral a b c d (from its diagonals); only compared."""
    return sm.cross3(c - a, d - b).norm()


@ti.func
def plane_mesh(m: ti.template(), d: ti.template(), b, n0, cap, pos1, mat1, size1, g2, pos2, mat2, margin):
    """Plane (pos1, mat1) against mesh geom g2 (pos2, mat2): MuJoCo 4.0.0's contacts (module docstring), up
    to 4, written from row n0; returns how many."""
    normal = ti.Vector([mat1[2], mat1[5], mat1[8]])
    ldir = sm.rot_vec_mat_t(-normal, mat2)
    vadr = m.gcol_i[g2, GEOM_VERTADR]
    _, s = mesh_support(m, g2, ldir, -1)
    sv = mesh_vertex(m, vadr + s)
    r = sm.rot_vec_mat(sv, mat2) + pos2
    dist = sm.dot3(normal, r - pos1)
    count = 0
    if dist <= margin:
        put(d, b, n0, cap, dist, r + normal * (-0.5 * dist), normal, sm.zero3())
        count = 1
    if count == 1 and m.gcol_i[g2, GEOM_POLYNUM] > 0:
        padr = m.gcol_i[g2, GEOM_POLYADR]
        # the polygon at s (polymap: mesh-local polygon ids) whose normal is best aligned with ldir
        ma = m.mesh_vert_i[vadr + s, MVERT_POLYMAPADR]
        poly = -1
        best = -2.0
        for j in range(m.mesh_vert_i[vadr + s, MVERT_POLYMAPNUM]):
            p = padr + m.mesh_polymap[ma + j, 0]
            al = _vdot(ti.Vector([m.mesh_poly_f[p, MPOLY_NORMAL + k] for k in ti.static(range(3))]), ldir)
            if al > best:
                best = al
                poly = p
        n = 0
        pva = 0
        a = 0
        if poly >= 0:
            pva = m.mesh_poly_i[poly, MPOLY_VERTADR]
            n = m.mesh_poly_i[poly, MPOLY_VERTNUM]
            for i in range(n):  # s's place in the loop (each vertex appears once)
                if m.mesh_polyvert[pva + i, 0] == s:
                    a = i
        # corners after s: all other vertices, or the three others of a large-area quadrilateral
        qb = a + 1
        qc = a + 2
        qd = a + 3
        if n > 4:
            pb = _poly_vertex(m, vadr, pva, n, qb)
            pc = _poly_vertex(m, vadr, pva, n, qc)
            pd = _poly_vertex(m, vadr, pva, n, qd)
            area = _quad_area(sv, pb, pc, pd)
            grow_d = 1
            while grow_d:
                pn = _poly_vertex(m, vadr, pva, n, qd + 1)
                an = _quad_area(sv, pb, pc, pn)
                if an <= area:
                    grow_d = 0
                else:
                    area = an
                    qd += 1
                    pd = pn
                    grow = 1
                    while grow:
                        pn = _poly_vertex(m, vadr, pva, n, qc + 1)
                        an = _quad_area(sv, pb, pn, pd)
                        if an <= area:
                            grow = 0
                        else:
                            area = an
                            qc += 1
                            pc = pn
                    grow = 1
                    while grow:
                        pn = _poly_vertex(m, vadr, pva, n, qb + 1)
                        an = _quad_area(sv, pn, pc, pd)
                        if an <= area:
                            grow = 0
                        else:
                            area = an
                            qb += 1
                            pb = pn
        ncand = ti.min(n, 4) - 1
        for j in range(ncand):
            ci = a + 1 + j
            if n > 4:
                ci = qb
                if j == 1:
                    ci = qc
                elif j == 2:
                    ci = qd
            v = _poly_vertex(m, vadr, pva, n, ci)
            pw = sm.rot_vec_mat(v, mat2) + pos2
            dv = sm.dot3(normal, pw - pos1)
            if dv <= margin and _vdot(ldir, v) > 0:
                put(d, b, n0 + count, cap, dv, pw + normal * (-0.5 * dv), normal, sm.zero3())
                count += 1
    return count
