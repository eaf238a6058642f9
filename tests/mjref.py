"""MuJoCo as the reference: helpers the parity tests share.

`model_from_mujoco` (from `rigidsim.compare.model`, which `rigidsim compare` uses too) copies a compiled
``mujoco.MjModel`` into our numpy `Model` field by field (same names), so engine stages can be tested on
MuJoCo's own compile independently of our loaders, and loader tests can compare our compile with this one.
"""

from __future__ import annotations

import numpy as np
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


# ---------------------------------------------------------------------------------------------- MuJoCo's runs
def random_ctrl(mjm, rng):
    """Controls drawn uniformly: within ctrlrange for a limited actuator, in [-1, 1] otherwise."""
    lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
    lim = mjm.actuator_ctrllimited.astype(bool)
    return np.where(lim, rng.uniform(lo, hi), rng.uniform(-1, 1, mjm.nu))


def mujoco_states(mjm, n: int, every: int, seed: int = 0, qvel_scale=None, ctrl=None, at=None, qvel: bool = False):
    """States of one MuJoCo run from qpos0, for tests that compare at MuJoCo's own states. The run: qvel drawn
    N(0, qvel_scale) first when `qvel_scale` is given; then n * every steps, `ctrl(t, d, rng)` (when given)
    setting the controls before step t; after step t the state is kept when t % every is in `at` (default
    {every - 1}: one state per `every` steps). Returns qpos rows [k, nq], or with `qvel` a list of
    (qpos, qvel) pairs."""
    rng = np.random.default_rng(seed)
    at = {every - 1} if at is None else set(at)
    d = mujoco.MjData(mjm)
    if qvel_scale is not None:
        d.qvel[:] = rng.normal(0, qvel_scale, mjm.nv)
    out = []
    for t in range(n * every):
        if ctrl is not None:
            ctrl(t, d, rng)
        mujoco.mj_step(mjm, d)
        if t % every in at:
            out.append((d.qpos.copy(), d.qvel.copy()) if qvel else d.qpos.copy())
    return out if qvel else np.array(out)


def mujoco_rollout(mjm, d, ctrl=None, steps=None):
    """mj_step from the state in `d` (set up by the caller: keyframe, flags), with the rows of `ctrl` as the
    controls of each step (else `steps` steps with d's controls): qpos of every state [T + 1, nq] and the
    number of contacts at each of them [T + 1] (mj_step detects the contacts of the state it starts from; the
    last state's by mj_forward)."""
    rows = [None] * steps if ctrl is None else list(ctrl)
    qpos, ncon = [d.qpos.copy()], []
    for c in rows:
        if c is not None:
            d.ctrl[:] = c
        mujoco.mj_step(mjm, d)
        qpos.append(d.qpos.copy())
        ncon.append(d.ncon)
    mujoco.mj_forward(mjm, d)
    ncon.append(d.ncon)
    return np.array(qpos), np.array(ncon)
