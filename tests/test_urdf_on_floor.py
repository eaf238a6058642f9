"""The bundled `arm_on_floor` scene: the URDF arm attached into an MJCF that adds a floor and motors (issue 28,
item 7). MuJoCo reads the same file (its <attach> of a URDF model), and `rigidsim compare` agrees with it; the
motors drive the arm through `rigidsim run --ctrl`, and the joint accelerations they cause match MuJoCo's.
"""

from __future__ import annotations

import h5py
import numpy as np

from rigidsim.bundled import find_scene
from rigidsim.loaders.mjcf import load_mjcf
from tests.cli_util import rigidsim
from tests.mjref import mujoco


def test_attached_urdf_model_as_mujoco():
    path = find_scene("arm_on_floor")
    ours = load_mjcf(path)
    ref = mujoco.MjModel.from_xml_path(str(path))
    assert ours.names["body"] == [mujoco.mj_id2name(ref, mujoco.mjtObj.mjOBJ_BODY, i) or "" for i in range(ref.nbody)]
    assert ours.names["body"] == ["world", "arm_base", "arm_upper", "arm_fore"]
    assert ours.nu == ref.nu == 2
    for f in ("body_pos", "body_mass", "body_inertia", "jnt_axis", "dof_damping", "actuator_gear"):
        np.testing.assert_allclose(np.asarray(getattr(ours, f), float), getattr(ref, f), rtol=1e-12, err_msg=f)


def test_compare_passes():
    p = rigidsim("compare", "arm_on_floor", "--steps", "50")
    assert p.returncode == 0, p.stdout + p.stderr


def test_run_with_ctrl_drives_it(tmp_path):
    ctrl = np.tile([1.0, -0.5], (20, 1))
    np.save(tmp_path / "ctrl.npy", ctrl)
    out = tmp_path / "t.h5"
    p = rigidsim("run", "arm_on_floor", "--steps", "20", "--ctrl", tmp_path / "ctrl.npy", "--out", out, "-q",
                 "--set", "enable_mujoco_compatibility=true")
    assert p.returncode == 0, p.stdout + p.stderr
    ref = mujoco.MjModel.from_xml_path(str(find_scene("arm_on_floor")))
    d = mujoco.MjData(ref)
    for k in range(20):
        d.ctrl[:] = ctrl[k]
        mujoco.mj_step(ref, d)
    with h5py.File(out) as f:
        qpos = f["qpos"][-1, 0]
    np.testing.assert_allclose(qpos, d.qpos, atol=1e-9)
    assert np.all(np.abs(d.qpos) > 1e-3)  # the motors moved both joints


def test_listed_with_its_description():
    p = rigidsim("scenes")
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if "arm_on_floor" in ln)
    assert "floor" in line and "motors" in line
