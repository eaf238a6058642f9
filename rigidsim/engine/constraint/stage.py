"""The constraint stage of one env's forward pass: collision, the rows, their reference accelerations and the
solve (MuJoCo's mj_collision, mj_makeConstraint, mj_referenceConstraint and mj_fwdConstraint in one place).
`forward` calls it after the smooth acceleration when a scene has constraints; its module is imported only
then, so a scene without constraints compiles none of this code.

The stage's compile-time mask `cfg` (`stage_mask`) carries the colliders the scene's pairs use (bits 0-31,
`collision.params.kinds_of`), the solver parts its options need (bits 32-47, `solver.variant_of`) and the
kinds of rows it can make (bits 48 on, `instantiate.rows_of`): a kernel compiles only those.

Its three parts (collision; the rows and their aref; the solve) are each compiled as a function of its own
(`functions.compiled`) rather than inlined into the step: the step's code is then several LLVM functions of
moderate size instead of one very large one, which compiles in about 0.6 of the time (README)."""

from rigidsim.engine.lang import ti

from rigidsim.engine.collision.driver import collision
from rigidsim.engine.constraint.instantiate import make_constraint, reference_constraint
from rigidsim.engine.layout import SZ_NCONMAX
from rigidsim.engine.functions import part
from rigidsim.engine.solver import fwd_constraint

SOLVER_SHIFT, ROWS_SHIFT = 32, 48


def stage_mask(kinds: int, variant: int, rows: int) -> int:
    """The stage's compile-time mask from the collider mask, the solver variant and the kinds of rows."""
    return int(kinds) | (int(variant) << SOLVER_SHIFT) | (int(rows) << ROWS_SHIFT)


def wide_stage(kinds: int) -> int:
    """Every kind of row and every solver part, with the colliders of the mask `kinds`: the mask of one
    kernel for every scene whose colliders are among `kinds`, under every solver option."""
    from rigidsim.engine.constraint.instantiate import ROW_ALL
    from rigidsim.engine.solver.variant import ALL

    return stage_mask(kinds, ALL, ROW_ALL)


@ti.func
def constraint_stage(m: ti.template(), d: ti.template(), b, cfg: ti.template()):
    """Contacts (with the colliders of `cfg`; none when it has none), rows, aref, then the solve: qacc,
    efc_force, qfrc_constraint. Each part a compiled function of its own."""
    ncon = 0
    if ti.static((cfg & 0xFFFFFFFF) != 0):
        part(m, d, b, 0, _collide, ti.static(cfg & 0xFFFFFFFF))
        ncon = ti.min(d.ncon[b], m.opt_i[SZ_NCONMAX])
    part(m, d, b, ncon, _rows, ti.static(cfg >> ROWS_SHIFT))
    part(m, d, b, 0, _solve, ti.static((cfg >> SOLVER_SHIFT) & 0xFFFF))


@ti.func
def _collide(m: ti.template(), d: ti.template(), b, n, kinds: ti.template()):
    collision(m, d, b, m.opt_i[SZ_NCONMAX], kinds)


@ti.func
def _rows(m: ti.template(), d: ti.template(), b, ncon, rows: ti.template()):
    make_constraint(m, d, b, ncon, rows)
    reference_constraint(m, d, b, rows)


@ti.func
def _solve(m: ti.template(), d: ti.template(), b, n, variant: ti.template()):
    fwd_constraint(m, d, b, variant)


# A device's staged launch (`kernels._staged`): the smooth forward pass with `no_stage` as its constraint stage,
# then these parts, each a task of its own, in this order; ``part(m, d, b, cfg)``.
@ti.func
def no_stage(m: ti.template(), d: ti.template(), b, cfg: ti.template()):
    """Nothing: the constraint stage follows as tasks of its own."""
    pass


@ti.func
def _staged_collide(m: ti.template(), d: ti.template(), b, cfg: ti.template()):
    if ti.static((cfg & 0xFFFFFFFF) != 0):
        _collide(m, d, b, 0, ti.static(cfg & 0xFFFFFFFF))


@ti.func
def _staged_rows(m: ti.template(), d: ti.template(), b, cfg: ti.template()):
    ncon = 0
    if ti.static((cfg & 0xFFFFFFFF) != 0):
        ncon = ti.min(d.ncon[b], m.opt_i[SZ_NCONMAX])
    _rows(m, d, b, ncon, ti.static(cfg >> ROWS_SHIFT))


@ti.func
def _staged_solve(m: ti.template(), d: ti.template(), b, cfg: ti.template()):
    _solve(m, d, b, 0, ti.static((cfg >> SOLVER_SHIFT) & 0xFFFF))


STAGED_PARTS = (_staged_collide, _staged_rows, _staged_solve)
