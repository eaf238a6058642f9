"""One step per call, as a policy loop steps: the time of `Simulator.step(1, ctrl=...)` against MuJoCo's
own per-call stepping of the same batch, in the same run.

    python benchmarks/bench_step_call.py [--threads 2] [--calls 300] [--batches 1,64]
        [--scenes cheetah,humanoid,panda]

Each call takes fresh controls [1, B, nu] (numpy) and advances every env one step; rigidsim's cost per call
is the kernel launch (argument context, thread-pool dispatch) plus one step of B envs. MuJoCo's: B = 1,
`mj_step` with `d.ctrl` set (the cheapest Python loop it has); B > 1, `mujoco.rollout` with nstep = 1 on
the same threads, its output state fed back as the next call's initial state. Median microseconds per call
and the ratio (MuJoCo's time / ours: above 1 is faster). Scenes with MuJoCo compatibility, float64.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def ours_per_call(sim, nu: int, calls: int) -> float:
    rng = np.random.default_rng(0)
    sim.step(2)  # compile / warm up
    ts = []
    for _ in range(calls):
        c = rng.uniform(-1, 1, size=(1, sim.n_envs, nu)) if nu else None
        t0 = time.perf_counter()
        sim.step(1, ctrl=c)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def mujoco_per_call(mjm, B: int, calls: int, threads: int) -> float:
    import mujoco
    from mujoco import rollout

    rng = np.random.default_rng(0)
    d = mujoco.MjData(mjm)
    ts = []
    if B == 1:
        for _ in range(calls):
            c = rng.uniform(-1, 1, size=mjm.nu)
            t0 = time.perf_counter()
            d.ctrl[:] = c
            mujoco.mj_step(mjm, d)
            ts.append(time.perf_counter() - t0)
        return float(np.median(ts))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.zeros(mujoco.mj_stateSize(mjm, spec))
    mujoco.mj_getState(mjm, d, s0, spec)
    state = np.tile(s0, (B, 1))
    datas = [mujoco.MjData(mjm) for _ in range(threads)]
    with rollout.Rollout(nthread=threads) as r:
        for _ in range(calls):
            c = rng.uniform(-1, 1, size=(B, 1, mjm.nu))
            t0 = time.perf_counter()
            out, _ = r.rollout(mjm, datas, state, c, nstep=1)
            state = out[:, 0]
            ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--scenes", default="cheetah,humanoid,panda")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    from bench_contacts import SCENES, build
    from bench_record import cpu_name

    os.environ["RIGIDSIM_CPU_THREADS"] = str(args.threads)
    from rigidsim.engine import runtime

    runtime.init(64, "cpu")
    table = Table(title=f"one step per call (median of {args.calls} calls), MuJoCo compatibility, float64, "
                        f"{args.threads} threads, {cpu_name()}")
    for col in ("scene", "B", "rigidsim µs/call", "mujoco µs/call", "mujoco's way", "ratio"):
        table.add_column(col, justify="right")
    for name in args.scenes.split(","):
        path = SCENES[name]
        if not path.exists():
            table.add_row(name, "", f"{path} absent", "", "", "")
            continue
        for B in [int(b) for b in args.batches.split(",")]:
            sim, mjm = build(path, B)
            if sim is None:
                table.add_row(name, str(B), mjm[:100], "", "", "")
                break
            ours = ours_per_call(sim, mjm.nu, args.calls)
            ref = mujoco_per_call(mjm, B, args.calls, args.threads)
            table.add_row(name, str(B), f"{1e6 * ours:.0f}", f"{1e6 * ref:.0f}",
                          "mj_step" if B == 1 else "rollout, nstep=1", f"{ref / ours:.2f}x")
    Console(width=max(Console().width, 110)).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
