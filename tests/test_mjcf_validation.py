"""Bad MJCF the MuJoCo way (issue 13), through the real command line.

Each example of the issue: what MuJoCo 4.0 refuses is refused (exit 2, one paragraph naming file:line, the
element and the attribute, no traceback, no output file); what it accepts is accepted, with MuJoCo's
meaning; a form it accepts that rigidsim does not build is refused as "not supported"; and a run that
fails before its first frame leaves a readable file (the model, complete=false) that its message names.
MuJoCo's own verdict on each scene is asserted beside ours when the `mujoco` package is installed.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from tests.cli_util import assert_clean_error, rigidsim
from rigidsim.loaders.mjcf import load_mjcf

try:
    import mujoco
except ImportError:  # the verdicts below are MuJoCo 4.0's, written out; with mujoco they are re-checked
    mujoco = None

BODY = """<mujoco>
  <asset>{asset}</asset>
  <worldbody>
    <body name="b" pos="{pos}">
      {joint}
      {geom}
    </body>
    {world}
  </worldbody>
  {extra}
</mujoco>
"""
JOINT = '<joint name="j" type="hinge" axis="0 1 0"/>'
GEOM = '<geom size="0.1" contype="0" conaffinity="0"/>'


def scene(tmp_path: Path, asset="", pos="0 0 1", joint=JOINT, geom=GEOM, world="", extra="") -> Path:
    p = tmp_path / "s.xml"
    p.write_text(BODY.format(asset=asset, pos=pos, joint=joint, geom=geom, world=world, extra=extra))
    return p


def line_of(p: Path, needle: str) -> int:
    return next(i for i, t in enumerate(p.read_text().splitlines(), 1) if needle in t)


def mujoco_accepts(p: Path) -> bool:
    try:
        mujoco.MjModel.from_xml_path(str(p))
        return True
    except ValueError:
        return False


def refused(tmp_path, p: Path, needle: str, *words: str) -> str:
    """`rigidsim run p` exits 2 naming p:line-of-needle and each word; MuJoCo refuses p too; no file."""
    if mujoco is not None:
        assert not mujoco_accepts(p), "MuJoCo 4.0 accepts this scene"
    out = tmp_path / "o.h5"
    text = assert_clean_error(rigidsim("run", p, "--steps", "0", "--record", "qpos", "--out", out))
    assert f"{p}:{line_of(p, needle)}:" in text, text
    for w in words:
        assert w in text, text
    assert not out.exists()
    return text


def accepted(tmp_path, p: Path, *extra) -> h5py.File:
    """`rigidsim run p --steps 0` succeeds (MuJoCo accepts p too); the file it wrote, open."""
    if mujoco is not None:
        assert mujoco_accepts(p), "MuJoCo 4.0 refuses this scene"
    out = tmp_path / "o.h5"
    r = rigidsim("run", p, "--steps", "0", "--record", "qpos", "--out", out, "--quiet", *extra)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Warning" not in r.stderr, r.stderr
    return h5py.File(out, "r")


# -- rigidsim accepted what MuJoCo refuses ------------------------------------------------------------

@pytest.mark.parametrize("where, value, element", [("body", "1 2", "body"), ("geom", "-1", "geom")])
def test_too_few_numbers_in_pos(tmp_path, where, value, element):
    p = scene(tmp_path, pos=value) if where == "body" else \
        scene(tmp_path, geom=f'<geom size="0.1" pos="{value}"/>')
    refused(tmp_path, p, f'pos="{value}"', f"<{element}>", "'pos'", "does not have enough data")


def test_too_few_numbers_in_material_rgba(tmp_path):
    p = scene(tmp_path, asset='<material name="m" rgba="1 2"/>')
    refused(tmp_path, p, 'rgba="1 2"', "<material>", "'rgba'", "does not have enough data")


def test_geom_names_a_material_that_does_not_exist(tmp_path):
    p = scene(tmp_path, geom='<geom size="0.1" material="1 2"/>')
    refused(tmp_path, p, 'material="1 2"', "<geom>", "'material'", "material '1 2'", "does not exist")


def test_material_of_a_default_class_must_exist(tmp_path):
    p = scene(tmp_path, extra='<default><geom material="nope"/></default>')
    refused(tmp_path, p, "<geom ", "material 'nope'")


def test_denormal_joint_axis(tmp_path):
    p = scene(tmp_path, joint='<joint axis="1e-320"/>')
    refused(tmp_path, p, 'axis="1e-320"', "<joint>", "'axis'", "does not have enough data")


def test_zero_joint_axis(tmp_path):
    p = scene(tmp_path, joint='<joint axis="0 0 1e-320"/>')
    refused(tmp_path, p, 'axis="0 0 1e-320"', "axis too small")


@pytest.mark.parametrize("where", ["body pos", "joint axis", "connect anchor"])
def test_absurd_magnitude_alone(tmp_path, where):
    """MuJoCo refuses "999999999999" in these attributes for its count (one number, three wanted); three
    such numbers are accepted (below 1.8e308 a double is fine), and an int attribute takes at most 2^31-1."""
    big = "999999999999"
    if where == "body pos":
        p, needle = scene(tmp_path, pos=big), f'pos="{big}"'
    elif where == "joint axis":
        p, needle = scene(tmp_path, joint=f'<joint axis="{big}"/>'), f'axis="{big}"'
    else:
        p = scene(tmp_path, extra=f'<equality><connect body1="b" anchor="{big}"/></equality>')
        needle = f'anchor="{big}"'
    refused(tmp_path, p, needle, "does not have enough data", f"'{needle.split('=')[0]}'")


def test_number_too_large(tmp_path):
    p = scene(tmp_path, pos="1e309 0 1")
    refused(tmp_path, p, 'pos="1e309 0 1"', "'pos'", "too large")
    p = scene(tmp_path, geom='<geom size="0.1" contype="2147483648"/>')
    refused(tmp_path, p, "contype", "'contype'", "too large")


def test_overflowing_geom_mass_is_refused(tmp_path):
    """A capsule of radius 1e308: its mass overflows to inf and its inertia to NaN; MuJoCo refuses the body."""
    p = scene(tmp_path, geom='<geom type="capsule" size="1e308 .2"/>')
    refused(tmp_path, p, '<body name="b"', "mass and inertia of moving bodies", "'b'")


def test_camera_xyaxes_not_a_number(tmp_path):
    p = scene(tmp_path, world='<camera xyaxes="true"/>')
    refused(tmp_path, p, 'xyaxes="true"', "<camera>", "'xyaxes'", "bad number format")


def test_texture_mark_keyword(tmp_path):
    p = scene(tmp_path, asset='<texture name="t" type="2d" builtin="checker" width="8" height="8" mark="1e308"/>')
    refused(tmp_path, p, 'mark="1e308"', "<texture>", "'mark'", "not a valid keyword")


def test_texture_renamed_under_its_material(tmp_path):
    p = scene(tmp_path, asset='<texture name="-0" type="2d" builtin="checker" width="8" height="8"/>'
                              '<material name="m" texture="grid"/>')
    refused(tmp_path, p, 'texture="grid"', "<material>", "texture 'grid'", "does not exist")


def test_visual_scale_too_much_data(tmp_path):
    p = scene(tmp_path, extra='<visual><scale forcewidth="-5 -5 -5"/></visual>')
    refused(tmp_path, p, "forcewidth", "<scale>", "'forcewidth'", "too much data")


def test_rgba_arity_and_sign(tmp_path):
    """A negative colour is MuJoCo's to accept; a single number is not an rgba."""
    p = scene(tmp_path, geom='<geom size="0.1" rgba="-1"/>')
    refused(tmp_path, p, 'rgba="-1"', "'rgba'", "does not have enough data")
    accepted(tmp_path, scene(tmp_path, geom='<geom size="0.1" rgba="-1 0 0 1"/>')).close()


# -- rigidsim refused what MuJoCo accepts -------------------------------------------------------------

def test_empty_attributes_are_absent(tmp_path):
    """pos="", size="" (the class's size applies) and qvel="" read as if the attribute were not there."""
    p = scene(tmp_path, pos="", geom='<geom size="" pos=""/>',
              extra='<default><geom size="0.25"/></default><keyframe><key name="k" qvel=""/></keyframe>')
    with accepted(tmp_path, p, "--keyframe", "k") as f:
        assert list(f["model/body_pos"][1]) == [0.0, 0.0, 0.0]
        assert f["model/geom_size"][0, 0] == 0.25
        assert f["qpos"].shape == (1, 1, 1)


def test_empty_camera_and_light_target_is_no_target(tmp_path):
    p = scene(tmp_path, world='<camera mode="targetbody" target=""/><light mode="targetbody" target=""/>')
    with accepted(tmp_path, p) as f:
        assert f["qpos"].shape == (1, 1, 1)


def test_moving_body_mass_from_a_jointless_child(tmp_path):
    """MuJoCo checks a jointed body's mass and inertia, or failing that those of a jointless descendant: a
    capsule of radius 1e308 (mass inf, inertia NaN) passes when a jointless child has a valid mass."""
    p = scene(tmp_path, geom='<geom type="capsule" size="1e308 .2"/><body name="c"><geom size=".1"/></body>')
    if mujoco is not None:
        assert mujoco_accepts(p)
    m = load_mjcf(p)  # (its first step's qacc is NaN on both sides: not run here)
    assert np.isnan(m.body_inertia[1]).all() and m.body_mass[2] > 0


def test_short_keyframe_keeps_the_rest(tmp_path):
    """<key qvel="-1"> with two dofs: MuJoCo sets the first value and leaves the second at zero."""
    joints = '<joint name="a" axis="0 1 0"/><joint name="c" axis="1 0 0"/>'
    p = scene(tmp_path, joint=joints, extra='<keyframe><key name="k" qvel="-1" qpos="0.5"/></keyframe>')
    with accepted(tmp_path, p, "--keyframe", "k", "--record", "qpos,qvel") as f:
        assert list(f["qpos"][0, 0]) == [0.5, 0.0]
        assert list(f["qvel"][0, 0]) == [-1.0, 0.0]
    if mujoco is not None:
        m = mujoco.MjModel.from_xml_path(str(p))
        assert list(m.key_qvel[0]) == [-1.0, 0.0] and list(m.key_qpos[0]) == [0.5, 0.0]


def test_damping_polynomial_is_named_not_supported(tmp_path):
    """MuJoCo 4.0 reads damping="1 2" as a damper -v (1 + 2|v|): a nonlinear damper rigidsim does not build."""
    p = scene(tmp_path, joint='<joint axis="0 1 0" damping="1 2"/>')
    if mujoco is not None:
        m = mujoco.MjModel.from_xml_path(str(p))
        assert m.dof_damping[0] == 1.0 and list(m.dof_dampingpoly[0]) == [2.0, 0.0]
    text = assert_clean_error(rigidsim("run", p, "--steps", "0", "--out", tmp_path / "o.h5"))
    assert f"{p}:{line_of(p, 'damping=')}:" in text
    assert "'damping'" in text and "not supported" in text and "polynomial" in text
    # a zero polynomial is the plain damper
    with accepted(tmp_path, scene(tmp_path, joint='<joint axis="0 1 0" damping="1 0 0"/>')) as f:
        assert f["model/dof_damping"][0] == 1.0


# -- a failed run never claims a file it did not write ------------------------------------------------

def test_non_finite_numbers_are_refused(tmp_path):
    """inf and nan never reach the engine (MuJoCo accepts pos="inf 0 0" and then simulates NaNs)."""
    for pos in ("inf", "inf 0 0"):
        p = scene(tmp_path, pos=pos)
        out = tmp_path / "o.h5"
        text = assert_clean_error(rigidsim("run", p, "--steps", "5", "--out", out))
        assert f"{p}:{line_of(p, 'pos=')}:" in text and "'pos'" in text
        assert ("non-finite" in text) == (pos != "inf")
        assert not out.exists()
    # MuJoCo accepts a keyframe of nan; rigidsim refuses to start from it (a keyframe not used is harmless)
    p = scene(tmp_path, extra='<keyframe><key name="k" qpos="nan"/></keyframe>')
    if mujoco is not None:
        assert mujoco_accepts(p)
    text = assert_clean_error(rigidsim("run", p, "--keyframe", "k", "--steps", "5", "--out", tmp_path / "o.h5"))
    assert "--keyframe" in text and "keyframe 'k'" in text and "qpos" in text and "non-finite" in text
    assert not (tmp_path / "o.h5").exists()


def test_failed_first_frame_writes_the_model(tmp_path):
    """pos="1e308 0 1" is a double MuJoCo accepts; its state overflows at once. The run fails (exit 1), says
    so, and the file it names exists: the model, zero frames, complete=false. No numpy warning is shown."""
    p = scene(tmp_path, pos="1e308 0 1")
    if mujoco is not None:
        assert mujoco_accepts(p)
    out = tmp_path / "o.h5"
    r = rigidsim("run", p, "--steps", "10", "--out", out)
    text = assert_clean_error(r, code=1)
    assert "Warning" not in text and "overflow" not in text
    assert str(out) in text and "complete=false" in text
    with h5py.File(out, "r") as f:
        assert not f.attrs["complete"] and f.attrs["n_frames"] == 0
        assert f["qpos"].shape == (0, 1, 1)
        assert f["model/body_pos"][1, 0] == 1e308


def test_negative_armature_runs_or_leaves_its_file(tmp_path):
    """MuJoCo accepts armature="-1" (an indefinite mass matrix): whatever the run does, the file it names is
    there and readable, and its complete flag matches the exit status."""
    p = scene(tmp_path, joint='<joint axis="0 1 0" armature="-1"/>')
    if mujoco is not None:
        assert mujoco_accepts(p)
    out = tmp_path / "o.h5"
    r = rigidsim("run", p, "--steps", "50", "--out", out, "--quiet")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and "Warning" not in r.stderr, r.stderr
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) == (r.returncode == 0)
        assert f["qpos"].shape[0] == f.attrs["n_frames"]
    if r.returncode:
        assert str(out) in r.stderr and "complete=false" in r.stderr


def test_model_without_joints_writes_its_file(tmp_path):
    """A model whose only joint was removed: nq = 0, the file holds [T, B, 0] positions."""
    p = scene(tmp_path, joint="")
    out = tmp_path / "o.h5"
    r = rigidsim("run", p, "--steps", "5", "--out", out, "--quiet", "--record", "qpos,qvel,xpos")
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["complete"] and f["qpos"].shape == (6, 1, 0) and f["xpos"].shape == (6, 1, 2, 3)
        assert np.allclose(f["xpos"][-1, 0, 1], [0, 0, 1])
