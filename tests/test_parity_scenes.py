"""End to end against MuJoCo: the bundled scenes through `rigidsim run` (loader, options, engine, writer)
give mj_step's trajectory, with enable_mujoco_compatibility so both use the scene's own settings.

The scenes with contacts (falling_objects landing, boxes27 settling, sphere_bin's spheres in their bin) are
free runs through contact, where a last-bit difference grows: there rigidsim is held to MuJoCo's own
sensitivity, the divergence of MuJoCo from MuJoCo started 1e-9 away (`CONTACT_GAIN` times it, plus
`CONTACT_FLOOR`), frame by frame."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, rigidsim

mujoco = pytest.importorskip("mujoco")
from tests.mjref import mujoco_rollout  # noqa: E402

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
    return mujoco_rollout(m, d, ctrl[:STEPS])[0]


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


# ------------------------------------------------------------------------------------------ with contacts
# scene -> steps: past the first contact (MuJoCo's first step with ncon > 0: falling_objects 214, boxes27 23,
# sphere_bin 0) and short enough that MuJoCo's own 1e-9 divergence stays small (boxes27 reaches 2.7e-4 by
# step 150 as the pile settles; sphere_bin 2.6e-7 by step 200, 0.55 by step 1000)
CONTACT_SCENES = {"falling_objects": 400, "boxes27": 150, "sphere_bin": 200}
CONTACT_GAIN, CONTACT_FLOOR = 10.0, 1e-9
PERTURB = 1e-9


def perturbed_divergence(path, steps: int, seed: int = 0) -> np.ndarray:
    """Per frame, max |qpos| difference between MuJoCo's run and MuJoCo's run from qpos0 + N(0, 1e-9)."""
    m = mujoco.MjModel.from_xml_path(str(path))
    d, e = mujoco.MjData(m), mujoco.MjData(m)
    e.qpos[:] += PERTURB * np.random.default_rng(seed).standard_normal(m.nq)
    out = [np.abs(d.qpos - e.qpos).max()]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        mujoco.mj_step(m, e)
        out.append(np.abs(d.qpos - e.qpos).max())
    return np.array(out)


def mujoco_free_run(path, steps: int):
    """qpos [steps + 1, nq] of MuJoCo's run from qpos0 and the number of contacts at each of those states."""
    m = mujoco.MjModel.from_xml_path(str(path))
    return mujoco_rollout(m, mujoco.MjData(m), steps=steps)


@pytest.mark.parametrize("scene", sorted(CONTACT_SCENES))
def test_contact_scene_free_run_within_mujocos_own_divergence(scene, tmp_path):
    steps = CONTACT_SCENES[scene]
    path = ROOT / "scenes" / f"{scene}.xml"
    p = rigidsim("run", scene, "--steps", steps, "--out", tmp_path / "o.h5", "--quiet",
                 "--options", ROOT / "configs" / "mujoco_compatible.yaml")
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "o.h5") as f:
        qpos = f["qpos"][:, 0]
        ncon = np.diff(f["contacts/offsets"][:])  # per frame (one env)
    ref, ref_ncon = mujoco_free_run(path, steps)
    assert ncon.shape == (steps + 1,) and ncon.max() > 0, f"{scene}: no contact in {steps} steps"
    np.testing.assert_array_equal(ncon, ref_ncon, err_msg="contacts per frame")
    err = np.abs(qpos - ref).max(axis=1)
    bound = CONTACT_GAIN * np.maximum.accumulate(perturbed_divergence(path, steps)) + CONTACT_FLOOR
    worst = int(np.argmax(err / bound))
    print(f"{scene}: {steps} steps, ncon max {ncon.max()} (MuJoCo {max(ref_ncon)}), qpos err max {err.max():.3g}, "
          f"MuJoCo 1e-9 divergence max {bound[-1]:.3g}; worst frame {worst}: {err[worst]:.3g} vs {bound[worst]:.3g}")
    assert (err <= bound).all(), (f"{scene}: frame {worst}: qpos off MuJoCo's by {err[worst]:.3g}, beyond "
                                  f"{CONTACT_GAIN:g} x MuJoCo's own 1e-9 divergence + {CONTACT_FLOOR:g} ({bound[worst]:.3g})")
