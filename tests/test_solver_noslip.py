"""The noslip pass against MuJoCo 4.0.0: efc_force, qacc and qfrc_constraint to 1e-6 of their largest
entry, the iteration counts (main solver plus noslip sweeps, per island) exactly, efc_state exactly except
where MuJoCo's force sits on a state boundary to rounding (`solver_util.noslip_state_mismatches`: noslip puts
forces on those boundaries by construction).

mujoco 4.0.0 scales an island's noslip improvement by the island's own inertia, as its primal solver does
(its 3.12 sources use meaninertia * nv there): the iteration counts of `test_contacts` tell the two apart.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import solver_util as U
from tests.mjref import mujoco

RTOL = 1e-6


def assert_noslip(mjm, snaps):
    assert snaps, "the run produced no state with constraint rows"
    dd = U.run(mjm, snaps)
    for b, s in enumerate(snaps):
        r = U.results(dd, b, mjm.nv, s["nefc"])
        where = f"snapshot {b} (nefc {s['nefc']})"
        assert U.close(r["efc_force"], s["efc_force"]) <= RTOL, (where, r["efc_force"], s["efc_force"])
        assert U.close(r["qacc"], s["qacc"]) <= RTOL, (where, r["qacc"], s["qacc"])
        assert U.close(r["qfrc_constraint"], s["qfrc_constraint"]) <= RTOL, where
        assert r["nisland"] == s["nisland"], where
        k = min(max(s["nisland"], 1), 20)
        np.testing.assert_array_equal(r["island_niter"][:k], s["solver_niter"][:k], err_msg=where)
        assert U.noslip_state_mismatches(s, r["efc_state"]) == [], (where, r["efc_state"], s["efc_state"])


@pytest.mark.parametrize("solver", ["Newton", "CG"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [3, 4, 6])
def test_contacts(solver, cone, condim):
    mjm = U.inline_model(U.PILE, solver, cone, ns=10, condim=condim, impratio=1.0 if condim == 3 else 2.5)
    assert_noslip(mjm, U.sample(mjm, 400, 9))


@pytest.mark.parametrize("scene", sorted(U.INLINE))
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_friction_loss(scene, cone):
    """Dof and tendon friction loss (clamped to +-loss), next to limits and equalities."""
    mjm = U.inline_model(U.INLINE[scene], "Newton", cone, ns=5)
    assert_noslip(mjm, U.sample(mjm, 300, 7, init=U.random_velocity(mjm, 0)))


def test_islands_disabled():
    """One pass over every row, its improvement scaled by meaninertia * nv."""
    mjm = U.inline_model(U.PILE, "Newton", "elliptic", ns=10, condim=4, impratio=2.5)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    assert_noslip(mjm, U.sample(mjm, 400, 9))


@pytest.mark.parametrize("name", ["stacker", "humanoid"])
def test_shared_models(name):
    mjm = U.shared_model(name, mujoco.mjtSolver.mjSOL_NEWTON)
    mjm.opt.noslip_iterations = 5
    assert_noslip(mjm, U.shared_snapshots(mjm))
