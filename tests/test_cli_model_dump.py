"""`rigidsim run SCENE --steps 0`: the /model arrays equal MuJoCo's compiled MjModel, frame 0 its kinematics."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from rigidsim.trajectory import MODEL_ARRAYS, MODEL_NAMES, MODEL_SIZES
from tests.cli_util import rigidsim
from tests.cli_util import shared_model

mujoco = pytest.importorskip("mujoco")

MODELS = ["dm_control/humanoid.xml", "dm_control/cheetah.xml", "dm_control/walker.xml",
          "mujoco_warp/test_data/pendula.xml", "menagerie/franka_emika_panda/scene.xml", "dm_control/dog.xml",
          "dm_control/humanoid_CMU.xml", "dm_control/hopper.xml"]


def _quat_close(a, b, atol):
    """Quaternions equal up to sign, row by row."""
    a, b = a.reshape(-1, 4), b.reshape(-1, 4)
    sign = np.where((a * b).sum(1, keepdims=True) < 0, -1.0, 1.0)
    np.testing.assert_allclose(a, sign * b, rtol=0, atol=atol)


@pytest.mark.parametrize("rel", MODELS)
def test_model_dump_equals_mujoco(rel, tmp_path):
    path = shared_model(rel)
    out = tmp_path / "m.h5"
    # the model and frame 0's kinematics do not depend on constraints: the smooth kernel, which every scene
    # shares, instead of a constraint kernel compiled for each scene
    p = rigidsim("run", path, "--steps", "0", "--record", "qpos,qvel,xpos,xquat", "--out", out, "--quiet",
                 "--set", "disable_constraint=true")
    assert p.returncode == 0, p.stderr
    mjm = mujoco.MjModel.from_xml_path(str(path))
    mjd = mujoco.MjData(mjm)
    mujoco.mj_kinematics(mjm, mjd)
    with h5py.File(out) as f:
        g = f["model"]
        for s in MODEL_SIZES:
            assert g.attrs[s] == getattr(mjm, s if s != "nu" else "nu"), s
        for ds, kind in MODEL_NAMES.items():
            obj = {"body": mujoco.mjtObj.mjOBJ_BODY, "jnt": mujoco.mjtObj.mjOBJ_JOINT,
                   "geom": mujoco.mjtObj.mjOBJ_GEOM, "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
                   "sensor": mujoco.mjtObj.mjOBJ_SENSOR}[kind]
            names = [mujoco.mj_id2name(mjm, obj, i) or "" for i in range(len(g[ds]))]
            assert list(g[ds].asstr()[:]) == names, ds
        for name in MODEL_ARRAYS:
            ours, ref = g[name][:], np.asarray(getattr(mjm, name)).reshape(g[name].shape)
            if np.issubdtype(ref.dtype, np.integer) or ref.dtype == np.uint8:
                np.testing.assert_array_equal(ours, ref, err_msg=name)
            elif name.endswith("quat"):
                _quat_close(ours, ref, 1e-9)
            elif name in ("body_mass", "body_inertia"):
                np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=0, err_msg=name)
            else:
                np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(f["xpos"][0, 0], mjd.xpos, rtol=0, atol=1e-9)
        _quat_close(f["xquat"][0, 0], mjd.xquat, 1e-9)
        np.testing.assert_array_equal(f["qpos"][0, 0], mjm.qpos0)
