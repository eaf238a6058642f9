"""Faults that must not lose data (issue 28, items 11-12): a full disk (a fault-injected writer, and a real
8 MB tmpfs where mounting is allowed) and `kill -9` of a real run, each followed by reading the file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, cli_env

HUMANOID = ROOT.parent / "shared" / "models" / "mujoco_warp" / "test_data" / "humanoid" / "humanoid.xml"


def _cli(*args, pre: str = "", **kw):
    """The real command line in a subprocess, after `pre` (Python run first: a fault injected, a smaller flush
    interval)."""
    code = pre + "\nimport sys\nfrom rigidsim.cli.main import app\nsys.argv = ['rigidsim'] + sys.argv[1:]\napp()"
    return [sys.executable, "-c", code, *map(str, args)]


FULL_AFTER = """
import errno, rigidsim.trajectory as t
t.FLUSH_BYTES = 4096
_orig, _n = t.TrajectoryWriter._append, [0]
def _append(self, key, data):
    if key == "time" and self.frames >= {frames}:
        raise OSError(errno.ENOSPC, "No space left on device")
    return _orig(self, key, data)
t.TrajectoryWriter._append = _append
"""


def _check_prefix(path: Path, ref: Path, n: int):
    """The first n frames of `path` equal those of `ref`, bit for bit; `path` says complete=false."""
    with h5py.File(path, "r") as f, h5py.File(ref, "r") as g:
        assert bool(f.attrs["complete"]) is False and int(f.attrs["n_frames"]) == n
        for k in ("time", "qpos", "qvel", "xpos", "xquat"):
            assert f[k].shape[0] == n
            np.testing.assert_array_equal(f[k][:], g[k][:n])
        B = int(f.attrs["n_envs"])
        assert f["contacts/offsets"].shape == (n * B + 1,)
        np.testing.assert_array_equal(f["contacts/offsets"][:], g["contacts/offsets"][:n * B + 1])
        k = int(f["contacts/offsets"][-1])
        assert f["contacts/geom"].shape[0] == k
        np.testing.assert_array_equal(f["contacts/force"][:], g["contacts/force"][:k])


def test_full_disk_injected_keeps_the_flushed_frames_and_says_so(tmp_path):
    out, ref = tmp_path / "o.h5", tmp_path / "ref.h5"
    args = ("run", "chain", "--steps", "300", "--envs", "2", "--quiet")
    p = subprocess.run(_cli(*args, "--out", out, pre=FULL_AFTER.format(frames=150)), env=cli_env(),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"cannot write {out}: the file system is full" in p.stderr and "after 150 of its 301 frames" in p.stderr
    assert "need about" in p.stderr and "is free in" in p.stderr, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["o.h5"]  # nothing hidden left behind
    with h5py.File(out, "r") as f:
        n = int(f.attrs["n_frames"])
    assert 0 < n <= 150 and f"Kept the {n} frames" in p.stderr
    r = subprocess.run(_cli(*args, "--out", ref), env=cli_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    _check_prefix(out, ref, n)


def test_full_disk_on_a_real_8mb_tmpfs(tmp_path):
    if not HUMANOID.exists():
        pytest.skip(f"{HUMANOID} is absent")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs is not permitted here (the fault-injected test covers the writer)")
    try:
        out = mnt / "o.h5"
        p = subprocess.run(_cli("run", HUMANOID, "--steps", "2000", "--envs", "16", "--out", out, "--quiet"),
                           env=cli_env(), capture_output=True, text=True, timeout=600)
        assert p.returncode == 1, p.stderr[-2000:]
        assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr[-2000:]
        assert f"cannot write {out}: the file system is full" in p.stderr
        assert sorted(x.name for x in mnt.iterdir()) == ["o.h5"]
        with h5py.File(out, "r") as f:
            n = int(f.attrs["n_frames"])
            assert bool(f.attrs["complete"]) is False and f["qpos"].shape[0] == n and n > 0
            assert f"Kept the {n} frames" in p.stderr
            np.testing.assert_allclose(f["time"][:], np.arange(n) * float(f.attrs["dt"]), rtol=1e-12, atol=1e-15)
            assert np.isfinite(f["qpos"][:]).all() and (f["qpos"][:, :, 2] > 0).all()
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_kill_9_keeps_the_flushed_frames_and_the_next_run_recovers_them(tmp_path):
    out, ref = tmp_path / "long.h5", tmp_path / "ref.h5"
    small = "import rigidsim.trajectory as t\nt.FLUSH_BYTES = 4096"
    proc = subprocess.Popen(_cli("run", "chain", "--steps", "100000000", "--envs", "2", "--every", "10",
                                 "--out", out, "--quiet", pre=small), env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tmp = tmp_path / f".long.h5.tmp-{proc.pid}"
    deadline, n = time.time() + 300, 0
    while time.time() < deadline and proc.poll() is None and n < 20:  # a reader follows the file as it grows
        if tmp.exists():
            try:
                with h5py.File(tmp, "r", swmr=True) as f:
                    n = int(f.attrs["n_frames"])
            except (OSError, KeyError):
                pass
        time.sleep(0.1)
    assert n >= 20, "the run never flushed frames"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    with h5py.File(tmp, "r", swmr=True) as f:  # the killed file reads (HDF5's SWMR reader) up to its flush
        n = int(f.attrs["n_frames"])
        assert f["qpos"].shape[0] >= n >= 20
    # the next run to the same --out recovers it into long.recovered-PID.h5 and says so
    p = subprocess.run(_cli("run", "chain", "--steps", (n - 1) * 10, "--envs", "2", "--every", "10",
                            "--out", out, "--quiet"), env=cli_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    rec = tmp_path / f"long.recovered-{proc.pid}.h5"
    assert f"recovered the {n} frames" in p.stderr and str(rec) in p.stderr, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(["long.h5", rec.name])
    _check_prefix(rec, out, n)  # out: the uninterrupted run of the same command, its first n frames
    from rigidsim.diff.reading import _File  # rigidsim diff's reader takes the recovered file

    t = _File(str(rec), "A")
    assert t._frames() == n
    t.close()
