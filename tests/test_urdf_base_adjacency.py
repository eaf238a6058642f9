"""A fixed-base URDF arm whose link 1 overlaps its base link (fused into the world) - issue 28 item 6.

Without MuJoCo compatibility (Genesis's defaults, enable_adjacent_collision false) the base counts as link 1's
parent link, so the pair is not a candidate; with compatibility it is, as MuJoCo collides it (its filterparent
skips bodies welded to the world). A floor plane still collides with link 1 either way.
"""

from __future__ import annotations

import numpy as np

from rigidsim import options as opts
from rigidsim.engine.collision_pairs import collision_pairs
from rigidsim.loaders.urdf_compile import load_urdf
from tests.mjref import mujoco

ARM = """<?xml version="1.0"?>
<robot name="jammed">
  <link name="base">
    <inertial><mass value="3"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="link1">
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.04" length="0.4"/></geometry></collision>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/><origin xyz="0 0 0.09"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
</robot>
"""


def _pairs(path, **user):
    m = load_urdf(path)
    r = opts.resolve(m, {}, user)
    return m, {tuple(p) for p in collision_pairs(m, r)[0].tolist()}


def test_base_and_link1_filtered_without_compatibility(tmp_path):
    p = tmp_path / "jammed.urdf"
    p.write_text(ARM)
    m, off = _pairs(p)
    base, link1, link2 = 0, 1, 2  # geoms: the base (world), link1, link2
    assert m.geom_bodyid[base] == 0 and m.geom_bodyid[link1] == 1
    assert (base, link1) not in off
    assert (base, link2) in off  # not adjacent: still collides
    _, adj = _pairs(p, enable_adjacent_collision=True)
    assert (base, link1) in adj


def test_with_compatibility_as_mujoco(tmp_path):
    p = tmp_path / "jammed.urdf"
    p.write_text(ARM)
    _, on = _pairs(p, enable_mujoco_compatibility=True)
    ref = mujoco.MjModel.from_xml_path(str(p))
    d = mujoco.MjData(ref)
    mujoco.mj_forward(ref, d)
    touching = {tuple(sorted(map(int, c.geom))) for c in d.contact[:d.ncon]}
    assert (0, 1) in touching  # MuJoCo collides the base with link 1: they overlap by 10 mm
    assert touching <= on


def test_floor_plane_is_not_a_base(tmp_path):
    """An MJCF floor in the world body is terrain: a body hinged to the world still collides with it."""
    p = tmp_path / "s.xml"
    p.write_text('<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>'
                 '<geom name="post" type="box" size="0.05 0.05 0.05" pos="0 0 0.05"/>'
                 '<body pos="0 0 0.12"><joint type="hinge" axis="1 0 0"/><geom type="capsule" size="0.02 0.1"/>'
                 '</body></worldbody></mujoco>')
    from rigidsim.loaders.mjcf import load_mjcf

    m = load_mjcf(p)
    r = opts.resolve(m, {}, {})
    pairs = {tuple(x) for x in collision_pairs(m, r)[0].tolist()}
    assert (0, 2) in pairs and (1, 2) not in pairs
    r = opts.resolve(m, {}, {"enable_mujoco_compatibility": True})
    assert (1, 2) in {tuple(x) for x in collision_pairs(m, r)[0].tolist()}


def test_inspect_warns_of_pairs_penetrating_at_qpos0(tmp_path):
    """`rigidsim inspect` names the pairs that already penetrate (MuJoCo finds the same 10 mm)."""
    from tests.cli_util import rigidsim

    p = tmp_path / "jammed.urdf"
    p.write_text(ARM)
    on = rigidsim("inspect", p, "--set", "enable_mujoco_compatibility=true")
    assert on.returncode == 0, on.stderr
    text = " ".join(on.stdout.split())
    assert "already penetrate" in text and "geom 0 (body world) and geom 1 (body link1): 10 mm" in text
    off = rigidsim("inspect", p)  # Genesis's defaults: the pair is filtered, nothing penetrates
    assert off.returncode == 0, off.stderr
    assert "already penetrate" not in off.stdout
