"""`rigidsim sweep` against the shell loop it replaces, and the Ray backend's cost per job.

The same N jobs (default 64: one bundled contact scene, falling_objects, 200 steps of 4 envs, N seeds), timed
by wall clock in one sitting, on a warm kernel cache (one run first compiles what every row needs):

- runs: N separate `rigidsim run` processes, `--jobs` at a time (default: every core), what a shell loop or
  `xargs -P` does: every run pays the interpreter, the kernel language's start and the engine's build;
- sweep: `rigidsim sweep` on the local backend, `--jobs` workers of 1 thread: one start-up per worker;
- ray (unless --no-ray, and when Ray is installed): the same sweep on a Ray cluster made on this machine,
  a head of 0 CPUs and `--jobs` worker nodes of 1 CPU each (loopback), its start not timed;
- mujoco (unless --no-mujoco): as many jobs in MuJoCo in one process (compile the scene, `mujoco.rollout` of
  4 envs x 200 steps from qpos0, nthread = --jobs), writing no file: the floor a sweep of this scene is
  measured against.

Per-job overhead of a backend: (its wall time - the jobs' own time in the workers / workers) / N, the time a
job costs beyond its run. Every figure is a median over --rounds (default 1). Prints a table, the sweep's
ratio to the runs (the issue's target: at most 0.5x) and to MuJoCo, and the machine.

    python benchmarks/bench_sweep.py                 # 64 jobs, every row
    python benchmarks/bench_sweep.py --jobs-n 16 --rounds 3 --no-ray
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SCENE = "falling_objects"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _cmd(*args):
    return [sys.executable, "-m", "rigidsim", *map(str, args)]


def _grid(folder: Path, n: int, steps: int, envs: int) -> Path:
    p = folder / "grid.yaml"
    p.write_text(json.dumps({"scenes": [SCENE], "seeds": list(range(n)), "steps": steps, "envs": envs,
                             "grid": {"init_qpos_noise": [0.01]}}))
    return p


def time_runs(folder: Path, n: int, steps: int, envs: int, jobs: int) -> float:
    """N separate `rigidsim run` processes, `jobs` at a time."""
    out = folder / "runs"
    out.mkdir()

    def one(seed):
        r = subprocess.run(_cmd("run", SCENE, "--steps", steps, "--envs", envs, "--seed", seed, "--set",
                                "init_qpos_noise=0.01", "--out", out / f"{seed}.h5", "--quiet"), env=_env(),
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"rigidsim run failed: {r.stderr[-2000:]}")

    t = time.perf_counter()
    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(one, range(n)))
    return time.perf_counter() - t


def time_sweep(folder: Path, grid: Path, jobs: int, extra=(), env=None, name="sweep"):
    """(wall seconds, sum of the jobs' own seconds) of one sweep through the command line."""
    out = folder / name
    t = time.perf_counter()
    r = subprocess.run(_cmd("sweep", grid, "--out", out, "--jobs", jobs, "--json", folder / f"{name}.json",
                            "--quiet", *extra), env={**_env(), **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"rigidsim sweep failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    rep = json.loads((folder / f"{name}.json").read_text())
    return wall, sum(j["seconds"] for j in rep["jobs"])


def time_mujoco(n: int, steps: int, envs: int, jobs: int) -> float:
    import mujoco
    import numpy as np
    from mujoco import rollout

    from rigidsim.bundled import find_scene

    path = str(find_scene(SCENE))
    t = time.perf_counter()
    with rollout.Rollout(nthread=jobs) as ro:
        for seed in range(n):
            m = mujoco.MjModel.from_xml_path(path)
            datas = [mujoco.MjData(m) for _ in range(jobs)]
            d = mujoco.MjData(m)
            state = np.zeros(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
            mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            ro.rollout([m] * envs, datas, np.tile(state, (envs, 1)), nstep=steps)
    return time.perf_counter() - t


def _ray_cluster(workers: int):
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                      "include_dashboard": False})
    for _ in range(workers):
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    c.wait_for_nodes()
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs-n", type=int, default=64, help="jobs (seeds) of the sweep")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--envs", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=None, help="processes at once (default: every core)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--no-mujoco", action="store_true")
    a = ap.parse_args()
    from rigidsim.sweeps.local import cores

    jobs = a.jobs or cores()
    n = a.jobs_n
    rows = {"runs": [], "sweep": [], "sweep_own": [], "ray": [], "ray_own": [], "mujoco": []}
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    try:
        warm = subprocess.run(_cmd("run", SCENE, "--steps", 2, "--set", "init_qpos_noise=0.01", "--out",
                                   work / "warm.h5", "--quiet"), env=_env(), capture_output=True, text=True)
        if warm.returncode:
            raise SystemExit(warm.stderr[-2000:])
        cluster = None
        if not a.no_ray:
            try:
                cluster = _ray_cluster(jobs)
            except ImportError:
                print("# Ray is not installed: no ray row (pip install 'rigidsim[ray]')")
        for r in range(a.rounds):
            d = work / f"round{r}"
            d.mkdir()
            grid = _grid(d, n, a.steps, a.envs)
            rows["runs"].append(time_runs(d, n, a.steps, a.envs, jobs))
            w, own = time_sweep(d, grid, jobs)
            rows["sweep"].append(w)
            rows["sweep_own"].append(own)
            if cluster is not None:
                w, own = time_sweep(d, grid, jobs, ("--backend", "ray", "--address", cluster.address),
                                    {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"},
                                    name="ray")
                rows["ray"].append(w)
                rows["ray_own"].append(own)
            if not a.no_mujoco:
                rows["mujoco"].append(time_mujoco(n, a.steps, a.envs, jobs))
            shutil.rmtree(d, ignore_errors=True)
        if cluster is not None:
            cluster.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in rows.items() if v}
    from bench_startup import _cpu_model

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# {_cpu_model()}, {cores()} cores, commit {commit}, load {os.getloadavg()[0]:.1f}; {n} jobs of "
          f"{SCENE}: {a.steps} steps x {a.envs} envs, {jobs} at a time, medians of {a.rounds}")
    print(f"{'how':<34} {'wall s':>8} {'per job s':>10} {'overhead/job s':>15}")
    print(f"{'rigidsim run x ' + str(n) + ' (processes)':<34} {med['runs']:>8.1f} {med['runs'] / n * jobs:>10.2f}")
    for k, label in (("sweep", "rigidsim sweep (local)"), ("ray", "rigidsim sweep --backend ray")):
        if k in med:
            over = (med[k] - med[k + "_own"] / jobs) / n
            print(f"{label:<34} {med[k]:>8.1f} {med[k] / n * jobs:>10.2f} {over:>15.3f}")
    if "mujoco" in med:
        print(f"{'mujoco.rollout, one process':<34} {med['mujoco']:>8.1f} {med['mujoco'] / n * jobs:>10.2f}")
    print(f"sweep / runs: {med['sweep'] / med['runs']:.2f}x (target: at most 0.5x)")
    if "ray" in med:
        print(f"ray / local sweep: {med['ray'] / med['sweep']:.2f}x")
    if "mujoco" in med:
        print(f"sweep / mujoco.rollout: {med['sweep'] / med['mujoco']:.2f}x (MuJoCo writes no file)")


if __name__ == "__main__":
    main()
