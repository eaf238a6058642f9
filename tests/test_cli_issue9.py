"""What a new user hit (issue 9), through the real command line: exponent floats in --set lists, --ctrl
shape messages, the --ctrl help, "not supported yet" said once, refusals that name tendon limits and
suggest only --set options that make the scene run, and <material> inside a URDF <collision>."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

from tests.cli_util import assert_clean_error, rigidsim, shared_model
from tests.sweep_slice import selection
from tests.test_cli_errors import PENDULUM_XML


@pytest.fixture()
def scene(tmp_path) -> Path:
    p = tmp_path / "p.xml"
    p.write_text(PENDULUM_XML)
    return p


# ----------------------------------------------------------------------------- 1. --set gravity=[0,0,-1e1]

def test_set_exponent_floats_in_a_list(tmp_path, scene):
    out = tmp_path / "o.h5"
    p = rigidsim("run", scene, "--set", "gravity=[0,0,-1e1]", "--set", "dt=1e-3", "--steps", "0",
                 "--record", "qpos,qvel,xpos,xquat", "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    with h5py.File(out) as f:
        resolved = yaml.safe_load(f.attrs["options_yaml"])
        assert f.attrs["dt"] == 1e-3
    assert resolved["gravity"] == [0.0, 0.0, -10.0] and resolved["dt"] == 1e-3
    # the same in an options file, and a list element that is no number is still refused
    cfg = tmp_path / "c.yaml"
    cfg.write_text("gravity: [1E1, 0, -9.81e0]\n")
    p = rigidsim("options", cfg)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[10.0, 0.0, -9.81]" in p.stdout
    text = assert_clean_error(rigidsim("run", scene, "--set", "gravity=[0,0,-1e1x]", "--out", tmp_path / "b.h5"))
    assert "gravity" in text and "3 finite numbers" in text
    assert not (tmp_path / "b.h5").exists()


# ----------------------------------------------------------------------------- 2. --ctrl shapes

@pytest.mark.parametrize("shape", [(100, 3), (3,), (4, 100, 2, 1)])
def test_ctrl_shape_error_reports_the_files_shape(tmp_path, scene, shape):
    c = tmp_path / "c.npy"
    np.save(c, np.zeros(shape))
    text = assert_clean_error(rigidsim("run", scene, "--ctrl", c, "--steps", "5", "--out", tmp_path / "o.h5"))
    assert f"{c} has shape {shape}" in text, text
    assert "(100, 1, 3)" not in text and "(1, 1, 3)" not in text
    assert "nu=1" in text


def test_ctrl_env_axis_error_reports_the_files_shape(tmp_path, scene):
    c = tmp_path / "c.npy"
    np.save(c, np.zeros((5, 2, 1)))
    text = assert_clean_error(rigidsim("run", scene, "--ctrl", c, "--steps", "5", "--envs", "3",
                                       "--out", tmp_path / "o.h5"))
    assert f"{c} has shape (5, 2, 1): its env axis is 2, expected 3" in text


# ----------------------------------------------------------------------------- 3. --ctrl help

def test_run_help_shows_ctrl_shapes_literally():
    p = rigidsim("run", "--help")
    assert p.returncode == 0, p.stderr
    assert ".npy controls: [nu], [N, nu] or [N, B, nu]." in p.stdout, p.stdout
    assert "\\[" not in p.stdout


# ----------------------------------------------------------------------------- 4. "not supported yet" once

def test_implicit_integrator_refusal_says_it_once(tmp_path, scene):
    text = assert_clean_error(rigidsim("run", scene, "--set", "integrator=implicit", "--steps", "1",
                                       "--out", tmp_path / "o.h5"))
    assert text.count("not supported") == 1, text
    assert "not supported yet: the implicit integrator (use implicitfast, euler or rk4" in text
    assert "--set integrator=implicitfast" in text


ENGINE_GAPS_XML = """<mujoco model="gaps">
  <option density="1.2" integrator="implicitfast"/>
  <worldbody>
    <site name="top" pos="0 0 1"/>
    <body name="b">
      <joint name="slider" type="slide" limited="true" range="-1 1"/>
      <geom size="0.1" contype="0" conaffinity="0"/>
      <site name="a"/>
    </body>
  </worldbody>
  <tendon><spatial name="rope" armature="0.1"><site site="a"/><site site="top"/></spatial></tendon>
  <actuator><motor name="sitemotor" site="a" gear="0 0 1 0 0 0"/></actuator>
</mujoco>
"""


def test_engine_refusals_read_well_embedded(tmp_path):
    """Every engine gap the loaders let through, listed after one "not supported yet:"; no --set that
    removes constraints would make this scene run, so none is suggested."""
    p = tmp_path / "gaps.xml"
    p.write_text(ENGINE_GAPS_XML)
    text = assert_clean_error(rigidsim("run", p, "--steps", "1", "--out", tmp_path / "o.h5"))
    assert text.count("not supported") == 1, text
    assert (f"{p}: not supported yet: tendon armature (tendon 'rope'); fluid forces "
            "(option density/viscosity > 0) with the implicitfast integrator, whose fluid velocity derivatives "
            "are not built (use euler or rk4, e.g. --set integrator=euler); site and body transmissions "
            "(actuator 'sitemotor').") in text, text
    assert "disable_constraint" not in text and "enable_joint_limit" not in text


# ----------------------------------------------------------------------------- 5. limits named, hints that run

def _suggested(text: str) -> list:
    """The --set alternatives of the refusal's hint: [['--set', 'k=v', ...], ...]."""
    m = re.search(r"without them, run with ((?:--set \S+?=\S+? ?)+?)(?: \(or ((?:--set \S+?=\S+? ?)+)\))?\.",
                  text)
    assert m, text
    return [g.split() for g in m.groups() if g]


def _runs(tmp_path, path, sets) -> None:
    out = tmp_path / "run.h5"
    p = rigidsim("run", path, *sets, "--steps", "2", "--out", out, "--quiet")
    assert p.returncode == 0, f"{sets}: " + p.stdout + p.stderr
    with h5py.File(out) as f:
        assert bool(f.attrs["complete"]) and f["qpos"].shape[0] == 3 and np.isfinite(f["qpos"][:]).all()


@pytest.mark.parametrize("rel", [pytest.param(x, id=tid) for x, tid in selection(
    "issue9_scenes", ("dm_control/ball_in_cup.xml", "dm_control/quadruped.xml"), (), 1)])
def test_scenes_with_limits_equalities_and_contacts_run(tmp_path, rel):
    """ball_in_cup (a tendon limit, contacts) and quadruped (equalities, joint limits, contacts), once refused,
    run with every constraint (one of the two per commit, both under RIGIDSIM_SWEEP=1)."""
    out = tmp_path / "o.h5"
    p = rigidsim("run", shared_model(rel), "--steps", "400", "--every", "50", "--out", out, "--quiet",
                 "--record", "qpos,nefc,solver_converged")
    assert p.returncode == 0, p.stdout + p.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["complete"] and f["nefc"][:].max() > 0


# ----------------------------------------------------------------------------- 6. URDF <collision><material>

MATERIAL_URDF = """<?xml version="1.0"?>
<robot name="matbot">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry><material name="blue"/></collision>
  </link>
  <link name="arm">
    <inertial><origin xyz="0 0 0.25"/><mass value="0.5"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><cylinder radius="0.05" length="0.5"/></geometry><material name="blue"/></visual>
    <collision name="arm_geom"><origin xyz="0 0 0.25" rpy="0.1 0 0"/>
      <geometry><cylinder radius="0.05" length="0.5"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></collision>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1" rpy="0 0.3 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>
"""


def test_urdf_material_inside_collision_is_ignored(tmp_path):
    urdf = tmp_path / "matbot.urdf"
    urdf.write_text(MATERIAL_URDF)
    out = tmp_path / "m.h5"
    p = rigidsim("run", urdf, "--steps", "0", "--record", "qpos,qvel,xpos,xquat", "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    with h5py.File(out) as f:
        g = f["model"]
        assert list(g["body_names"].asstr()[:]) == ["world", "arm"]  # base is fused into the world
        assert list(g["joint_names"].asstr()[:]) == ["shoulder"]
        assert g.attrs["ngeom"] == 2 and f["qpos"].shape == (1, 1, 1)
        xpos = f["xpos"][0, 0]
    if importlib.util.find_spec("mujoco") is None:
        return
    import mujoco

    from rigidsim.loaders.urdf_compile import load_urdf
    from tests.mjref import model_from_mujoco
    from tests.test_loader_urdf import _assert_translation_faithful, _model_fields_agree

    _assert_translation_faithful(urdf)  # our MJCF compiled by MuJoCo == MuJoCo's own URDF import
    mjm = mujoco.MjModel.from_xml_path(str(urdf))
    _model_fields_agree(load_urdf(urdf), model_from_mujoco(mjm), urdf.name)
    mjd = mujoco.MjData(mjm)
    mujoco.mj_kinematics(mjm, mjd)
    np.testing.assert_allclose(xpos, mjd.xpos, rtol=0, atol=1e-12)
