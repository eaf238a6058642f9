"""Per-env initial states through the real command line (`--init`, the reset noise options, `--seed`), and
the noise itself (rigidsim/reset.py) against closed forms."""

from __future__ import annotations

import filecmp

import h5py
import numpy as np
import pytest

from rigidsim import model as M
from rigidsim.loaders import load_scene
from rigidsim.reset import perturb, quat_turn
from tests.cli_util import ROOT, assert_clean_error, rigidsim

CARTPOLE = ROOT / "scenes" / "cartpole.xml"
COMPAT = ROOT / "configs" / "mujoco_compatible.yaml"

# a free body and a ball joint: the noise turns their quaternions
FREE_BALL = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint name="root"/><geom type="sphere" size="0.1"/>
    <body name="b" pos="0 0 -0.3"><joint name="ball" type="ball"/><geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.3"/>
      <body name="c" pos="0 0 -0.3"><joint name="hinge" axis="0 1 0"/><geom type="sphere" size="0.05"/></body>
    </body>
  </body>
</worldbody></mujoco>"""


def _run(tmp_path, name, *args):
    out = tmp_path / name
    p = rigidsim("run", CARTPOLE, "--steps", 30, "--quiet", "--out", out, *args)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_init_file_starts_each_env_where_asked_and_runs_as_mujoco(tmp_path):
    """[B, nq + nv]: frame 0 and /init are the file's rows; each env then follows MuJoCo from its own state."""
    mujoco = pytest.importorskip("mujoco")
    mjm = mujoco.MjModel.from_xml_path(str(CARTPOLE))
    B = 3
    rows = np.zeros((B, mjm.nq + mjm.nv))
    rows[:, 0] = [-0.2, 0.0, 0.3]          # slider
    rows[:, 1] = [0.1, -0.4, 0.25]         # hinge
    rows[:, mjm.nq + 1] = [0.0, 1.0, -2.0]  # hinge velocity
    np.save(tmp_path / "init.npy", rows)
    out = _run(tmp_path, "a.h5", "--envs", B, "--init", tmp_path / "init.npy", "--options", COMPAT)
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["init/qpos"][:], rows[:, :mjm.nq])
        np.testing.assert_array_equal(f["init/qvel"][:], rows[:, mjm.nq:])
        np.testing.assert_array_equal(f["qpos"][0], rows[:, :mjm.nq])
        np.testing.assert_array_equal(f["qvel"][0], rows[:, mjm.nq:])
        assert "--init" in f["init"].attrs["source"]
        q = f["qpos"][:]
    for b in range(B):
        d = mujoco.MjData(mjm)
        d.qpos[:], d.qvel[:] = rows[b, :mjm.nq], rows[b, mjm.nq:]
        for t in range(30):
            mujoco.mj_step(mjm, d)
        np.testing.assert_allclose(q[30, b], d.qpos, rtol=1e-10, atol=1e-12)
    # the envs did not all do the same thing
    assert not np.allclose(q[30, 0], q[30, 2])


def test_init_qpos_only_keeps_the_keyframes_velocity(tmp_path):
    """[B, nq] replaces qpos alone: qvel stays the keyframe's (or zero without one)."""
    m = load_scene(str(CARTPOLE))
    k = m.names["key"].index("tilted")
    rows = np.array([[0.1, 0.2], [0.3, -0.2]])
    np.save(tmp_path / "q.npy", rows)
    out = _run(tmp_path, "b.h5", "--envs", 2, "--init", tmp_path / "q.npy", "--keyframe", "tilted")
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["qpos"][0], rows)
        np.testing.assert_array_equal(f["qvel"][0], np.broadcast_to(m.key_qvel[k], (2, m.nv)))
        assert f["init"].attrs["source"] == f"keyframe tilted, then --init {tmp_path / 'q.npy'}"


def test_same_seed_same_file_other_seed_other_states(tmp_path):
    args = ("--envs", 4, "--set", "init_qpos_noise=0.1", "--set", "init_qvel_noise=0.5")
    a = _run(tmp_path, "a.h5", *args, "--seed", 7)
    b = _run(tmp_path, "b.h5", *args, "--seed", 7)
    c = _run(tmp_path, "c.h5", *args, "--seed", 8)
    assert filecmp.cmp(a, b, shallow=False), "the same seed must give a byte-identical file"
    m = load_scene(str(CARTPOLE))
    with h5py.File(a, "r") as fa, h5py.File(c, "r") as fc:
        qa, qc = fa["init/qpos"][:], fc["init/qpos"][:]
        assert not np.array_equal(qa, qc)
        # uniform noise of scale 0.1 about qpos0, every env its own
        assert np.all(np.abs(qa - m.qpos0) <= 0.1) and len({tuple(r) for r in qa}) == 4
        assert np.all(np.abs(fa["init/qvel"][:]) <= 0.5)
        np.testing.assert_array_equal(fa["qpos"][0], qa)
        assert "uniform noise" in fa["init"].attrs["source"]
        # the noise is what reset.perturb draws for this seed (numpy's generator, positions then velocities)
        q, v = perturb(m, np.broadcast_to(m.qpos0, (4, m.nq)), np.zeros((4, m.nv)), 0.1, 0.5, "uniform", 7)
        np.testing.assert_array_equal(qa, q)
        np.testing.assert_array_equal(fa["init/qvel"][:], v)


@pytest.mark.parametrize("rows,what", [
    (np.zeros((3, 4)), "3 rows, but the run has --envs 2"),
    (np.zeros((2, 3)), "shape [2, 3]"),
    (np.zeros((2, 2, 2)), "shape [2, 2, 2]"),
    (np.array([[0.0, np.nan], [0.0, 0.0]]), "env 0 has a non-finite qpos[1]"),
    (np.array([[0.0, 0.0, 0.0, np.inf], [0.0, 0.0, 0.0, 0.0]]), "env 0 has a non-finite qvel[1]"),
    (np.array([["a", "b"], ["c", "d"]]), "expected real numbers"),
])
def test_bad_init_is_refused_before_anything_runs(tmp_path, rows, what):
    np.save(tmp_path / "bad.npy", rows)
    out = tmp_path / "o.h5"
    p = rigidsim("run", CARTPOLE, "--envs", 2, "--init", tmp_path / "bad.npy", "--out", out, "--quiet")
    text = assert_clean_error(p, 2)
    assert what in text and "--init" in text
    assert not out.exists()


def test_missing_and_unreadable_init_files(tmp_path):
    p = rigidsim("run", CARTPOLE, "--init", tmp_path / "none.npy", "--out", tmp_path / "o.h5", "--quiet")
    assert "not found" in assert_clean_error(p, 2)
    (tmp_path / "text.npy").write_text("not numpy")
    p = rigidsim("run", CARTPOLE, "--init", tmp_path / "text.npy", "--out", tmp_path / "o.h5", "--quiet")
    assert "is text, not a NumPy .npy file; it must be a NumPy .npy array" in assert_clean_error(p, 2)


def test_noise_options_are_checked():
    from rigidsim import options as O
    from rigidsim.errors import InputError

    with pytest.raises(InputError, match="init_qpos_noise"):
        O.check_value("init_qpos_noise", -0.1, where="t")
    with pytest.raises(InputError, match="uniform, normal"):
        O.check_value("init_noise_distribution", "gaussian", where="t")


def _free_ball_model(tmp_path):
    p = tmp_path / "fb.xml"
    p.write_text(FREE_BALL)
    return load_scene(str(p))


def _wxyz(r):
    """scipy's rotations as MuJoCo's quaternions (scipy writes x, y, z, w)."""
    return np.roll(r.as_quat(), 1, axis=1)


def test_quaternions_are_turned_on_the_manifold(tmp_path):
    """A ball or free joint's quaternion becomes q * exp(rotvec / 2) with the dof's three samples as rotvec
    (scipy's rotation composition as the closed form), a unit quaternion; positions and hinges get their
    samples added."""
    from scipy.spatial.transform import Rotation

    m = _free_ball_model(tmp_path)
    assert [int(t) for t in m.jnt_type] == [M.JNT_FREE, M.JNT_BALL, M.JNT_HINGE]
    B = 16
    q0 = np.broadcast_to(m.qpos0, (B, m.nq)).copy()
    q0[:, 3:7] = _wxyz(Rotation.from_rotvec(np.linspace(-1, 1, 3 * B).reshape(B, 3)))
    q, v = perturb(m, q0, np.zeros((B, m.nv)), 0.3, 0.0, "uniform", 11)
    dq = np.random.default_rng(11).uniform(-1, 1, (B, m.nv)) * 0.3  # the draws, in perturb's order
    np.testing.assert_array_equal(v, 0.0 * v)
    np.testing.assert_allclose(q[:, 0:3], q0[:, 0:3] + dq[:, 0:3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(q[:, 11], q0[:, 11] + dq[:, 9], rtol=0, atol=1e-15)
    for sl, dsl in ((slice(3, 7), slice(3, 6)), (slice(7, 11), slice(6, 9))):
        expect = _wxyz(Rotation.from_quat(np.roll(q0[:, sl], -1, axis=1)) * Rotation.from_rotvec(dq[:, dsl]))
        got = q[:, sl]
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=0, atol=1e-15)
        # the same rotation (q and -q are one)
        np.testing.assert_allclose(np.abs(np.sum(got * expect, axis=1)), 1.0, rtol=0, atol=1e-14)


def test_quat_turn_by_zero_is_the_identity():
    q = np.array([[0.5, 0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(quat_turn(q, np.zeros((1, 3))), q)


def test_normal_noise_has_the_scale_as_standard_deviation(tmp_path):
    m = load_scene(str(CARTPOLE))
    B = 20000
    q, v = perturb(m, np.zeros((B, m.nq)), np.zeros((B, m.nv)), 0.2, 0.0, "normal", 3)
    # 40,000 samples: the sample deviation of N(0, 0.2^2) is within 2 % of 0.2 with overwhelming probability
    assert abs(np.std(q) - 0.2) < 0.004 and abs(np.mean(q)) < 0.004
    assert np.abs(q).max() > 0.2 * 3  # not a uniform draw on [-0.2, 0.2]
