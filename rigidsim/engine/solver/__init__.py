"""The constraint solver of one env, as ti.funcs: MuJoCo 4's primal solvers (Newton and CG) and noslip.

Entry points (each takes ``(m, d, b, variant)``: the engine's model and data groups, the env, and the
compile-time mask `variant.ALL` or `variant.variant_of(model)` of what to compile):

* `fwd_constraint`: the whole constraint stage (MuJoCo's mj_fwdConstraint for Newton and CG): `solve`, then
  `noslip` when opt.noslip_iterations > 0;
* `solve`: clears qfrc_constraint, finds the constraint islands, warmstarts and runs the chosen solver;
  returns 0 when it refused the options (PGS, or what the variant left out);
* `noslip`: the noslip pass after `solve` (it needs `solve`'s islands), ending with qfrc_constraint and qacc
  from the forces.

They read the constraint rows (efc_J, efc, efc_i, efc_n; the contacts' geoms in contact_i for the islands),
qM (column QM of d.M; under approximate_implicitfast qH = qM - h qDeriv, column QH: `layout.OPT_SOLVER_M`) with its
factor (QLD, QLDIAGINV), qacc_smooth, qfrc_smooth and qacc_warmstart, and
write qacc, efc_force, efc_state, qfrc_constraint and efc_n's EFCN_NITER / EFCN_CONVERGED.

Modules, one concern each:

* `linalg`: dot products, M products and solves, J products and the dense Cholesky routines, over the
  island being solved;
* `island`: constraint islands (mj_island) and the dof and row lists the solver walks;
* `update`: the constraint update (states, forces, cost; the elliptic cone Hessian);
* `linesearch`: the exact line search;
* `newton`: the Hessian, its factor, the cone updates and the incremental updates;
* `cg`: the Hager-Zhang conjugate direction;
* `primal`: the iterations of Newton and CG on one island, and the warmstart (its first passes' code);
* `noslip`: the noslip pass and its small QCQPs;
* `solve`: the entry points;
* `variant`: the compile-time mask of solver parts (plain Python).
"""

from rigidsim.engine.solver.noslip import noslip
from rigidsim.engine.solver.solve import fwd_constraint, solve
from rigidsim.engine.solver.variant import ALL, variant_of

__all__ = ["ALL", "fwd_constraint", "noslip", "solve", "variant_of"]
