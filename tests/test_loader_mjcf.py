"""MJCF loader against MuJoCo's compiler on third-party models (../shared), field by field."""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.cli_util import shared_model
from tests.mjref import model_from_mujoco, mujoco

DM_CONTROL = ["acrobot", "ball_in_cup", "cartpole", "cheetah", "finger", "fish", "hopper", "humanoid",
              "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass", "reacher", "stacker", "swimmer",
              "walker", "quadruped"]
WARP = ["collision", "constraints_mjvariant", "pendula", "actuation/actuation", "actuation/actuators",
        "actuation/position", "hfield/hfield", "humanoid/humanoid", "jdotv/connect_2d", "jdotv/connect_3d",
        "jdotv/weld_3d"]


def _both(rel):
    path = shared_model(rel)
    ours = load_mjcf(path)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(path)))
    return ours, ref


@pytest.mark.parametrize("name", DM_CONTROL)
def test_dm_control_matches_mujoco(name):
    ours, ref = _both(f"dm_control/{name}.xml")
    assert compare_models(ours, ref) == []


@pytest.mark.parametrize("name", WARP)
def test_mujoco_warp_models_match_mujoco(name):
    ours, ref = _both(f"mujoco_warp/test_data/{name}.xml")
    assert compare_models(ours, ref) == []


def test_names_and_source():
    path = shared_model("dm_control/cartpole.xml")
    m = load_mjcf(path)
    assert m.source == str(path)
    assert m.names["body"][0] == "world"
    assert "slider" in m.names["jnt"]
    m.validate()


def test_explicit_options_recorded():
    m = load_mjcf(shared_model("dm_control/humanoid.xml"))
    assert "timestep" in m.opt.explicit
    assert m.opt.timestep == 0.005


def _fk(m):
    """World poses of bodies at qpos0 by plain forward kinematics."""
    from rigidsim.loaders.setconst import Kin

    return Kin(m, m.arrays["qpos0"])


@pytest.mark.parametrize("name", ["humanoid", "cheetah", "walker"])
def test_frame0_kinematics_matches_mujoco(name):
    path = shared_model(f"dm_control/{name}.xml")
    m = load_mjcf(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mjm)
    mujoco.mj_kinematics(mjm, d)
    k = _fk(m)
    np.testing.assert_allclose(k.xpos, d.xpos, atol=1e-9)
    q, r = k.xquat, d.xquat
    assert np.all(np.minimum(np.abs(q - r).max(1), np.abs(q + r).max(1)) < 1e-9)

