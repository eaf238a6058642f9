"""The CG constraint solver (Hager-Zhang directions, M^-1 preconditioning) against MuJoCo 4.0.0.

CG is compared by the cost it minimizes (tests/solver_util.primal_cost of our qacc and of MuJoCo's, within
1e-6 relative), as MuJoCo Warp's tests do: on stiff scenes CG's path amplifies rounding by orders of
magnitude per iteration (dm_control walker: the gradient norms of the two runs agree to 5e-14 after two
iterations and to 2e-8 after seven), so near the tolerance a termination test can fall one iteration apart
while both points are equally good. On the inline scenes the paths stay together: there the island count is
compared exactly, and each island's iteration count to within one of MuJoCo's, equal in at least 95% of
the islands. (Until the parity contract allowed other summation orders the counts were equal everywhere;
summing a row of J times a vector left to right instead of in mju_dot's four lanes moved one island of 160
rows, condim 6, from 13 iterations to 12.)
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import solver_util as U
from tests.mjref import mujoco

RTOL = 1e-6


def assert_cg(mjm, snaps, iterations=True):
    assert snaps, "the run produced no state with constraint rows"
    dd = U.run(mjm, snaps)
    equal = total = 0
    for b, s in enumerate(snaps):
        r = U.results(dd, b, mjm.nv, s["nefc"])
        where = f"snapshot {b} (nefc {s['nefc']})"
        ours, theirs = U.primal_cost(s, r["qacc"]), U.primal_cost(s, s["qacc"])
        assert abs(ours - theirs) <= RTOL * abs(theirs), (where, ours, theirs)
        assert r["nisland"] == s["nisland"], where
        if iterations:
            k = min(max(s["nisland"], 1), 20)
            diff = np.abs(r["island_niter"][:k].astype(int) - s["solver_niter"][:k])
            assert diff.max() <= 1, (where, r["island_niter"][:k], s["solver_niter"][:k])
            equal += int(np.sum(diff == 0))
            total += k
    if iterations:
        assert equal >= 0.95 * total, (equal, total)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [1, 3, 4, 6])
def test_contacts(cone, condim):
    mjm = U.inline_model(U.PILE, "CG", cone, condim=condim, impratio=1.0 if condim < 4 else 2.5)
    assert_cg(mjm, U.sample(mjm, 400, 9))


@pytest.mark.parametrize("scene", sorted(U.INLINE))
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_joints_equalities_tendons(scene, cone):
    mjm = U.inline_model(U.INLINE[scene], "CG", cone)
    assert_cg(mjm, U.sample(mjm, 300, 7, init=U.random_velocity(mjm, 0)))


@pytest.mark.parametrize("name", U.MODELS)
def test_shared_models(name):
    mjm = U.shared_model(name, mujoco.mjtSolver.mjSOL_CG)
    assert_cg(mjm, U.shared_snapshots(mjm), iterations=False)


def test_islands_disabled():
    mjm = U.inline_model(U.PILE, "CG", "elliptic", condim=3, impratio=1.0)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    assert_cg(mjm, U.sample(mjm, 400, 9))
