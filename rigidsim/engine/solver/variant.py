"""Which parts of the solver a kernel compiles: a bitmask passed as a compile-time argument (`ti.template`).

A scene uses one solver, one friction cone and noslip or not, so a kernel built for it can leave the rest
out (the elliptic cone's code, Newton's factorization, CG's directions, the noslip pass): compile time
drops with the code. `variant_of(model)` is the mask of a model's options; ALL compiles everything, and
the options are then read at run time. A solve whose options are outside the kernel's mask does nothing
but report it: qacc = qacc_smooth, no force, EFCN_CONVERGED = 0.
"""

from __future__ import annotations

NEWTON, CG, ELLIPTIC, NOSLIP = 1, 2, 4, 8
ALL = NEWTON | CG | ELLIPTIC | NOSLIP


def variant_of(model) -> int:
    """The mask of a model's solver options (rigidsim.model.Model or anything with its `opt` fields):
    its solver (PGS: neither; it is not built), its cone and whether it asks for noslip."""
    from rigidsim.model import CONE_ELLIPTIC, SOLVER_CG, SOLVER_NEWTON

    opt = model.opt
    mask = {SOLVER_NEWTON: NEWTON, SOLVER_CG: CG}.get(int(opt.solver), 0)
    if int(opt.cone) == CONE_ELLIPTIC:
        mask |= ELLIPTIC
    if int(opt.noslip_iterations) > 0:
        mask |= NOSLIP
    return mask
