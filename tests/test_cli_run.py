"""`rigidsim run` end to end through the real command line: the file of SPEC.md, exactly."""

from __future__ import annotations


import h5py
import numpy as np
import pytest
import yaml

from rigidsim.trajectory import MODEL_ARRAYS
from tests.cli_util import ROOT, assert_clean_error, rigidsim

G = 9.81


@pytest.fixture(scope="module")
def falling_run(tmp_path_factory):
    """falling_objects with collisions off: 100 steps, 8 envs, every 10th step recorded."""
    d = tmp_path_factory.mktemp("fall")
    out = d / "fall.h5"
    p = rigidsim("run", "falling_objects", "--steps", "100", "--envs", "8", "--every", "10",
                 "--set", "enable_collision=false", "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_file_layout_is_specs(falling_run):
    with h5py.File(falling_run, "r") as f:
        a = f.attrs
        assert a["format"] == "rigidsim-trajectory" and a["format_version"] == 1
        assert bool(a["complete"]) is True
        for k in ("rigidsim_version", "scene", "scene_sha256", "options_yaml", "dt", "n_envs", "n_steps", "record_every"):
            assert k in a, k
        assert a["n_envs"] == 8 and a["n_steps"] == 100 and a["record_every"] == 10
        assert a["dt"] == 0.002
        scene_file = ROOT / "scenes" / "falling_objects.xml"
        import hashlib

        assert a["scene_sha256"] == hashlib.sha256(scene_file.read_bytes()).hexdigest()
        resolved = yaml.safe_load(a["options_yaml"])
        assert resolved["enable_collision"] is False and resolved["dt"] == 0.002
        T, B = 100 // 10 + 1, 8
        m = f["model"]
        nq, nv, nbody = m.attrs["nq"], m.attrs["nv"], m.attrs["nbody"]
        assert (nq, nv, nbody) == (28, 24, 5)
        for k in ("nu", "njnt", "ngeom", "neq"):
            assert k in m.attrs
        assert f["time"].shape == (T,) and f["time"].dtype == np.float64
        assert f["qpos"].shape == (T, B, nq) and f["qpos"].dtype == np.float64
        assert f["qvel"].shape == (T, B, nv)
        assert f["xpos"].shape == (T, B, nbody, 3)
        assert f["xquat"].shape == (T, B, nbody, 4)
        assert "qacc" not in f and "ctrl" not in f  # not recorded by default
        c = f["contacts"]
        assert c["offsets"].shape == (T * B + 1,) and c["offsets"].dtype == np.int64
        assert (c["offsets"][:] == 0).all()  # collisions are off
        for k, shape, dt in (("geom", (0, 2), np.int32), ("body", (0, 2), np.int32), ("position", (0, 3), np.float64),
                             ("normal", (0, 3), np.float64), ("penetration", (0,), np.float64),
                             ("force", (0, 3), np.float64)):
            assert c[k].shape == shape and c[k].dtype == dt, k
        for k in MODEL_ARRAYS:
            assert k in m, k
        assert list(m["body_names"].asstr()[:]) == ["world", "box1", "box2", "ball1", "ball2"]
        assert f["qpos"].chunks is not None and f["qpos"].compression is None  # --compression none by default
        np.testing.assert_allclose(f["time"][:], np.arange(T) * 10 * 0.002, rtol=0, atol=1e-15)


def test_free_body_falls_under_gravity(falling_run):
    """A free body under gravity alone: v_n = -g n h and z_n = z0 - g h^2 n (n+1) / 2 (semi-implicit Euler)."""
    with h5py.File(falling_run, "r") as f:
        qpos = f["qpos"][:]
        qvel = f["qvel"][:]
        xpos = f["xpos"][:]
    h = 0.002
    n = np.arange(qpos.shape[0]) * 10
    z0 = np.array([1.0, 1.5, 1.2, 2.0])
    for k in range(4):
        z = qpos[:, :, 7 * k + 2]
        expect = z0[k] - G * h * h * n * (n + 1) / 2
        np.testing.assert_allclose(z, np.repeat(expect[:, None], 8, 1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(qvel[:, :, 6 * k + 2], np.repeat((-G * h * n)[:, None], 8, 1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(xpos[:, :, k + 1, 2], z, rtol=0, atol=1e-12)
    assert (qpos == qpos[:, :1]).all()  # identical envs stay identical


def test_steps_zero_writes_model_and_frame_zero(tmp_path):
    out = tmp_path / "z.h5"
    p = rigidsim("run", "pendulum", "--steps", "0", "--out", out, "--record", "qpos,qacc,ctrl", "--quiet")
    assert p.returncode == 0, p.stderr
    with h5py.File(out, "r") as f:
        assert f["qpos"].shape == (1, 1, 1) and f["qacc"].shape == (1, 1, 1) and f["ctrl"].shape == (1, 1, 1)
        assert "xpos" not in f and "contacts" not in f
        assert bool(f.attrs["complete"])
        assert f["model/body_mass"].shape == (2,)


def test_same_command_same_bytes(tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}.h5"
        p = rigidsim("run", "chain", "--steps", "50", "--envs", "3", "--every", "5", "--out", out, "--quiet",
                     cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_keyframe_and_ctrl(tmp_path):
    """--keyframe sets qpos; a per-step, per-env --ctrl [N, B, nu] reaches each env."""
    N, B = 20, 2
    ctrl = np.zeros((N, B, 1))
    ctrl[:, 1, 0] = 1.0
    c = tmp_path / "c.npy"
    np.save(c, ctrl)
    out = tmp_path / "k.h5"
    p = rigidsim("run", "cartpole", "--keyframe", "tilted", "--ctrl", c, "--steps", N, "--envs", B,
                 "--record", "qpos,ctrl", "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    with h5py.File(out, "r") as f:
        q = f["qpos"][:]
        u = f["ctrl"][:]
    np.testing.assert_array_equal(q[0, :, 1], [0.2, 0.2])
    np.testing.assert_array_equal(u[:N, :, 0], ctrl[:, :, 0])
    assert q[-1, 1, 0] > q[-1, 0, 0]  # the pushed cart moved further along +x


def test_nan_fails_with_step_and_env(tmp_path):
    out = tmp_path / "nan.h5"
    p = rigidsim("run", "pendulum", "--keyframe", "horizontal", "--steps", "50", "--set", "gravity=[0,0,-1.0e+300]",
                 "--set", "integrator=euler", "--out", out, "--quiet")
    text = assert_clean_error(p, 1)
    assert "step" in text and "env 0" in text
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) is False
        assert f["qpos"].shape[0] >= 1 and np.isfinite(f["qpos"][:]).all()


def test_inspect_and_scenes_and_options():
    p = rigidsim("inspect", "cartpole")
    assert p.returncode == 0, p.stderr
    assert "slide" in p.stdout and "hinge" in p.stdout and "options in force" in p.stdout
    p = rigidsim("scenes")
    assert p.returncode == 0
    for name in ("pendulum", "cartpole", "chain", "falling_objects"):
        assert name in p.stdout
    p = rigidsim("options")
    assert p.returncode == 0
    from rigidsim.options import SPECS

    for k in SPECS:
        assert k in p.stdout, k
