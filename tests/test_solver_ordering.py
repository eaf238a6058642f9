"""Newton's factor order (rigidsim.engine.solver.ordering) on a pile of 27 free boxes (162 dofs).

MuJoCo factors the Hessian of a model this size in its own sparse order; ours eliminates the island's trees
in Reverse Cuthill-McKee order. The solve on MuJoCo's rows gives MuJoCo's qacc and efc_force to 1e-6 of their
largest entry, its states and iteration counts exactly (as tests/test_solver.py holds every model to); and the
order has its exact properties: a permutation of the island's dofs with each tree's dofs together and
ascending, a factor that gives back the Hessian in that order to rounding, and a profile less than half the
ascending order's (at rest: 63k multiply-adds against 208k). A model MuJoCo factors densely (under 60 dofs)
keeps the ascending order, MuJoCo's.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import solver_util as U
from tests.cli_util import shared_model
from tests.mjref import mujoco
from tests.test_solver import assert_newton

L = U.L


def pile(cone: str, island: bool = True):
    mjm = mujoco.MjModel.from_xml_path(str(shared_model("bench/boxes27_pile.xml")))
    mjm.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE  # solver_util's snapshots read efc_J dense
    mjm.opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    if not island:
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    return mjm


def profile_cost(pattern: np.ndarray) -> int:
    """Multiply-adds of `linalg.chol_factor` on a matrix with this lower-triangle nonzero pattern: row i's
    dot with row j starts at the later of their first nonzeros."""
    n = len(pattern)
    first = np.array([int(np.argmax(pattern[i, :i + 1])) for i in range(n)])
    cost = 0
    for i in range(n):
        for j in range(first[i], i + 1):
            cost += j - max(first[i], first[j])
    return cost


@pytest.mark.parametrize("cone,island", [("pyramidal", True), ("elliptic", True), ("pyramidal", False)])
def test_pile_matches_mujoco_and_order_properties(cone, island):
    """By islands (the pile is one) and, islands disabled, one solve of every dof and row."""
    mjm = pile(cone, island)
    snaps = U.sample(mjm, 1001, 250)  # settling, then at rest (204 contacts, 816 rows, one island)
    assert all(s["nisland"] == (1 if island else 0) for s in snaps)
    dd = assert_newton(mjm, snaps)
    nv = mjm.nv
    for b, s in enumerate(snaps):
        vi = dd["solver_vi"][b]
        # the last island solved: its dofs (SVI_ISLAND) and rows (SEI_ISLAND); without islands every one
        k = int(dd["solver_n"][b, L.SN_NISLAND]) - 1
        dofs = np.flatnonzero(vi[:nv, L.SVI_ISLAND] == k) if island else np.arange(nv)
        n = len(dofs)
        order = vi[:n, L.SVI_HLIST]
        assert sorted(order) == list(dofs), f"snapshot {b}: not a permutation of the island's dofs"
        np.testing.assert_array_equal(vi[order, L.SVI_HPOS], np.arange(n))
        trees = vi[order, L.SVI_TREE]
        starts = np.flatnonzero(np.r_[True, trees[1:] != trees[:-1]])
        assert len(starts) == len(set(trees)), f"snapshot {b}: a tree's dofs split"
        for a, e in zip(starts, np.r_[starts[1:], n]):
            np.testing.assert_array_equal(order[a:e], np.arange(order[a], order[a] + e - a))
        # the Hessian at the states the solver ended with, in the factor's order, against L L'
        if island:
            rows = np.flatnonzero(dd["solver_efc_i"][b, :s["nefc"], L.SEI_ISLAND] == k)
            quad = dd["solver_efc_i"][b, rows, L.SEI_STATE] == L.CNSTRSTATE_QUADRATIC
        else:  # (no swap of the states without islands: efc_state is the solver's)
            rows = np.arange(s["nefc"])
            quad = dd["efc_i"][b, rows, L.EFC_STATE] == L.CNSTRSTATE_QUADRATIC
        J = s["J"][rows][:, order]
        H = s["qM"][np.ix_(order, order)] + J.T @ (J * (s["efc_D"][rows] * quad)[:, None])
        if cone == "pyramidal":  # (elliptic: CONE rows add their cone Hessians to solver_Hcone, not here)
            Lf = U.profile_factor(dd["solver_H"][b, :n, :n], vi[:n, L.SVI_FIRST])
            assert np.abs(Lf @ Lf.T - H).max() <= 1e-12 * np.abs(H).max(), f"snapshot {b}"
        if n == nv:
            asc = s["qM"] + s["J"][rows].T @ (s["J"][rows] * (s["efc_D"][rows] * quad)[:, None])
            ours, ascending = profile_cost(H != 0), profile_cost(asc != 0)
            assert ours < 0.5 * ascending, (b, ours, ascending)


def test_dense_model_keeps_ascending_order():
    """Under 60 dofs (MuJoCo's dense factor) the factor's order is the island's list, ascending."""
    mjm = U.inline_model(U.PILE, "Newton", "pyramidal", condim=3, impratio=1.0)
    assert mjm.nv < 60
    snaps = U.sample(mjm, 400, 40)
    dd = assert_newton(mjm, snaps)
    for b, s in enumerate(snaps):
        vi = dd["solver_vi"][b]
        k = int(dd["solver_n"][b, L.SN_NISLAND]) - 1
        dofs = np.flatnonzero(vi[:mjm.nv, L.SVI_ISLAND] == k)
        np.testing.assert_array_equal(vi[:len(dofs), L.SVI_HLIST], dofs)
