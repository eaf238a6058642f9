"""URDF loader: our reading of a URDF against MuJoCo's own URDF import.

Two checks, both against MuJoCo, never against our own output:

- translation: MuJoCo compiling the MJCF that `urdf_to_mjcf` writes must give
  the model MuJoCo compiles from the URDF itself (structure, every parameter,
  and the mass matrix and bias forces at random states to rtol 1e-8);
- end to end: `load_urdf` (our translation + our MJCF compiler) must give the
  fields of ``model_from_mujoco(MjModel.from_xml_path(urdf))``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from rigidsim.errors import InputError
from rigidsim.loaders.urdf import PACKAGE_PATH_ENV, urdf_to_mjcf
from rigidsim.loaders.urdf_compile import load_urdf
from rigidsim.loaders.xmlsafe import parse_xml
from tests.mjref import model_from_mujoco, mujoco

DATA = Path(__file__).resolve().parent / "data" / "urdf"
PKG = DATA / "rigidsim_pkg"
ROBOTS = ["arm2", "fused_chain", "prismatic_revolute", "mesh_robot", "mimic_gripper", "floating_planar"]
I1 = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'


def _translate(path: Path) -> str:
    root = parse_xml(path)
    return etree.tostring(urdf_to_mjcf(root, str(path), path.resolve().parent), encoding="unicode")


def _write(tmp_path: Path, body: str, name: str = "robot.urdf") -> Path:
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n<robot name="t">\n{body}\n</robot>\n')
    return p


def _signed(q):
    """Quaternions with a fixed sign (q and -q are the same rotation)."""
    q = np.array(q, dtype=float).reshape(-1, 4)
    for r in q:
        nz = np.flatnonzero(np.abs(r) > 1e-12)
        if nz.size and r[nz[0]] < 0:
            r *= -1
    return q


def _inertia_tensors(body_inertia, body_iquat):
    """Each body's inertia tensor in its body frame: independent of how principal axes were chosen."""
    out = []
    for d, q in zip(np.asarray(body_inertia), np.asarray(body_iquat)):
        r = np.zeros(9)
        mujoco.mju_quat2Mat(r, np.asarray(q, dtype=float))
        r = r.reshape(3, 3)
        out.append(r @ np.diag(d) @ r.T)
    return np.array(out)


def _names(m, obj, n):
    return [mujoco.mj_id2name(m, obj, i) or "" for i in range(n)]


# fields that must agree; quaternions and inertias are compared apart (signs, principal axes)
_SAME = [
    "qpos0", "body_parentid", "body_rootid", "body_weldid", "body_jntnum", "body_jntadr", "body_dofnum",
    "body_dofadr", "body_geomnum", "body_geomadr", "body_pos", "body_ipos", "body_mass", "body_subtreemass",
    "jnt_type", "jnt_qposadr", "jnt_dofadr", "jnt_bodyid", "jnt_limited", "jnt_actfrclimited", "jnt_pos",
    "jnt_axis", "jnt_range", "jnt_actfrcrange", "dof_bodyid", "dof_jntid", "dof_parentid", "dof_damping",
    "dof_frictionloss", "dof_armature", "geom_type", "geom_contype", "geom_conaffinity", "geom_group",
    "geom_bodyid", "geom_size", "geom_pos", "geom_friction", "geom_rgba", "eq_type", "eq_obj1id", "eq_obj2id", "eq_active0",
    "eq_data", "eq_solref", "eq_solimp", "mesh_vertnum", "mesh_scale",
]


def _assert_same_model(ours, ref, where: str, fields=_SAME):
    for size in ("nq", "nv", "nbody", "njnt", "ngeom", "neq", "nmesh"):
        assert getattr(ours, size) == getattr(ref, size), f"{where}: {size}"
    for f in fields:
        np.testing.assert_allclose(np.asarray(getattr(ours, f), dtype=float), np.asarray(getattr(ref, f), dtype=float),
                                   rtol=1e-9, atol=1e-12, err_msg=f"{where}: {f}")
    for f in ("body_quat", "geom_quat"):
        np.testing.assert_allclose(_signed(getattr(ours, f)), _signed(getattr(ref, f)), atol=1e-10,
                                   err_msg=f"{where}: {f}")
    np.testing.assert_allclose(_inertia_tensors(ours.body_inertia, ours.body_iquat),
                               _inertia_tensors(ref.body_inertia, ref.body_iquat),
                               rtol=1e-9, atol=1e-14, err_msg=f"{where}: body inertia tensors")
    assert float(np.sum(ours.body_mass)) == pytest.approx(float(np.sum(ref.body_mass)), rel=1e-12)


def _assert_same_dynamics(a, b, where: str, n: int = 6):
    """mj_fullM and qfrc_bias of two MuJoCo models at the same random states."""
    rng = np.random.default_rng(1234)
    da, db = mujoco.MjData(a), mujoco.MjData(b)
    for _ in range(n):
        q = a.qpos0 + rng.normal(scale=0.8, size=a.nq)
        mujoco.mj_normalizeQuat(a, q)
        v = rng.normal(size=a.nv)
        ms = []
        for m, d in ((a, da), (b, db)):
            d.qpos[:], d.qvel[:] = q, v
            mujoco.mj_forward(m, d)
            full = np.zeros((m.nv, m.nv))
            mujoco.mj_fullM(m, d, full)
            ms.append(full)
        np.testing.assert_allclose(ms[0], ms[1], rtol=1e-8, atol=1e-12, err_msg=f"{where}: mass matrix")
        np.testing.assert_allclose(da.qfrc_bias, db.qfrc_bias, rtol=1e-8, atol=1e-10, err_msg=f"{where}: bias")


def _assert_translation_faithful(urdf: Path, ref_urdf: Path | None = None):
    ours = mujoco.MjModel.from_xml_string(_translate(urdf))
    ref = mujoco.MjModel.from_xml_path(str(ref_urdf or urdf))
    _assert_same_model(ours, ref, urdf.name)
    for obj, n in ((mujoco.mjtObj.mjOBJ_BODY, "nbody"), (mujoco.mjtObj.mjOBJ_JOINT, "njnt"),
                   (mujoco.mjtObj.mjOBJ_GEOM, "ngeom"), (mujoco.mjtObj.mjOBJ_MESH, "nmesh")):
        assert _names(ours, obj, getattr(ours, n)) == _names(ref, obj, getattr(ref, n)), f"{urdf.name}: {n} names"
    _assert_same_dynamics(ours, ref, urdf.name)
    return ours, ref


# ----------------------------------------------------------------------------- translation vs MuJoCo

@pytest.mark.parametrize("name", ROBOTS)
def test_translation_matches_mujoco(name):
    _assert_translation_faithful(DATA / f"{name}.urdf")


def test_fusion_structure_matches_mujoco():
    """Fixed links fuse into their moving parent: MuJoCo keeps only world, link1, link2."""
    ours, ref = _assert_translation_faithful(DATA / "fused_chain.urdf")
    assert _names(ref, mujoco.mjtObj.mjOBJ_BODY, ref.nbody) == ["world", "link1", "link2"]
    assert ours.ngeom == 6 and list(ours.geom_bodyid) == [0, 1, 1, 1, 1, 2]


def test_mimic_is_a_joint_equality():
    ours, _ = _assert_translation_faithful(DATA / "mimic_gripper.urdf")
    assert ours.neq == 2
    jid = lambda n: mujoco.mj_name2id(ours, mujoco.mjtObj.mjOBJ_JOINT, n)
    assert list(ours.eq_obj1id) == [jid("right_slide"), jid("knuckle_hinge")]
    assert list(ours.eq_obj2id) == [jid("left_slide"), jid("tip_hinge")]
    np.testing.assert_allclose(ours.eq_data[0, :5], [0.01, -1, 0, 0, 0])
    np.testing.assert_allclose(ours.eq_data[1, :5], [0, 0.5, 0, 0, 0])


def test_continuous_joint_ignores_limits_keeps_effort():
    ours, ref = _assert_translation_faithful(DATA / "prismatic_revolute.urdf")
    j = mujoco.mj_name2id(ref, mujoco.mjtObj.mjOBJ_JOINT, "wrist_roll")
    assert not ours.jnt_limited[j] and list(ours.jnt_actfrcrange[j]) == [-5, 5]


def test_package_paths_found_beside_the_urdf(tmp_path):
    """package://rigidsim_pkg/... resolves to the folder next to the URDF; MuJoCo reads plain paths,
    so the reference is MuJoCo's compile of the same robot with those paths written out."""
    ref = tmp_path / "ref.urdf"
    ref.write_text((DATA / "package_robot.urdf").read_text().replace("package://rigidsim_pkg/", f"{PKG}/"))
    _assert_translation_faithful(DATA / "package_robot.urdf", ref)


def test_package_path_env(tmp_path, monkeypatch):
    pkgs = tmp_path / "elsewhere"
    shutil.copytree(PKG, pkgs / "rigidsim_pkg")
    robot = tmp_path / "deep" / "dir"
    robot.mkdir(parents=True)
    urdf = robot / "r.urdf"
    urdf.write_text((DATA / "package_robot.urdf").read_text())
    with pytest.raises(InputError, match=PACKAGE_PATH_ENV):
        _translate(urdf)
    monkeypatch.setenv(PACKAGE_PATH_ENV, os.pathsep.join([str(tmp_path / "missing"), str(pkgs)]))
    ref = tmp_path / "ref.urdf"
    ref.write_text((DATA / "package_robot.urdf").read_text().replace("package://rigidsim_pkg/", f"{PKG}/"))
    _assert_translation_faithful(urdf, ref)
    # a package path entry may also name the package folder itself
    monkeypatch.setenv(PACKAGE_PATH_ENV, str(pkgs / "rigidsim_pkg"))
    _assert_translation_faithful(urdf, ref)


def test_mujoco_extension_strippath_meshdir(tmp_path):
    text = (DATA / "package_robot.urdf").read_text().replace(
        '<robot name="package_robot">',
        f'<robot name="package_robot"><mujoco><compiler meshdir="{PKG}/meshes" strippath="true"/></mujoco>')
    urdf = tmp_path / "strip.urdf"
    urdf.write_text(text)
    _assert_translation_faithful(urdf)  # MuJoCo itself strips package://... to the bare file name


def test_mujoco_extension_fusestatic_false_discardvisual_false_option(tmp_path):
    for src in ("fused_chain", "arm2"):
        text = (DATA / f"{src}.urdf").read_text()
        text = re.sub(r'(<robot name="\w+">)', r'\1<mujoco><compiler fusestatic="false" discardvisual="false"/>'
                      r'<option timestep="0.001" gravity="0 0.5 -3"/></mujoco>', text)
        urdf = tmp_path / f"{src}_nofuse.urdf"
        urdf.write_text(text)
        ours, ref = _assert_translation_faithful(urdf)
        assert ours.opt.timestep == 0.001 and list(ours.opt.gravity) == [0, 0.5, -3]
    assert ref.ngeom == 5  # the visual box of arm2 is kept, as a geom that does not collide


def test_mujoco_extension_angle_size_option_flag(tmp_path):
    """MuJoCo reads URDF angles in radians whatever <compiler angle> says; <option> and <size> pass through."""
    text = (DATA / "arm2.urdf").read_text().replace(
        '<robot name="arm2">', '<robot name="arm2"><mujoco><compiler angle="degree"/><size memory="1M"/>'
        '<option timestep="0.004"><flag gravity="disable"/></option></mujoco>')
    urdf = tmp_path / "deg.urdf"
    urdf.write_text(text)
    ours, _ = _assert_translation_faithful(urdf)
    assert ours.opt.timestep == 0.004 and ours.opt.disableflags == mujoco.mjtDisableBit.mjDSBL_GRAVITY


def test_inertiafromgeom_true(tmp_path):
    text = (DATA / "arm2.urdf").read_text().replace(
        '<robot name="arm2">', '<robot name="arm2"><mujoco><compiler inertiafromgeom="true"/></mujoco>')
    urdf = tmp_path / "ifg.urdf"
    urdf.write_text(text)
    _assert_translation_faithful(urdf)


def test_limits_as_mujoco_reads_them(tmp_path):
    body = (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
            f'<link name="d">{I1}</link><link name="e">{I1}</link>'
            '<joint name="only_upper" type="revolute"><parent link="a"/><child link="b"/><limit upper="1"/></joint>'
            '<joint name="reversed" type="prismatic"><parent link="b"/><child link="c"/>'
            '<limit lower="1" upper="-1" effort="-3"/></joint>'
            '<joint name="equal" type="revolute"><parent link="c"/><child link="d"/><limit lower="0.5" upper="0.5"/>'
            '</joint><joint name="cont" type="continuous"><parent link="d"/><child link="e"/>'
            '<axis xyz="0 0 2"/><limit lower="-1" upper="1" effort="4"/></joint>')
    ours, _ = _assert_translation_faithful(_write(tmp_path, body))
    assert not ours.jnt_limited.any()


def test_root_and_fused_world_geoms(tmp_path):
    """A root link with mass and geoms fuses into the world (its mass is dropped, as in MuJoCo);
    a second root with a moving child hangs from the world."""
    body = (f'<link name="r1">{I1}<collision><geometry><sphere radius="0.1"/></geometry></collision></link>'
            f'<link name="r2">{I1}</link><link name="c">{I1}</link>'
            '<joint name="j" type="revolute"><parent link="r2"/><child link="c"/><origin xyz="0 0 1"/></joint>')
    ours, ref = _assert_translation_faithful(_write(tmp_path, body))
    assert ref.body_mass[0] == 0 and ours.geom_bodyid[0] == 0


# ----------------------------------------------------------------------------- end to end

def _model_fields_agree(ours, ref, where):
    fields = [f for f in _SAME if f not in ("mesh_vertnum",)]
    _assert_same_model(ours, ref, where, fields)
    for kind in ("body", "jnt", "geom", "eq"):
        assert ours.names[kind] == ref.names[kind], f"{where}: {kind} names"


@pytest.mark.parametrize("name", ROBOTS + ["package_robot"])
def test_load_urdf_end_to_end(name):
    path = DATA / f"{name}.urdf"
    ours = load_urdf(path)
    if name == "package_robot":
        ref_text = path.read_text().replace("package://rigidsim_pkg/", f"{PKG}/")
        ref = model_from_mujoco(mujoco.MjModel.from_xml_string(ref_text))
    else:
        ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(path)))
    ours.validate()
    _model_fields_agree(ours, ref, name)


def test_compile_errors_point_at_the_urdf(tmp_path):
    """A moving link without mass: MuJoCo refuses it, and so do we, naming the URDF line of the link."""
    body = f'<link name="a">{I1}</link>\n<link name="massless"/>\n' \
           '<joint name="j" type="revolute"><parent link="a"/><child link="massless"/></joint>'
    p = _write(tmp_path, body)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(p))
    with pytest.raises(InputError) as ei:
        load_urdf(p)
    assert ei.value.where == f"{p}:4", str(ei.value)


# ----------------------------------------------------------------------------- refusals

def _refused(tmp_path, body, *needles, line=None, name="robot.urdf"):
    p = _write(tmp_path, body, name)
    with pytest.raises(InputError) as ei:
        load_urdf(p)
    msg = str(ei.value)
    assert ei.value.where and ei.value.where.startswith(str(p)), msg
    if line is not None:
        assert ei.value.where == f"{p}:{line}", msg
    for n in needles:
        assert n in msg, msg
    assert "\n" not in msg.strip()
    return msg


def test_missing_mesh(tmp_path):
    body = (f'<link name="a">{I1}</link>\n<link name="b">\n<collision><geometry>\n'
            '<mesh filename="meshes/nothere.stl"/></geometry></collision></link>\n'
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>')
    _refused(tmp_path, body, "nothere.stl", "not found", line=6)


def test_missing_package(tmp_path):
    body = (f'<link name="a">{I1}</link><link name="b"><collision><geometry>'
            '<mesh filename="package://no_such_pkg/m.stl"/></geometry></collision></link>'
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>')
    _refused(tmp_path, body, "no_such_pkg", PACKAGE_PATH_ENV)


def test_mesh_format_mujoco_cannot_read(tmp_path):
    (tmp_path / "m.dae").write_text("<COLLADA/>")
    body = (f'<link name="a">{I1}</link><link name="b"><collision><geometry>\n<mesh filename="m.dae"/>'
            '</geometry></collision></link><joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>')
    _refused(tmp_path, body, "m.dae", "STL", line=4)


def test_malformed_xml(tmp_path):
    p = tmp_path / "bad.urdf"
    p.write_text('<robot name="x">\n<link name="a">\n</robot>\n')
    with pytest.raises(InputError) as ei:
        load_urdf(p)
    assert str(p) in str(ei.value) and "malformed" in str(ei.value)


def test_unknown_joint_type(tmp_path):
    body = (f'<link name="a">{I1}</link><link name="b">{I1}</link>\n'
            '<joint name="jj" type="screw"><parent link="a"/><child link="b"/></joint>')
    _refused(tmp_path, body, "'jj'", "screw", "revolute", line=4)


def test_undefined_link(tmp_path):
    body = (f'<link name="a">{I1}</link>\n<joint name="j" type="revolute"><parent link="a"/>\n'
            '<child link="ghost"/></joint>')
    _refused(tmp_path, body, "'ghost'", "not defined", "'j'", line=5)


@pytest.mark.parametrize("body, needles", [
    (f'<link name="a">{I1}</link><link name="a">{I1}</link>', ["'a'", "twice"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="c"/></joint>'
     '<joint name="k" type="revolute"><parent link="b"/><child link="c"/></joint>', ["'c'", "two parents"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="r" type="revolute"><parent link="a"/><child link="b"/></joint>'
     '<joint name="j" type="revolute"><parent link="b"/><child link="c"/></joint>'
     '<joint name="k" type="revolute"><parent link="c"/><child link="b"/></joint>', ["two parents"]),
    (f'<link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="j" type="revolute"><parent link="b"/><child link="c"/></joint>'
     '<joint name="k" type="revolute"><parent link="c"/><child link="b"/></joint>', ["cycle"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>'
     '<joint name="k" type="revolute"><parent link="b"/><child link="c"/><mimic joint="zz"/></joint>',
     ["'k'", "'zz'", "not defined"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
     '<joint name="k" type="revolute"><parent link="b"/><child link="c"/><mimic joint="j"/></joint>',
     ["'j'", "fixed"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 0"/></joint>', ["zero axis"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><link name="c">{I1}</link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>'
     '<joint name="k" type="floating"><parent link="b"/><child link="c"/></joint>', ["floating", "'k'", "world"]),
    (f'<link name="a">{I1}</link><xacro:macro name="m"/>', ["xacro"]),
    (f'<mujoco><compiler balanceinertia="true"/></mujoco><link name="a">{I1}</link>', ["balanceinertia"]),
    (f'<link name="world">{I1}</link>', ["'world'", "<inertial>"]),
    (f'<link name="a">{I1}</link><link name="b"><inertial><mass value="1"/></inertial></link>', ["<inertia>"]),
    ('<link name="a"><collision><geometry><box size="1 1"/></geometry></collision></link>', ["size", "3"]),
    ('<link name="a"><collision><geometry><cone radius="1"/></geometry></collision></link>', ["<cone>"]),
    (f'<link name="a">{I1}</link><link name="b"><collision><geometry><mesh filename="{PKG}/meshes/blob.stl"/>'
     '</geometry></collision></link><joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>'
     f'<link name="c">{I1}</link><joint name="f" type="fixed"><parent link="b"/><child link="c"/></joint>',
     ["mesh", "'b'", "<inertial>"]),
    # MuJoCo checks each link's inertia before fusing it: a bad one is refused even inside a fused group
    (f'<link name="a">{I1}</link><link name="c">{I1}</link><link name="b"><inertial><mass value="1"/>'
     '<inertia ixx="1" iyy="2" izz="3.001" ixy="0" ixz="0" iyz="0"/></inertial></link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="c"/></joint>'
     '<joint name="k" type="fixed"><parent link="c"/><child link="b"/></joint>', ["'b'", "A + B >= C"]),
    (f'<link name="a">{I1}</link><link name="b"><inertial><mass value="1"/>'
     '<inertia ixx="0" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>', ["'b'", "positive definite"]),
    ('<link name="a"><inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
     '</inertial></link>', ["'a'", "negative mass"]),
    (f'<link name="a">{I1}</link><link name="b">{I1}</link><joint name="j" type="spherical"><parent link="a"/>'
     '<child link="b"/><limit lower="-0.5" upper="1"/></joint>', ["'j'", "lower must be 0"]),
    (f'<mujoco><compiler autolimits="false"/></mujoco><link name="a">{I1}</link>', ["autolimits"]),
])
def test_refusals(tmp_path, body, needles):
    _refused(tmp_path, body, *needles)


def test_not_a_robot(tmp_path):
    p = tmp_path / "x.urdf"
    p.write_text("<mujoco/>")
    with pytest.raises(InputError, match="<robot>"):
        load_urdf(p)


# ----------------------------------------------------------------------------- random robots

def _random_urdf(seed: int) -> str:
    """A random tree of links: every joint type, fixed links to fuse, links with and without
    <inertial> (rotated, off-centre), primitive collision geoms, limits, dynamics and a mimic."""
    rng = np.random.default_rng(seed)
    f = lambda *v: " ".join(f"{x:.6g}" for x in v)
    n = int(rng.integers(4, 10))
    links, joints, one_dof = [], [], []
    for i in range(n):
        parts = []
        has_inertial = i == 0 or rng.random() < 0.7
        if has_inertial:
            a, b, c = rng.uniform(0.05, 0.3, 3)
            m = rng.uniform(0.2, 3.0)
            d = m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
            q = rng.normal(size=4)
            q /= np.linalg.norm(q)
            r = np.zeros(9)
            mujoco.mju_quat2Mat(r, q)
            r = r.reshape(3, 3)
            full = r @ np.diag(d) @ r.T  # a rotated tensor: exercises the off-diagonal terms
            parts.append(f'<inertial><origin xyz="{f(*rng.normal(scale=0.05, size=3))}" '
                         f'rpy="{f(*rng.uniform(-1, 1, 3))}"/><mass value="{m:.6g}"/>'
                         f'<inertia ixx="{full[0, 0]:.9g}" iyy="{full[1, 1]:.9g}" izz="{full[2, 2]:.9g}" '
                         f'ixy="{full[0, 1]:.9g}" ixz="{full[0, 2]:.9g}" iyz="{full[1, 2]:.9g}"/></inertial>')
        for _ in range(int(rng.integers(0 if has_inertial else 1, 3))):
            kind = rng.choice(["box", "sphere", "cylinder", "capsule"])
            s = rng.uniform(0.02, 0.1, 3)
            shape = {"box": f'<box size="{f(*s)}"/>', "sphere": f'<sphere radius="{s[0]:.6g}"/>',
                     "cylinder": f'<cylinder radius="{s[0]:.6g}" length="{s[1]:.6g}"/>',
                     "capsule": f'<capsule radius="{s[0]:.6g}" length="{s[1]:.6g}"/>'}[kind]
            parts.append(f'<collision><origin xyz="{f(*rng.normal(scale=0.05, size=3))}" '
                         f'rpy="{f(*rng.uniform(-2, 2, 3))}"/><geometry>{shape}</geometry></collision>')
        links.append(f'<link name="L{i}">{"".join(parts)}</link>')
        if i == 0:
            continue
        jt = rng.choice(["revolute", "continuous", "prismatic", "fixed", "fixed", "spherical", "planar"])
        extra = f'<axis xyz="{f(*rng.normal(size=3))}"/>'
        if jt in ("revolute", "prismatic") and rng.random() < 0.7:
            lo = rng.uniform(-2, 0)
            extra += (f'<limit lower="{lo:.6g}" upper="{lo + rng.uniform(0.1, 3):.6g}" '
                      f'effort="{rng.uniform(1, 50):.6g}" velocity="1"/>')
        if jt != "fixed" and rng.random() < 0.5:
            extra += f'<dynamics damping="{rng.uniform(0, 1):.6g}" friction="{rng.uniform(0, 0.5):.6g}"/>'
        if jt in ("revolute", "continuous", "prismatic"):
            if one_dof and rng.random() < 0.3:
                extra += f'<mimic joint="{rng.choice(one_dof)}" multiplier="{rng.uniform(-2, 2):.6g}" offset="0.1"/>'
            one_dof.append(f"J{i}")
        joints.append(f'<joint name="J{i}" type="{jt}"><parent link="L{int(rng.integers(0, i))}"/>'
                      f'<child link="L{i}"/><origin xyz="{f(*rng.normal(scale=0.2, size=3))}" '
                      f'rpy="{f(*rng.uniform(-3, 3, 3))}"/>{extra}</joint>')
    return f'<robot name="random{seed}">\n' + "\n".join(links + joints) + "\n</robot>\n"


@pytest.mark.parametrize("seed", range(12))
def test_random_robot_translation_matches_mujoco(tmp_path, seed):
    p = tmp_path / f"random{seed}.urdf"
    p.write_text(_random_urdf(seed))
    ref = mujoco.MjModel.from_xml_path(str(p))
    if ref.nv == 0:
        pytest.skip("every joint fixed: nothing moves")
    _assert_translation_faithful(p)
