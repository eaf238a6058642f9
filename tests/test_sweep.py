"""`rigidsim sweep` on the local backend (no Ray): the grid file, the job files against plain `rigidsim run`,
the manifest, regression mode against a baseline, Ctrl-C and --resume, and bad input (exit 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest

from tests.cli_util import assert_clean_error, cli_cmd, cli_env, rigidsim
from tests.sweep_util import GRID, leftovers, manifest, run_args, write_grid


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The 2 x 2 x 2 grid through the command line, locally."""
    d = tmp_path_factory.mktemp("sweep")
    grid = write_grid(d)
    p = rigidsim("sweep", grid, "--out", d / "out", "--jobs", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    return d, p


def test_every_job_ran_once_and_named_by_its_id(swept):
    d, p = swept
    lines = manifest(d / "out")
    assert len(lines) == 8 and len({e["id"] for e in lines}) == 8
    assert {(e["scene"], e["seed"], e["overrides"]["dt"]) for e in lines} == {
        (s, seed, dt) for s in GRID["scenes"] for seed in (0, 1) for dt in (0.002, 0.004)}
    for e in lines:
        assert e["status"] == "ok" and e["exit"] == 0 and e["node"]
        assert e["file"] == f"{e['scene']}-{e['id']}.h5" and len(e["id"]) == 12
        with h5py.File(d / "out" / e["file"]) as f:
            assert bool(f.attrs["complete"]) and int(f.attrs["n_frames"]) == GRID["steps"] + 1
    assert sorted(x.name for x in (d / "out").iterdir()) == sorted([e["file"] for e in lines] + ["manifest.jsonl"])
    assert "PASS: 8 jobs, 8 ok" in p.stdout


def test_job_files_equal_plain_runs(swept, tmp_path):
    """Each job's file is what `rigidsim run` with the same settings writes: the same bytes (so `rigidsim diff`
    exits 0 at zero tolerance). One job of each scene through the command line, every job through
    `runner.run`, the code `rigidsim run` calls, from the scene's name and the --set strings."""
    from rigidsim.runner import RunArgs, run

    d, _ = swept
    lines = manifest(d / "out")
    for e in lines:
        plain = tmp_path / f"{e['id']}.h5"
        run(RunArgs(scene=e["scene"], steps=GRID["steps"], envs=GRID["envs"], seed=e["seed"], out=str(plain),
                    sets=[f"{k}={v}" for k, v in e["overrides"].items()], quiet=True))
        assert plain.read_bytes() == (d / "out" / e["file"]).read_bytes(), e["file"]
    for scene in GRID["scenes"]:
        e = next(x for x in lines if x["scene"] == scene)
        plain = tmp_path / f"cli-{e['id']}.h5"
        p = rigidsim(*run_args(e), "--out", plain, "--quiet")
        assert p.returncode == 0, p.stderr
        q = rigidsim("diff", plain, d / "out" / e["file"])
        assert q.returncode == 0, q.stdout
        assert plain.read_bytes() == (d / "out" / e["file"]).read_bytes(), e["file"]


def test_ids_are_stable_and_a_rerun_gives_the_same_bytes(swept, tmp_path):
    """The Python API runs the same grid (one worker, 1 thread): the same ids, files of the same bytes."""
    import rigidsim

    d, _ = swept
    rep = rigidsim.sweep(GRID, tmp_path / "again", jobs=1)
    assert rep.exit_code == 0
    assert sorted(e["id"] for e in rep.jobs) == sorted(e["id"] for e in manifest(d / "out"))
    for e in rep.jobs:
        assert (tmp_path / "again" / e["file"]).read_bytes() == (d / "out" / e["file"]).read_bytes()


def test_baseline_equal_then_one_option_changed(swept, tmp_path):
    """Regression mode: the same sweep against its own baseline exits 0; with an option changed in the options
    file (the ids stay) it exits 1 and names the job, the field, the frame and the env."""
    d, _ = swept
    p = rigidsim("sweep", d / "grid.yaml", "--out", tmp_path / "same", "--baseline", d / "out", "--json",
                 tmp_path / "same.json")
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp_path / "same.json").read_text())
    assert rep["counts"]["equal"] == 8 and rep["exit_code"] == 0
    (tmp_path / "shaken.yaml").write_text("init_qvel_noise: 0.5\n")
    grid = write_grid(tmp_path, options="shaken.yaml", scenes=["falling_objects"])
    p = rigidsim("sweep", grid, "--out", tmp_path / "changed", "--baseline", d / "out", "--json", "-")
    assert p.returncode == 1, p.stdout + p.stderr
    rep = json.loads(p.stdout)
    assert rep["counts"]["differs"] == 4
    for e in rep["jobs"]:
        f = e["first_difference"]
        assert e["diff"] == "differs" and f["field"] in ("qpos", "qvel") and f["frame"] == 0 and f["env"] in (0, 1), f
    table = rigidsim("sweep", grid, "--out", tmp_path / "changed", "--baseline", d / "out", "--resume")
    assert table.returncode == 1
    first = rep["jobs"][0]
    where = f"field {first['first_difference']['field']}, frame 0, env {first['first_difference']['env']}"
    assert first["file"] in table.stdout and where in table.stdout, table.stdout
    assert "4 differ" in table.stdout


def test_missing_baseline_files_are_listed(swept, tmp_path):
    d, _ = swept
    grid = write_grid(tmp_path, seeds=[0, 7], scenes=["pendulum"], grid={"dt": [0.002]})
    p = rigidsim("sweep", grid, "--out", tmp_path / "o", "--baseline", d / "out", "--json", "-")
    assert p.returncode == 1
    rep = json.loads(p.stdout)
    assert sorted(e["diff"] for e in rep["jobs"]) == ["equal", "missing"]
    assert rep["counts"]["missing"] == 1


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_signal_leaves_no_partial_file_and_resume_runs_the_rest(tmp_path, sig, code):
    """Ctrl-C (SIGINT to the sweep) or SIGTERM mid-sweep: exit 130 or 143, every file in the folder whole and in
    the manifest, no temporary file; --resume then runs only the jobs the manifest lacks."""
    # 3 jobs of ~1.5 s: the signal comes as the first ends, while the second runs
    grid = write_grid(tmp_path, steps=1500, envs=32, scenes=["falling_objects"], seeds=[0, 1, 2], grid=None)
    out = tmp_path / "out"
    proc = subprocess.Popen(cli_cmd("sweep", grid, "--out", out, "--jobs", "1"), env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not ((out / "manifest.jsonl").exists()
                                               and (out / "manifest.jsonl").read_text().strip()):
        time.sleep(0.1)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stdout + stderr
    assert "Traceback" not in stderr and "--resume" in stderr
    first = manifest(out)
    assert 1 <= len(first) < 3
    assert leftovers(out) == []
    assert sorted(x.name for x in out.glob("*.h5")) == sorted(e["file"] for e in first)
    mtimes = {e["file"]: os.stat(out / e["file"]).st_mtime_ns for e in first}
    p = rigidsim("sweep", grid, "--out", out, "--resume", "--json", "-")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["counts"]["skipped"] == len(first) and rep["counts"]["ok"] == 3
    lines = manifest(out)
    assert len(lines) == 3 and len({e["id"] for e in lines}) == 3  # one line per job: the done ones not rerun
    assert {e["file"]: os.stat(out / e["file"]).st_mtime_ns for e in first} == mtimes


def test_a_failed_job_is_a_result(tmp_path):
    """A run that fails (exit 1: its state becomes NaN, as test_cli_run's) is recorded as failed with its file,
    the other job runs, and the sweep exits 1."""
    grid = write_grid(tmp_path, scenes=["pendulum"], seeds=[0], grid=None, keyframe="horizontal", steps=20,
                      cases=[{}, {"gravity": [0, 0, -1.0e300], "integrator": "euler"}])
    p = rigidsim("sweep", grid, "--out", tmp_path / "o", "--json", "-")
    assert p.returncode == 1, p.stdout + p.stderr
    good, bad = json.loads(p.stdout)["jobs"]
    assert good["status"] == "ok" and good["overrides"] == {}
    assert bad["status"] == "failed" and bad["exit"] == 1 and "step" in bad["message"] and "env 0" in bad["message"]
    with h5py.File(tmp_path / "o" / bad["file"]) as f:
        assert not bool(f.attrs["complete"])


@pytest.mark.parametrize("text, key", [
    ("scenes: [pendulum]\nseed: [1]\n", "seed' . Did you mean 'seeds'"),
    ("seeds: [0]\n", "names no scenes"),
    ("scenes: [pendulumm]\n", "pendulumm"),
    ("scenes: [pendulum]\ngrid: {dt: [0.002, -1]}\n", "grid.dt"),
    ("scenes: [pendulum]\ngrid: {dtt: [0.002]}\n", "Did you mean 'dt'"),
    ("scenes: [pendulum]\ngrid: {dt: 0.002}\n", "must list its values"),
    ("scenes: [pendulum]\ngrid: {dt: [0.002]}\ncases: [{dt: 0.004}]\n", "both by 'grid' and by case 0"),
    ("scenes: [pendulum]\nseeds: [0, 0]\n", "a seed twice"),
    ("scenes: [pendulum]\nenvs: 0\n", "key 'envs'"),
    ("scenes: [pendulum]\nrecord: qpos,qvl\n", "key 'record'"),
    ("scenes: [pendulum]\noptions: nowhere.yaml\n", "nowhere.yaml"),
    ("scenes: [pendulum\n", "malformed YAML"),
])
def test_bad_grid_files_exit_2_naming_the_key(tmp_path, text, key):
    grid = tmp_path / "g.yaml"
    grid.write_text(text)
    p = rigidsim("sweep", grid, "--out", tmp_path / "o")
    msg = assert_clean_error(p, 2)
    assert key.replace("' .", "'.") in msg, msg
    assert not (tmp_path / "o" / "manifest.jsonl").exists()


def test_bad_flags_exit_2(tmp_path):
    grid = write_grid(tmp_path)
    assert "--backend" in assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--backend", "slurm"))
    assert "--baseline" in assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--baseline",
                                                       tmp_path / "none"))
    assert "--threads-per-job" in assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o",
                                                              "--threads-per-job", "0"))
    assert "compared with itself" in assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path, "--baseline",
                                                                 tmp_path))
    assert "--json" in assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--json",
                                                   tmp_path / "no" / "r.json"))
    assert not (tmp_path / "o").exists()


def test_local_backend_never_imports_ray(tmp_path):
    """The local backend runs without Ray: a sweep from Python leaves `ray` out of sys.modules."""
    code = ("import sys, rigidsim; r = rigidsim.sweep({'scenes': ['pendulum'], 'steps': 5}, 'o'); "
            "assert r.exit_code == 0 and r.jobs[0]['status'] == 'ok', r.jobs; assert 'ray' not in sys.modules")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


def test_ray_backend_errors_exit_2(tmp_path):
    """Without Ray installed (a stand-in module that cannot be imported), and with an address nobody answers."""
    grid = write_grid(tmp_path)
    fake = tmp_path / "noray"
    fake.mkdir()
    (fake / "ray.py").write_text("raise ImportError('No module named ray')\n")
    env = {"PYTHONPATH": f"{fake}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    msg = assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--backend", "ray", "--address",
                                      "127.0.0.1:6379", env=env))
    assert "pip install 'rigidsim[ray]'" in msg
    t0 = time.monotonic()
    msg = assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--backend", "ray", "--address",
                                      "127.0.0.1:9"))
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in msg and time.monotonic() - t0 < 60
    msg = assert_clean_error(rigidsim("sweep", grid, "--out", tmp_path / "o", "--backend", "ray",
                                      env={"RAY_ADDRESS": ""}))
    assert "--address" in msg
