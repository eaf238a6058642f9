"""The Newton Hessian's dense profile factor (rigidsim.engine.solver.linalg: `chol_factor`, `chol_update`) on
matrices built here, against exact properties:

- L L' equals the matrix (to 1e-12 of its largest entry) and each row's first nonzero is found from the
  bound the caller gives in SVI_FIRST (`newton.make_hessian`'s), whatever lies left of it: NaN here, so a
  read there would show;
- a pivot below mjMINVAL is replaced by it, the rank drops by one and the pivot's column is cleared below it
  (mju_cholFactor's rule);
- a rank-one update (or downdate) gives the factor of A + x x' (A - x x'), filling rows in left of their
  profile (where solver_H holds NaN until the update clears it);
- islands of 60 dofs or more (`linalg.REACH_N`) take the column loops bounded by each column's reach.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.engine import data as D
from rigidsim.engine import layout as L
from tests import solver_util as U
from tests.mjref import model_from_mujoco, mujoco


def _arrays(n):
    """One env of a model with n slide dofs (only nv matters here)."""
    xml = "<mujoco><worldbody>" + "".join(
        f'<body pos="{i} 0 0"><joint type="slide" axis="1 0 0"/><geom size="0.1"/></body>' for i in range(n)) + \
        "</worldbody></mujoco>"
    model = model_from_mujoco(mujoco.MjModel.from_xml_string(xml))
    return U.arrays(model, 1, np.float64, D.array_sizes(model))


def _profile_matrix(n, rng):
    """A = L0 L0' with L0's row i nonzero on [first[i], i] only: A's rows start there too, and so does its
    factor's (L0 itself, its diagonal positive)."""
    first = np.array([rng.integers(0, i + 1) for i in range(n)])
    first[rng.choice(n, n // 3, replace=False)] = 0  # some full rows
    L0 = np.zeros((n, n))
    for i in range(n):
        L0[i, first[i]:i] = rng.uniform(-1, 1, i - first[i])
        L0[i, i] = rng.uniform(1, 2)
    return L0 @ L0.T, first


def _factor(a, first, bound, x=None, downdate=False):
    """Our factor of a (rows given from `bound` on, NaN left of it), then with x the update or downdate;
    returns (L over the profile the kernel reports, SVI_FIRST, factor rank, update rank)."""
    n = len(a)
    mp, dd = _arrays(n)
    h = np.full((n, n), np.nan)
    for i in range(n):
        h[i, bound[i]:i + 1] = a[i, bound[i]:i + 1]
    dd["solver_H"][0, :n, :n] = h
    dd["solver_vi"][0, :n, L.SVI_FIRST] = bound
    dd["solver_vi"][0, :n, L.SVI_HLIST] = np.arange(n)
    mode = 4
    if x is not None:
        dd["solver_v"][0, :n, L.SV_LTJ] = x
        mode |= 8 | (16 if downdate else 0)
    U.launch(mp, dd, mode)
    f = dd["solver_vi"][0, :n, L.SVI_FIRST].copy()
    return U.profile_factor(dd["solver_H"][0, :n, :n], f), f, int(dd["efc_n"][0, L.EFCN_NITER]), int(dd["efc_n"][0, L.EFCN_CONVERGED])


@pytest.mark.parametrize("n", [12, 70])
def test_factor_over_a_profile(n):
    rng = np.random.default_rng(n)
    a, first = _profile_matrix(n, rng)
    bound = np.array([rng.integers(0, f + 1) for f in first])  # a lower bound on each row's first nonzero
    lf, f, rank, _ = _factor(a, first, bound)
    assert rank == n
    np.testing.assert_array_equal(f, first)
    assert np.abs(lf @ lf.T - a).max() <= 1e-12 * np.abs(a).max()


@pytest.mark.parametrize("n", [12, 70])
@pytest.mark.parametrize("downdate", [False, True])
def test_rank_one_update_fills_rows_in(n, downdate):
    rng = np.random.default_rng(100 + n)
    a, first = _profile_matrix(n, rng)
    # x nonzero on dof 0, on the row whose profile starts last (which it fills in from column 0) and on one
    # more: rows after x's first nonzero fill in from there where their profile began later
    x = np.zeros(n)
    x[[0, int(np.argmax(first)), int(rng.integers(1, n))]] = rng.uniform(0.5, 1.0, 3)
    target = a
    if downdate:  # factor A + x x' (its own profile), downdate by x: A again
        a = a + np.outer(x, x)
        nz = a != 0
        first = np.array([np.flatnonzero(nz[i, :i + 1])[0] for i in range(n)])
    else:
        target = a + np.outer(x, x)
    lf, f, rank, rank2 = _factor(a, first, first, x, downdate)
    assert rank == n and rank2 == n
    assert np.isfinite(lf).all()
    assert np.abs(lf @ lf.T - target).max() <= 1e-12 * np.abs(target).max()
    if not downdate:  # the profile grew where x filled rows in
        assert (f <= first).all() and (f < first).any()


def test_deficient_pivot_replaced_and_column_cleared():
    n, j = 12, 5
    rng = np.random.default_rng(7)
    a, first = _profile_matrix(n, rng)
    a[j, :] = 0.0  # a dof with nothing: an exactly zero pivot
    a[:, j] = 0.0
    lf, _f, rank, _ = _factor(a, first, np.zeros(n, int))
    assert rank == n - 1
    assert lf[j, j] == np.sqrt(L.MINVAL)
    assert (lf[j + 1:, j] == 0.0).all()
    want = a.copy()
    want[j, j] = L.MINVAL  # the replaced pivot; every other entry is A's
    assert np.abs(lf @ lf.T - want).max() <= 1e-12 * np.abs(a).max()
