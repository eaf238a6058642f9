"""The recording path through the real command line: the final frame when --every does not divide --steps,
SIGTERM and SIGINT, a run whose state diverges, an unwritable --out, a model without dofs, --compression."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, assert_clean_error, cli_cmd, cli_env, rigidsim

mujoco = pytest.importorskip("mujoco")

SHARED = ROOT.parent / "shared" / "models"
COMPAT = ROOT / "configs" / "mujoco_compatible.yaml"


# ---------------------------------------------------------------------------------------------- --every
@pytest.mark.parametrize("steps,every,expect_steps", [(10, 3, [0, 3, 6, 9, 10]), (10, 100000, [0, 10]),
                                                      (9, 3, [0, 3, 6, 9]), (0, 3, [0])])
def test_every_not_dividing_steps_records_the_final_state(tmp_path, steps, every, expect_steps):
    """T = steps // every + 1, plus the final state; each frame is mj_step's state at its step, in float64."""
    path = ROOT / "scenes" / "cartpole.xml"
    mjm = mujoco.MjModel.from_xml_path(str(path))
    ctrl = np.random.default_rng(3).uniform(-1, 1, (max(steps, 1), mjm.nu))
    np.save(tmp_path / "c.npy", ctrl)
    out = tmp_path / "o.h5"
    p = rigidsim("run", path, "--keyframe", "tilted", "--ctrl", tmp_path / "c.npy", "--steps", steps, "--envs", 2,
                 "--every", every, "--options", COMPAT, "--record", "qpos,qvel,xpos,ctrl", "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    d = mujoco.MjData(mjm)
    mujoco.mj_resetDataKeyframe(mjm, d, 0)
    ref_q, ref_v, ref_x, ref_t = {}, {}, {}, {}
    for s in range(steps + 1):
        if s in expect_steps:
            mujoco.mj_forward(mjm, d)
            ref_q[s], ref_v[s], ref_x[s], ref_t[s] = d.qpos.copy(), d.qvel.copy(), d.xpos.copy(), d.time
        if s < steps:
            d.ctrl[:] = ctrl[s]
            mujoco.mj_step(mjm, d)
    with h5py.File(out, "r") as f:
        T = len(expect_steps)
        assert T == steps // every + 1 + (1 if steps % every else 0)
        assert f.attrs["n_frames"] == T and bool(f.attrs["complete"]) is True
        assert f["time"].shape == (T,) and f["qpos"].shape == (T, 2, mjm.nq)
        # MuJoCo accumulates time the same way, step by step
        np.testing.assert_array_equal(f["time"][:], [ref_t[s] for s in expect_steps])
        np.testing.assert_allclose(f["time"][:], np.array(expect_steps) * mjm.opt.timestep, rtol=1e-14, atol=0)
        for t, s in enumerate(expect_steps):
            for e in range(2):
                np.testing.assert_allclose(f["qpos"][t, e], ref_q[s], rtol=0, atol=1e-9)
                np.testing.assert_allclose(f["qvel"][t, e], ref_v[s], rtol=0, atol=1e-9)
                np.testing.assert_allclose(f["xpos"][t, e], ref_x[s], rtol=0, atol=1e-9)
        assert f["ctrl"].shape == (T, 2, mjm.nu)


# ---------------------------------------------------------------------------------------------- signals
@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_leaves_a_readable_partial_file(tmp_path, sig, code):
    out = tmp_path / "long.h5"
    proc = subprocess.Popen(cli_cmd("run", "chain", "--steps", "100000000", "--envs", "4", "--every", "1000",
                                    "--out", out, "--quiet"),
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tmp = tmp_path / f".long.h5.tmp-{proc.pid}"
    deadline = time.time() + 300
    while not tmp.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert tmp.exists(), "the run never started writing"
    time.sleep(1.0)  # let it step
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stdout + stderr
    assert "Traceback" not in stderr and "complete=false" in stderr, stderr
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) is False
        T = int(f.attrs["n_frames"])
        assert T >= 1
        nq, nv = f["model"].attrs["nq"], f["model"].attrs["nv"]
        assert f["time"].shape == (T,) and f["qpos"].shape == (T, 4, nq) and f["qvel"].shape == (T, 4, nv)
        assert f["xpos"].shape[:2] == (T, 4) and f["contacts/offsets"].shape == (T * 4 + 1,)
        np.testing.assert_allclose(f["time"][:], np.arange(T) * 1000 * 0.002, rtol=(T * 1000) * 2.3e-16)
        assert np.isfinite(f["qpos"][:]).all()
    assert f"after step {(T - 1) * 1000}: wrote {T} frames" in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.h5"]  # no .long.h5.tmp-* left behind



# ---------------------------------------------------------------------------------------------- divergence
def test_diverging_run_exits_1_with_its_step_a_hint_and_the_finished_frames(tmp_path):
    """A scene the default integrator (approximate_implicitfast) cannot hold at its timestep (MuJoCo computing
    the same scheme diverges too: test_engine_integrators): exit 1 naming the step and env, a hint that names
    the options that may hold it, and the file with every frame before that step, all finite."""
    from tests.test_engine_integrators import APPROX_LIMITS_XML

    scene = tmp_path / "unstable.xml"
    scene.write_text(APPROX_LIMITS_XML)
    out = tmp_path / "o.h5"
    p = rigidsim("run", scene, "--steps", 1000, "--envs", 2, "--out", out, "--quiet")
    text = assert_clean_error(p, 1)
    m = re.search(r"is (NaN|Inf) at step (\d+) in env (\d+)", text)
    assert m, text
    step = int(m.group(2))
    assert "approximate_implicitfast" in text and "--set integrator=implicitfast" in text and "--set dt=" in text
    assert f"Wrote the {step} frames before it to {out} (complete=false)" in text
    with h5py.File(out, "r") as f:
        assert not f.attrs["complete"] and f["qpos"].shape[:2] == (step, 2)
        assert np.isfinite(f["qpos"][:]).all() and np.isfinite(f["qvel"][:]).all()

# ---------------------------------------------------------------------------------------------- --out
def _fresh_cache(tmp_path) -> dict:
    """A kernel cache folder of its own: the engine creates a folder in it as soon as it starts."""
    cache = tmp_path / "kernel-cache"
    cache.mkdir()
    return {"RIGIDSIM_CACHE_DIR": str(cache)}


def _assert_refused_early(p, path, env):
    text = assert_clean_error(p, 2)
    assert "--out" in text and str(path) in text, text
    started = list(Path(env["RIGIDSIM_CACHE_DIR"]).iterdir())
    assert not started, f"refused only after the engine was started ({started}): " + text
    return text


def test_out_under_proc_is_bad_input(tmp_path):
    """/proc takes no new file, even for root."""
    path = Path("/proc") / f"rigidsim-test-{os.getpid()}.h5"
    env = _fresh_cache(tmp_path)
    p = rigidsim("run", "pendulum", "--steps", "5", "--out", path, env=env)
    _assert_refused_early(p, path, env)
    assert not path.exists()


def test_out_whose_folder_is_a_file_is_bad_input(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("keep me\n")
    path = afile / "o.h5"
    env = _fresh_cache(tmp_path)
    p = rigidsim("run", "pendulum", "--steps", "5", "--out", path, env=env)
    _assert_refused_early(p, path, env)
    assert afile.read_text() == "keep me\n"


def test_existing_unwritable_file_survives_untouched(tmp_path):
    """An existing file in a folder that takes no new file (/proc/version, even for root): refused, unchanged."""
    path = Path("/proc/version")
    before = path.read_bytes()
    env = _fresh_cache(tmp_path)
    p = rigidsim("run", "pendulum", "--steps", "5", "--out", path, env=env)
    _assert_refused_early(p, path, env)
    assert path.read_bytes() == before


def test_read_only_existing_file_survives_untouched():
    """A read-only file in a writable folder: the rename would replace it, so it is refused first. chmod does not
    stop root, so as root the command runs as the user nobody (setpriv)."""
    d = Path(tempfile.mkdtemp(prefix="rigidsim-ro-"))
    try:
        os.chmod(d, 0o777)
        path = d / "keep.h5"
        path.write_bytes(b"not yours\n")
        os.chmod(path, 0o444)
        cmd = cli_cmd("run", "pendulum", "--steps", "5", "--out", path)
        if os.geteuid() == 0:
            as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            probe = subprocess.run([*as_nobody, sys.executable, "-c", "import rigidsim.cli.main"], env=cli_env(),
                                   capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            if probe.returncode != 0:  # e.g. a virtual environment in a folder only root may read
                pytest.skip("as root this test runs the command as the user nobody, who cannot import this "
                            f"Python environment: {probe.stderr.strip().splitlines()[-1:]}")
            cmd = [*as_nobody, *cmd]
        env = cli_env()
        env["HOME"] = str(d)
        env["RIGIDSIM_CACHE_DIR"] = str(d / "kernel-cache")
        (d / "kernel-cache").mkdir(mode=0o777)
        os.chmod(d / "kernel-cache", 0o777)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        text = _assert_refused_early(p, path, env)
        assert "read-only" in text
        assert path.read_bytes() == b"not yours\n"
        assert sorted(x.name for x in d.iterdir()) == ["keep.h5", "kernel-cache"]
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- no dofs
STATIC_XML = """<mujoco model="static">
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="post" pos="0.1 0.2 0.3" euler="0 0 30">
      <geom name="post" type="box" size="0.1 0.1 0.1"/>
      <body name="arm" pos="0 0.5 0"><geom type="sphere" size="0.05"/></body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("which", ["inline", "lqr"])
def test_model_without_dofs_runs(tmp_path, which):
    if which == "inline":
        path = tmp_path / "static.xml"
        path.write_text(STATIC_XML)
    else:
        path = SHARED / "dm_control" / "lqr.xml"
        if not path.exists():
            pytest.skip("../shared/models is absent")
    mjm = mujoco.MjModel.from_xml_path(str(path))
    assert mjm.nq == mjm.nv == mjm.nu == 0
    d = mujoco.MjData(mjm)
    for _ in range(7):
        mujoco.mj_step(mjm, d)
    out = tmp_path / "o.h5"
    steps, B = 7, 3
    p = rigidsim("run", path, "--steps", steps, "--envs", B, "--every", 2, "--out", out, "--quiet",
                 "--record", "qpos,qvel,qacc,ctrl,xpos,xquat,contacts")
    assert p.returncode == 0, p.stdout + p.stderr
    T = 7 // 2 + 2
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) is True and f.attrs["n_frames"] == T
        for k in ("qpos", "qvel", "qacc", "ctrl"):
            assert f[k].shape == (T, B, 0), k
        assert f["xpos"].shape == (T, B, mjm.nbody, 3) and f["xquat"].shape == (T, B, mjm.nbody, 4)
        np.testing.assert_allclose(f["xpos"][:], np.broadcast_to(d.xpos, (T, B, mjm.nbody, 3)), rtol=0, atol=1e-12)
        np.testing.assert_allclose(f["xquat"][:], np.broadcast_to(d.xquat, (T, B, mjm.nbody, 4)), rtol=0, atol=1e-12)
        np.testing.assert_allclose(f["time"][:], np.array([0, 2, 4, 6, 7]) * mjm.opt.timestep, rtol=1e-14, atol=0)
        assert f["contacts/offsets"].shape == (T * B + 1,)


# ---------------------------------------------------------------------------------------------- --compression
def test_compression_options_store_the_same_numbers(tmp_path):
    data = {}
    for comp in ("none", "lzf", "gzip"):
        out = tmp_path / f"{comp}.h5"
        p = rigidsim("run", "chain", "--steps", "30", "--envs", "3", "--every", "4", "--compression", comp,
                     "--out", out, "--quiet")
        assert p.returncode == 0, p.stderr
        with h5py.File(out, "r") as f:
            assert f["qpos"].chunks is not None and f["qpos"].shape == (30 // 4 + 2, 3, f["model"].attrs["nq"])
            assert f["qpos"].compression == (None if comp == "none" else comp)
            assert f["contacts/offsets"].compression == (None if comp == "none" else comp)
            data[comp] = {k: f[k][:] for k in ("time", "qpos", "qvel", "xpos", "xquat", "contacts/offsets")}
    for comp in ("lzf", "gzip"):
        for k, v in data["none"].items():
            assert np.array_equal(v, data[comp][k]), (comp, k)


def test_bad_compression_is_bad_input(tmp_path):
    out = tmp_path / "o.h5"
    out.write_bytes(b"old")
    p = rigidsim("run", "pendulum", "--steps", "5", "--compression", "zstd", "--out", out)
    text = assert_clean_error(p, 2)
    assert "--compression" in text and "zstd" in text and "none, lzf, gzip" in text, text
    assert out.read_bytes() == b"old"
