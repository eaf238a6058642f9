"""MuJoCo as the reference: helpers the parity tests share.

`model_from_mujoco` (from `rigidsim.compare.model`, which `rigidsim compare` uses too) copies a compiled
``mujoco.MjModel`` into our numpy `Model` field by field (same names), so engine stages can be tested on
MuJoCo's own compile independently of our loaders, and loader tests can compare our compile with this one.
"""

from __future__ import annotations

import pytest

mujoco = pytest.importorskip("mujoco")

from rigidsim.compare.model import model_from_mujoco  # noqa: E402,F401  (re-exported for the tests)

# MuJoCo's analytic colliders (params.COLLIDERS' names)
ANALYTIC_COLLIDERS = ("plane_sphere", "plane_capsule", "plane_cylinder", "plane_box", "sphere_sphere", "sphere_capsule",
                      "sphere_cylinder", "sphere_box", "capsule_capsule", "capsule_box", "box_box", "plane_ellipsoid")


def test_stage():
    """The constraint-stage parts the parity tests compile into every Simulator beyond the scene's own:
    every kind of row, every solver part, the analytic colliders and the midphase box test. Scenes whose
    colliders are among those share one compiled kernel (each distinct mask is a cold compile of 10-40 s on a
    2-core machine)."""
    from rigidsim.engine.collision.params import COLLIDER_ID, MIDPHASE_BIT, kinds_of
    from rigidsim.engine.constraint.stage import wide_stage

    analytic = [COLLIDER_ID[k] for k in ANALYTIC_COLLIDERS]
    return wide_stage(kinds_of(analytic) | MIDPHASE_BIT)


test_stage.__test__ = False  # a helper, not a test


def compat_sim(mjm, n_envs: int = 1, model=None):
    """Our Simulator of a MuJoCo model (or of `model`, our copy of it) under MuJoCo's options, compiled with
    `test_stage()` so that the parity tests share kernels."""
    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator

    model = model_from_mujoco(mjm) if model is None else model
    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True})
    return Simulator(model, n_envs, kinematics_only=True, pair_options=r, stage=test_stage())
