"""The Newton constraint solver (rigidsim.engine.solver) against MuJoCo 4.0.0 on MuJoCo's own rows.

Every case samples states from a MuJoCo run (tests/solver_util.py), gives our solver the rows, qM and its
factor, qacc_smooth, qfrc_smooth and qacc_warmstart that mj_forward's constraint stage started from, and
compares what it produced: qacc and efc_force to 1e-6 of their largest entry, efc_state exactly, the island
count and each island's iteration count exactly (Newton's termination is robust to rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import solver_util as U
from tests.mjref import mujoco

RTOL = 1e-6
NEWTON = mujoco.mjtSolver.mjSOL_NEWTON


def assert_newton(mjm, snaps, states=True, **kw):
    """Our solver on the snapshots equals MuJoCo's results (module docstring)."""
    assert snaps, "the run produced no state with constraint rows"
    dd = U.run(mjm, snaps, **kw)
    for b, s in enumerate(snaps):
        r = U.results(dd, b, mjm.nv, s["nefc"])
        where = f"snapshot {b} (nefc {s['nefc']})"
        assert U.close(r["qacc"], s["qacc"]) <= RTOL, (where, r["qacc"], s["qacc"])
        assert U.close(r["efc_force"], s["efc_force"]) <= RTOL, (where, r["efc_force"], s["efc_force"])
        assert U.close(r["qfrc_constraint"], s["qfrc_constraint"]) <= RTOL, where
        if states:
            np.testing.assert_array_equal(r["efc_state"], s["efc_state"], err_msg=where)
        assert r["nisland"] == s["nisland"], where
        k = min(max(s["nisland"], 1), 20)  # MuJoCo keeps the counts of its first 20 islands
        np.testing.assert_array_equal(r["island_niter"][:k], s["solver_niter"][:k], err_msg=where)
        assert r["niter"] == int(np.sum(r["island_niter"]))
    return dd


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [1, 3, 4, 6])
@pytest.mark.parametrize("impratio", [1.0, 2.5])
def test_contacts(cone, condim, impratio):
    """Five free bodies and a two-slide box on a plane: boxes, a sphere, a capsule and an ellipsoid touching
    the ground and each other, several islands."""
    mjm = U.inline_model(U.PILE, "Newton", cone, condim=condim, impratio=impratio)
    assert_newton(mjm, U.sample(mjm, 400, 9))


def big_pile(side: int = 4, layers: int = 3) -> str:
    """side x side x layers boxes of 0.2 m, 0.22 m apart, each layer shifted 0.03 m so that a box rests on up
    to four below it: once they touch, one island of every box."""
    bodies = []
    for z in range(layers):
        shift = 0.03 * (z % 2)
        for i in range(side):
            for j in range(side):
                x, y = ((i - (side - 1) / 2) * 0.22 + shift, (j - (side - 1) / 2) * 0.22 + shift)
                bodies.append(f'<body pos="{x:.4f} {y:.4f} {0.11 + 0.22 * z:.4f}"><freejoint/>'
                              f'<geom type="box" size=".1 .1 .1"/></body>')
    return ('<mujoco><option jacobian="dense"/><worldbody><geom type="plane" size="5 5 .1"/>'
            + "".join(bodies) + "</worldbody></mujoco>")


def test_island_past_local_sums():
    """48 boxes (288 dofs) in one island: more dofs than J' force's local sums hold (`linalg.JT_LOCAL`), so
    it adds into its result instead; and, that island holding every dof and row, the solve walks the lists of
    the warmstart (`island.find_islands`' whole). Before they touch, islands of a few boxes each."""
    from rigidsim.engine.solver.linalg import JT_LOCAL

    mjm = mujoco.MjModel.from_xml_string(big_pile())
    assert mjm.nv > JT_LOCAL
    snaps = U.sample(mjm, 160, 20)
    assert any(s["nisland"] == 1 for s in snaps) and any(s["nisland"] > 1 for s in snaps)
    assert_newton(mjm, snaps)


@pytest.mark.parametrize("scene", sorted(U.INLINE))
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_joints_equalities_tendons(scene, cone):
    """Hinge, slide and ball limits with dof friction loss; connect, weld and joint equalities (the connect's
    anchor on a hinge axis: that tree joins the island with a zero Jacobian); tendon limits and friction."""
    mjm = U.inline_model(U.INLINE[scene], "Newton", cone)
    assert_newton(mjm, U.sample(mjm, 300, 7, init=U.random_velocity(mjm, 0)))


@pytest.mark.parametrize("name", U.MODELS)
def test_shared_models(name):
    mjm = U.shared_model(name, NEWTON)
    assert_newton(mjm, U.shared_snapshots(mjm))


def test_islands_disabled():
    """One solve of every dof and row, scaled by meaninertia * nv."""
    mjm = U.inline_model(U.PILE, "Newton", "elliptic", condim=4, impratio=1.0)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    snaps = U.sample(mjm, 400, 9)
    assert all(s["nisland"] == 0 for s in snaps)
    assert_newton(mjm, snaps)


def test_warmstart_disabled():
    """From qacc_smooth. With islands MuJoCo leaves efc_state unset then: states compared without islands."""
    for island in (False, True):
        mjm = U.inline_model(U.PILE, "Newton", "pyramidal", condim=3, impratio=1.0)
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_WARMSTART)
        if not island:
            mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
        assert_newton(mjm, U.sample(mjm, 400, 9), states=not island)


def test_iteration_limit():
    """With 2 iterations allowed MuJoCo and we stop at the same point; EFCN_CONVERGED is 1 exactly when a
    termination test (or the certificate) stopped every island before the limit."""
    mjm = U.shared_model("humanoid", NEWTON)
    mjm.opt.iterations = 2
    snaps = U.shared_snapshots(mjm)
    dd = assert_newton(mjm, snaps)
    for b, s in enumerate(snaps):
        r = U.results(dd, b, mjm.nv, s["nefc"])
        if np.all(r["island_niter"] < 2):
            assert r["converged"] == 1
    assert any(U.results(dd, b, mjm.nv, s["nefc"])["converged"] == 0 for b, s in enumerate(snaps))


def test_own_factor():
    """qM factored by our L'DL (smooth.factor_m) instead of MuJoCo's: the same results."""
    mjm = U.inline_model(U.PILE, "Newton", "elliptic", condim=6, impratio=2.5)
    assert_newton(mjm, U.sample(mjm, 400, 9), factor=True)


def test_no_rows():
    """No constraint rows: qacc = qacc_smooth, no force, converged, no iterations."""
    mjm = U.inline_model(U.PILE, "Newton", "pyramidal", condim=3, impratio=1.0)
    snaps = U.sample(mjm, 1, 1, keep=lambda s: True)
    assert snaps[0]["nefc"] == 0
    dd = U.run(mjm, snaps)
    r = U.results(dd, 0, mjm.nv, 0)
    np.testing.assert_array_equal(r["qacc"], snaps[0]["qacc_smooth"])
    np.testing.assert_array_equal(r["qfrc_constraint"], 0.0)
    assert (r["niter"], r["converged"], r["nisland"]) == (0, 1, 0)


def test_variant_of_model():
    """A kernel compiled for the model's options alone (solver.variant_of: Newton, elliptic cones) gives
    MuJoCo's results; one compiled without elliptic cones refuses an elliptic model (qacc = qacc_smooth, no
    force, EFCN_CONVERGED = 0) instead of solving it wrongly."""
    from rigidsim.engine.solver import variant as SV

    mjm = U.inline_model(U.PILE, "Newton", "elliptic", condim=4, impratio=2.5)
    model = U.model_from_mujoco(mjm)
    assert SV.variant_of(model) == SV.NEWTON | SV.ELLIPTIC
    snaps = U.sample(mjm, 400, 9)
    assert_newton(mjm, snaps, variant=SV.variant_of(model))
    dd = U.run(mjm, snaps, variant=SV.NEWTON)
    for b, s in enumerate(snaps):
        r = U.results(dd, b, mjm.nv, s["nefc"])
        np.testing.assert_array_equal(r["qacc"], s["qacc_smooth"])
        np.testing.assert_array_equal(r["efc_force"], 0.0)
        assert (r["converged"], r["niter"]) == (0, 0)
