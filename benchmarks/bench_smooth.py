"""Smooth-dynamics throughput: rigidsim's rollout kernel against mujoco.rollout, same run, same threads.

    python benchmarks/bench_smooth.py [--threads 2] [--repeats 3] [--batches 1,64,1024] [--quick]
        [--baseline-root DIR --baseline-python PY] [--variants]

For dm_control humanoid and cheetah with constraints disabled (DSBL_CONSTRAINT),
env-steps per second for each batch size B, median of repeats, for
rigidsim (float64, CPU, `Simulator.step`, a fixed random control sequence)
and for `mujoco.rollout` with the same thread count; microseconds per
env-step; the ratio and the issue's target for it. Then the start-up a user
sees: the wall time of a fresh ``python -m rigidsim run SCENE --steps 1``
process (constraints disabled, output to a temporary file), cold with an
empty ``RIGIDSIM_CACHE_DIR`` and warm with the cache it left, medians of
``--startup-repeats`` runs each, against the targets (cold < 30 s, warm < 3 s).

With ``--baseline-root`` (a checkout of an earlier commit, e.g. ``git worktree add /tmp/base a93c2f0``)
and ``--baseline-python`` (a Python with that checkout's dependencies), the same start-ups of the
baseline run interleaved with ours, each in its own empty cache, and the table prints the ratios
new / baseline (issue 9's targets: cold <= 0.4x, warm <= 0.5x). ``--variants`` adds the first use of
each variant a user switches to (euler, implicitfast, rk4, float32) on a copy of the warm cache: what
switching costs when the default is already compiled.
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

# the throughput clock of bench_mujoco: wall time (a caller may set time.process_time, CPU time over all threads)
CLOCK = [time.perf_counter]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models" / "dm_control"

RATIO_TARGET = {1: 0.3, 1024: 1.0}  # issue 4: rigidsim / mujoco.rollout env-steps/s


def cli_seconds(path: Path, cache: str, out_dir: str, python: str = sys.executable, root: Path = ROOT,
                extra=()) -> float:
    """Wall time of a fresh `python -m rigidsim run path --steps 1` process using the kernel cache `cache`."""
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(root)}
    env.pop("RIGIDSIM_CPU_THREADS", None)  # what a user runs
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed by pip: the package's bytecode is cached
    cmd = [python, "-m", "rigidsim", "run", str(path), "--steps", "1", "--set", "disable_constraint=true",
           "--out", os.path.join(out_dir, "bench.h5"), "--quiet", *extra]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=str(root), env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return wall


def startup(path: Path, repeats: int, sides):
    """{side: (cold, warm)} median seconds for each (name, python, root) side, interleaved: cold runs each
    start from an empty cache; warm runs reuse the last cold run's cache."""
    colds = {s[0]: [] for s in sides}
    warms = {s[0]: [] for s in sides}
    caches = {}
    with tempfile.TemporaryDirectory(prefix="rigidsim-bench-") as tmp:
        for k in range(repeats):
            for name, py, root in sides:
                cache = caches[name] = os.path.join(tmp, f"{name}-cache{k}")
                os.makedirs(cache)
                colds[name].append(cli_seconds(path, cache, tmp, py, root))
        for _ in range(repeats):
            for name, py, root in sides:
                warms[name].append(cli_seconds(path, caches[name], tmp, py, root))
    return {n: (float(np.median(colds[n])), float(np.median(warms[n]))) for n in colds}


VARIANTS = (("euler", ("--set", "integrator=euler")), ("implicitfast", ("--set", "integrator=implicitfast")),
            ("rk4", ("--set", "integrator=rk4")), ("float32", ("--precision", "32")))


def variants(path: Path, sides):
    """{side: {variant: seconds}}: the first run of each variant on a copy of a cache that holds the
    default variant only (one cold run first)."""
    import shutil

    out = {}
    with tempfile.TemporaryDirectory(prefix="rigidsim-bench-") as tmp:
        for name, py, root in sides:
            base = os.path.join(tmp, f"{name}-base")
            os.makedirs(base)
            cli_seconds(path, base, tmp, py, root)
            out[name] = {}
            for vname, extra in VARIANTS:
                cache = os.path.join(tmp, f"{name}-{vname}")
                shutil.copytree(base, cache)
                out[name][vname] = cli_seconds(path, cache, tmp, py, root, extra)
    return out


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
            t0 = CLOCK[0]()
            r.rollout(mjm, datas, init, ctrl, nstep=nstep)
            rates.append(B * nstep / (CLOCK[0]() - t0))
    return float(np.median(rates))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", default="1,64,1024")
    ap.add_argument("--models", default="humanoid,cheetah")
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    ap.add_argument("--no-startup", action="store_true", help="skip the cold/warm start measurement")
    ap.add_argument("--startup-repeats", type=int, default=3, help="cold and warm CLI starts per model")
    ap.add_argument("--no-throughput", action="store_true", help="only the start-up measurement")
    ap.add_argument("--baseline-root", help="a checkout of an earlier commit, for the before/after start-up")
    ap.add_argument("--baseline-python", help="the Python that runs --baseline-root (its dependencies)")
    ap.add_argument("--variants", action="store_true", help="also time the first use of each variant")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 132))  # the tables whole, also when piped
    if not MODELS.exists():
        console.print(f"[red]{MODELS} is absent[/red]")
        return 2
    os.environ["RIGIDSIM_CPU_THREADS"] = str(args.threads)  # the same thread count as MuJoCo
    from rigidsim.engine import runtime

    runtime.init(64, "cpu")

    batches = [] if args.no_throughput else [int(b) for b in args.batches.split(",")]
    table = Table(title=f"smooth dynamics, constraints disabled, float64, {args.threads} threads "
                        f"(median of {args.repeats})")
    for col in ("model", "B", "rigidsim env-steps/s", "mujoco.rollout env-steps/s", "rigidsim µs/env-step",
                "mujoco µs/env-step", "ratio", "target"):
        table.add_column(col, justify="right")
    for name in args.models.split(","):
        mjm = load(MODELS / f"{name}.xml")
        for B in batches:
            n = nsteps_for(B, args.quick)
            ours = bench_rigidsim(mjm, B, n, args.repeats)
            ref = bench_mujoco(mjm, B, n, args.repeats, args.threads)
            ratio = ours / ref
            tgt = RATIO_TARGET.get(B)
            mark = "" if tgt is None else (f"[green]≥ {tgt:g}x ok[/green]" if ratio >= tgt else f"[red]≥ {tgt:g}x[/red]")
            # µs per env-step of wall time with `threads` threads (1e6 / rate)
            table.add_row(name, str(B), f"{ours:,.0f}", f"{ref:,.0f}", f"{1e6 / ours:.1f}", f"{1e6 / ref:.1f}",
                          f"{ratio:.2f}x", mark)
    if batches:
        console.print(table)

    if not args.no_startup:
        sides = [("new", sys.executable, ROOT)]
        if args.baseline_root:
            sides.append(("baseline", args.baseline_python or sys.executable, Path(args.baseline_root).resolve()))
        st = Table(title=f"start-up: fresh `python -m rigidsim run SCENE --steps 1` (median of "
                         f"{args.startup_repeats}, interleaved)")
        for col in ("model", "side", "cold (empty cache)", "warm (cache it left)", "cold / warm"):
            st.add_column(col, justify="right")
        if len(sides) > 1:
            st.add_column("cold new / baseline", justify="right")
            st.add_column("warm new / baseline", justify="right")
        for name in args.models.split(","):
            res = startup(MODELS / f"{name}.xml", args.startup_repeats, sides)
            for side, _, _ in sides:
                cold, warm = res[side]
                row = [name, side, f"{cold:.2f} s", f"{warm:.2f} s", f"{cold / warm:.1f}x"]
                if len(sides) > 1:
                    if side == "new":
                        bc, bw = res["baseline"]
                        row += [f"{cold / bc:.2f}x (target <= 0.4x)", f"{warm / bw:.2f}x (target <= 0.5x)"]
                    else:
                        row += ["", ""]
                st.add_row(*row)
        console.print(st)
        if args.variants:
            vt = Table(title="first use of a variant, the default already compiled (one run each)")
            vt.add_column("model")
            vt.add_column("side")
            for vname, _ in VARIANTS:
                vt.add_column(vname, justify="right")
            for name in args.models.split(","):
                res = variants(MODELS / f"{name}.xml", sides)
                for side, _, _ in sides:
                    vt.add_row(name, side, *[f"{res[side][v]:.1f} s" for v, _ in VARIANTS])
            console.print(vt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
