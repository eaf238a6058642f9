"""Where a step's time goes: the forward pass split into its stages, rigidsim against MuJoCo at the same state,
same run, one thread.

    python benchmarks/bench_stages.py [--states humanoid:20,humanoid:1000,cheetah:100,boxes27:30,boxes27:1000,panda:20]
        [--batch 16] [--reps 50] [--rounds 15] [--disable island,warmstart]

Each state is SCENE:K: MuJoCo steps the scene (MuJoCo compatibility, as bench_contacts.py) K steps from its
initial state under seed-0 random controls; both engines then run the forward pass (mj_forward: no
integration) at that state, qacc_warmstart included, many times over.

MuJoCo's stages are its own functions, each called at the state in a loop of its own: the smooth pass
(mj_forward with mjDSBL_CONSTRAINT), mj_collision, the rows (mj_makeConstraint, mj_projectConstraint,
mj_referenceConstraint) and the solve (mj_island, then mj_fwdConstraint). mj_forward finds the islands
between making and projecting the rows; ours finds them inside the solve, so MuJoCo's mj_island is
counted with its solve (it reads only the rows, so calling it after the projection costs the same).
Ours are kernels compiled with more and more of the constraint stage (`constraint.stage.stage_mask`): the
smooth pass alone, then with collision, then with the rows, then everything; a stage's cost is the difference
between two of them. Each launch runs the forward pass `--reps` times over in each of B identical envs, so
that an env's data stays in the caches from one pass to the next as in MuJoCo's loops and as in a rollout
(one pass per env and launch would read every env's data back from memory) and the launch's own cost is
spread over B * reps passes. Rounds interleave every variant and every MuJoCo loop, and a stage's figure is
the median over rounds of its per-round difference, so that a machine's drift cancels.

`--disable` sets MuJoCo disable flags (by name, e.g. island, warmstart) on both engines, to see a stage's
parts: without islands both solve every row at once, without the warmstart both start at qacc_smooth
(the iteration counts then change on both sides alike).

Read it for where to look, not as throughput: bench_contacts.py is the throughput figure. The MuJoCo loops
include a Python call per function (a fraction of a µs); our differences include what a variant's code
layout changes. Compiling the variants costs a cold compile each the first time (the kernel cache keeps
them).
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

STAGES = ("smooth", "collision", "rows", "solve", "forward")
DEFAULT_STATES = "humanoid:20,humanoid:1000,cheetah:100,boxes27:30,boxes27:1000,panda:20"


def mujoco_state(mjm, K: int, unit: bool = False):
    """MuJoCo's data after K steps from the initial state under seed-0 controls (in the control range, or with
    `unit` in [-1, 1] as bench_contacts.py draws them: the Panda's gripper then closes on itself)."""
    import mujoco

    d = mujoco.MjData(mjm)
    rng = np.random.default_rng(0)
    lo = np.where(mjm.actuator_ctrllimited & (not unit), mjm.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mjm.actuator_ctrllimited & (not unit), mjm.actuator_ctrlrange[:, 1], 1.0)
    for _ in range(K):
        if mjm.nu:
            d.ctrl[:] = rng.uniform(lo, hi)
        mujoco.mj_step(mjm, d)
    return d


def set_state(sim, d) -> None:
    """Every env of `sim` at MuJoCo's state d (qacc_warmstart and the active equalities included)."""
    from rigidsim.engine import layout as L

    m = sim.model
    kw = {"qpos": d.qpos, "qvel": d.qvel, "act": d.act, "ctrl": d.ctrl}
    if m.nmocap:
        kw["mocap_pos"], kw["mocap_quat"] = d.mocap_pos, d.mocap_quat
    sim.reset(**kw)
    arrays = sim._d  # the CPU backend's arrays, which the kernels read
    arrays["dof"][:, :m.nv, L.QACC_WARMSTART] = d.qacc_warmstart
    if m.neq:
        arrays["eq_active"][:, :m.neq] = d.eq_active
    arrays["time"][:] = d.time


def ours_variants(sim, reps: int):
    """name -> a function that runs the forward pass reps times in every env, with the constraint stage
    compiled up to that stage."""
    from rigidsim.engine import layout as L
    from rigidsim.engine.constraint.kernel import constraint_forward_kernel
    from rigidsim.engine.constraint.stage import ROWS_SHIFT, stage_mask

    cfg = sim._cfg
    kinds, rows = cfg & 0xFFFFFFFF, cfg >> ROWS_SHIFT
    integ = sim.integrator if sim.integrator == L.INT_APPROX_IMPLICITFAST else L.INT_EULER

    def smooth():
        sim._k.forward_kernel(*sim._m, *sim._dargs(), integ, reps)

    def upto(mask):
        return lambda: constraint_forward_kernel(*sim._m, *sim._dargs(), integ, mask, reps)

    return {"smooth": smooth, "collision": upto(stage_mask(kinds, 0, 0)), "rows": upto(stage_mask(kinds, 0, rows)),
            "forward": upto(cfg)}


def mujoco_loops(mjm, d, n: int):
    """name -> a function that times n calls of MuJoCo's stage at the state (µs per call)."""
    import mujoco

    ws = d.qacc_warmstart.copy()
    flags = int(mjm.opt.disableflags)

    def loop(f):
        def run():
            d.qacc_warmstart[:] = ws
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            return 1e6 * (time.perf_counter() - t0) / n
        return run

    def smooth():
        mjm.opt.disableflags = flags | int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        try:
            return loop(lambda: mujoco.mj_forward(mjm, d))()
        finally:
            mjm.opt.disableflags = flags
            mujoco.mj_forward(mjm, d)  # the contacts and rows of the state again, for the next loops

    def rows():
        mujoco.mj_makeConstraint(mjm, d)
        mujoco.mj_projectConstraint(mjm, d)
        mujoco.mj_referenceConstraint(mjm, d)

    def solve():
        mujoco.mj_island(mjm, d)  # in MuJoCo's position stage; in our solve (module docstring)
        mujoco.mj_fwdConstraint(mjm, d)

    return {"smooth": smooth, "collision": loop(lambda: mujoco.mj_collision(mjm, d)), "rows": loop(rows),
            "solve": loop(solve), "forward": loop(lambda: mujoco.mj_forward(mjm, d))}


def measure(name: str, K: int, B: int, reps: int, rounds: int, disable: int = 0, unit: bool = False):
    """(ours, mujoco, counts): per stage the median over rounds of µs per env-forward; counts of both sides."""
    import mujoco

    from bench_contacts import SCENES, build
    from rigidsim.engine import layout as L

    sim, mjm = build(SCENES[name], B, disable)
    if sim is None:
        return None, None, mjm
    # the state as the scene reaches it (its own flags), then timed with `disable`
    d = mujoco_state(mujoco.MjModel.from_xml_path(str(SCENES[name])), K, unit)
    mujoco.mj_forward(mjm, d)
    set_state(sim, d)
    sim.forward()  # one pass through the Simulator: the contact capacity grows to the state's contacts
    set_state(sim, d)
    snap = {k: v.copy() for k, v in sim._d.items()}
    variants = ours_variants(sim, reps)
    for f in variants.values():
        f()  # compile or load each variant before timing
    loops = mujoco_loops(mjm, d, max(20, 2000 // max(1, d.nefc + 20)))
    ours = {k: [] for k in STAGES}
    ref = {k: [] for k in STAGES}
    for _ in range(rounds):
        t = {}
        for k, f in variants.items():
            for a, v in snap.items():
                sim._d[a][...] = v
            f()
            t0 = time.perf_counter()
            f()
            t[k] = 1e6 * (time.perf_counter() - t0) / (B * reps)
        for k, (lo, hi) in {"smooth": (None, "smooth"), "collision": ("smooth", "collision"),
                            "rows": ("collision", "rows"), "solve": ("rows", "forward"),
                            "forward": (None, "forward")}.items():
            ours[k].append(t[hi] - (t[lo] if lo else 0.0))
        for k, run in loops.items():
            ref[k].append(run())
    counts = (int(sim._d["ncon"][0]), int(sim._d["efc_n"][0, L.EFCN_NEFC]), int(sim._d["efc_n"][0, L.EFCN_NITER]),
              int(d.ncon), int(d.nefc), int(d.solver_niter[:max(1, d.nisland)].sum()))
    return ({k: float(np.median(v)) for k, v in ours.items()}, {k: float(np.median(v)) for k, v in ref.items()},
            counts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", default=DEFAULT_STATES, help="SCENE:K,... (scenes of bench_contacts.py)")
    ap.add_argument("--batch", type=int, default=16, help="envs per launch of ours (identical states)")
    ap.add_argument("--reps", type=int, default=50, help="forward passes per env and launch of ours")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--unit-ctrl", action="store_true",
                    help="controls in [-1, 1] (bench_contacts.py's) rather than in each actuator's range")
    ap.add_argument("--disable", default="", help="disable flags for both engines, e.g. island,warmstart")
    args = ap.parse_args(argv)
    os.environ["RIGIDSIM_CPU_THREADS"] = "1"

    from rich.console import Console
    from rich.table import Table

    from bench_record import cpu_name
    from rigidsim.engine import runtime

    from rigidsim import model as M

    disable = 0
    for flag in filter(None, args.disable.split(",")):
        disable |= getattr(M, "DSBL_" + flag.strip().upper())
    runtime.init(64, "cpu")
    console = Console(width=max(Console().width, 132))
    table = Table(title=f"forward pass by stage, µs per env, rigidsim (B = {args.batch}, {args.reps} passes per launch) against MuJoCo, one thread, "
                        f"float64, MuJoCo compatibility{', disabled: ' + args.disable if args.disable else ''}, {cpu_name()} "
                        f"(median of {args.rounds} paired rounds)")
    for col in ("state", "ncon / nefc / iterations, ours | MuJoCo", *STAGES):
        table.add_column(col, justify="right")
    for spec in args.states.split(","):
        name, _, k = spec.partition(":")
        ours, ref, counts = measure(name, int(k or 0), args.batch, args.reps, args.rounds, disable,
                                      args.unit_ctrl)
        if ours is None:
            table.add_row(spec, str(counts)[:60], *[""] * len(STAGES))
            continue
        cells = [f"{ours[s]:.1f} | {ref[s]:.1f} ({ref[s] / ours[s]:.2f}x)" if ours[s] > 0 else
                 f"{ours[s]:.1f} | {ref[s]:.1f}" for s in STAGES]
        table.add_row(spec, "{} / {} / {} | {} / {} / {}".format(*counts), *cells)
    console.print(table)
    console.print("Each cell: rigidsim | MuJoCo (the ratio MuJoCo / rigidsim: above 1, rigidsim is faster). "
                  "A stage of ours is the difference of two kernels' times, so a small one can read near 0 or "
                  "below it.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
