"""URDF files as robotics users bring them (issue 28, items 4 and 5), checked against MuJoCo 4.0's own import.

- Colours: every geom's rgba equals MuJoCo's, for the three kinds of coloured URDF met in the wild: robot-level
  named materials (a two-link arm), colours inline in each <visual> with meshes (an iiwa-like chain, written here
  with its OBJ meshes), and a quadruped-like tree referencing materials by name, some colourless, one undefined,
  one defined after its use. `rigidsim compare FILE` exits 0 on each: stage 1 compares geom_rgba too.
- Bullet's <contact> inside <link> (PyBullet and Genesis's panda_bullet files carry it) loads as MuJoCo loads it:
  ignored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigidsim.loaders.urdf_compile import load_urdf
from tests.cli_util import rigidsim
from tests.mjref import mujoco

DATA = Path(__file__).resolve().parent / "data" / "urdf_colour"

_BOX_OBJ = "\n".join(
    [f"v {x} {y} {z}" for x in (-0.04, 0.04) for y in (-0.04, 0.04) for z in (0.0, 0.3)]
    + [f"f {a} {b} {c}\nf {a} {c} {d}" for a, b, c, d in
       ((1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6))]) + "\n"


def _link(name: str, rgba: str, mesh: str, extra: str = "") -> str:
    return (f'<link name="{name}">'
            f'<inertial><origin xyz="0 0 0.15"/><mass value="1.5"/>'
            f'<inertia ixx="0.012" iyy="0.012" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<visual><geometry><mesh filename="meshes/{mesh}.obj"/></geometry>'
            f'<material name="{name}_mat"><color rgba="{rgba}"/></material></visual>'
            f'<collision><geometry><mesh filename="meshes/{mesh}.obj"/></geometry></collision>{extra}</link>')


def iiwa_like(tmp_path: Path) -> Path:
    """A hanging 4-link chain (joint axes z, y, z, y) with inline colours, OBJ meshes and Bullet <contact>s."""
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "link.obj").write_text(_BOX_OBJ)
    contact = ('<contact><lateral_friction value="0.8"/><rolling_friction value="0.01"/>'
               '<stiffness value="30000"/><damping value="1000"/></contact>')
    links = [_link("iiwa_link_0", "0.4 0.4 0.4 1", "link", contact)]
    links += [_link(f"iiwa_link_{k}", rgba, "link", contact if k == 2 else "")
              for k, rgba in ((1, "1 0.423 0.039 1"), (2, "0.2 0.2 0.2 0.9"), (3, "1 0.423 0.039 1"),
                              (4, "0.5 0.7 0.3 1"))]
    joints = []
    for k in range(1, 5):
        axis = "0 0 1" if k % 2 else "0 1 0"
        rpy = "0 0 0" if k > 1 else "3.0 0.2 0"  # the chain hangs below its base, tilted so that it swings
        xyz = "0 0 0.32" if k > 1 else "0 0 -0.02"
        joints.append(f'<joint name="iiwa_joint_{k}" type="revolute"><parent link="iiwa_link_{k - 1}"/>'
                      f'<child link="iiwa_link_{k}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
                      f'<limit lower="-2.9" upper="2.9" effort="176" velocity="1.7"/>'
                      f'<dynamics damping="0.5"/></joint>')
    p = tmp_path / "iiwa_like.urdf"
    p.write_text('<?xml version="1.0"?>\n<robot name="iiwa_like">\n' + "\n".join(links + joints) + "\n</robot>\n")
    return p


def _files(tmp_path):
    return {"two_link_arm": DATA / "two_link_arm.urdf", "quadruped_like": DATA / "quadruped_like.urdf",
            "iiwa_like": iiwa_like(tmp_path)}


@pytest.mark.parametrize("kind", ["two_link_arm", "iiwa_like", "quadruped_like"])
def test_geom_rgba_as_mujoco_imports_it(tmp_path, kind):
    path = _files(tmp_path)[kind]
    ref = mujoco.MjModel.from_xml_path(str(path))
    ours = load_urdf(path)
    assert ours.ngeom == ref.ngeom
    np.testing.assert_array_equal(np.asarray(ours.geom_rgba, dtype=np.float32), ref.geom_rgba)
    # not all grey: the files' colours arrive (MuJoCo's default grey is 0.5 0.5 0.5 1)
    assert np.any(ref.geom_rgba[:, :3] != 0.5)


def test_quadruped_colour_rules():
    """A colourless or undefined material leaves the link's colour as it was; a later <visual> colours the
    collision geoms after it, not before; a material defined after its use still counts; <material> inside
    <collision> is ignored."""
    ours = load_urdf(DATA / "quadruped_like.urdf")
    grey, white, red = [0.5, 0.5, 0.5, 1], [1, 1, 1, 1], [0.9, 0.1, 0.1, 1]
    names = ours.names["geom"]
    rgba = {i: list(np.round(ours.geom_rgba[i], 6)) for i in range(ours.ngeom)}
    by_body = {}
    for g in range(ours.ngeom):
        by_body.setdefault(ours.names["body"][int(ours.geom_bodyid[g])], []).append(rgba[g])
    assert by_body["world"] == [white]           # the trunk, fused into the world
    assert by_body["FL_thigh"] == [grey]         # "black" has no colour
    assert by_body["FR_thigh"] == [grey]         # "grey" is not defined
    assert by_body["RL_thigh"] == [red]          # "red" is defined at the end of the file
    assert by_body["RR_thigh"] == [white, white]  # the colourless second visual keeps white
    assert by_body["FL_calf"] == [grey]          # its visual comes after the collision
    assert "RR_foot" in names


def test_bullet_contact_in_link_loads_as_in_mujoco(tmp_path):
    path = iiwa_like(tmp_path)
    ref = mujoco.MjModel.from_xml_path(str(path))
    ours = load_urdf(path)
    for f in ("geom_friction", "geom_solref", "geom_solimp", "body_mass", "geom_size"):
        np.testing.assert_allclose(np.asarray(getattr(ours, f), dtype=float), getattr(ref, f), rtol=1e-12,
                                   err_msg=f)


def _kinds():
    """One of the three URDF kinds per commit (tests/sweep_slice.py); all under RIGIDSIM_SWEEP=1."""
    from tests.sweep_slice import selection

    full = ["two_link_arm", "iiwa_like", "quadruped_like"]
    return [pytest.param(k, id=tid) for k, tid in selection("urdf_compare", full, (), 1)]


@pytest.mark.parametrize("kind", _kinds())
def test_compare_passes(tmp_path, kind):
    path = _files(tmp_path)[kind]
    p = rigidsim("compare", path, "--steps", "60")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 model" in p.stdout and "FAIL" not in p.stdout


def test_tiny_mesh_volume_hint_is_urdf_advice(tmp_path):
    """A mesh of too small a volume: MuJoCo refuses it (an <inertial> does not help); the hint is one a URDF
    user can act on, not MJCF's inertia='shell' on a mesh asset URDF cannot spell."""
    (tmp_path / "tiny.obj").write_text("v 0 0 0\nv 1e-5 0 0\nv 0 1e-5 0\nv 0 0 1e-5\n"
                                       "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    p = tmp_path / "tiny.urdf"
    p.write_text('<robot name="t"><link name="base"/>\n<link name="l">'
                 '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
                 '</inertial>\n<collision><geometry><mesh filename="tiny.obj"/></geometry></collision></link>\n'
                 '<joint name="j" type="revolute"><parent link="base"/><child link="l"/></joint></robot>\n')
    with pytest.raises(Exception, match="volume is too small"):
        mujoco.MjModel.from_xml_path(str(p))
    r = rigidsim("inspect", p)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    text = " ".join(r.stderr.split())
    assert "tiny.urdf:3" in text and "mesh volume is too small" in text
    assert "try inertia='shell'" not in text
    assert "<mesh scale>" in text and "primitive" in text
