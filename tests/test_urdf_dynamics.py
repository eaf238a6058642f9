"""URDF end to end: our loader and our engine give MuJoCo's mass matrix and bias forces for the same URDF
(MuJoCo compiling the .urdf itself), at random configurations, to rtol 1e-8."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigidsim import model as M
from rigidsim.loaders.urdf_compile import load_urdf

mujoco = pytest.importorskip("mujoco")

DATA = Path(__file__).resolve().parent / "data" / "urdf"
ROBOTS = ["arm2", "fused_chain", "prismatic_revolute", "floating_planar", "mimic_gripper", "mesh_robot"]
B = 4


def _random_qpos(mjm, rng) -> np.ndarray:
    q = np.zeros((B, mjm.nq))
    for b in range(B):
        for j in range(mjm.njnt):
            a, t = mjm.jnt_qposadr[j], mjm.jnt_type[j]
            if t == mujoco.mjtJoint.mjJNT_FREE:
                q[b, a:a + 3] = rng.normal(size=3)
                quat = rng.normal(size=4)
                q[b, a + 3:a + 7] = quat / np.linalg.norm(quat)
            elif t == mujoco.mjtJoint.mjJNT_BALL:
                quat = rng.normal(size=4)
                q[b, a:a + 4] = quat / np.linalg.norm(quat)
            else:
                q[b, a] = rng.uniform(-1.5, 1.5)
    return q


@pytest.fixture(scope="module")
def results():
    """{robot: (our qM, our qfrc_bias, MuJoCo's qM, MuJoCo's qfrc_bias)} at the same random states."""
    import dataclasses

    from rigidsim.engine.simulator import Simulator

    out = {}
    rng = np.random.default_rng(3)
    for name in ROBOTS:
        path = DATA / f"{name}.urdf"
        mjm = mujoco.MjModel.from_xml_path(str(path))
        ours = load_urdf(path)
        # smooth dynamics only: this test compares the unconstrained quantities
        ours.opt = dataclasses.replace(ours.opt, disableflags=ours.opt.disableflags | M.DSBL_CONSTRAINT)
        assert (ours.nq, ours.nv) == (mjm.nq, mjm.nv), name
        qpos = _random_qpos(mjm, rng)
        qvel = rng.normal(size=(B, mjm.nv))
        sim = Simulator(ours, B)
        sim.reset(qpos=qpos, qvel=qvel)
        sim.forward()
        ref_M, ref_bias = [], []
        d = mujoco.MjData(mjm)
        for b in range(B):
            d.qpos[:], d.qvel[:] = qpos[b], qvel[b]
            mujoco.mj_forward(mjm, d)
            full = np.zeros((mjm.nv, mjm.nv))
            mujoco.mj_fullM(mjm, d, full)
            ref_M.append(full)
            ref_bias.append(d.qfrc_bias.copy())
        out[name] = (sim.get("qM"), sim.get("qfrc_bias"), np.array(ref_M), np.array(ref_bias), mjm, ours)
    return out


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_and_bias_match_mujoco(results, name):
    qM, bias, ref_M, ref_bias, _, _ = results[name]
    scale_M = np.abs(ref_M).max()
    np.testing.assert_allclose(qM, ref_M, rtol=1e-8, atol=1e-12 * scale_M)
    np.testing.assert_allclose(bias, ref_bias, rtol=1e-8, atol=1e-12 * max(np.abs(ref_bias).max(), 1.0))


@pytest.mark.parametrize("name", ROBOTS)
def test_total_mass_matches_mujoco(results, name):
    *_, mjm, ours = results[name]
    np.testing.assert_allclose(ours.body_mass.sum(), mjm.body_mass.sum(), rtol=1e-12)
