"""Smooth-dynamics throughput: rigidsim's rollout kernel against mujoco.rollout, same run, same threads.

    python benchmarks/bench_smooth.py [--threads 2] [--repeats 3] [--batches 1,64,1024] [--quick]

For dm_control humanoid and cheetah with constraints disabled (DSBL_CONSTRAINT),
env-steps per second for each batch size B, median of repeats, for
rigidsim (float64, CPU, `Simulator.step`, a fixed random control sequence)
and for `mujoco.rollout` with the same thread count; the ratio; and the
start-up time of a fresh process to its first finished step with an empty
Taichi cache (cold) and with the cache it left (warm).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models" / "dm_control"

STARTUP = """
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import mujoco
from tests.mjref import model_from_mujoco
from rigidsim.engine.simulator import Simulator
m = mujoco.MjModel.from_xml_path({path!r})
m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
sim = Simulator(model_from_mujoco(m), 1)
sim.step(1)
print(time.perf_counter() - t0)
"""


def startup_seconds(path: Path, cache: str) -> float:
    """Wall time of a fresh process from its start to the first finished step (cache dir `cache`)."""
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", STARTUP.format(root=str(ROOT), path=str(path))], env=env,
                       capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return wall


def load(path: Path):
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    return m


def nsteps_for(B: int, quick: bool) -> int:
    n = {1: 4000, 64: 400, 1024: 40}.get(B, max(20, 40000 // B))
    return max(10, n // 4) if quick else n


def bench_rigidsim(mjm, B: int, nstep: int, repeats: int) -> float:
    from rigidsim.engine.simulator import Simulator
    from tests.mjref import model_from_mujoco

    sim = Simulator(model_from_mujoco(mjm), B)
    rng = np.random.default_rng(0)
    ctrl = rng.uniform(-1, 1, size=(nstep, 1, mjm.nu))
    sim.step(2)  # compile / warm up
    rates = []
    for _ in range(repeats):
        sim.reset()
        t0 = time.perf_counter()
        sim.step(nstep, ctrl=ctrl)
        rates.append(B * nstep / (time.perf_counter() - t0))
    return float(np.median(rates))


def bench_mujoco(mjm, B: int, nstep: int, repeats: int, threads: int) -> float:
    import mujoco
    from mujoco import rollout

    datas = [mujoco.MjData(mjm) for _ in range(threads)]
    d = mujoco.MjData(mjm)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.zeros(mujoco.mj_stateSize(mjm, spec))
    mujoco.mj_getState(mjm, d, state0, spec)
    init = np.tile(state0, (B, 1))
    rng = np.random.default_rng(0)
    ctrl = np.broadcast_to(rng.uniform(-1, 1, size=(1, nstep, mjm.nu)), (B, nstep, mjm.nu)).copy()
    rates = []
    with rollout.Rollout(nthread=threads) as r:
        r.rollout(mjm, datas, init, ctrl[:, :2], nstep=2)  # warm up the pool
        for _ in range(repeats):
            t0 = time.perf_counter()
            r.rollout(mjm, datas, init, ctrl, nstep=nstep)
            rates.append(B * nstep / (time.perf_counter() - t0))
    return float(np.median(rates))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", default="1,64,1024")
    ap.add_argument("--models", default="humanoid,cheetah")
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    ap.add_argument("--no-startup", action="store_true", help="skip the cold/warm start measurement")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not MODELS.exists():
        console.print(f"[red]{MODELS} is absent[/red]")
        return 2
    os.environ["RIGIDSIM_CPU_THREADS"] = str(args.threads)  # the same thread count as MuJoCo
    from rigidsim.engine import runtime

    runtime.init(64, "cpu")

    batches = [int(b) for b in args.batches.split(",")]
    table = Table(title=f"smooth dynamics, constraints disabled, float64, {args.threads} threads "
                        f"(median of {args.repeats})")
    for col in ("model", "B", "rigidsim env-steps/s", "mujoco.rollout env-steps/s", "ratio"):
        table.add_column(col, justify="right")
    for name in args.models.split(","):
        mjm = load(MODELS / f"{name}.xml")
        for B in batches:
            n = nsteps_for(B, args.quick)
            ours = bench_rigidsim(mjm, B, n, args.repeats)
            ref = bench_mujoco(mjm, B, n, args.repeats, args.threads)
            table.add_row(name, str(B), f"{ours:,.0f}", f"{ref:,.0f}", f"{ours / ref:.2f}x")
    console.print(table)

    if not args.no_startup:
        st = Table(title="start-up to the first finished step (fresh process)")
        for col in ("model", "cold (empty cache)", "warm (cached)"):
            st.add_column(col, justify="right")
        for name in args.models.split(","):
            with tempfile.TemporaryDirectory(prefix="rigidsim-cache-") as cache:
                cold = startup_seconds(MODELS / f"{name}.xml", cache)
                warm = float(np.median([startup_seconds(MODELS / f"{name}.xml", cache) for _ in range(2)]))
            st.add_row(name, f"{cold:.1f} s", f"{warm:.2f} s")
        console.print(st)
    return 0


if __name__ == "__main__":
    sys.exit(main())
