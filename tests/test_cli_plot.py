"""`rigidsim plot`: the figure's panels, labels and line data against trajectory files written here with
TrajectoryWriter from synthetic frames whose values are known in closed form (no engine), for one env and
for the mean and min-max band over 64 envs; the command line's files and refusals; one real run."""

from __future__ import annotations

import math
from pathlib import Path

import h5py
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from rigidsim import plot as P  # noqa: E402
from rigidsim.coordinates import qpos_coordinates, qvel_coordinates  # noqa: E402
from rigidsim.loaders import load_scene  # noqa: E402
from rigidsim.trajectory import TrajectoryWriter  # noqa: E402
from tests.cli_util import ROOT, assert_clean_error, rigidsim  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"

# a ball whose centre of mass is 0.2 m off its frame's origin, falling with a fixed tilt, and a box spinning
# about the world z axis; the box's geom is turned 90 degrees about x, so its half sizes along the body's x
# and y axes are 0.1 and 0.3 and its moment about the body's z axis is m (0.1^2 + 0.3^2) / 3
TWO_BODIES = """<mujoco>
  <worldbody>
    <body name="ball" pos="0 0 2">
      <freejoint name="ball"/>
      <geom type="sphere" size="0.05" pos="0.2 0 0" mass="2"/>
    </body>
    <body name="spinner" pos="1 0 0.5">
      <freejoint name="spinner"/>
      <geom type="box" size="0.1 0.2 0.3" euler="90 0 0" mass="3"/>
    </body>
  </worldbody>
</mujoco>
"""


def write_file(path: Path, scene, time, fields, *, B: int, contacts=None, gravity="[0.0, 0.0, -9.81]"):
    """A trajectory file holding `fields` ([T, B, ...] each) at `time` [T], written by the real writer."""
    model = load_scene(scene)
    record = list(fields) + (["contacts"] if contacts is not None else [])
    w = TrajectoryWriter(path, model, scene=str(scene), scene_path=str(scene) if Path(str(scene)).exists()
                         else ROOT / "scenes" / f"{scene}.xml", options_yaml=f"dt: 0.01\ngravity: {gravity}\n",
                         dt=0.01, n_envs=B, n_steps=len(time) - 1, every=1, record=record)
    w.add_block(np.asarray(time), fields, contacts)
    w.close(True)
    return path


def axes_of(fig):
    return {ax.get_label(): ax for ax in fig.axes}


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def band_limits(collection, xs):
    """The lower and upper edge of a fill_between polygon at each x."""
    v = collection.get_paths()[0].vertices
    lo = np.array([v[v[:, 0] == x, 1].min() for x in xs])
    hi = np.array([v[v[:, 0] == x, 1].max() for x in xs])
    return lo, hi


def quat_z(angle):
    return np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], -1)


# ------------------------------------------------------------------------------------------------ one env
@pytest.fixture(scope="module")
def falling(tmp_path_factory):
    """Free fall of the tilted ball from rest at 2 m with v0 = (1, 0, 3), the box spinning at 4 rad/s; frames
    every 0.01 s and a last one 0.005 s later (as --every leaves when it does not divide --steps)."""
    d = tmp_path_factory.mktemp("falling")
    scene = d / "two.xml"
    scene.write_text(TWO_BODIES)
    t = np.append(np.arange(21) * 0.01, 0.205)
    T = len(t)
    g, v0, x0, w = np.array([0.0, 0.0, -9.81]), np.array([1.0, 0.0, 3.0]), np.array([0.0, 0.0, 2.0]), 4.0
    ball_x = x0 + v0 * t[:, None] + 0.5 * g * t[:, None] ** 2
    ball_v = v0 + g * t[:, None]
    tilt = np.array([math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0])  # 90 degrees about y: x -> -z
    spin_q = quat_z(w * t)
    xpos = np.zeros((T, 1, 3, 3))
    xpos[:, 0, 1], xpos[:, 0, 2] = ball_x, [1.0, 0.0, 0.5]
    xquat = np.zeros((T, 1, 3, 4))
    xquat[:, 0, 0], xquat[:, 0, 1], xquat[:, 0, 2] = [1, 0, 0, 0], tilt, spin_q
    qpos = np.concatenate([ball_x, np.tile(tilt, (T, 1)), np.tile([1.0, 0.0, 0.5], (T, 1)), spin_q], 1)[:, None]
    qvel = np.concatenate([ball_v, np.zeros((T, 3)), np.zeros((T, 5)), np.full((T, 1), w)], 1)[:, None]
    path = write_file(d / "fall.h5", scene, t, {"qpos": qpos, "qvel": qvel, "xpos": xpos, "xquat": xquat}, B=1)
    return dict(path=path, t=t, ball_z=ball_x[:, 2], ball_v=ball_v, w=w, qpos=qpos, qvel=qvel)


def test_one_env_panels_labels_and_lines_are_the_files(falling):
    with P.open_trajectory(falling["path"]) as f:
        notes = []
        fig = P.build_figure(f, notes=notes)
        qpos, qvel = f["qpos"][:, 0], f["qvel"][:, 0]
    ax = axes_of(fig)
    assert list(ax) == ["qpos", "qvel", "energy"] and len(fig.axes) == 3  # no contacts, no solver counts recorded
    assert notes == []
    names = ["ball.x (m)", "ball.y (m)", "ball.z (m)", "ball.qw", "ball.qx", "ball.qy", "ball.qz",
             "spinner.x (m)", "spinner.y (m)", "spinner.z (m)", "spinner.qw", "spinner.qx", "spinner.qy", "spinner.qz"]
    assert [ln.get_label() for ln in ax["qpos"].lines] == names
    assert legend_texts(ax["qpos"]) == names
    vnames = [f"{b}.{c} ({u})" for b in ("ball", "spinner") for c, u in
              (("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"), ("wx", "rad/s"), ("wy", "rad/s"), ("wz", "rad/s"))]
    assert legend_texts(ax["qvel"]) == vnames
    assert ax["qpos"].get_ylabel() == "generalized positions qpos (m)"
    assert ax["qvel"].get_ylabel() == "generalized velocities qvel (m/s, rad/s)"
    assert ax["energy"].get_ylabel() == "energy (J)" and fig.axes[-1].get_xlabel() == "time (s)"
    for i, ln in enumerate(ax["qpos"].lines):
        np.testing.assert_array_equal(ln.get_xdata(), falling["t"])
        np.testing.assert_array_equal(ln.get_ydata(), qpos[:, i])
    for i, ln in enumerate(ax["qvel"].lines):
        np.testing.assert_array_equal(ln.get_ydata(), qvel[:, i])
    assert not ax["qpos"].collections  # one env: lines, no band


@pytest.mark.parametrize("with_qvel", [True, False])
def test_energy_of_free_fall_and_spin_is_the_closed_form(falling, tmp_path, with_qvel):
    """PE = m g h of each centre of mass (the ball's 0.2 m below its origin once tilted); KE = 1/2 m v^2 of the
    parabola + 1/2 I_z w^2 of the box: from qpos and qvel (1/2 qvel' M qvel) when the file holds them, else
    from the poses (central differences are exact on a parabola, also at the uneven last frame)."""
    path = falling["path"]
    if not with_qvel:
        with P.open_trajectory(path) as f:
            xpos, xquat = f["xpos"][:], f["xquat"][:]
        scene = tmp_path / "two.xml"
        scene.write_text(TWO_BODIES)
        path = write_file(tmp_path / "poses.h5", scene, falling["t"], {"xpos": xpos, "xquat": xquat}, B=1)
    with P.open_trajectory(path) as f:
        fig = P.build_figure(f, fields=["energy"])
    (ax,) = fig.axes
    pe, ke, total = (ln.get_ydata() for ln in ax.lines)
    how = "1/2 qvel' M qvel" if with_qvel else "finite differences of the recorded poses"
    assert [ln.get_label() for ln in ax.lines] == [
        "potential (gravity (0, 0, -9.81) m/s²)", f"kinetic ({how})", "total (potential + kinetic)"]
    m_ball, m_box, g = 2.0, 3.0, 9.81
    np.testing.assert_allclose(pe, m_ball * g * (falling["ball_z"] - 0.2) + m_box * g * 0.5, rtol=1e-13)
    i_z = m_box * (0.1 ** 2 + 0.3 ** 2) / 3
    expect_ke = 0.5 * m_ball * (falling["ball_v"] ** 2).sum(1) + 0.5 * i_z * falling["w"] ** 2
    np.testing.assert_allclose(ke, expect_ke, rtol=1e-13 if with_qvel else 1e-10)
    np.testing.assert_allclose(total, pe + ke, rtol=1e-15)


def test_gravity_comes_from_the_file(tmp_path):
    scene = tmp_path / "one.xml"
    scene.write_text(TWO_BODIES)
    t = np.arange(3) * 0.01
    xpos = np.zeros((3, 1, 3, 3))
    xpos[:, 0, 1] = [0.0, 0.0, 2.0]
    xquat = np.tile([1.0, 0, 0, 0], (3, 1, 3, 1))
    path = write_file(tmp_path / "g.h5", scene, t, {"xpos": xpos, "xquat": xquat}, B=1, gravity="[0.0, 1.5, 0.0]")
    with P.open_trajectory(path) as f:
        fig = P.build_figure(f)
    (ax,) = fig.axes
    # PE = -m g . com: only the ball's com (0.2, 0, 2) and the box's (0, 0, 0) count, along y
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), np.zeros(3))
    assert ax.lines[0].get_label() == "potential (gravity (0, 1.5, 0) m/s²)"
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), np.zeros(3))  # nothing moves


# -------------------------------------------------------------------------------------------- 64 envs
@pytest.fixture(scope="module")
def band64(tmp_path_factory):
    """The pendulum in 64 envs with random qpos, qvel, contacts and solver counts."""
    rng = np.random.default_rng(12)
    T, B = 30, 64
    t = np.arange(T) * 0.002
    counts = rng.integers(0, 4, (T, B))
    K = int(counts.sum())
    contacts = dict(count=counts, geom=np.zeros((K, 2), np.int32), body=np.zeros((K, 2), np.int32),
                    position=rng.normal(size=(K, 3)), normal=rng.normal(size=(K, 3)),
                    penetration=rng.uniform(size=K), force=rng.normal(size=(K, 3)) * 10)
    fields = {"qpos": rng.normal(size=(T, B, 1)), "qvel": rng.normal(size=(T, B, 1)),
              "ncon": counts.astype(np.int32), "nefc": rng.integers(0, 40, (T, B)),
              "solver_niter": rng.integers(1, 50, (T, B))}
    path = write_file(tmp_path_factory.mktemp("band") / "band.h5", "pendulum", t, fields, B=B, contacts=contacts)
    return dict(path=path, t=t, counts=counts, contacts=contacts, fields=fields)


def test_band_over_64_envs_is_the_mean_min_and_max_of_the_file(band64):
    with P.open_trajectory(band64["path"]) as f:
        notes = []
        fig = P.build_figure(f, notes=notes)
        data = {k: f[k][()] for k in ("qpos", "qvel", "ncon", "nefc", "solver_niter")}
        off = f["contacts/offsets"][()]
        force, normal = f["contacts/force"][()], f["contacts/normal"][()]
    ax = axes_of(fig)
    assert list(ax) == ["qpos", "qvel", "contacts", "normal_force", "solver"]
    assert any("energy" in n and "xpos,xquat" in n for n in notes)  # no body poses: no energy panel, said so
    assert legend_texts(ax["qpos"]) == ["hinge (rad)"] and legend_texts(ax["qvel"]) == ["hinge (rad/s)"]
    assert legend_texts(ax["solver"]) == ["solver_niter (iterations)", "ncon (contacts)", "nefc (constraint rows)"]
    assert "64 envs" in fig.get_suptitle()
    # the per-frame contact count and total normal force, summed here contact by contact
    T, B = band64["counts"].shape
    count = np.zeros((T, B))
    total = np.zeros((T, B))
    for t in range(T):
        for b in range(B):
            rows = range(off[t * B + b], off[t * B + b + 1])
            count[t, b] = len(rows)
            total[t, b] = sum(float(np.dot(force[k], normal[k])) for k in rows)
    np.testing.assert_array_equal(count, band64["counts"])
    expect = {"qpos": [data["qpos"][:, :, 0]], "qvel": [data["qvel"][:, :, 0]], "contacts": [count],
              "normal_force": [total], "solver": [data["solver_niter"], data["ncon"], data["nefc"]]}
    for name, series in expect.items():
        assert len(ax[name].lines) == len(series) == len(ax[name].collections), name
        for ln, band, y in zip(ax[name].lines, ax[name].collections, series):
            np.testing.assert_array_equal(ln.get_xdata(), band64["t"])
            np.testing.assert_allclose(ln.get_ydata(), y.mean(axis=1), rtol=1e-14, atol=1e-14)
            lo, hi = band_limits(band, band64["t"])
            np.testing.assert_allclose(lo, y.min(axis=1), rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(hi, y.max(axis=1), rtol=1e-13, atol=1e-13)


def test_one_env_of_many_is_its_own_lines(band64):
    with P.open_trajectory(band64["path"]) as f:
        fig = P.build_figure(f, env=37, fields=["qpos", "solver"])
        q, niter = f["qpos"][:, 37, 0], f["solver_niter"][:, 37]
    ax = axes_of(fig)
    assert list(ax) == ["qpos", "solver"] and not ax["qpos"].collections
    np.testing.assert_array_equal(ax["qpos"].lines[0].get_ydata(), q)
    np.testing.assert_array_equal(ax["solver"].lines[0].get_ydata(), niter)
    assert "env 37 of 64" in fig.get_suptitle()


def test_a_long_legend_lists_the_first_entries_and_says_how_many(falling, monkeypatch):
    monkeypatch.setattr(P, "MAX_LEGEND", 5)
    with P.open_trajectory(falling["path"]) as f:
        fig = P.build_figure(f, fields=["qpos"])
    (ax,) = fig.axes
    assert len(ax.lines) == 14 and legend_texts(ax) == ["ball.x (m)", "ball.y (m)", "ball.z (m)", "ball.qw", "ball.qx"]
    assert ax.get_legend().get_title().get_text() == "first 5 of 14"


def test_coordinate_names_and_units_of_every_joint_type(tmp_path):
    scene = tmp_path / "joints.xml"
    scene.write_text("""<mujoco><worldbody>
      <body name="a"><joint name="sl" type="slide"/><joint type="hinge"/><geom size="0.1"/>
        <body name="b" pos="0 0 1"><joint name="sh" type="ball"/><geom size="0.1"/></body></body>
    </worldbody></mujoco>""")
    m = load_scene(scene)
    names = m.names["jnt"]
    q = qpos_coordinates(m.nq, names, m.arrays["jnt_type"], m.arrays["jnt_qposadr"])
    v = qvel_coordinates(m.nv, names, m.arrays["jnt_type"], m.arrays["jnt_dofadr"])
    assert q == (["sl", "joint1", "sh.qw", "sh.qx", "sh.qy", "sh.qz"], ["m", "rad", "", "", "", ""])
    assert v == (["sl", "joint1", "sh.wx", "sh.wy", "sh.wz"], ["m/s", "rad/s", "rad/s", "rad/s", "rad/s"])


# ------------------------------------------------------------------------------------------ command line
def test_cli_writes_png_svg_and_pdf(falling, tmp_path):
    src = tmp_path / "fall.h5"
    src.write_bytes(falling["path"].read_bytes())
    p = rigidsim("plot", src)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "fall.png").read_bytes()[:8] == PNG
    assert "fall.png" in p.stderr and "3 panels" in p.stderr
    p = rigidsim("plot", src, "--out", tmp_path / "f.svg", "--fields", "qpos")
    assert p.returncode == 0, p.stdout + p.stderr
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:2000]
    p = rigidsim("plot", src, "--out", tmp_path / "f.pdf", "--fields", "energy")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"


def test_cli_help_and_refusals(band64, tmp_path):
    p = rigidsim("plot", "--help")
    assert p.returncode == 0 and "--fields" in p.stdout and "--env" in p.stdout
    src = band64["path"]
    for args, says in [(("--env", "64"), "env 64 is out of range"), (("--env", "-1"), "out of range"),
                       (("--fields", "qpos,enrgy"), "did you mean 'energy'"),
                       (("--fields", "energy"), "--record xpos,xquat"),
                       (("--out", tmp_path / "f.jpg"), ".png, .svg, .pdf"),
                       (("--out", tmp_path / "missing" / "f.png"), "does not exist")]:
        text = assert_clean_error(rigidsim("plot", src, *args), 2)
        assert says in text, (args, text)
    assert not list(tmp_path.glob("*.png"))
    text_file = tmp_path / "notes.h5"
    text_file.write_text("not hdf5\n")
    assert "not a readable HDF5 file" in assert_clean_error(rigidsim("plot", text_file), 2)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.zeros(3)
    assert "not a rigidsim trajectory" in assert_clean_error(rigidsim("plot", tmp_path / "other.h5"), 2)
    assert "does not exist" in assert_clean_error(rigidsim("plot", tmp_path / "absent.h5"), 2)


def test_cli_without_matplotlib_names_the_extra(band64, tmp_path):
    """A matplotlib that cannot be imported (a package raising ImportError first on the path)."""
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    p = rigidsim("plot", band64["path"], "--out", tmp_path / "f.png", env={"PYTHONPATH": f"{tmp_path}:{ROOT}"})
    assert "pip install 'rigidsim[plot]'" in assert_clean_error(p, 2)
    assert not (tmp_path / "f.png").exists()


def test_cli_plots_a_real_run_and_its_potential_energy_is_mujocos(tmp_path):
    """One engine run (4 envs from the horizontal keyframe): the figure is written, and its potential energy
    equals MuJoCo's mj_energyPos at every recorded state (the pendulum has no springs: gravity alone)."""
    mujoco = pytest.importorskip("mujoco")
    out = tmp_path / "pend.h5"
    p = rigidsim("run", "pendulum", "--keyframe", "horizontal", "--steps", 50, "--envs", 4, "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    p = rigidsim("plot", out, "--out", tmp_path / "pend.png")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "pend.png").read_bytes()[:8] == PNG
    m = mujoco.MjModel.from_xml_path(str(ROOT / "scenes" / "pendulum.xml"))
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(m)
    with P.open_trajectory(out) as f:
        ax = axes_of(P.build_figure(f, env=2, fields=["energy"]))["energy"]
        qpos = f["qpos"][:, 2]
    ref = []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        ref.append(d.energy[0])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), ref, rtol=1e-12, atol=1e-12)
