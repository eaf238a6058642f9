"""Mesh geoms: MuJoCo's mesh support point and its plane-mesh collider (mjc_PlaneConvex for a mesh geom), as
MuJoCo 4.0.0 computes them.

Mesh data (model group `m`): ``m.mesh_vert[row, 0:3]`` are MuJoCo's float32 vertices widened to float64, in
the mesh frame (= the geom frame); ``m.mesh_graph[k, 0]`` is MuJoCo's convex-hull graph, per mesh: numvert,
numface, vert_edgeadr[numvert], vert_globalid[numvert], edge_localid[numvert + 3 numface] (each vertex's
neighbours, in local ids, ended by -1), face_globalid[3 numface] (the hull's triangles, counter-clockwise
about their outward normals). Per geom: ``m.gcol_i[g, GEOM_VERTADR / GEOM_VERTNUM / GEOM_GRAPHADR]``.

Support (`mesh_support`, MuJoCo's ccd support for a mesh): the vertex with the largest dot product with a
direction given in the mesh frame. A mesh without a graph, or with fewer than 10 vertices
(mjMESH_HILLCLIMB_MIN), is searched exhaustively (the first maximum wins); otherwise the search climbs the
hull graph from a warm-start vertex (the hull's first one without), moving to a better neighbour while
one exists, scanning the rest of the current vertex's list after a move, as MuJoCo does.

Plane-mesh, as MuJoCo 4.0.0 does it. This differs from the 3.x sources (their graph-neighbourhood
contacts, maxplanemesh = 3 and the spread filter are gone); it was found by experiment against the
installed library and agrees with it vertex for vertex:

1. the support vertex s along the plane's inward normal; no contact when it lies beyond the margin,
   else the first contact (at s, moved half its distance back along the normal);
2. the hull polygon at s whose outward normal is best aligned with that direction;
3. its vertices in counter-clockwise order from s; a polygon of more than four is first pruned to a
   quadrilateral of large area with s as its first corner (the other three corners start at the next three
   vertices and move forward while the area grows: the last corner, then the third, then the second,
   repeated until the last corner stops);
4. a contact at each other vertex (in that order) that lies within the margin of the plane and below the
   mesh centre along the inward normal (a positive dot product with the mesh-frame direction).

So a pair gives at most four contacts. MuJoCo keeps the hull's polygons (coplanar hull triangles merged) in
model arrays the engine does not receive; here the polygon is rebuilt from the hull graph: the triangles at
s give the best-aligned outward normal, and the polygon is walked along hull edges that lie in that plane
(within an angle of about 1e-3 rad), each step taking the neighbour that leaves all others on its left.
This is MuJoCo's polygon whenever MuJoCo's is a planar face of the hull. MuJoCo instead groups triangles by
their normal angles rounded to 0.01 rad in the mesh's original frame, so on finely tessellated curved
meshes it can merge nearly coplanar triangles into one polygon where this walk finds a triangle (and then
the contacts differ).

Quadrants notes: runtime loops only (no unrolling over vertices or faces); one `put` for the first contact
and one in the loop over the others.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.collision.contact import put
from rigidsim.engine.layout import GEOM_GRAPHADR, GEOM_VERTADR, GEOM_VERTNUM


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
def _facet_next(m: ti.template(), vadr, gadr, numvert, cl, nrm):
    """The hull-graph neighbour (local id) of local vertex `cl` that follows it on the hull polygon with
    outward normal `nrm` (counter-clockwise about it): of the neighbours in the polygon's plane (edge within
    about 1e-3 rad of it), the one that leaves all others on its left; -1 when there is none."""
    gid = gadr + 2 + numvert
    eid = gadr + 2 + 2 * numvert
    c = mesh_vertex(m, vadr + m.mesh_graph[gid + cl, 0])
    nxt = -1
    bvec = sm.zero3()
    i = m.mesh_graph[gadr + 2 + cl, 0]
    xl = m.mesh_graph[eid + i, 0]
    while xl >= 0:
        e = mesh_vertex(m, vadr + m.mesh_graph[gid + xl, 0]) - c
        if ti.abs(_vdot(nrm, e)) <= 1e-3 * ti.sqrt(_vdot(e, e)):
            if nxt < 0 or _vdot(sm.cross3(bvec, e), nrm) < 0:
                nxt = xl
                bvec = e
        i += 1
        xl = m.mesh_graph[eid + i, 0]
    return nxt


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
    gadr = m.gcol_i[g2, GEOM_GRAPHADR]
    meshindex, s = mesh_support(m, g2, ldir, -1)
    sv = mesh_vertex(m, vadr + s)
    r = sm.rot_vec_mat(sv, mat2) + pos2
    dist = sm.dot3(normal, r - pos1)
    count = 0
    if dist <= margin:
        put(d, b, n0, cap, dist, r + normal * (-0.5 * dist), normal, sm.zero3())
        count = 1
    if count == 1 and gadr >= 0:
        numvert = m.mesh_graph[gadr, 0]
        numface = m.mesh_graph[gadr + 1, 0]
        gid = gadr + 2 + numvert
        fadr = gadr + 2 + 3 * numvert + 3 * numface  # face_globalid
        # s's local id in the graph (the exhaustive search gives the vertex index)
        sl = meshindex
        if m.gcol_i[g2, GEOM_VERTNUM] < 10:
            sl = -1
            for j in range(numvert):
                if m.mesh_graph[gid + j, 0] == s:
                    sl = j
        # the outward normal, among the hull triangles at s, best aligned with ldir
        nrm = sm.zero3()
        best = -2.0
        for f in range(numface):
            i0 = m.mesh_graph[fadr + 3 * f, 0]
            i1 = m.mesh_graph[fadr + 3 * f + 1, 0]
            i2 = m.mesh_graph[fadr + 3 * f + 2, 0]
            if i0 == s or i1 == s or i2 == s:
                v0 = mesh_vertex(m, vadr + i0)
                fn = sm.cross3(mesh_vertex(m, vadr + i1) - v0, mesh_vertex(m, vadr + i2) - v0)
                fl = fn.norm()
                if fl > 0:
                    fn = fn / fl
                    al = _vdot(fn, ldir)
                    if al > best:
                        best = al
                        nrm = fn
        # the polygon's vertex count, walking from s
        k = 0
        if sl >= 0 and best > -2.0:
            k = 1
            cl = _facet_next(m, vadr, gadr, numvert, sl, nrm)
            while cl >= 0 and cl != sl and k <= numvert:
                k += 1
                cl = _facet_next(m, vadr, gadr, numvert, cl, nrm)
            if cl != sl:  # not a closed walk (should not occur on a hull): the first contact only
                k = 1
        # candidates: the other vertices, or the three other corners of the pruned quadrilateral
        qb = -1
        qc = -1
        qd = -1
        if k > 4:
            qb = _facet_next(m, vadr, gadr, numvert, sl, nrm)
            qc = _facet_next(m, vadr, gadr, numvert, qb, nrm)
            qd = _facet_next(m, vadr, gadr, numvert, qc, nrm)
            pa = sv
            pb = mesh_vertex(m, vadr + m.mesh_graph[gid + qb, 0])
            pc = mesh_vertex(m, vadr + m.mesh_graph[gid + qc, 0])
            pd = mesh_vertex(m, vadr + m.mesh_graph[gid + qd, 0])
            area = _quad_area(pa, pb, pc, pd)
            grow_d = 1
            while grow_d:
                nd = _facet_next(m, vadr, gadr, numvert, qd, nrm)
                pn = mesh_vertex(m, vadr + m.mesh_graph[gid + nd, 0])
                an = _quad_area(pa, pb, pc, pn)
                if an <= area:
                    grow_d = 0
                else:
                    area = an
                    qd = nd
                    pd = pn
                    grow = 1
                    while grow:
                        nc = _facet_next(m, vadr, gadr, numvert, qc, nrm)
                        pn = mesh_vertex(m, vadr + m.mesh_graph[gid + nc, 0])
                        an = _quad_area(pa, pb, pn, pd)
                        if an <= area:
                            grow = 0
                        else:
                            area = an
                            qc = nc
                            pc = pn
                    grow = 1
                    while grow:
                        nb = _facet_next(m, vadr, gadr, numvert, qb, nrm)
                        pn = mesh_vertex(m, vadr + m.mesh_graph[gid + nb, 0])
                        an = _quad_area(pa, pn, pc, pd)
                        if an <= area:
                            grow = 0
                        else:
                            area = an
                            qb = nb
                            pb = pn
        ncand = k - 1
        if k > 4:
            ncand = 3
        cl = sl
        for j in range(ncand):
            if k > 4:
                cl = qb
                if j == 1:
                    cl = qc
                elif j == 2:
                    cl = qd
            else:
                cl = _facet_next(m, vadr, gadr, numvert, cl, nrm)
            gv = m.mesh_graph[gid + cl, 0]
            if gv != s:
                v = mesh_vertex(m, vadr + gv)
                p = sm.rot_vec_mat(v, mat2) + pos2
                dv = sm.dot3(normal, p - pos1)
                if dv <= margin and _vdot(ldir, v) > 0:
                    put(d, b, n0 + count, cap, dv, p + normal * (-0.5 * dv), normal, sm.zero3())
                    count += 1
    return count
