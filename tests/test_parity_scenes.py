"""End to end against MuJoCo: the bundled scenes through `rigidsim run` (loader, options, engine, writer)
give mj_step's trajectory, with enable_mujoco_compatibility so both use the scene's own settings."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, rigidsim

mujoco = pytest.importorskip("mujoco")

STEPS = 300
# scene -> (MuJoCo disable flags standing for the --set overrides, the overrides)
CASES = {
    "pendulum": (0, ()),
    "cartpole": (0, ()),
    "chain": (0, ()),
    "falling_objects": (int(mujoco.mjtDisableBit.mjDSBL_CONTACT), ("--set", "enable_collision=false")),
    "arm": (0, ()),
}


def mujoco_trajectory(path, dsbl: int, ctrl: np.ndarray, keyframe=None) -> np.ndarray:
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= dsbl
    d = mujoco.MjData(m)
    if keyframe is not None:
        mujoco.mj_resetDataKeyframe(m, d, keyframe)
    out = [d.qpos.copy()]
    for t in range(STEPS):
        d.ctrl[:] = ctrl[t]
        mujoco.mj_step(m, d)
        out.append(d.qpos.copy())
    return np.array(out)


@pytest.mark.parametrize("scene", sorted(CASES))
def test_bundled_scene_matches_mujoco(scene, tmp_path):
    path = next(p for p in (ROOT / "scenes").iterdir() if p.stem == scene)
    dsbl, extra = CASES[scene]
    nu = mujoco.MjModel.from_xml_path(str(path)).nu
    rng = np.random.default_rng(7)
    ctrl = rng.uniform(-1, 1, (STEPS, max(nu, 1)))[:, :nu]
    args = ["run", scene, "--steps", STEPS, "--envs", 2, "--out", tmp_path / "o.h5", "--quiet",
            "--options", ROOT / "configs" / "mujoco_compatible.yaml", *extra]
    if nu:
        np.save(tmp_path / "c.npy", ctrl)
        args += ["--ctrl", tmp_path / "c.npy"]
    p = rigidsim(*args)
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "o.h5") as f:
        qpos = f["qpos"][:]
    ref = mujoco_trajectory(path, dsbl, ctrl)
    np.testing.assert_allclose(qpos[:, 0], ref, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(qpos[:, 0], qpos[:, 1])


def test_keyframe_start_matches_mujoco(tmp_path):
    path = ROOT / "scenes" / "falling_objects.xml"
    p = rigidsim("run", "falling_objects", "--keyframe", "spinning", "--steps", STEPS, "--out", tmp_path / "k.h5",
                 "--quiet", "--options", ROOT / "configs" / "mujoco_compatible.yaml", "--set", "enable_collision=false")
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "k.h5") as f:
        qpos = f["qpos"][:, 0]
    ref = mujoco_trajectory(path, int(mujoco.mjtDisableBit.mjDSBL_CONTACT), np.zeros((STEPS, 0)), keyframe=0)
    np.testing.assert_allclose(qpos, ref, rtol=0, atol=1e-8)
