"""The constraint stage of one env: MuJoCo 4's mj_fwdConstraint for the primal solvers.

`solve` clears qfrc_constraint (with no rows: qacc = qacc_smooth), finds the constraint islands, warmstarts
and runs Newton or CG (opt.solver) on each island, or once on everything when islands are disabled;
`fwd_constraint` adds the noslip pass when opt.noslip_iterations > 0. The warmstart starts from whichever of
qacc_warmstart and qacc_smooth has the lower total cost (unless warmstart is disabled: qacc_smooth); dofs
in no island keep qacc_smooth.

Outcome: efc_n[b, EFCN_NITER] the iterations summed over the islands (and noslip's), solver_vi[b, k,
SVI_NITER] island k's own (MuJoCo's solver_niter[k]), solver_n[b, SN_NISLAND] the island count, and
efc_n[b, EFCN_CONVERGED] 1 when every island stopped on a termination test (or there were no rows). PGS
is not built: like options the kernel's variant left out (`solver.variant`), it is refused with qacc =
qacc_smooth, no force and EFCN_CONVERGED = 0.

efc_state after a solve by islands is what MuJoCo 4 reports: its island solver works on copies of the rows
and copies back only their forces, so efc_state keeps the warmstart's last classification (at
qacc_smooth); the state the solver ended with is in solver_efc_i[b, r, SEI_STATE]. (With warmstart
disabled MuJoCo leaves efc_state unset; we leave the solver's.) After noslip every row has its dual state,
as in MuJoCo.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTRSTATE_SATISFIED, CONE_ELLIPTIC, DSBL_WARMSTART, EFC_FORCE, EFC_STATE, EFCN_CONVERGED, EFCN_NEFC,
    EFCN_NITER, OPT_CONE, OPT_DISABLEFLAGS, OPT_NOSLIP_ITERATIONS, OPT_SOLVER, QACC_SMOOTH, QFRC_CONSTRAINT,
    SEI_STATE, SN_NISLAND, SOLVER_CG, SOLVER_NEWTON, SVI_NITER, SZ_NV,
)
from rigidsim.engine.solver.island import find_islands, lists
from rigidsim.engine.solver.noslip import noslip
from rigidsim.engine.solver.primal import primal
from rigidsim.engine.solver.variant import CG, ELLIPTIC, NEWTON, NOSLIP


@ti.func
def supported(m: ti.template(), variant: ti.template()):
    """1 when the kernel's variant compiled what the options ask for (the solver, the cone, noslip), else 0."""
    ok = 1
    solver = m.opt_i[OPT_SOLVER]
    if solver != SOLVER_NEWTON and solver != SOLVER_CG:
        ok = 0  # PGS is not built
    if ti.static((variant & NEWTON) == 0):
        if solver == SOLVER_NEWTON:
            ok = 0
    if ti.static((variant & CG) == 0):
        if solver == SOLVER_CG:
            ok = 0
    if ti.static((variant & ELLIPTIC) == 0):
        if m.opt_i[OPT_CONE] == CONE_ELLIPTIC:
            ok = 0
    if ti.static((variant & NOSLIP) == 0):
        if m.opt_i[OPT_NOSLIP_ITERATIONS] > 0:
            ok = 0
    return ok


@ti.func
def solve(m: ti.template(), d: ti.template(), b, variant: ti.template()):
    """The primal constraint solve of env b from the rows, smooth quantities and qacc_warmstart: writes qacc,
    efc_force, efc_state, qfrc_constraint and the outcome (module docstring). Options the variant did not
    compile (or PGS) are refused: qacc = qacc_smooth, no force, EFCN_CONVERGED = 0."""
    nv = m.opt_i[SZ_NV]
    nefc = d.efc_n[b, EFCN_NEFC]
    for i in range(nv):
        d.dof[b, i, QFRC_CONSTRAINT] = 0.0
    niter = 0
    converged = 1
    nisland = 0
    ok = supported(m, variant)
    if nefc == 0 or ok == 0:
        for i in range(nv):
            d.qacc[b, i] = d.dof[b, i, QACC_SMOOTH]
        for r in range(nefc):
            d.efc[b, r, EFC_FORCE] = 0.0
            d.efc_i[b, r, EFC_STATE] = CNSTRSTATE_SATISFIED
        converged = ok
    else:
        nisland, whole = find_islands(m, d, b)
        newton = 1 if m.opt_i[OPT_SOLVER] == SOLVER_NEWTON else 0
        jar_in = 0  # the warmstart's J qacc - aref, when it ran (`primal`)
        # pass 0 warmstarts (every dof and row), pass k > 0 solves island k - 1 (or everything): one copy of
        # the lists' code
        nvi = 0
        nrow = 0
        for kk in range(ti.max(nisland, 1) + 1):
            k = kk - 1
            island = k if nisland > 0 else -1
            if not (whole and k == 0):  # one island of every dof and row: its lists are the warmstart's
                nvi, nrow = lists(m, d, b, island)
            if k < 0 and (m.opt_i[OPT_DISABLEFLAGS] & DSBL_WARMSTART) != 0:
                for i in range(nv):
                    d.qacc[b, i] = d.dof[b, i, QACC_SMOOTH]
                for r in range(nefc):
                    d.efc[b, r, EFC_FORCE] = 0.0
            else:
                # the warmstart (k < 0: `primal`'s warm passes, sharing its code) or island k's solve
                it, conv = primal(m, d, b, nvi, nrow, nisland > 0, newton, k < 0, jar_in, variant)
                if k < 0:
                    jar_in = conv
                else:
                    d.solver_vi[b, k, SVI_NITER] = it
                    niter += it
                    if conv == 0:
                        converged = 0
        if nisland > 0 and (m.opt_i[OPT_DISABLEFLAGS] & DSBL_WARMSTART) == 0:
            # MuJoCo 4 solves islands on copies of the rows and copies back their forces, not their states:
            # efc_state keeps the warmstart's classification at qacc_smooth. Report that; keep the solver's own.
            for r in range(nefc):
                state = d.efc_i[b, r, EFC_STATE]
                d.efc_i[b, r, EFC_STATE] = d.solver_efc_i[b, r, SEI_STATE]
                d.solver_efc_i[b, r, SEI_STATE] = state
    d.solver_n[b, SN_NISLAND] = nisland
    d.efc_n[b, EFCN_NITER] = niter
    d.efc_n[b, EFCN_CONVERGED] = converged
    return ok


@ti.func
def fwd_constraint(m: ti.template(), d: ti.template(), b, variant: ti.template()):
    """`solve`, then the noslip pass when opt.noslip_iterations > 0 (which recomputes qfrc_constraint and
    qacc from the forces it leaves). `variant`: what to compile (`solver.variant`; ALL for every option)."""
    ok = solve(m, d, b, variant)
    if ti.static(variant & NOSLIP):
        if ok != 0 and d.efc_n[b, EFCN_NEFC] > 0 and m.opt_i[OPT_NOSLIP_ITERATIONS] > 0:
            noslip(m, d, b, variant)
