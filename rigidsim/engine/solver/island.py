"""Constraint islands of one env (MuJoCo's mj_island), and the dof and row lists the solver walks.

A kinematic tree is a group of dofs hanging from one world-attached body; its dofs are contiguous and it is
named here by its first dof (trees ascend with their first dof, as MuJoCo's tree ids do). Every constraint
joins the trees it touches; the connected groups of trees are the islands, and each is solved on its own
(its dofs, its rows, its own scale), which is what MuJoCo 4 does unless the island flag is disabled. The
trees a constraint touches: a dof friction row its dof's tree, a joint limit its joint's, a contact the trees
of its two geoms' bodies and a connect or weld those of its two bodies (world-fixed bodies have none, and a
tree joins even where its Jacobian happens to vanish), any other row the trees of the dofs where its first
Jacobian row is nonzero. Rows of one constraint (the same type and id in a run) share the first's.

Islands are numbered by their smallest tree, so the numbering is MuJoCo's; the union links the larger root
to the smaller, so that smallest tree is the root.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    BODY_LASTDOF, CNSTR_CONTACT_ELLIPTIC, CNSTR_CONTACT_FRICTIONLESS, CNSTR_CONTACT_PYRAMIDAL,
    CNSTR_EQUALITY, CNSTR_FRICTION_DOF, CNSTR_LIMIT_JOINT, CON_GEOM1, CON_GEOM2, DOF_PARENTID, DSBL_ISLAND,
    EFC_ID, EFC_TYPE, EQ_BODY1, EQ_BODY2,
    EFCN_NEFC, FRAME_BODYID, JNT_DOFADR, OPT_DISABLEFLAGS, SEI_ISLAND, SEI_LIST, SEI_NEXT, SVI_HEAD, SVI_ISLAND,
    SVI_LIST, SVI_NEXT, SVI_PARENT, SVI_POS, SVI_RHEAD, SVI_TREE, SZ_NV, EFC_JADR,
)
from rigidsim.engine.solver.linalg import passes


@ti.func
def _root(d: ti.template(), b, tree):
    """The canonical root of an active tree, compressing the path to it (mj_dsuRoot)."""
    r = tree
    while d.solver_vi[b, r, SVI_PARENT] != r:
        r = d.solver_vi[b, r, SVI_PARENT]
    t = tree
    while d.solver_vi[b, t, SVI_PARENT] != t:
        nxt = d.solver_vi[b, t, SVI_PARENT]
        d.solver_vi[b, t, SVI_PARENT] = r
        t = nxt
    return r


@ti.func
def _merge(m: ti.template(), d: ti.template(), b, tree1, tree2):
    """Activate two trees touched by one constraint and join them (-1: the world side, nothing to join)."""
    t1 = tree1
    t2 = tree2
    if t1 == -1:
        t1 = t2
    if t2 == -1:
        t2 = t1
    if d.solver_vi[b, t1, SVI_PARENT] == -1:
        d.solver_vi[b, t1, SVI_PARENT] = t1
    if d.solver_vi[b, t2, SVI_PARENT] == -1:
        d.solver_vi[b, t2, SVI_PARENT] = t2
    if d.solver_vi[b, t1, SVI_PARENT] != d.solver_vi[b, t2, SVI_PARENT]:
        r1 = 0
        r2 = 0
        for q in range(passes(m, 2)):  # one inlined copy of _root
            rq = _root(d, b, t1 if q == 0 else t2)
            if q == 0:
                r1 = rq
            else:
                r2 = rq
        if r1 < r2:
            d.solver_vi[b, r2, SVI_PARENT] = r1
        elif r2 < r1:
            d.solver_vi[b, r1, SVI_PARENT] = r2


@ti.func
def _body_tree(m: ti.template(), d: ti.template(), b, body):
    """The tree that moves a body, -1 for a body fixed to the world."""
    last = m.body_i[body, BODY_LASTDOF]
    tree = -1
    if last >= 0:
        tree = d.solver_vi[b, last, SVI_TREE]
    return tree


@ti.func
def find_islands(m: ti.template(), d: ti.template(), b):
    """Group env b's kinematic trees into constraint islands. Writes per dof its tree (SVI_TREE) and island
    (SVI_ISLAND, -1 for dofs no constraint touches) and per row its island (SEI_ISLAND); returns (the number
    of islands, 0 when islands are disabled (mjDSBL_ISLAND) or there are no rows (one solve of everything);
    True when there is one island and it holds every dof and row: its lists are those of everything)."""
    nv = m.opt_i[SZ_NV]
    nefc = d.efc_n[b, EFCN_NEFC]
    for i in range(nv):
        p = m.dof_i[i, DOF_PARENTID]
        tree = i
        if p >= 0:
            tree = d.solver_vi[b, p, SVI_TREE]
        d.solver_vi[b, i, SVI_TREE] = tree
        d.solver_vi[b, i, SVI_PARENT] = -1
        d.solver_vi[b, i, SVI_ISLAND] = -1
    nisland = 0
    whole = False
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_ISLAND) == 0 and nefc > 0:
        # join the trees of every constraint; SEI_ISLAND holds the row's first tree for now
        for r in range(nefc):
            typ = d.efc_i[b, r, EFC_TYPE]
            oid = d.efc_i[b, r, EFC_ID]
            if r > 0 and typ == d.efc_i[b, r - 1, EFC_TYPE] and oid == d.efc_i[b, r - 1, EFC_ID]:
                d.solver_efc_i[b, r, SEI_ISLAND] = d.solver_efc_i[b, r - 1, SEI_ISLAND]
            else:
                # the trees the row touches: t1, t2 (-1: none) for the known kinds, else from its Jacobian
                t1 = -1
                t2 = -1
                generic = False
                if typ == CNSTR_FRICTION_DOF:
                    t1 = d.solver_vi[b, oid, SVI_TREE]
                elif typ == CNSTR_LIMIT_JOINT:
                    t1 = d.solver_vi[b, m.jnt_i[oid, JNT_DOFADR], SVI_TREE]
                elif typ == CNSTR_CONTACT_FRICTIONLESS or typ == CNSTR_CONTACT_PYRAMIDAL or \
                        typ == CNSTR_CONTACT_ELLIPTIC:
                    t1 = _body_tree(m, d, b, m.geom_i[d.contact_i[b, oid, CON_GEOM1], FRAME_BODYID])
                    t2 = _body_tree(m, d, b, m.geom_i[d.contact_i[b, oid, CON_GEOM2], FRAME_BODYID])
                elif typ == CNSTR_EQUALITY and m.eq_i[oid, EQ_BODY1] >= 0:  # connect, weld: both bodies' trees
                    t1 = _body_tree(m, d, b, m.eq_i[oid, EQ_BODY1])
                    t2 = _body_tree(m, d, b, m.eq_i[oid, EQ_BODY2])
                else:
                    generic = True
                first = t1
                if first < 0:
                    first = t2
                # one merge for a known kind; for the others one per change of tree along the Jacobian's
                # nonzeros (the first tree alone activates it)
                prev = -1
                for i in range(nv if generic else 1):
                    ta = t1
                    tb = t2
                    go = t1 >= 0 or t2 >= 0
                    if generic:
                        go = False
                        if d.efc_J[b, d.efc_i[b, r, EFC_JADR] + i] != 0.0:  # these rows are whole
                            t = d.solver_vi[b, i, SVI_TREE]
                            if t != prev:
                                if first == -1:
                                    first = t
                                ta = first
                                tb = t
                                go = True
                                prev = t
                    if go:
                        _merge(m, d, b, ta, tb)
                d.solver_efc_i[b, r, SEI_ISLAND] = first
        # number the islands by their root (the smallest tree), ascending; the tree's row holds its island
        for t in range(nv):
            if d.solver_vi[b, t, SVI_TREE] == t:
                p = d.solver_vi[b, t, SVI_PARENT]
                isl = -1
                if p == t:
                    isl = nisland
                    nisland += 1
                elif p >= 0:
                    # the parent was visited and compressed already: its parent is the root
                    root = d.solver_vi[b, p, SVI_PARENT]
                    d.solver_vi[b, t, SVI_PARENT] = root
                    isl = d.solver_vi[b, root, SVI_ISLAND]
                d.solver_vi[b, t, SVI_ISLAND] = isl
        # each island's dofs and rows as a list linked in ascending order, built once here so that `lists`
        # walks island k's alone (a scan of every dof and row per island cost O(islands * (nv + nefc))); a dof
        # takes its tree's island and a row its first tree's, in the same backward pass that links them
        for k in range(nisland):
            d.solver_vi[b, k, SVI_HEAD] = -1
            d.solver_vi[b, k, SVI_RHEAD] = -1
        n0 = _link(d, b, nv, d.solver_vi, SVI_ISLAND, SVI_NEXT, SVI_HEAD, d.solver_vi, SVI_TREE)
        n0 += _link(d, b, nefc, d.solver_efc_i, SEI_ISLAND, SEI_NEXT, SVI_RHEAD, d.solver_efc_i, SEI_ISLAND)
        whole = nisland == 1 and n0 == nv + nefc
    else:
        for r in range(nefc):
            d.solver_efc_i[b, r, SEI_ISLAND] = -1
    return nisland, whole


@ti.func
def _link(d: ti.template(), b, n, items: ti.template(), isl_col: ti.template(), next_col: ti.template(),
          head_col: ti.template(), trees: ti.template(), tree_col: ti.template()):
    """Items n-1 .. 0 (dofs or rows) each take the island of the tree in trees[b, j, tree_col] (-1: none) and
    are prepended to their island's list: the island's first item in column head_col of row k of solver_vi,
    each item's next in its own next_col, so each list ascends. Returns how many items are in island 0."""
    n0 = 0
    for jj in range(n):
        j = n - 1 - jj
        t = trees[b, j, tree_col]
        isl = -1
        if t >= 0:
            isl = d.solver_vi[b, t, SVI_ISLAND]
        items[b, j, isl_col] = isl
        if isl >= 0:
            items[b, j, next_col] = d.solver_vi[b, isl, head_col]
            d.solver_vi[b, isl, head_col] = j
            if isl == 0:
                n0 += 1
    return n0


@ti.func
def lists(m: ti.template(), d: ti.template(), b, k):
    """Write the dof and row lists of island k (k < 0: every dof and row; else from the island's linked lists
    that `find_islands` built, ascending) and each listed dof's position; returns (number of dofs, number of
    rows)."""
    nvi = 0
    nrow = 0
    if k < 0:
        for i in range(m.opt_i[SZ_NV]):
            d.solver_vi[b, nvi, SVI_LIST] = i
            d.solver_vi[b, i, SVI_POS] = nvi
            nvi += 1
        nrow = d.efc_n[b, EFCN_NEFC]
        for r in range(nrow):
            d.solver_efc_i[b, r, SEI_LIST] = r
    else:
        i = d.solver_vi[b, k, SVI_HEAD]
        while i >= 0:
            d.solver_vi[b, nvi, SVI_LIST] = i
            d.solver_vi[b, i, SVI_POS] = nvi
            nvi += 1
            i = d.solver_vi[b, i, SVI_NEXT]
        r = d.solver_vi[b, k, SVI_RHEAD]
        while r >= 0:
            d.solver_efc_i[b, nrow, SEI_LIST] = r
            nrow += 1
            r = d.solver_efc_i[b, r, SEI_NEXT]
    return nvi, nrow
