"""The command line's less travelled paths, through the real `rigidsim` process: --precision 32 on a contact
scene, RIGIDSIM_CPU_THREADS, a second Ctrl-C, an internal error, --version."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, cli_cmd, cli_env, rigidsim

COMPAT = ("--options", ROOT / "configs" / "mujoco_compatible.yaml")


def _pyproject_version() -> str:
    m = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert m, "pyproject.toml has no version"
    return m.group(1)


def test_version_prints_pyprojects_version():
    p = rigidsim("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"rigidsim {_pyproject_version()}"


# ------------------------------------------------------------------------------------------ --precision 32
def test_precision_32_with_contacts_follows_mujoco(tmp_path):
    """falling_objects in float32 through contact (MuJoCo's first contact at step 214), against mj_step's
    float64 run. Bound: one float32 rounding (eps32 = 1.19e-7, relative to max |qpos|) per step, accumulated
    linearly over the steps: steps * eps32 * max|qpos| (9.5e-5 here). Measured: 4.7e-6. The float64 run is
    held to ~1e-16 of MuJoCo's (test_parity_scenes)."""
    mujoco = pytest.importorskip("mujoco")
    from tests.test_parity_scenes import mujoco_free_run

    steps = 400
    out = tmp_path / "f32.h5"
    p = rigidsim("run", "falling_objects", "--steps", steps, "--envs", 2, "--precision", 32, "--out", out, "--quiet",
                 *COMPAT)
    assert p.returncode == 0, p.stderr
    ref, ref_ncon = mujoco_free_run(ROOT / "scenes" / "falling_objects.xml", steps)
    assert mujoco.__version__ and ref_ncon.max() > 0
    with h5py.File(out) as f:
        assert int(f.attrs["precision"]) == 32 and f["qpos"].dtype == np.float32
        qpos = f["qpos"][:].astype(np.float64)
        ncon = np.diff(f["contacts/offsets"][:]).reshape(steps + 1, 2)
    np.testing.assert_array_equal(qpos[:, 0], qpos[:, 1])
    assert ncon.max() > 0
    np.testing.assert_array_equal(ncon[:, 0], ref_ncon, err_msg="contacts per frame")
    bound = steps * np.finfo(np.float32).eps * np.abs(ref).max()
    err = np.abs(qpos[:, 0] - ref).max()
    assert err <= bound, f"float32 qpos off MuJoCo's by {err:.3g} > {bound:.3g}"


# ------------------------------------------------------------------------------------------ threads
def test_cpu_threads_do_not_change_the_result(tmp_path):
    """RIGIDSIM_CPU_THREADS=3 (more threads than this machine's 2 cores) and =1: the same file, to the bit,
    on boxes27 through its first contacts (step 23), with envs that differ (init noise)."""
    files = {}
    for n in (1, 3):
        files[n] = tmp_path / f"t{n}.h5"
        p = rigidsim("run", "boxes27", "--steps", 40, "--envs", 4, "--out", files[n], "--quiet", *COMPAT,
                     "--set", "init_qvel_noise=0.5", env={"RIGIDSIM_CPU_THREADS": str(n)})
        assert p.returncode == 0, p.stderr
    with h5py.File(files[1]) as f:
        assert np.diff(f["contacts/offsets"][:]).max() > 0  # contacts happened
        q = f["qpos"][:]
        assert not np.array_equal(q[-1, 0], q[-1, 1])  # the envs differ
    p = rigidsim("diff", files[1], files[3])
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("value", ["abc", "0"])
def test_bad_cpu_threads_is_an_input_error(tmp_path, value):
    """A RIGIDSIM_CPU_THREADS that is not a thread count: one line naming the variable, exit 2, no file."""
    out = tmp_path / "t.h5"
    p = rigidsim("run", "pendulum", "--steps", 2, "--out", out, "--quiet", env={"RIGIDSIM_CPU_THREADS": value})
    assert p.returncode == 2, p.stderr
    assert "RIGIDSIM_CPU_THREADS" in p.stderr and "Traceback" not in p.stderr
    assert not out.exists()


# ------------------------------------------------------------------------------------------ second Ctrl-C
def test_second_ctrl_c_stops_at_once_with_a_readable_file(tmp_path):
    """The first Ctrl-C asks the run to stop at the end of the next recorded frame; with --every as long as the
    run, there is none, so a second Ctrl-C stops it at once (runner._Interrupt): exit 130, "interrupted", no
    traceback, and a readable file with complete=false and frame 0."""
    out = tmp_path / "long.h5"
    big = 10 ** 9
    proc = subprocess.Popen(cli_cmd("run", "chain", "--steps", big, "--envs", 4, "--every", big, "--out", out,
                                    "--quiet"), env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tmp = tmp_path / f".long.h5.tmp-{proc.pid}"
    deadline = time.time() + 300
    while not tmp.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert tmp.exists(), "the run never started writing"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.5)  # the first is handled between launches (each ~0.2 s); the run goes on
    assert proc.poll() is None, "the first Ctrl-C alone stopped a run with no frame to finish"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and stderr.strip() == "rigidsim: interrupted", stderr
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"]) is False and int(f.attrs["n_frames"]) == 1
        assert f["qpos"].shape[:2] == (1, 4) and np.isfinite(f["qpos"][:]).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.h5"]


# ------------------------------------------------------------------------------------------ internal error
_INJECT = """
import sys
import rigidsim.runner

def boom(*a, **k):
    raise RuntimeError("injected fault")

rigidsim.runner.run = boom
sys.argv = ["rigidsim", "run", "pendulum", "--steps", "1", "--out", sys.argv[1], "--quiet"]
from rigidsim.cli.main import entry
entry()
"""


@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_is_one_paragraph_exit_1(tmp_path, debug):
    """A fault that is not a RigidsimError (injected into the runner): one paragraph naming it an internal error,
    exit 1, no traceback; with RIGIDSIM_DEBUG=1 the traceback."""
    env = cli_env()
    if debug:
        env["RIGIDSIM_DEBUG"] = "1"
    p = subprocess.run([sys.executable, "-c", _INJECT, str(tmp_path / "o.h5")], env=env, capture_output=True,
                       text=True, timeout=300, stdin=subprocess.DEVNULL)
    if debug:
        assert p.returncode == 1 and "Traceback" in p.stderr and "RuntimeError: injected fault" in p.stderr, p.stderr
        return
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    text = p.stderr.strip()
    assert text.startswith("rigidsim: internal error: RuntimeError: injected fault.") and "RIGIDSIM_DEBUG=1" in text
    assert "\n\n" not in text, text  # one paragraph
