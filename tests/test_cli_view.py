"""`rigidsim view --save`: the Rerun recording, read back with the SDK's own reader (rerun.chunk.RrdReader),
holds every body's pose of every frame equal to the file's xpos/xquat, every geom with its shape, size,
colour (MuJoCo's rule: the material's unless the geom has an rgba of its own) and local pose, the contacts and the time series; refusals exit 2 without a traceback.

The files are written by the real TrajectoryWriter from a model of an inline MJCF with synthetic frames (no
engine); one bundled contact scene is run by the engine and replayed. Rerun stores positions, sizes and
quaternions as float32: they are compared exactly with the file's values cast to float32.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import h5py
import numpy as np
import pytest

pytest.importorskip("rerun")

from rigidsim.loaders import load_scene  # noqa: E402
from rigidsim.trajectory import TrajectoryWriter  # noqa: E402
from tests.cli_util import assert_clean_error, rigidsim  # noqa: E402

# a plane, a free box (offset and turned), a hinged body with a sphere and a capsule, a free mesh body
SCENE = """<mujoco>
  <asset>
    <mesh name="tet" vertex="0 0 0  0.3 0 0.05  0.05 0.2 0  0.02 0.04 0.15  0.12 0.1 -0.11"
          face="0 1 3  0 3 2  1 2 3  0 4 1  1 4 2  2 4 0"/>
    <material name="grey" rgba="0.3 0.3 0.3 1"/>
    <material name="blue" rgba="0 0 1 1"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="2 3 0.1" rgba="0.2 0.4 0.6 1"/>
    <body name="box" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3" pos="0.1 0 0" euler="0 0 30" rgba="1 0 0 1"/>
    </body>
    <body name="arm" pos="1 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.1" rgba="0 1 0 0.5"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <geom type="cylinder" size="0.04 0.2" pos="0 0.1 0" material="blue"/>
      <geom type="ellipsoid" size="0.1 0.05 0.02" pos="0 -0.1 0" material="blue" rgba="1 1 0 1"/>
    </body>
    <body name="tet" pos="0 1 1">
      <freejoint/>
      <geom type="mesh" mesh="tet"/>
    </body>
  </worldbody>
</mujoco>
"""
T, B = 5, 3
COUNTS = np.array([[1, 0, 2], [2, 1, 0], [0, 0, 0], [1, 3, 1], [0, 2, 1]])  # contacts per frame and env


def _read(path):
    """Every entity of the recording: {path: {"static": {column: value}, "frames": {column: {frame: value}}}}."""
    import rerun.chunk as rc

    out = defaultdict(lambda: {"static": {}, "frames": defaultdict(dict)})
    for chunk in rc.RrdReader(path).store().stream():
        d = chunk.to_record_batch().to_pydict()
        e = out[chunk.entity_path]
        cols = [c for c in d if ":" in c]
        if chunk.is_static:
            for c in cols:
                e["static"][c] = d[c][-1]
        else:
            for r, frame in enumerate(d["frame"]):
                for c in cols:
                    e["frames"][c][frame] = d[c][r]
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    scene = d / "scene.xml"
    scene.write_text(SCENE)
    model = load_scene(scene)
    rng = np.random.default_rng(7)
    q = rng.normal(size=(T, B, model.nbody, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    fields = dict(qpos=rng.normal(size=(T, B, model.nq)), qvel=rng.normal(size=(T, B, model.nv)),
                  xpos=rng.normal(size=(T, B, model.nbody, 3)), xquat=q)
    K = int(COUNTS.sum())
    contacts = dict(count=COUNTS, geom=np.zeros((K, 2), int), body=np.zeros((K, 2), int),
                    position=rng.normal(size=(K, 3)), normal=np.tile([0, 0, 1.0], (K, 1)), penetration=np.zeros(K),
                    force=rng.normal(size=(K, 3)) * 10)
    path = d / "a.h5"
    w = TrajectoryWriter(path, model, scene="scene", scene_path=scene, options_yaml="", dt=0.01, n_envs=B,
                         n_steps=T - 1, every=1, record=["qpos", "qvel", "xpos", "xquat", "contacts"])
    w.add_block(np.arange(T) * 0.01, fields, contacts)
    w.close(True)
    return path


def test_model_carries_what_the_viewer_needs(synthetic):
    with h5py.File(synthetic) as f:
        m = f["model"]
        np.testing.assert_array_equal(m["geom_rgba"][0], np.float32([0.2, 0.4, 0.6, 1]))
        np.testing.assert_array_equal(m["geom_rgba"][1], np.float32([1, 0, 0, 1]))
        np.testing.assert_array_equal(m["geom_rgba"][3], np.float32([0.5, 0.5, 0.5, 1]))  # MuJoCo's default
        assert list(m["geom_dataid"][:]) == [-1] * 6 + [0]
        assert list(m["geom_matid"][:]) == [-1, -1, -1, -1, 1, 1, -1]
        np.testing.assert_array_equal(m["mat_rgba"][:], np.float32([[0.3, 0.3, 0.3, 1], [0, 0, 1, 1]]))
        assert m.attrs["nmesh"] == 1 and m.attrs["nmeshvert"] == 5 and m.attrs["nmeshface"] == 6
        assert m["mesh_vert"].shape == (5, 3) and m["mesh_face"].shape == (6, 3)
        assert m.attrs["nhfield"] == 0 and m["hfield_data"].shape == (0,)


@pytest.fixture(scope="module")
def grid(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("rrd") / "grid.rrd"
    p = rigidsim("view", synthetic, "--envs", "2,0", "--save", out, "--force-scale", "0.5")
    assert p.returncode == 0, p.stderr
    assert "0.5 m/N" in p.stderr
    return _read(out)


def test_body_poses_equal_xpos_xquat_every_frame(synthetic, grid):
    with h5py.File(synthetic) as f:
        xpos, xquat, nbody = f["xpos"][()], f["xquat"][()], f["model"].attrs["nbody"]
    for b in (2, 0):
        for i in range(1, nbody):
            fr = grid[f"/world/env{b}/body{i}"]["frames"]
            assert sorted(fr["Transform3D:translation"]) == list(range(T))
            for t in range(T):
                np.testing.assert_array_equal(np.float32(fr["Transform3D:translation"][t][0]),
                                              xpos[t, b, i].astype(np.float32))
                w, x, y, z = xquat[t, b, i]
                np.testing.assert_array_equal(np.float32(fr["Transform3D:quaternion"][t][0]),
                                              np.float32([x, y, z, w]))
    assert "/world/env1" not in grid  # not asked for


def test_envs_on_a_grid(synthetic, grid):
    """Two envs: C = ceil(sqrt(2)) = 2 columns; the first listed at the origin, the second one spacing along x,
    spacing = 1.25 (x/y span of the shown envs' bodies + 2 * largest non-plane geom size)."""
    with h5py.File(synthetic) as f:
        pts = f["xpos"][:, [0, 2], 1:, :2].reshape(-1, 2)
        sizes = f["model/geom_size"][1:]  # geom 0 is the plane
    spacing = max(1.0, 1.25 * ((pts.max(0) - pts.min(0)).max() + 2 * np.abs(sizes).max()))
    np.testing.assert_array_equal(grid["/world/env2"]["static"]["Transform3D:translation"][0], [0, 0, 0])
    np.testing.assert_allclose(grid["/world/env0"]["static"]["Transform3D:translation"][0], [spacing, 0, 0],
                               rtol=1e-6)


def _geom(grid, b, body, g):
    return grid[f"/world/env{b}/body{body}/geom{g}" if body else f"/world/env{b}/geom{g}"]["static"]


def test_every_geom_with_shape_size_colour_and_local_pose(synthetic, grid):
    with h5py.File(synthetic) as f:
        m = {k: f["model"][k][()] for k in ("geom_bodyid", "geom_pos", "geom_quat", "mesh_vert", "mesh_face")}
    for b in (2, 0):
        for g, body in enumerate(m["geom_bodyid"]):
            s = _geom(grid, b, body, g)
            np.testing.assert_array_equal(np.float32(s["Transform3D:translation"][0]), np.float32(m["geom_pos"][g]))
            w, x, y, z = m["geom_quat"][g]
            np.testing.assert_array_equal(np.float32(s["Transform3D:quaternion"][0]), np.float32([x, y, z, w]))
        floor = _geom(grid, b, 0, 0)  # a 1 cm slab whose top face is the plane z = 0
        np.testing.assert_allclose(floor["Boxes3D:half_sizes"][0], [2, 3, 0.005], rtol=1e-6)
        np.testing.assert_allclose(floor["Boxes3D:centers"][0], [0, 0, -0.005], rtol=1e-6)
        assert floor["Boxes3D:colors"] == [0x336699FF]  # 0.2 0.4 0.6 1 in 0-255: 51 102 153 255
        box = _geom(grid, b, 1, 1)
        np.testing.assert_allclose(box["Boxes3D:half_sizes"][0], [0.1, 0.2, 0.3], rtol=1e-6)
        assert box["Boxes3D:colors"] == [0xFF0000FF]
        sphere = _geom(grid, b, 2, 2)
        np.testing.assert_allclose(sphere["Ellipsoids3D:half_sizes"][0], [0.1] * 3, rtol=1e-6)
        assert sphere["Ellipsoids3D:colors"] == [0x00FF0080]  # alpha 0.5 -> 128
        cap = _geom(grid, b, 2, 3)  # fromto: radius 0.05, half length 0.25, centred at z = -0.25
        np.testing.assert_allclose(cap["Capsules3D:lengths"], [0.5], rtol=1e-6)
        np.testing.assert_allclose(cap["Capsules3D:radii"], [0.05], rtol=1e-6)
        np.testing.assert_allclose(cap["Capsules3D:translations"][0], [0, 0, -0.25], rtol=1e-6)
        assert cap["Capsules3D:colors"] == [0x808080FF]  # MuJoCo's default grey 0.5 -> 128
        cyl = _geom(grid, b, 2, 4)
        np.testing.assert_allclose(cyl["Cylinders3D:lengths"], [0.4], rtol=1e-6)
        np.testing.assert_allclose(cyl["Cylinders3D:radii"], [0.04], rtol=1e-6)
        assert cyl["Cylinders3D:colors"] == [0x0000FFFF]  # its material's colour: it has no rgba of its own
        ell = _geom(grid, b, 2, 5)
        np.testing.assert_allclose(ell["Ellipsoids3D:half_sizes"][0], [0.1, 0.05, 0.02], rtol=1e-6)
        assert ell["Ellipsoids3D:colors"] == [0xFFFF00FF]  # its own rgba wins over its material's
        mesh = _geom(grid, b, 3, 6)
        np.testing.assert_array_equal(np.float32(mesh["Mesh3D:vertex_positions"]), m["mesh_vert"])
        np.testing.assert_array_equal(mesh["Mesh3D:triangle_indices"], m["mesh_face"])


def test_contacts_and_force_arrows_every_frame(synthetic, grid):
    with h5py.File(synthetic) as f:
        off, pos, frc = f["contacts/offsets"][()], f["contacts/position"][()], f["contacts/force"][()]
    for b in (2, 0):
        pts = grid[f"/world/env{b}/contacts"]["frames"]["Points3D:positions"]
        arrows = grid[f"/world/env{b}/contacts/force"]["frames"]
        ncon = grid[f"/plots/env{b}/ncon"]["frames"]["Scalars:scalars"]
        for t in range(T):
            lo, hi = off[t * B + b], off[t * B + b + 1]
            assert hi - lo == COUNTS[t, b]
            got = np.float32(pts[t]).reshape(-1, 3)  # an empty frame clears the previous frame's points
            np.testing.assert_array_equal(got, pos[lo:hi].astype(np.float32))
            np.testing.assert_array_equal(np.float32(arrows["Arrows3D:origins"][t]).reshape(-1, 3),
                                          pos[lo:hi].astype(np.float32))
            np.testing.assert_array_equal(np.float32(arrows["Arrows3D:vectors"][t]).reshape(-1, 3),
                                          (frc[lo:hi] * 0.5).astype(np.float32))
            assert ncon[t] == [COUNTS[t, b]]


def test_time_series_named_from_the_model(synthetic, grid):
    with h5py.File(synthetic) as f:
        qpos, qvel, time = f["qpos"][()], f["qvel"][()], f["time"][()]
    # qpos: box free joint 0..6, hinge 7, tet free joint 8..14; qvel: 0..5, 6, 7..12
    for b in (2, 0):
        for name, field, data, j in (("joint0.x", "qpos", qpos, 0), ("joint0.qw", "qpos", qpos, 3),
                                     ("hinge", "qpos", qpos, 7), ("joint2.qz", "qpos", qpos, 14),
                                     ("joint0.wz", "qvel", qvel, 5), ("hinge", "qvel", qvel, 6),
                                     ("joint2.vx", "qvel", qvel, 7)):
            fr = grid[f"/plots/env{b}/{field}/{name}"]["frames"]
            assert [fr["Scalars:scalars"][t] for t in range(T)] == [[v] for v in data[:, b, j]], name
    assert len([e for e in grid if e.startswith("/plots/env0/qpos/")]) == 15


def test_one_env_default_and_time_line(synthetic, tmp_path):
    out = tmp_path / "one.rrd"
    p = rigidsim("view", synthetic, "--save", out)
    assert p.returncode == 0, p.stderr
    import rerun.chunk as rc

    seen = set()
    for chunk in rc.RrdReader(out).store().stream():
        seen.add(chunk.entity_path.split("/")[2] if chunk.entity_path.startswith("/world/") else None)
        if chunk.entity_path == "/world/env0/body1":
            d = chunk.to_record_batch().to_pydict()
            ns = [int(x.total_seconds() * 1e9) if hasattr(x, "total_seconds") else int(x) for x in d["time"]]
            assert ns == [round(t * 0.01 * 1e9) for t in range(T)]
    assert seen - {None} == {"env0"}


def test_engine_run_of_a_contact_scene(tmp_path):
    h5, out = tmp_path / "bin.h5", tmp_path / "bin.rrd"
    p = rigidsim("run", "sphere_bin", "--steps", 20, "--every", 5, "--out", h5, "--quiet")
    assert p.returncode == 0, p.stderr
    p = rigidsim("view", h5, "--save", out)
    assert p.returncode == 0, p.stderr
    rec = _read(out)
    with h5py.File(h5) as f:
        xpos, nbody, ngeom = f["xpos"][()], f["model"].attrs["nbody"], f["model"].attrs["ngeom"]
        bodyid = f["model/geom_bodyid"][()]
        off = f["contacts/offsets"][()]
    assert off[-1] > 0  # the scene has contacts to show
    for i in range(1, nbody):
        tr = rec[f"/world/env0/body{i}"]["frames"]["Transform3D:translation"]
        for t in range(len(xpos)):
            np.testing.assert_array_equal(np.float32(tr[t][0]), xpos[t, 0, i].astype(np.float32))
    for g in range(ngeom):
        assert _geom(rec, 0, bodyid[g], g)["Transform3D:translation"] is not None
    pts = rec["/world/env0/contacts"]["frames"]["Points3D:positions"]
    assert [len(pts[t]) for t in range(len(xpos))] == list(np.diff(off))


# -- refusals ------------------------------------------------------------------


def test_help():
    p = rigidsim("view", "--help")
    assert p.returncode == 0 and "--save" in p.stdout and "--envs" in p.stdout and "rigidsim[viz]" in p.stdout


def _one_paragraph(p):
    text = assert_clean_error(p, 2)
    assert "\n\n" not in p.stderr.strip(), text
    return text


def test_not_a_trajectory(tmp_path):
    (tmp_path / "x.h5").write_text("hello")
    assert "not a readable HDF5" in _one_paragraph(rigidsim("view", tmp_path / "x.h5", "--save", tmp_path / "o.rrd"))
    with h5py.File(tmp_path / "y.h5", "w") as f:
        f["a"] = 1
    assert "not a rigidsim trajectory" in _one_paragraph(rigidsim("view", tmp_path / "y.h5", "--save",
                                                                  tmp_path / "o.rrd"))
    assert "does not exist" in _one_paragraph(rigidsim("view", tmp_path / "z.h5", "--save", tmp_path / "o.rrd"))
    assert not (tmp_path / "o.rrd").exists()


@pytest.mark.parametrize("args, words", [
    (["--env", "3"], "env 3 does not exist"),
    (["--env", "-1"], "env -1 does not exist"),
    (["--envs", "0,5"], "env 5 does not exist"),
    (["--envs", "a,b"], "comma list"),
    (["--envs", "1,1"], "twice"),
    (["--env", "0", "--envs", "1"], "not both"),
    (["--force-scale", "-1"], "--force-scale"),
])
def test_bad_options(synthetic, tmp_path, args, words):
    text = _one_paragraph(rigidsim("view", synthetic, "--save", tmp_path / "o.rrd", *args))
    assert words in text
    assert not (tmp_path / "o.rrd").exists()


def test_bad_save_and_no_display(synthetic, tmp_path):
    assert ".rrd" in _one_paragraph(rigidsim("view", synthetic, "--save", tmp_path / "o.png"))
    assert "does not exist" in _one_paragraph(rigidsim("view", synthetic, "--save", tmp_path / "no" / "o.rrd"))
    text = _one_paragraph(rigidsim("view", synthetic, env={"DISPLAY": "", "WAYLAND_DISPLAY": ""}))
    assert "--save" in text and "--web" in text


def test_needs_xpos_and_xquat(tmp_path):
    scene = tmp_path / "s.xml"
    scene.write_text(SCENE)
    model = load_scene(scene)
    w = TrajectoryWriter(tmp_path / "q.h5", model, scene="s", scene_path=scene, options_yaml="", dt=0.01, n_envs=1,
                         n_steps=0, every=1, record=["qpos"])
    w.add_block(np.zeros(1), {"qpos": np.zeros((1, 1, model.nq))})
    w.close(True)
    assert "xpos" in _one_paragraph(rigidsim("view", tmp_path / "q.h5", "--save", tmp_path / "o.rrd"))


def test_without_the_sdk(synthetic, tmp_path):
    """A `rerun` that cannot be imported (a package raising ImportError, first on the path): exit 2 naming the
    extra."""
    fake = tmp_path / "fake" / "rerun"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no rerun here')\n")
    import os

    from tests.cli_util import ROOT

    text = _one_paragraph(rigidsim("view", synthetic, "--save", tmp_path / "o.rrd",
                                   env={"PYTHONPATH": f"{ROOT}{os.pathsep}{fake.parent}"}))
    assert "pip install 'rigidsim[viz]'" in text


def test_grid_offsets():
    """Env k of n at (k mod C, k div C) spacings, C = ceil(sqrt(n)): 5 envs in 3 columns."""
    from rigidsim.view import env_offsets

    assert env_offsets(1, 2.0).tolist() == [[0, 0, 0]]
    assert env_offsets(5, 2.0).tolist() == [[0, 0, 0], [2, 0, 0], [4, 0, 0], [0, 2, 0], [2, 2, 0]]
