"""The order in which Newton's Cholesky factor eliminates the island's dofs (a fill-reducing permutation).

The factor (`linalg.chol_factor`) keeps the profile of the Hessian H = M + J'DJ: a row's entries left of its
first nonzero are never computed. In the list's ascending order a pile of free bodies couples each body with
neighbours listed far before it, so most rows start near the first column. `order` lists the island's dofs
by kinematic tree instead, a tree's dofs together and ascending (M couples a tree's dofs densely; no two
trees share an entry of M), the trees in Reverse Cuthill-McKee order of the island's tree graph: two trees
are neighbours when a constraint row touches both. Cuthill-McKee visits the graph breadth first from a
pseudo-peripheral tree (George and Liu's search: a tree of least degree in the last level of a breadth-first
search, repeated while that depth grows), each tree's unvisited neighbours by ascending degree; reversing
the visit gives a smaller profile still. The 27 settled boxes of benchmarks' boxes27_pile (162 dofs, 204
contacts): the factor's multiply-adds 208k in ascending order, 63k in this one (tests/test_solver_ordering.py).

The order is written as SVI_HPOS (per dof: its row and column in solver_H and solver_Hcone) and SVI_HLIST (row
k: the dof at row k); the Hessian's assembly (`newton.make_hessian`), the factor's solves and rank-one updates
(`linalg.chol_solve`, `chol_update`) go through them. Nothing else changes: the island's list, its vectors
and its rows keep their order, so every sum other than the factor's is the one it was.

MuJoCo factors the Hessian densely, in ascending order, when the model has fewer than 60 dofs (mj_isSparse,
jacobian="auto"); there, and for islands of one or two trees, the order stays the list's. Islands with a
span across two trees (none is built so) or with more graph edges than there are rows of room (only rows
stored whole can join more than two trees) also keep the list's order.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    EFC_JADR, EFC_SPAN, NSOLVI, SEI_ADJ, SEI_EDGE, SVI_ADJ, SVI_DEG, SVI_FIRST, SVI_HLIST, SVI_HPOS, SVI_LIST,
    SVI_ORDER, SVI_SLOT, SVI_TREE, SVI_TSTART, SZ_NEFCMAX, SZ_NV,
)
from rigidsim.engine.solver.linalg import base, passes, row

# MuJoCo's dense factor below this many dofs (the model's, jacobian="auto")
SPARSE_NV = 60
# a tree's mark while the order is computed (its BFS level, or visited): solver_vi's SVI_FIRST, which holds
# nothing until `chol_factor` writes the factor's profile there
SVI_MARK = SVI_FIRST


@ti.func
def _adj(d: ti.template(), b, e):
    """Entry e of the tree graph's adjacency lists."""
    return d.solver_efc_i[b, e >> 1, SEI_ADJ + (e & 1)]


@ti.func
def _set_adj(d: ti.template(), b, e, s):
    d.solver_efc_i[b, e >> 1, SEI_ADJ + (e & 1)] = s


@ti.func
def _graph(m: ti.template(), d: ti.template(), b, nvi, nrow, ntree):
    """The island's tree graph as adjacency lists (slot s's neighbours: entries SVI_ADJ .. + SVI_DEG of row s,
    each once). A row given by spans joins the trees of its two spans; a row stored whole joins the first
    tree where its Jacobian is nonzero with each other such tree (as `island.find_islands` does). One pass
    over the rows lists the edges (SEI_EDGE of row e: edge e's two slots; a row with the spans of the row
    before it, as a contact's rows, adds nothing), a pass over the edges fills the lists. Returns False (no
    graph) when a span lies across two trees or there are more edges than rows of room."""
    va = ti.static(d.solver_vi.arr)
    ja = ti.static(d.efc_J.arr)
    jb = base(d.efc_J, b, 0)
    lb = base(d.solver_vi, b, SVI_LIST)
    cap = m.opt_i[SZ_NEFCMAX]
    for s in range(ntree):
        d.solver_vi[b, s, SVI_DEG] = 0
    ok = True
    nedge = 0
    plo1 = -1
    plo2 = -1
    c = 0
    while c < nrow and ok:
        r = row(d, b, c)
        lo1 = d.efc_i[b, r, EFC_SPAN]
        lo2 = d.efc_i[b, r, EFC_SPAN + 2]
        hi1 = d.efc_i[b, r, EFC_SPAN + 1]
        whole = hi1 <= lo1
        if whole or lo1 != plo1 or lo2 != plo2:
            plo1 = lo1
            plo2 = lo2
            hi2 = d.efc_i[b, r, EFC_SPAN + 3]
            first = -1
            last = -1
            for k in range(nvi if whole else 1):
                sa = -1
                sb = -1
                if whole:
                    i = va[lb + k * NSOLVI]
                    if ja[jb + d.efc_i[b, r, EFC_JADR] + i] != 0.0:
                        s = d.solver_vi[b, d.solver_vi[b, i, SVI_TREE], SVI_SLOT]
                        if s != last:
                            last = s
                            if first < 0:
                                first = s
                            else:
                                sa = first
                                sb = s
                elif hi2 > lo2:
                    t1 = d.solver_vi[b, lo1, SVI_TREE]
                    t2 = d.solver_vi[b, lo2, SVI_TREE]
                    if d.solver_vi[b, hi1 - 1, SVI_TREE] != t1 or d.solver_vi[b, hi2 - 1, SVI_TREE] != t2:
                        ok = False
                    sa = d.solver_vi[b, t1, SVI_SLOT]
                    sb = d.solver_vi[b, t2, SVI_SLOT]
                elif d.solver_vi[b, hi1 - 1, SVI_TREE] != d.solver_vi[b, lo1, SVI_TREE]:
                    ok = False
                if sa >= 0 and sa != sb and ok:
                    if nedge >= cap:
                        ok = False
                    else:
                        d.solver_efc_i[b, nedge, SEI_EDGE] = sa
                        d.solver_efc_i[b, nedge, SEI_EDGE + 1] = sb
                        d.solver_vi[b, sa, SVI_DEG] = d.solver_vi[b, sa, SVI_DEG] + 1
                        d.solver_vi[b, sb, SVI_DEG] = d.solver_vi[b, sb, SVI_DEG] + 1
                        nedge += 1
        c += 1
    if ok:
        acc = 0
        for s in range(ntree):
            d.solver_vi[b, s, SVI_ADJ] = acc
            acc += d.solver_vi[b, s, SVI_DEG]
            d.solver_vi[b, s, SVI_DEG] = 0
        for e in range(nedge):
            for q in range(passes(m, 2)):
                sa = d.solver_efc_i[b, e, SEI_EDGE + q]
                deg = d.solver_vi[b, sa, SVI_DEG]
                _set_adj(d, b, d.solver_vi[b, sa, SVI_ADJ] + deg, d.solver_efc_i[b, e, SEI_EDGE + 1 - q])
                d.solver_vi[b, sa, SVI_DEG] = deg + 1
        # each neighbour once (two trees may touch at several contacts)
        for s in range(ntree):
            d.solver_vi[b, s, SVI_MARK] = -1
        for s in range(ntree):
            a = d.solver_vi[b, s, SVI_ADJ]
            w = a
            for e in range(a, a + d.solver_vi[b, s, SVI_DEG]):
                u = _adj(d, b, e)
                if d.solver_vi[b, u, SVI_MARK] != s:
                    d.solver_vi[b, u, SVI_MARK] = s
                    _set_adj(d, b, w, u)
                    w += 1
            d.solver_vi[b, s, SVI_DEG] = w - a
    return ok


@ti.func
def _before(d: ti.template(), b, u, v):
    """Slot u comes before slot v among neighbours: a lower degree, then a lower slot."""
    du = d.solver_vi[b, u, SVI_DEG]
    dv = d.solver_vi[b, v, SVI_DEG]
    return du < dv or (du == dv and u < v)


@ti.func
def _visit(d: ti.template(), b, ntree, root, cm):
    """Breadth-first visit of the graph into SVI_ORDER. cm False: root's component alone, SVI_MARK the level;
    returns (the last level, visited count). cm True: Cuthill-McKee, every component (each after the first
    from its lowest slot), each tree's unvisited neighbours appended by ascending degree."""
    for s in range(ntree):
        d.solver_vi[b, s, SVI_MARK] = -1
    d.solver_vi[b, 0, SVI_ORDER] = root
    d.solver_vi[b, root, SVI_MARK] = 0
    head = 0
    tail = 1
    nxt = 0
    going = True
    while going:
        if head == tail:
            if cm and tail < ntree:  # a new component
                while d.solver_vi[b, nxt, SVI_MARK] >= 0:
                    nxt += 1
                d.solver_vi[b, tail, SVI_ORDER] = nxt
                d.solver_vi[b, nxt, SVI_MARK] = 0
                tail += 1
            else:
                going = False
        if going:
            v = d.solver_vi[b, head, SVI_ORDER]
            head += 1
            lv = d.solver_vi[b, v, SVI_MARK] + 1
            seg = tail
            a = d.solver_vi[b, v, SVI_ADJ]
            for e in range(a, a + d.solver_vi[b, v, SVI_DEG]):
                u = _adj(d, b, e)
                if d.solver_vi[b, u, SVI_MARK] < 0:
                    d.solver_vi[b, u, SVI_MARK] = lv
                    d.solver_vi[b, tail, SVI_ORDER] = u
                    tail += 1
            if cm:  # the new ones by degree (insertion sort: a tree has few neighbours)
                for q in range(seg + 1, tail):
                    u = d.solver_vi[b, q, SVI_ORDER]
                    j = q
                    moving = True
                    while moving:
                        moving = False
                        if j > seg:
                            w = d.solver_vi[b, j - 1, SVI_ORDER]
                            if _before(d, b, u, w):
                                d.solver_vi[b, j, SVI_ORDER] = w
                                j -= 1
                                moving = True
                    d.solver_vi[b, j, SVI_ORDER] = u
    return d.solver_vi[b, d.solver_vi[b, tail - 1, SVI_ORDER], SVI_MARK], tail


@ti.func
def order(m: ti.template(), d: ti.template(), b, nvi, nrow):
    """Newton's order of the island whose lists `island.lists` wrote (nvi dofs, nrow rows): SVI_HPOS and
    SVI_HLIST (module docstring). The list's own order for models MuJoCo factors densely and islands of fewer
    than three trees."""
    va = ti.static(d.solver_vi.arr)
    lb = base(d.solver_vi, b, SVI_LIST)
    ok = m.opt_i[SZ_NV] >= SPARSE_NV
    ntree = 0
    if ok:
        # the island's trees (slots) in the list's order: a tree's dofs are consecutive there
        prev = -1
        for k in range(nvi):
            t = d.solver_vi[b, va[lb + k * NSOLVI], SVI_TREE]
            if t != prev:
                d.solver_vi[b, t, SVI_SLOT] = ntree
                d.solver_vi[b, ntree, SVI_TSTART] = k
                ntree += 1
                prev = t
        ok = ntree > 2
    if ok:
        ok = _graph(m, d, b, nvi, nrow, ntree)
    if ok:
        # George and Liu's pseudo-peripheral tree: from a tree of least degree a breadth-first search, then from
        # a tree of least degree in its last level, again, while the depth grows; the last tree searched starts
        # Cuthill-McKee. One loop, one compiled copy of the search.
        root = 0
        for s in range(1, ntree):
            if _before(d, b, s, root):
                root = s
        depth = -1
        cm = False
        going = True
        while going:
            lev, tail = _visit(d, b, ntree, root, cm)
            if cm:
                going = False
            elif lev > depth:
                depth = lev
                x = d.solver_vi[b, tail - 1, SVI_ORDER]
                q = tail - 2
                while q >= 0:
                    u = d.solver_vi[b, q, SVI_ORDER]
                    if d.solver_vi[b, u, SVI_MARK] != lev:
                        q = -1
                    else:
                        if _before(d, b, u, x):
                            x = u
                        q -= 1
                cm = x == root  # a single tree in its component: nothing farther
                root = x
            else:
                cm = True
        # the trees in reverse visiting order, each tree's dofs ascending
        pos = 0
        for q in range(ntree):
            s = d.solver_vi[b, ntree - 1 - q, SVI_ORDER]
            k0 = d.solver_vi[b, s, SVI_TSTART]
            k1 = nvi
            if s + 1 < ntree:
                k1 = d.solver_vi[b, s + 1, SVI_TSTART]
            i0 = va[lb + k0 * NSOLVI]
            for j in range(k1 - k0):
                d.solver_vi[b, i0 + j, SVI_HPOS] = pos
                d.solver_vi[b, pos, SVI_HLIST] = i0 + j
                pos += 1
    else:  # the list's order
        for k in range(nvi):
            i = va[lb + k * NSOLVI]
            d.solver_vi[b, i, SVI_HPOS] = k
            d.solver_vi[b, k, SVI_HLIST] = i
