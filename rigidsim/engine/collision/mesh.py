"""Mesh geoms: MuJoCo's mesh support points (the plane-mesh collider's and GJK/EPA's) and its plane-mesh
collider (mjc_PlaneConvex for a mesh geom), as MuJoCo 4.0.0 computes them.

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

GJK/EPA's support (`ccd_mesh_support`, for a mesh against a convex geom or a mesh: the driver's 'mesh'
collider) searches the same way but remembers each pair's last result: it starts the exhaustive search at the
last returned vertex, and the climb at a precomputed extreme vertex of the direction's coarse cell
(``m.mesh_extrema``) or at the last climb's end; see its docstring. It reads the model group through the
data group (`with_meshes`), so that `gjk.ccd` keeps its arguments; only scenes with such pairs compile it.

The multi-contact (`multicontact`) reads a mesh through `mesh_feature_faces`, `mesh_feature_normal`,
`mesh_vertex_edge`, `mesh_polygon` and `mesh_point` (end of this module).

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
from rigidsim.engine.layout import (GEOM_EXTREMA, GEOM_GRAPHADR, GEOM_POLYADR, GEOM_POLYNUM, GEOM_VERTADR,
                                    GEOM_VERTNUM, MPOLY_NORMAL, MPOLY_VERTADR, MPOLY_VERTNUM, MVERT_POLYMAPADR,
                                    MVERT_POLYMAPNUM)

HILLCLIMB_MIN = 10  # mjMESH_HILLCLIMB_MIN: meshes with fewer vertices (or no hull graph) are searched exhaustively
FLT_MAX = 3.4028234663852886e38
EXTREMA_CUT = 0.4  # a direction component beyond +-0.4 picks the +-1 cell of the 3x3x3 seed grid


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


class _WithMeshes:
    """A data group with the model group beside it, as attribute `meshes` (see `with_meshes`)."""

    def __init__(self, d, m):
        self.__dict__.update(vars(d))
        self.meshes = m


def with_meshes(m, d, on: bool = True):
    """(Compile time, Python) the data group `d` with the model group `m` reachable as ``.meshes`` (`d`
    itself when not `on`): what the GJK/EPA support functions read a mesh geom's vertices and hull graph
    from. Groups without it (scenes without mesh pairs, the collider tests) compile no mesh code
    (`has_meshes`)."""
    return _WithMeshes(d, m) if on else d


def has_meshes(d) -> bool:
    """(Compile time) whether the data group carries the model's mesh arrays (`with_meshes`)."""
    return hasattr(d, "meshes")


@ti.func
def _climb_vertex(m: ti.template(), vadr, gid, loc):
    """The vertex (row vadr + m.mesh_graph[gid + loc]) of hull-graph local id `loc`."""
    return mesh_vertex(m, vadr + m.mesh_graph[gid + loc, 0])


@ti.func
def ccd_mesh_support(m: ti.template(), d: ti.template(), b, slot, pos, mat, direction):
    """MuJoCo 4.0.0's GJK/EPA support of a mesh geom along the unit world `direction`: the vertex with the
    largest dot product with the direction taken into the mesh frame, in the world (pos, mat). Returns
    (point, vertex index within the mesh).

    The geom and the search's memory live in three ints of env b's scratch row from `slot`:
    ``d.ccd_i[b, slot]`` the geom, ``slot + 1`` the hull-graph local id the last climb ended on,
    ``slot + 2`` the vertex the last search returned (-1: none yet; `support.begin_mesh` sets them for
    each pair, and every call updates them, so later calls of the same pair start where the last one
    ended).

    - Exhaustive (no hull graph, or fewer than HILLCLIMB_MIN vertices): every vertex in order, keeping a
      strictly better one; the running best starts at the last returned vertex (so it wins ties), else
      at vertex 0 with value -FLT_MAX.
    - Hill climbing on the hull graph: the seed is the mesh's precomputed extreme vertex for the cell of
      the 3x3x3 grid the direction falls in (each component beyond +-0.4 picks the +-1 cell, else 0); from
      the second call on, the last climb's vertex instead unless the seed is strictly better. From the
      current vertex, its neighbour list is scanned to the end, moving the best to any strictly better
      neighbour; the pass repeats from the vertex it moved to until a pass moves nowhere."""
    g = d.ccd_i[b, slot]
    loc = sm.rot_vec_mat_t(direction, mat)
    vadr = m.gcol_i[g, GEOM_VERTADR]
    nvert = m.gcol_i[g, GEOM_VERTNUM]
    gadr = m.gcol_i[g, GEOM_GRAPHADR]
    vert = 0
    if gadr < 0 or nvert < HILLCLIMB_MIN:
        best = -FLT_MAX
        last = d.ccd_i[b, slot + 2]
        if last >= 0:
            vert = last
            best = _vdot(loc, mesh_vertex(m, vadr + last))
        for i in range(nvert):
            vd = _vdot(loc, mesh_vertex(m, vadr + i))
            if vd > best:
                best = vd
                vert = i
    else:
        numvert = m.mesh_graph[gadr, 0]
        gid = gadr + 2 + numvert  # vert_globalid
        eid = gadr + 2 + 2 * numvert  # edge_localid
        cx = 1 + (1 if loc[0] > EXTREMA_CUT else 0) - (1 if loc[0] < -EXTREMA_CUT else 0)
        cy = 1 + (1 if loc[1] > EXTREMA_CUT else 0) - (1 if loc[1] < -EXTREMA_CUT else 0)
        cz = 1 + (1 if loc[2] > EXTREMA_CUT else 0) - (1 if loc[2] < -EXTREMA_CUT else 0)
        ib = m.mesh_extrema[m.gcol_i[g, GEOM_EXTREMA], cx * 9 + cy * 3 + cz]
        warm = d.ccd_i[b, slot + 1]
        if warm >= 0:
            if not (_vdot(loc, _climb_vertex(m, vadr, gid, ib)) > _vdot(loc, _climb_vertex(m, vadr, gid, warm))):
                ib = warm
        best = _vdot(loc, _climb_vertex(m, vadr, gid, ib))
        prev = -1
        while ib != prev:
            prev = ib
            i = m.mesh_graph[gadr + 2 + prev, 0]  # the neighbour list of the vertex this pass started from
            nb = m.mesh_graph[eid + i, 0]
            while nb >= 0:
                vd = _vdot(loc, _climb_vertex(m, vadr, gid, nb))
                if vd > best:
                    best = vd
                    ib = nb
                i += 1
                nb = m.mesh_graph[eid + i, 0]
        d.ccd_i[b, slot + 1] = ib
        vert = m.mesh_graph[gid + ib, 0]
    d.ccd_i[b, slot + 2] = vert
    return sm.rot_vec_mat(mesh_vertex(m, vadr + vert), mat) + pos, vert


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


# ------------------------------------------------------------------------------------------ multi-contact features
# What MuJoCo 4.0.0's multi-contact (`multicontact`) reads of a mesh geom g at the feature GJK/EPA ended on
# (1 to 3 of its vertices, mesh-local ids): its polygons there, their normals, the edges leaving a vertex
# and a polygon's points. Polygon ids are mesh-local (m.gcol_i[g, GEOM_POLYADR] + id is the row).


@ti.func
def _polymap(m: ti.template(), vadr, v):
    """(first slot in m.mesh_polymap, count) of the polygons at vertex v of the mesh whose rows start at vadr."""
    return m.mesh_vert_i[vadr + v, MVERT_POLYMAPADR], m.mesh_vert_i[vadr + v, MVERT_POLYMAPNUM]


@ti.func
def mesh_feature_faces(m: ti.template(), g, dim, idx):
    """The polygons of mesh geom g at a feature of dim (1, 2, 3) vertices idx: (ids, madr, count). A vertex:
    all its polygons, in its polygon map's order (madr: their first slot in m.mesh_polymap; ids unused). An
    edge: the first two polygons (in the first vertex's order) that both vertices belong to, in ids. Three
    vertices: of those first two, the first that the third vertex belongs to too (count 0 or 1)."""
    vadr = m.gcol_i[g, GEOM_VERTADR]
    ids = ti.Vector([0, 0, 0])
    madr = -1
    cnt = 0
    a0, n0 = _polymap(m, vadr, idx[0])
    if dim == 1:
        madr = a0
        cnt = n0
    else:
        a1, n1 = _polymap(m, vadr, idx[1])
        ne = 0
        e0 = 0
        e1 = 0
        for i in range(n0):
            p = m.mesh_polymap[a0 + i, 0]
            for j in range(n1):
                if ne < 2 and m.mesh_polymap[a1 + j, 0] == p:
                    if ne == 0:
                        e0 = p
                    else:
                        e1 = p
                    ne += 1
        if dim == 2:
            ids = ti.Vector([e0, e1, 0])
            cnt = ne
        else:
            a2, n2 = _polymap(m, vadr, idx[2])
            for k in range(ne):
                pk = e0 if k == 0 else e1
                for j in range(n2):
                    if cnt == 0 and m.mesh_polymap[a2 + j, 0] == pk:
                        ids[0] = pk
                        cnt = 1
    return ids, madr, cnt


@ti.func
def _rot(mat, x, y, z):
    """mat (x, y, z), mat row-major, each row summed left to right."""
    return ti.Vector([mat[0] * x + mat[1] * y + mat[2] * z, mat[3] * x + mat[4] * y + mat[5] * z,
                      mat[6] * x + mat[7] * y + mat[8] * z])


@ti.func
def mesh_feature_normal(m: ti.template(), g, mat, ids, madr, i):
    """Polygon i of `mesh_feature_faces`' answer: (its outward unit normal in the world, its id)."""
    pid = ids[0]
    if madr >= 0:
        pid = m.mesh_polymap[madr + i, 0]
    elif i == 1:
        pid = ids[1]
    p = m.gcol_i[g, GEOM_POLYADR] + pid
    return _rot(mat, m.mesh_poly_f[p, MPOLY_NORMAL], m.mesh_poly_f[p, MPOLY_NORMAL + 1],
                m.mesh_poly_f[p, MPOLY_NORMAL + 2]), pid


@ti.func
def mesh_point(m: ti.template(), g, pos, mat, v):
    """Vertex v (mesh-local) of mesh geom g in the world."""
    p = mesh_vertex(m, m.gcol_i[g, GEOM_VERTADR] + v)
    return _rot(mat, p[0], p[1], p[2]) + pos


@ti.func
def mesh_vertex_edge(m: ti.template(), g, pos, mat, v, start, i):
    """Edge i leaving vertex v (world point `start`) of mesh geom g: towards the vertex before v in the loop
    of v's polygon i (its polygon map's order). Returns (unit direction, the other end)."""
    vadr = m.gcol_i[g, GEOM_VERTADR]
    a0, _n = _polymap(m, vadr, v)
    p = m.gcol_i[g, GEOM_POLYADR] + m.mesh_polymap[a0 + i, 0]
    adr = m.mesh_poly_i[p, MPOLY_VERTADR]
    nv = m.mesh_poly_i[p, MPOLY_VERTNUM]
    k = nv
    for j in range(nv):
        if k == nv and j > 0 and m.mesh_polyvert[adr + j, 0] == v:
            k = j
    end = mesh_point(m, g, pos, mat, m.mesh_polyvert[adr + k - 1, 0])
    dirn, _nrm = sm.normalize3(end - start)
    return dirn, end


@ti.func
def mesh_polygon(m: ti.template(), g, pid):
    """(first slot in m.mesh_polyvert, point count) of polygon pid (mesh-local) of mesh geom g."""
    p = m.gcol_i[g, GEOM_POLYADR] + pid
    return m.mesh_poly_i[p, MPOLY_VERTADR], m.mesh_poly_i[p, MPOLY_VERTNUM]
