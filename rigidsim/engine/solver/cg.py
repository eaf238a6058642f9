"""The conjugate-gradient direction of the primal solver: MuJoCo 4's Hager-Zhang update.

With y = grad - grad_old (and My = M^-1 y, the preconditioned difference) and d the previous direction,
beta = (y'M^-1 grad - 2 (y'My / d'y) d'grad) / d'y, bounded below by eta_k = -1 / (|d| min(0.01, |grad|));
a d'y below mjMINVAL restarts with steepest descent (beta = 0). The new direction is -M^-1 grad + beta d.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import MINVAL, SV_GRAD, SV_GRADOLD, SV_MGRAD, SV_MGRADOLD, SV_SEARCH
from rigidsim.engine.solver.linalg import dof, dots


@ti.func
def hz_direction(d: ti.template(), b, nvi):
    """Replace solver_v[:, SV_SEARCH] by the Hager-Zhang conjugate direction; SV_GRADOLD and SV_MGRADOLD
    (the previous gradient and preconditioned gradient) are overwritten by the differences."""
    for k in range(nvi):
        i = dof(d, b, k)
        d.solver_v[b, i, SV_GRADOLD] = d.solver_v[b, i, SV_GRAD] - d.solver_v[b, i, SV_GRADOLD]
        d.solver_v[b, i, SV_MGRADOLD] = d.solver_v[b, i, SV_MGRAD] - d.solver_v[b, i, SV_MGRADOLD]
    # every product in one pass (d'y decides whether the others are used)
    sums = dots(d, b, nvi, ((d.solver_v, SV_SEARCH, d.solver_v, SV_GRADOLD),
                            (d.solver_v, SV_GRADOLD, d.solver_v, SV_MGRADOLD),
                            (d.solver_v, SV_GRADOLD, d.solver_v, SV_MGRAD),
                            (d.solver_v, SV_SEARCH, d.solver_v, SV_GRAD),
                            (d.solver_v, SV_SEARCH, d.solver_v, SV_SEARCH),
                            (d.solver_v, SV_GRAD, d.solver_v, SV_GRAD)))
    d_dot_y = sums[0]
    beta = 0.0
    if not (d_dot_y < MINVAL):
        y_dot_my = sums[1]
        y_dot_mgrad = sums[2]
        d_dot_grad = sums[3]
        beta_hz = (y_dot_mgrad - 2.0 * (y_dot_my / d_dot_y) * d_dot_grad) / d_dot_y
        d_norm = ti.sqrt(sums[4])
        grad_norm = ti.sqrt(sums[5])
        eta_k = -1.0 / ti.max(MINVAL, d_norm * ti.min(0.01, grad_norm))
        beta = ti.max(eta_k, beta_hz)
    for k in range(nvi):
        i = dof(d, b, k)
        d.solver_v[b, i, SV_SEARCH] = -d.solver_v[b, i, SV_MGRAD] + beta * d.solver_v[b, i, SV_SEARCH]
