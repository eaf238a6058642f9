"""The primal solver's iterations on one island (MuJoCo 4's mj_solPrimal, Newton and CG).

It minimizes over qacc the cost (Ma - qfrc_smooth)'(qacc - qacc_smooth) / 2 + s(J qacc - aref), starting
from the qacc the warmstart chose. Before iterating it tests the zero-iteration certificate: the duality gap
grad'M^-1 grad scale / 2 below the tolerance stops CG at once, and Newton too when also the gradient is small.
Newton then factors its Hessian and stops if its decrement grad'H^-1 grad scale / 2 and the gradient are
small. Each iteration takes the exact line-search step along the direction (-H^-1 grad for Newton; for CG
the Hager-Zhang update of -M^-1 grad), updates the constraints, the gradient and (Newton) the factor, and
stops when the scaled improvement is positive and below the tolerance, the scaled gradient is below it, or
(Newton) the decrement is. scale = 1 / (meaninertia max(1, nv)) for one solve of everything; per island,
1 / (the trace of the island's M).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    DOF_MADR, EFC_AREF, EFC_JAREF, EFC_JV, EFC_STATE, NSOLVI, OPT_ITERATIONS, OPT_MEANINERTIA, OPT_TOLERANCE,
    QACC_SMOOTH, QACC_WARMSTART, QFRC_CONSTRAINT, QFRC_SMOOTH, OPT_SOLVER_M, SEI_LIST, SEI_OLDSTATE, SEI_STATE,
    SV_GRAD, SV_GRADOLD, SV_MA, SV_MGRAD, SV_MGRADOLD, SV_MV, SV_QACC, SV_SEARCH, SVI_ISLAND, SZ_NV,
)
from rigidsim.engine.solver.cg import hz_direction
from rigidsim.engine.solver.linalg import (
    GROUP, base, chol_solve, dof, dof_arrays, dots, group_dot, list_base, mul_m, row, row_group, solve_ld,
)
from rigidsim.engine.solver.linesearch import search
from rigidsim.engine.solver.lowrank import fits, lowrank_factor, lowrank_mv, lowrank_setup, lowrank_solve
from rigidsim.engine.solver.newton import update_factor
from rigidsim.engine.solver.update import primal_update
from rigidsim.engine.solver.variant import CG, ELLIPTIC, NEWTON

# the passes of `primal`'s loop: the starting point, Newton's first factor at it, an iteration
_START, _FACTOR, _ITER = 0, 1, 2
# the warmstart's passes (`warm`): the cost at qacc_warmstart, then at qacc_smooth
_WARM, _SMOOTH = 3, 4
# where the warmstart left J qacc - aref at the qacc it chose (`primal`'s jar_in)
WARM_JAREF, WARM_JV = 1, 2


@ti.func
def primal(m: ti.template(), d: ti.template(), b, nvi, nrow, per_island, newton, warm, jar_in,
           variant: ti.template()):
    """Solve the island whose lists `island.lists` wrote (nvi dofs, nrow rows) from the current qacc, with
    Newton (newton != 0) or CG; writes qacc, efc_force, efc_state and qfrc_constraint of the island.
    Returns (iterations, 1 when a termination test stopped it, 0 when it ran out of iterations).

    One loop: its first pass evaluates the starting point (the certificate), Newton's second factors the
    Hessian there (its decrement), every later pass is an iteration; each stage is compiled once.

    With `warm` (the lists of every dof and row) it is the warmstart instead: qacc = qacc_warmstart when its
    total cost is not above qacc_smooth's, else qacc_smooth; dofs in no island (per_island) take qacc_smooth.
    Its two passes evaluate the costs with the iterations' M and J products and constraint update (one
    compiled copy of each); like MuJoCo's, it leaves every row's force and state at qacc_smooth, and the
    states also in SEI_STATE. Returns (0, WARM_JV) when it chose qacc_warmstart, (0, WARM_JAREF) when
    qacc_smooth: what a solve that follows may pass as `jar_in`.

    `jar_in` (a solve of every dof after the warmstart): 0, compute J qacc - aref and M qacc at the start;
    WARM_JAREF, the rows' EFC_JAREF holds it already (the warmstart's pass at qacc_smooth); WARM_JV, their
    EFC_JV holds it and solver_v's SV_MA holds M qacc (its pass at qacc_warmstart). The same products of the
    same numbers: the start is computed once, not twice."""
    # per-dof vectors at flat offsets (`linalg.base`): the env strides loaded once, not at every access
    va, vs, da, ds = ti.static(*dof_arrays(d))
    vb = base(d.solver_v, b, 0)
    db = base(d.dof, b, 0)
    lb = list_base(d, b)
    tol = m.opt_f[OPT_TOLERANCE]
    maxiter = m.opt_i[OPT_ITERATIONS]
    for k in range(nvi):
        i = d.solver_vi.arr[lb + k * NSOLVI]
        va[vb + i * vs + SV_QACC] = ti.select(warm, da[db + i * ds + QACC_WARMSTART], d.qacc[b, i])
    scale = 0.0
    if per_island:
        inertia = 0.0
        for k in range(nvi):
            inertia += d.M[b, m.dof_i[dof(d, b, k), DOF_MADR], m.opt_i[OPT_SOLVER_M]]
        scale = 1.0 / inertia
    else:
        scale = 1.0 / (m.opt_f[OPT_MEANINERTIA] * ti.max(1, m.opt_i[SZ_NV]))
    it = 0
    converged = 0
    phase = _WARM if warm else _START
    cost_warm = 0.0
    cost_smooth = 0.0
    done = False
    small_grad = False
    ls_improvement = 0.0
    # Newton's direction through M's factor and a matrix of the rows (`lowrank`) on an island with few rows
    low_rank = False
    if ti.static(variant & NEWTON):
        low_rank = newton != 0 and not warm and fits(m, nvi, nrow)
    while not done:
        if phase != _FACTOR:
            # M and J times qacc (the start: Ma and jar = J qacc - aref) or times the search direction (an
            # iteration: Mv and Jv for the line search): one compiled copy of each product
            start = phase != _ITER  # at a point (the warmstart's two, the start), not along the direction
            src = SV_QACC if start else SV_SEARCH
            # the warmstart's products are this start's, bit for bit, when the island is every dof (a row's
            # entries then sit at the same positions, so in the same lanes of mju_dot's sum)
            given = phase == _START and jar_in != 0 and nvi == m.opt_i[SZ_NV]
            # (the warmstart's cost at qacc_smooth needs no Ma; a start at qacc_warmstart has it)
            if phase != _SMOOTH and not (given and jar_in == WARM_JV):
                if low_rank and not start:
                    lowrank_mv(d, b, nvi, nrow)  # M times the direction from the rows: no product with M
                else:
                    mul_m(m, d, b, nvi, d.solver_v, src, d.solver_v, SV_MA if start else SV_MV)
            dst = EFC_JAREF if start else EFC_JV
            if given:
                if jar_in == WARM_JV:
                    for c in range(nrow):
                        r = row(d, b, c)
                        d.efc[b, r, EFC_JAREF] = d.efc[b, r, EFC_JV]
            else:
                fa = ti.static(d.efc.arr)
                fs = ti.static(d.efc.strides[1])
                fb = base(d.efc, b, 0)
                c = 0
                while c < nrow:  # a run of rows with the same spans at once (`linalg.group_dot`)
                    g, rows, off = row_group(d, b, c, nrow)
                    prod = group_dot(d, b, rows[0], off, nvi, d.solver_v, src)
                    for q in ti.static(range(GROUP)):
                        if q < g:
                            fr = fb + rows[q] * fs
                            aref = ti.select(start, fa[fr + EFC_AREF], 0.0)  # v - 0.0 == v: Jv unchanged
                            fa[fr + dst] = prod[q] - aref
                            if phase == _WARM:  # kept for the start of a solve that keeps qacc_warmstart
                                fa[fr + EFC_JV] = prod[q] - aref
                    c += g
        if phase == _ITER:
            alpha, ls_improvement = search(m, d, b, nvi, nrow, scale, variant)
            if alpha == 0.0:
                converged = 1  # no improvement along the direction: nothing left to gain
                done = True
            else:
                for k in range(nvi):
                    i = d.solver_vi.arr[lb + k * NSOLVI]
                    va[vb + i * vs + SV_QACC] = va[vb + i * vs + SV_QACC] + va[vb + i * vs + SV_SEARCH] * alpha
                    va[vb + i * vs + SV_MA] = va[vb + i * vs + SV_MA] + va[vb + i * vs + SV_MV] * alpha
                    if newton == 0:
                        va[vb + i * vs + SV_GRADOLD] = va[vb + i * vs + SV_GRAD]
                        va[vb + i * vs + SV_MGRADOLD] = va[vb + i * vs + SV_MGRAD]
                fa = ti.static(d.efc.arr)
                fb = base(d.efc, b, 0)
                ob = base(d.solver_efc_i, b, SEI_OLDSTATE)
                sb = base(d.efc_i, b, EFC_STATE)
                eb = base(d.solver_efc_i, b, SEI_LIST)
                for c in range(nrow):
                    r = d.solver_efc_i.arr[eb + c * ti.static(d.solver_efc_i.strides[1])]
                    fr = fb + r * ti.static(d.efc.strides[1])
                    fa[fr + EFC_JAREF] = fa[fr + EFC_JAREF] + fa[fr + EFC_JV] * alpha
                    d.solver_efc_i.arr[ob + r * ti.static(d.solver_efc_i.strides[1])] = d.efc_i.arr[
                        sb + r * ti.static(d.efc_i.strides[1])]
        if not done and phase != _FACTOR:
            cost, _ncone = primal_update(d, b, nvi, nrow, phase < _WARM, variant)
            if phase == _WARM:
                # the total cost at qacc_warmstart (MuJoCo's order: the Gauss terms added to the constraints')
                cost_warm = cost
                for k in range(nvi):
                    i = d.solver_vi.arr[lb + k * NSOLVI]
                    cost_warm += 0.5 * (va[vb + i * vs + SV_MA] - da[db + i * ds + QFRC_SMOOTH]) * (
                        va[vb + i * vs + SV_QACC] - da[db + i * ds + QACC_SMOOTH])
                    va[vb + i * vs + SV_QACC] = da[db + i * ds + QACC_SMOOTH]
            elif phase == _SMOOTH:
                cost_smooth = cost
                for c in range(nrow):
                    r = row(d, b, c)
                    d.solver_efc_i[b, r, SEI_STATE] = d.efc_i[b, r, EFC_STATE]
                done = True
        if not done and phase < _WARM and phase != _FACTOR:
            for k in range(nvi):
                i = d.solver_vi.arr[lb + k * NSOLVI]
                va[vb + i * vs + SV_GRAD] = (va[vb + i * vs + SV_MA] - da[db + i * ds + QFRC_SMOOTH]) - da[
                    db + i * ds + QFRC_CONSTRAINT]
            # M^-1 grad: CG's preconditioned gradient, and at the start the duality-gap certificate
            if phase == _START or newton == 0:
                for k in range(nvi):
                    i = d.solver_vi.arr[lb + k * NSOLVI]
                    va[vb + i * vs + SV_MGRAD] = va[vb + i * vs + SV_GRAD]
                solve_ld(m, d, b, nvi, d.solver_v, SV_MGRAD)
        if ti.static(variant & NEWTON):
            if newton != 0 and not done and (phase == _FACTOR or phase == _ITER):
                if low_rank:
                    if phase == _FACTOR:
                        lowrank_setup(m, d, b, nvi, nrow)
                    lowrank_factor(d, b, nrow, phase == _FACTOR)
                    lowrank_solve(d, b, nvi, nrow)
                else:
                    update_factor(m, d, b, nvi, nrow, phase == _FACTOR, variant)
                    if ti.static(variant & ELLIPTIC):
                        # solver_Hcone: the factor with the active cones (a copy of solver_H when none are)
                        chol_solve(d, d.solver_Hcone, b, nvi, SV_GRAD, SV_MGRAD)
                    else:
                        chol_solve(d, d.solver_H, b, nvi, SV_GRAD, SV_MGRAD)
        if not done and phase < _WARM:
            # grad'M^-1 grad (at the start) or Newton's grad'H^-1 grad, and |grad|^2, in one pass
            sums = dots(d, b, nvi, ((d.solver_v, SV_GRAD, d.solver_v, SV_MGRAD),
                                    (d.solver_v, SV_GRAD, d.solver_v, SV_GRAD)))
            half_mgrad = ti.max(0.0, 0.5 * scale * sums[0])
            gradient = scale * ti.sqrt(sums[1])
            if phase == _START:
                # grad'M^-1 grad scale / 2 bounds the cost's distance to the optimum; Newton also wants the
                # gradient small (its solutions are judged by their forces)
                small_grad = gradient < tol
                done = half_mgrad < tol and (newton == 0 or small_grad)
            elif phase == _FACTOR:
                # the Newton decrement already below the tolerance: no step needed
                done = small_grad and half_mgrad < tol
            else:
                it += 1
                improvement = scale * ls_improvement
                done = (improvement > 0.0 and improvement < tol) or gradient < tol or (
                    newton != 0 and half_mgrad < tol)
            converged = 1 if done else 0
        if not done and phase < _WARM and not (phase == _START and newton != 0):
            if newton != 0 or phase == _START:
                for k in range(nvi):
                    i = d.solver_vi.arr[lb + k * NSOLVI]
                    va[vb + i * vs + SV_SEARCH] = -va[vb + i * vs + SV_MGRAD]
            elif ti.static(variant & CG):
                hz_direction(d, b, nvi)
            if it >= maxiter:
                done = True
        if phase == _WARM:
            phase = _SMOOTH
        else:
            phase = _FACTOR if phase == _START and newton != 0 else _ITER
    if warm:
        smooth = cost_warm > cost_smooth
        converged = WARM_JAREF if smooth else WARM_JV
        for k in range(nvi):
            i = d.solver_vi.arr[lb + k * NSOLVI]
            if smooth or (per_island and d.solver_vi[b, i, SVI_ISLAND] < 0):
                d.qacc[b, i] = da[db + i * ds + QACC_SMOOTH]
            else:
                d.qacc[b, i] = da[db + i * ds + QACC_WARMSTART]
    else:
        for k in range(nvi):
            i = d.solver_vi.arr[lb + k * NSOLVI]
            d.qacc[b, i] = va[vb + i * vs + SV_QACC]
    return it, converged
