"""Linear algebra of the constraint solver, over the island being solved.

The solver works on one constraint island at a time (or on every dof and row at once). `island.lists`
writes the island's dofs, ascending, into ``solver_vi[b, k, SVI_LIST]`` (k < nvi) and its rows, in
their order, into ``solver_efc_i[b, c, SEI_LIST]`` (c < nrow); every function here takes those counts
and walks the lists. Per-dof vectors stay indexed by dof (a column of ``solver_v`` or ``dof``); the dense
Hessian and its factor are indexed in the factor's own order of the island's dofs (`ordering`:
``solver_vi``'s SVI_HPOS and SVI_HLIST).

The parity contract is tolerances (qacc and forces to 1e-6 relative of MuJoCo's at the same state), not
equal bits: sums are in whatever order is cheapest here. `dots` keeps mju_dot's four partial sums, the
sparse mass-matrix product is mju_mulSymVecSparse's and the factor's rank-one updates are mju_cholUpdate's;
a row of J times a vector (`span_dot`, `group_dot`) is summed left to right over the row's nonzeros in
registers, and the Hessian's factor and its solves go by supernodes (runs of rows with the same first
nonzero: `chol_factor`, `chol_solve`), each dot product summed left to right in a register.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    DOF_MADR, DOF_MROWNNZ, DOF_SUBTREEEND, EFC_FORCE, EFC_JADR, EFC_SPAN, M_COLIND, MINVAL, NSOLVI, QLD,
    QLDIAGINV, OPT_SOLVER_M, SEI_LIST, SV_LTJ, SV_UPD, SVI_FIRST, SVI_HLIST, SVI_LIST, SVI_POS, SVI_REACH, SZ_NV,
)

# rows visited at once by the loops over runs of rows with the same spans (`row_group`): a pyramidal contact of
# condim 3 has four
GROUP = 4
# islands of at least this many dofs bound the profile factor's column loops by the column's reach
# (`chol_factor`); in smaller ones keeping the bound costs about what it saves (humanoid: 27 dofs)
REACH_N = 60
# rows of the factor computed together (`chol_factor`'s supernodes): a free body's six dofs
SUPER = 6
# islands of up to this many dofs sum J' force in a local array (`mul_jt`)
JT_LOCAL = 256


@ti.func
def dof(d: ti.template(), b, k):
    """The k-th dof of the island's list."""
    return d.solver_vi[b, k, SVI_LIST]


@ti.func
def row(d: ti.template(), b, c):
    """The c-th constraint row of the island's list."""
    return d.solver_efc_i[b, c, SEI_LIST]


@ti.func
def passes(m: ti.template(), n):
    """n (a small fixed number of passes of a loop), in a form LLVM cannot fold: a loop with a constant trip
    count this small is unrolled, one inlined copy of its body per pass, which the loop is there to avoid."""
    return ti.select(m.opt_i[SZ_NV] >= 0, n, 0)


@ti.func
def two(n):
    """2 for n >= 0 (a row's two spans), in a form LLVM cannot fold (see `passes`)."""
    return ti.select(n >= 0, 2, 0)


@ti.func
def base(a: ti.template(), b, c):
    """The flat offset of element [b, 0, c] of the _Flat array a (env b's block, column c): element [b, i, c]
    is ``a.arr[base + i * a.strides[1]]``. Computed once per call, it keeps the per-env stride load out of
    inner loops."""
    return b * a.strides[0] + c


def row_arrays(d):
    """The rows' flat arrays and row strides (called while compiling, as ``ti.static(*row_arrays(d))``): efc,
    efc_i, solver_efc_i, then their strides from one row to the next. With `row_bases`, row r's floats are
    ``efc[fb + r * fs + EFC_...]``: the per-env stride is loaded once per call, not at every access."""
    return d.efc.arr, d.efc_i.arr, d.solver_efc_i.arr, d.efc.strides[1], d.efc_i.strides[1], \
        d.solver_efc_i.strides[1]


@ti.func
def row_bases(d: ti.template(), b):
    """Env b's flat offsets of efc and efc_i (row 0, column 0) and of the island's row list (row c of the list
    is ``solver_efc_i[lb + c * ls]``), for `row_arrays`' arrays."""
    return base(d.efc, b, 0), base(d.efc_i, b, 0), base(d.solver_efc_i, b, SEI_LIST)


def dof_arrays(d):
    """solver_v and dof, flat, with their strides from one dof to the next (``ti.static(*dof_arrays(d))``):
    dof i's entry c of env b is ``solver_v[base(d.solver_v, b, 0) + i * vs + c]``."""
    return d.solver_v.arr, d.solver_v.strides[1], d.dof.arr, d.dof.strides[1]


@ti.func
def ancestor_entry(m: ti.template(), c, nj):
    """Where qM's row of dof c holds its entry in the column of an ancestor j with nj = dof_Mrownnz[j]
    entries (j and its own ancestors): the legacy row lists c, then its ancestors nearest first, so that
    entry is rownnz(c) - nj from the row's start. Sums over a dof's descendants (the dofs after it up to
    DOF_SUBTREEEND) read its column of qM or of its factor here."""
    return m.dof_i[c, DOF_MADR] + m.dof_i[c, DOF_MROWNNZ] - nj


@ti.func
def list_base(d: ti.template(), b):
    """The flat offset of the island's dof list: dof k is ``d.solver_vi.arr[list_base + k * NSOLVI]``."""
    return b * d.solver_vi.strides[0] + SVI_LIST


@ti.func
def dots(d: ti.template(), b, n, pairs: ti.template()):
    """The dot products of several pairs of vectors over the island's n dofs in one pass, each summed as
    mju_dot sums it (four running partial sums, then the remainder left to right): `pairs` is a static
    tuple of (x, cx, y, cy); returns the vector of the sums, in the pairs' order. One loop for all of them:
    one copy of the list walk and its index arithmetic instead of one per product (compiled code size)."""
    vi = ti.static(d.solver_vi.arr)
    npair = ti.static(len(pairs))
    lb = list_base(d, b)
    xb = ti.Vector.zero(ti.i32, npair)
    yb = ti.Vector.zero(ti.i32, npair)
    for q in ti.static(range(npair)):
        xb[q] = base(pairs[q][0], b, pairs[q][1])
        yb[q] = base(pairs[q][2], b, pairs[q][3])
    acc = ti.Matrix.zero(float, npair, 4)
    k = 0
    while k + 4 <= n:
        for u in ti.static(range(4)):
            i = vi[lb + (k + u) * NSOLVI]
            for q in ti.static(range(npair)):
                acc[q, u] = acc[q, u] + pairs[q][0].arr[xb[q] + i * ti.static(pairs[q][0].strides[1])] * \
                    pairs[q][2].arr[yb[q] + i * ti.static(pairs[q][2].strides[1])]
        k += 4
    res = ti.Vector.zero(float, npair)
    for q in ti.static(range(npair)):
        res[q] = (acc[q, 0] + acc[q, 2]) + (acc[q, 1] + acc[q, 3])
    if k < n:
        tail = ti.Vector.zero(float, npair)  # mju_dot's remainder, summed left to right
        while k < n:
            i = vi[lb + k * NSOLVI]
            for q in ti.static(range(npair)):
                tail[q] = tail[q] + pairs[q][0].arr[xb[q] + i * ti.static(pairs[q][0].strides[1])] * \
                    pairs[q][2].arr[yb[q] + i * ti.static(pairs[q][2].strides[1])]
            k += 1
        res = res + tail
    return res


@ti.func
def span_at(p, o, sh, s):
    """Span s (0 or 1) of a `row_span` result: its first position, one past its last, the flat offset o[s] at
    which its entries are stored (dof i at o[s] + i) and the dof of its position k less k (`span_dof`)."""
    return ti.select(s == 0, p[0], p[2]), ti.select(s == 0, p[1], p[3]), ti.select(s == 0, o[0], o[1]), \
        ti.select(s == 0, sh[0], sh[1])


@ti.func
def span_dof(vi: ti.template(), lb, k, sh, whole):
    """The dof at position k of a span (`span_at`'s shift sh): a span is a run of consecutive dofs, so k + sh,
    without reading the list; a whole row (`row_span`'s whole, listed) reads the island's list."""
    i = k + sh
    if whole:
        i = vi[lb + k * NSOLVI]
    return i


@ti.func
def span_dot(ja: ti.template(), o, sh, whole, ya: ti.template(), yb, ys: ti.template(), vi: ti.template(), lb, n,
             p):
    """sum_k ja[o[s] + i_k] * ya[yb + i_k * ys] over the positions k of span s ([p[0], p[1]) and [p[2], p[3])
    of n), i_k the dof at position k (`span_dof`), summed left to right in one register (the parity
    contract leaves the order free; a lane chosen by k % 4, as mju_dot's, would keep the sums in a local
    array indexed at run time, that is in memory)."""
    acc = 0.0
    for s in range(two(n)):
        first, end, jb, sf = span_at(p, o, sh, s)
        for k in range(first, end):
            i = span_dof(vi, lb, k, sf, whole)
            acc = acc + ja[jb + i] * ya[yb + i * ys]
    return acc


@ti.func
def jcol(sp, i):
    """Where dof i (in the span) of a row with span `sp` (layout.EFC_SPAN) is stored, from the row's start."""
    col = i
    if sp[1] > sp[0]:
        col = i - sp[0]
        if i >= sp[1]:
            col = sp[1] - sp[0] + i - sp[2]
    return col


@ti.func
def row_span(d: ti.template(), b, r, n, listed: ti.template()):
    """Row r's spans (layout.EFC_SPAN) as positions in the island's list of n dofs (`listed`) or in the dofs
    (a whole row is [0, n)); per span where its entries are stored (dof i of span s is the flat
    efc_J.arr[o[s] + i]) and its shift sh[s], the dof at position k being k + sh[s]: a span is a run of
    consecutive dofs of one tree, and the island holds whole trees, so it is a run of the island's list too.
    `whole`: the row is stored whole and listed, its dofs are the list's (`span_dof`)."""
    ia = ti.static(d.efc_i.arr)
    ir = base(d.efc_i, b, 0) + r * ti.static(d.efc_i.strides[1])  # the row's ints, env stride loaded once
    lo1 = ia[ir + EFC_SPAN]
    hi1 = ia[ir + EFC_SPAN + 1]
    lo2 = ia[ir + EFC_SPAN + 2]
    hi2 = ia[ir + EFC_SPAN + 3]
    res = ti.Vector([0, n, 0, 0])
    adr = base(d.efc_J, b, 0) + ia[ir + EFC_JADR]
    o = ti.Vector([adr, adr])
    sh = ti.Vector([0, 0])
    whole = False
    if hi1 > lo1:
        o = ti.Vector([adr - lo1, adr + hi1 - lo1 - lo2])
        if ti.static(listed):
            pb = base(d.solver_vi, b, SVI_POS)
            res[0] = d.solver_vi.arr[pb + lo1 * NSOLVI]
            res[1] = res[0] + hi1 - lo1
            sh[0] = lo1 - res[0]
            if hi2 > lo2:
                res[2] = d.solver_vi.arr[pb + lo2 * NSOLVI]
                res[3] = res[2] + hi2 - lo2
                sh[1] = lo2 - res[2]
        else:
            res = ti.Vector([lo1, hi1, lo2, hi2])
    elif ti.static(listed):
        whole = True
    return res, o, sh, whole


@ti.func
def row_group(d: ti.template(), b, c, nrow):
    """The run of up to GROUP listed rows from the c-th that share its spans (a contact's rows do): returns
    (g, rows, off), rows[q] the q-th row (q < g; the first for q >= g) and off[q] how far its stored entries
    lie from the first's. A loop over a run visits each entry once for all its rows, holding the sum in a
    register in the rows' order: the same additions as a loop per row, one store instead of g."""
    ia = ti.static(d.efc_i.arr)
    js = ti.static(d.efc_i.strides[1])
    la = ti.static(d.solver_efc_i.arr)
    ls = ti.static(d.solver_efc_i.strides[1])
    ib = base(d.efc_i, b, 0)
    lb = base(d.solver_efc_i, b, SEI_LIST)
    r = la[lb + c * ls]
    ir = ib + r * js
    rows = ti.Vector([r] * GROUP)
    off = ti.Vector([0] * GROUP)
    g = 1
    grouping = True
    while grouping and g < GROUP and c + g < nrow:
        r2 = la[lb + (c + g) * ls]
        ir2 = ib + r2 * js
        for q in ti.static(range(4)):  # lo1, hi1, lo2, hi2
            if ia[ir2 + EFC_SPAN + q] != ia[ir + EFC_SPAN + q]:
                grouping = False
        if grouping:
            rows[g] = r2
            off[g] = ia[ir2 + EFC_JADR] - ia[ir + EFC_JADR]
            g += 1
    return g, rows, off


@ti.func
def row_vector(d: ti.template(), b, r, n, col, scale):
    """solver_v[:, col] = scale * efc_J row r over the island's n dofs (zero outside the row's spans)."""
    for k in range(n):
        d.solver_v[b, dof(d, b, k), col] = 0.0
    p, o, sh, whole = row_span(d, b, r, n, True)
    for s in range(two(n)):
        first, end, js, sf = span_at(p, o, sh, s)
        for k in range(first, end):
            i = span_dof(d.solver_vi.arr, list_base(d, b), k, sf, whole)
            d.solver_v[b, i, col] = d.efc_J.arr[js + i] * scale


@ti.func
def jdot(d: ti.template(), b, r, n, y: ti.template(), cy):
    """Row r of efc_J times the vector in column cy of y, over the island's n dofs (mju_dot's order)."""
    p, o, sh, whole = row_span(d, b, r, n, True)
    return span_dot(d.efc_J.arr, o, sh, whole, y.arr, base(y, b, cy), ti.static(y.strides[1]), d.solver_vi.arr,
                    list_base(d, b), n, p)


@ti.func
def group_dot(d: ti.template(), b, r, off, n, y: ti.template(), cy):
    """The rows of a run (`row_group`: first row r, offsets off) times the vector in column cy of y over the
    island's n dofs: GROUP dots (a row past the run repeats the first), each summed as `span_dot` sums it
    (a register per row); each entry of y is loaded once for the run."""
    vi = ti.static(d.solver_vi.arr)
    ja = ti.static(d.efc_J.arr)
    ya = ti.static(y.arr)
    ys = ti.static(y.strides[1])
    yb = base(y, b, cy)
    lb = list_base(d, b)
    p, o, sh, whole = row_span(d, b, r, n, True)
    acc = ti.Vector.zero(float, GROUP)  # one running sum per row, in registers
    for s in range(two(n)):
        first, end, jb, sf = span_at(p, o, sh, s)
        for k in range(first, end):
            i = span_dof(vi, lb, k, sf, whole)
            yv = ya[yb + i * ys]
            for q in ti.static(range(GROUP)):
                acc[q] = acc[q] + ja[jb + off[q] + i] * yv
    return acc


@ti.func
def mul_m(m: ti.template(), d: ti.template(), b, n, x: ti.template(), cx, res: ti.template(), cres):
    """res[:, cres] = M x[:, cx] on the island's n dofs, from qM's legacy sparse rows (the diagonal, then the
    row's ancestors nearest first). Row i of M is its own stored row and, below the diagonal, its
    descendants' entries in its column (`ancestor_entry`): each sum is held in a register and stored once
    (an add into res per entry, as mju_mulSymVecSparse does, would make the compiled code reload every
    array's address after each store).
    An island holds whole kinematic trees, so every entry stays inside it."""
    vi = ti.static(d.solver_vi.arr)
    xa = ti.static(x.arr)
    ra = ti.static(res.arr)
    ma = ti.static(d.M.arr)
    xs = ti.static(x.strides[1])
    rs = ti.static(res.strides[1])
    ms = ti.static(d.M.strides[1])
    lb = list_base(d, b)
    xb = base(x, b, cx)
    rb = base(res, b, cres)
    mb = base(d.M, b, m.opt_i[OPT_SOLVER_M])  # qM, or qH (approximate_implicitfast)
    for k in range(n):
        i = vi[lb + k * NSOLVI]
        adr = m.dof_i[i, DOF_MADR]
        nnz = m.dof_i[i, DOF_MROWNNZ]
        ri = ma[mb + adr * ms] * xa[xb + i * xs]
        for p in range(1, nnz):
            ri += ma[mb + (adr + p) * ms] * xa[xb + m.m_i[adr + p, M_COLIND] * xs]
        for c in range(i + 1, m.dof_i[i, DOF_SUBTREEEND]):
            ri += ma[mb + ancestor_entry(m, c, nnz) * ms] * xa[xb + c * xs]
        ra[rb + i * rs] = ri


@ti.func
def solve_ld(m: ti.template(), d: ti.template(), b, n, x: ti.template(), cx):
    """x[:, cx] = M^-1 x[:, cx] on the island's n dofs, from the L'DL factor of the forward pass (column QLD
    of d.M, 1/D in d.dof[:, QLDIAGINV]); every row of the factor is used (no simple-dof shortcut)."""
    vi = ti.static(d.solver_vi.arr)
    xa = ti.static(x.arr)
    ma = ti.static(d.M.arr)
    xs = ti.static(x.strides[1])
    ms = ti.static(d.M.strides[1])
    lb = list_base(d, b)
    xb = base(x, b, cx)
    mb = base(d.M, b, QLD)
    for kk in range(n):  # L'^-1: x_j less its descendants' L[c, j] x_c (final by then), one store per dof
        j = vi[lb + (n - 1 - kk) * NSOLVI]
        nj = m.dof_i[j, DOF_MROWNNZ]
        xj = xa[xb + j * xs]
        for c in range(j + 1, m.dof_i[j, DOF_SUBTREEEND]):
            xj -= ma[mb + ancestor_entry(m, c, nj) * ms] * xa[xb + c * xs]
        xa[xb + j * xs] = xj
    for k in range(n):
        i = vi[lb + k * NSOLVI]
        xa[xb + i * xs] = xa[xb + i * xs] * d.dof[b, i, QLDIAGINV]
    for k in range(n):
        i = vi[lb + k * NSOLVI]
        adr = m.dof_i[i, DOF_MADR]
        xi = xa[xb + i * xs]
        for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
            xi -= ma[mb + (adr + p) * ms] * xa[xb + m.m_i[adr + p, M_COLIND] * xs]
        xa[xb + i * xs] = xi


@ti.func
def mul_jt(d: ti.template(), b, nvi, nrow, res: ti.template(), cres):
    """res[:, cres] = J' efc_force over the island's rows and dofs (mju_mulMatTVec: each row adds only its
    spans). A run of rows with the same spans (`row_group`, a contact's rows) is added in one pass: each entry
    gets the rows' products in their order (a row with no force adds zeros: the same sums). The sums are
    held by list position in a local array, stored into res once at the end, for islands of up to JT_LOCAL
    dofs: a store to an array argument inside the loop would make the compiled code reload every array's
    address after it (27 settled boxes, 162 dofs: J' force about 15 % faster); larger islands add into res."""
    vi = ti.static(d.solver_vi.arr)
    ja = ti.static(d.efc_J.arr)
    ra = ti.static(res.arr)
    rs = ti.static(res.strides[1])
    lb = list_base(d, b)
    rb = base(res, b, cres)
    fb = base(d.efc, b, EFC_FORCE)
    local = nvi <= JT_LOCAL
    acc = ti.Vector.zero(float, JT_LOCAL)  # the sums by list position (a local array: indexed at run time)
    if not local:
        for k in range(nvi):
            ra[rb + vi[lb + k * NSOLVI] * rs] = 0.0
    c = 0
    while c < nrow:
        g, rows, off = row_group(d, b, c, nrow)
        f = ti.Vector([0.0] * GROUP)  # 0 for a row past the run: it adds zeros
        for q in ti.static(range(GROUP)):
            if q < g:
                f[q] = d.efc.arr[fb + rows[q] * ti.static(d.efc.strides[1])]
        if (f != 0.0).any():
            p, o, sh, whole = row_span(d, b, rows[0], nvi, True)
            for s in range(two(nvi)):
                first, end, js, sf = span_at(p, o, sh, s)
                for k in range(first, end):
                    i = span_dof(vi, lb, k, sf, whole)
                    ri = rb + i * rs
                    h = 0.0
                    if local:
                        h = acc[k]
                    else:
                        h = ra[ri]
                    for q in ti.static(range(GROUP)):
                        h = h + ja[js + off[q] + i] * f[q]
                    if local:
                        acc[k] = h
                    else:
                        ra[ri] = h
        c += g
    if local:
        for k in range(nvi):
            ra[rb + vi[lb + k * NSOLVI] * rs] = acc[k]


# ----------------------------------------------------------------------------- dense Cholesky on the Hessian


@ti.func
def chol_factor(d: ti.template(), h: ti.template(), b, n, mindiag):
    """In place L L' of the symmetric matrix in the lower triangle of h[b, :n, :n] (mju_cholFactor's
    result): a pivot below mindiag is replaced by it and its column cleared. Returns the rank (n less such
    pivots).

    The factor keeps the profile of the matrix: a row's leading zeros (before its first nonzero) stay exact
    zeros in L, so the entries of L left of a row's first nonzero are never computed and its dot products
    start there. A pile of free bodies, whose Hessian couples each body with its few neighbours, needs a
    fraction of the dense work. The first nonzero of each row is kept in solver_vi[:, SVI_FIRST] by
    position, for the updates and solves that follow (`chol_update` keeps it a lower bound when an update
    fills a row in, and clears the entries it fills in). It comes in as `newton.make_hessian`'s bound from
    structure, the row cleared from there only, and the scan for the row's first nonzero starts there.
    solver_vi[:, SVI_REACH] keeps, per column, the last row whose profile reaches it (a bound on it), for
    `chol_update`'s column loops (islands of REACH_N dofs or more).

    Rows are factored by supernodes: a run of up to SUPER consecutive rows with the same first nonzero (a
    free body's six dofs, or a chain's rows in a dense block) is computed column by column together, row by
    row up to the diagonal (left-looking): each entry of the column's row of L is loaded once for the run's
    SUPER dot products, each summed left to right in a register, and the loop bounds are the run's, not
    each entry's. 1 / L[j, j] of each position (0 for a replaced pivot, which clears the column below it)
    is kept in solver_v[:, SV_UPD] by position, the rank-one update's scratch, free while factoring."""
    ha = ti.static(h.arr)
    va = ti.static(d.solver_vi.arr)
    vs = ti.static(NSOLVI)
    xa = ti.static(d.solver_v.arr)
    xs = ti.static(d.solver_v.strides[1])
    hs = h.strides[1]
    hb = base(h, b, 0)
    fb = base(d.solver_vi, b, SVI_FIRST)
    rb = base(d.solver_vi, b, SVI_REACH)
    ib = base(d.solver_v, b, SV_UPD)
    bounded = n >= REACH_N
    if bounded:
        for i in range(n):
            va[rb + i * vs] = i
    for i in range(n):
        hi = hb + i * hs
        f = va[fb + i * vs]  # `newton.make_hessian`'s bound: the row is cleared from there, not before
        while f < i and ha[hi + f] == 0.0:
            f += 1
        va[fb + i * vs] = f
        if bounded:
            va[rb + f * vs] = ti.max(va[rb + f * vs], i)
    if bounded:
        for j in range(1, n):  # the last row reaching column j: the last whose first nonzero is at j or before
            va[rb + j * vs] = ti.max(va[rb + j * vs], va[rb + (j - 1) * vs])
    rank = n
    s0 = 0
    while s0 < n:
        _lo, s1, f, hr = super_run(va, fb, s0, n, 1, hb, hs)  # the run's rows (past its end: computed, not stored)
        for j in range(f, s1):
            hj = hb + j * hs
            acc = ti.Vector([0.0] * SUPER)
            for k in range(ti.max(f, va[fb + j * vs]), j):
                ljk = ha[hj + k]
                for q in ti.static(range(SUPER)):
                    acc[q] = acc[q] + ha[hr[q] + k] * ljk
            inv = 0.0
            qj = j - s0  # the run's rows after qj get column j (all of them left of the run: qj < 0)
            if qj < 0:
                inv = xa[ib + j * xs]
            else:
                piv = acc[0]
                for q in ti.static(range(1, SUPER)):
                    if q == qj:
                        piv = acc[q]
                tmp = ha[hj + j] - piv
                if tmp < mindiag:
                    tmp = mindiag
                    rank -= 1
                else:
                    inv = 1.0
                ljj = ti.sqrt(tmp)
                ha[hj + j] = ljj
                inv = inv / ljj
                xa[ib + j * xs] = inv
            for q in ti.static(range(SUPER)):
                if q > qj and s0 + q < s1:
                    ha[hr[q] + j] = (ha[hr[q] + j] - acc[q]) * inv
        s0 = s1
    return rank


@ti.func
def super_run(va: ti.template(), fb, s0, n, step, hb, hs):
    """The run of rows from s0 (forward, step 1) or back from it (step -1) with the same first nonzero
    (solver_vi[:, SVI_FIRST] from fb), at most SUPER (`chol_factor`'s supernodes): returns its first row, one
    past its last, that first nonzero, and the flat offsets hb + row * hs of its SUPER rows (past its end:
    its last row again, read but never written)."""
    f = va[fb + s0 * NSOLVI]
    e = s0 + step
    while e >= 0 and e < n and (e - s0) * step < SUPER and va[fb + e * NSOLVI] == f:
        e += step
    lo = ti.min(s0, e + 1)
    hi = ti.max(s0 + 1, e)
    hr = ti.Vector([0] * SUPER)
    for q in ti.static(range(SUPER)):
        hr[q] = hb + ti.min(lo + q, hi - 1) * hs
    return lo, hi, f, hr


@ti.func
def chol_solve(d: ti.template(), h: ti.template(), b, n, src, dst):
    """solver_v[:, dst] = (L L')^-1 solver_v[:, src] with the factor in h (rows in the factor's order,
    `ordering`): forward then backward substitution, dividing by the diagonal (mju_cholSolve's result). The
    vector is gathered into solver_v[:, SV_UPD] by row (the dof SVI_HLIST of row k at row k; that column is
    the rank-one update's scratch, free by now), solved there and scattered back to its dofs: the
    substitutions then read no list. Both skip the factor's known zeros (its profile, solver_vi[:,
    SVI_FIRST]) and go by runs of up to SUPER rows with the same first nonzero (`chol_factor`'s supernodes):
    forward, the run's dot products left of its diagonal block in one pass (each solved entry loaded once,
    one register per row), then the block; backward, the block, then each entry left of it less the run's
    rows' products at once (loaded and stored once for the run). Both multiply by 1 / L[k, k], computed first
    into solver_v[:, SV_LTJ] by row (the cone Hessian's scratch, free by now): n divisions that do not wait
    for each other, where dividing in the substitutions would put one in each step of their chain."""
    vi = ti.static(d.solver_vi.arr)
    va = ti.static(d.solver_v.arr)
    vs = ti.static(d.solver_v.strides[1])
    ha = ti.static(h.arr)
    hs = h.strides[1]
    hb = base(h, b, 0)
    lb = base(d.solver_vi, b, SVI_HLIST)
    fb = base(d.solver_vi, b, SVI_FIRST)
    xb = base(d.solver_v, b, SV_UPD)
    sb = base(d.solver_v, b, src)
    ib = base(d.solver_v, b, SV_LTJ)
    for k in range(n):
        va[xb + k * vs] = va[sb + vi[lb + k * NSOLVI] * vs]
        va[ib + k * vs] = 1.0 / ha[hb + k * hs + k]
    s0 = 0
    while s0 < n:
        lo, hi, f, hr = super_run(vi, fb, s0, n, 1, hb, hs)
        acc = ti.Vector([0.0] * SUPER)
        for k in range(f, lo):
            xk = va[xb + k * vs]
            for q in ti.static(range(SUPER)):
                acc[q] = acc[q] + ha[hr[q] + k] * xk
        x = ti.Vector([0.0] * SUPER)
        for q in ti.static(range(SUPER)):
            if lo + q < hi:
                t = acc[q]
                for p in ti.static(range(q)):
                    t = t + ha[hr[q] + lo + p] * x[p]
                x[q] = (va[xb + (lo + q) * vs] - t) * va[ib + (lo + q) * vs]
                va[xb + (lo + q) * vs] = x[q]
        s0 = hi
    e = n - 1
    while e >= 0:
        lo, hi, f, hr = super_run(vi, fb, e, n, -1, hb, hs)
        x = ti.Vector([0.0] * SUPER)  # 0 past the run's end: its rows add nothing
        for qq in ti.static(range(SUPER)):
            q = ti.static(SUPER - 1 - qq)
            if lo + q < hi:
                t = va[xb + (lo + q) * vs]
                for p in ti.static(range(q + 1, SUPER)):
                    if lo + p < hi:
                        t = t - ha[hr[p] + lo + q] * x[p]
                x[q] = t * va[ib + (lo + q) * vs]
                va[xb + (lo + q) * vs] = x[q]
        for k in range(f, lo):
            t = 0.0
            for q in ti.static(range(SUPER)):
                t = t + ha[hr[q] + k] * x[q]
            va[xb + k * vs] = va[xb + k * vs] - t
        e = lo - 1
    vb = base(d.solver_v, b, dst)
    for k in range(n):
        va[vb + vi[lb + k * NSOLVI] * vs] = va[xb + k * vs]


@ti.func
def chol_update(d: ti.template(), h: ti.template(), b, n, xcol, plus):
    """In place rank-one update (plus != 0) or downdate of the factor in h: L L' +- x x' with x in
    solver_v[:, xcol] (by dof; row k of the factor is dof SVI_HLIST of row k), which is overwritten
    (mju_cholUpdate). Returns the rank: n less the pivots that fell below mjMINVAL and were replaced by it.
    Column k's pass stops past both the rows that reach it (SVI_REACH's running maximum) and the last row
    where x may be nonzero: every row after them has a leading zero there and x_i = 0, which the pass skips.
    A filled-in row raises its new first column's SVI_REACH, so that the bound holds for later passes."""
    vi = ti.static(d.solver_vi.arr)
    va = ti.static(d.solver_v.arr)
    vs = ti.static(d.solver_v.strides[1])
    ha = ti.static(h.arr)
    hs = h.strides[1]
    hb = base(h, b, 0)
    lb = base(d.solver_vi, b, SVI_HLIST)
    fb = base(d.solver_vi, b, SVI_FIRST)
    rb = base(d.solver_vi, b, SVI_REACH)
    xb = base(d.solver_v, b, xcol)
    sgn = 1.0 if plus != 0 else -1.0
    rank = n
    bounded = n >= REACH_N
    xend = n - 1  # the last row where x is nonzero, then where it may be
    scanning = bounded
    while scanning:
        if xend < 0:
            scanning = False
        elif va[xb + vi[lb + xend * NSOLVI] * vs] != 0.0:
            scanning = False
        else:
            xend -= 1
    reach = 0
    for k in range(n):
        if bounded:
            reach = ti.max(reach, vi[rb + k * NSOLVI])
        xk = va[xb + vi[lb + k * NSOLVI] * vs]
        if xk != 0.0:
            hkk = hb + k * hs + k
            lkk = ha[hkk]
            tmp = lkk * lkk + sgn * (xk * xk)
            if tmp < MINVAL:
                tmp = MINVAL
                rank -= 1
            r = ti.sqrt(tmp)
            c = r / lkk
            cinv = 1.0 / c
            s = xk / lkk
            ha[hkk] = r
            ssg = sgn * s
            xend = ti.max(xend, reach)
            for i in range(k + 1, xend + 1):
                xi = xb + vi[lb + i * NSOLVI] * vs
                fi = fb + i * NSOLVI
                # L[i, k] a leading zero of row i and x_i = 0: both stay exact zeros, nothing to do; with
                # x_i != 0 the update fills L[i, k] in, and the row's profile starts at k from now on
                if vi[fi] <= k or va[xi] != 0.0:
                    if vi[fi] > k:
                        for kk in range(k, vi[fi]):  # the filled-in entries: zeros (not cleared before)
                            ha[hb + i * hs + kk] = 0.0
                        vi[fi] = k
                        if bounded:
                            vi[rb + k * NSOLVI] = ti.max(vi[rb + k * NSOLVI], i)
                    hik = hb + i * hs + k
                    lik = (ha[hik] + ssg * va[xi]) * cinv
                    ha[hik] = lik
                    va[xi] = c * va[xi] - s * lik
    return rank


# ----------------------------------------------------------------------------- small dense matrices (local)


@ti.func
def small_dot(a, i, x, n):
    """Row i of the local matrix a times the local vector x, first n entries, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + a[i, k] * x[k]
        r1 = r1 + a[i, k + 1] * x[k + 1]
        r2 = r2 + a[i, k + 2] * x[k + 2]
        r3 = r3 + a[i, k + 3] * x[k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (a[i, k] * x[k] + a[i, k + 1] * x[k + 1] + a[i, k + 2] * x[k + 2])
    elif rem == 2:
        res = res + (a[i, k] * x[k] + a[i, k + 1] * x[k + 1])
    elif rem == 1:
        res = res + a[i, k] * x[k]
    return res


@ti.func
def small_rowdot(a, i, j, n):
    """Rows i and j of the local matrix a, first n columns, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + a[i, k] * a[j, k]
        r1 = r1 + a[i, k + 1] * a[j, k + 1]
        r2 = r2 + a[i, k + 2] * a[j, k + 2]
        r3 = r3 + a[i, k + 3] * a[j, k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (a[i, k] * a[j, k] + a[i, k + 1] * a[j, k + 1] + a[i, k + 2] * a[j, k + 2])
    elif rem == 2:
        res = res + (a[i, k] * a[j, k] + a[i, k + 1] * a[j, k + 1])
    elif rem == 1:
        res = res + a[i, k] * a[j, k]
    return res


@ti.func
def small_chol(a, n, mindiag):
    """L L' of the local symmetric n x n matrix a (lower triangle), as `chol_factor`; returns (L, rank)."""
    h = a
    rank = n
    for j in range(n):
        tmp = h[j, j]
        if j > 0:
            tmp -= small_rowdot(h, j, j, j)
        deficient = tmp < mindiag
        if deficient:
            tmp = mindiag
            rank -= 1
        h[j, j] = ti.sqrt(tmp)
        if deficient:
            for i in range(j + 1, n):
                h[i, j] = 0.0
        else:
            inv = 1.0 / h[j, j]
            for i in range(j + 1, n):
                h[i, j] = (h[i, j] - small_rowdot(h, i, j, j)) * inv
    return h, rank


@ti.func
def small_chol_solve(a, v, n):
    """(L L')^-1 v for the local factor a of `small_chol` (mju_cholSolve)."""
    res = v
    for i in range(n):
        ri = res[i]
        if i > 0:
            ri -= small_dot(a, i, res, i)
        res[i] = ri / a[i, i]
    for ii in range(n):
        i = n - 1 - ii
        ri = res[i]
        for j in range(i + 1, n):
            ri -= a[j, i] * res[j]
        res[i] = ri / a[i, i]
    return res


@ti.func
def vec_dot(x, y, n):
    """sum of x[k] * y[k] for k < n over local vectors, in mju_dot's order."""
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    r3 = 0.0
    k = 0
    while k + 4 <= n:
        r0 = r0 + x[k] * y[k]
        r1 = r1 + x[k + 1] * y[k + 1]
        r2 = r2 + x[k + 2] * y[k + 2]
        r3 = r3 + x[k + 3] * y[k + 3]
        k += 4
    res = (r0 + r2) + (r1 + r3)
    rem = n - k
    if rem == 3:
        res = res + (x[k] * y[k] + x[k + 1] * y[k + 1] + x[k + 2] * y[k + 2])
    elif rem == 2:
        res = res + (x[k] * y[k] + x[k + 1] * y[k + 1])
    elif rem == 1:
        res = res + x[k] * y[k]
    return res
