"""Throughput with contacts and every constraint: rigidsim's rollout kernel against mujoco.rollout, same run,
same threads, and the start-up of a contact scene.

    python benchmarks/bench_contacts.py [--threads 2] [--repeats 3] [--batches 1,64,1024] [--quick]
        [--scenes humanoid,cheetah,boxes27,panda] [--no-startup] [--cpu-time]

Scenes (issue 11): the dm_control humanoid falling to and lying on the floor, the dm_control cheetah
running under random controls, 27 boxes falling onto a plane (scenes/boxes27.xml) and the Panda
(menagerie franka_emika_panda/scene.xml). Both sides simulate the scene as its MJCF says (MuJoCo
compatibility: MuJoCo's solver, cone, iterations and tolerances), float64, from the model's initial state,
the same random control sequence. For each B: env-steps per second (median of repeats) of
`Simulator.step` and of `mujoco.rollout` with the same thread count, µs per env-step and the ratio
(targets: B=1024 >= 1.0x, B=1 >= 0.5x). A scene whose colliders or rows are not built yet gets a row
saying so. Then cold and warm start of `python -m rigidsim run SCENE --steps 1` for a contact scene
(bench_smooth's method: fresh processes, an empty kernel cache then the cache it left), next to the smooth
engine's (the same scene with constraints disabled): the target is within 1.5x of the smooth figures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SHARED = ROOT.parent / "shared" / "models"

RATIO_TARGET = {1: 0.5, 1024: 1.0}
SCENES = {"humanoid": SHARED / "dm_control" / "humanoid.xml", "cheetah": SHARED / "dm_control" / "cheetah.xml",
          "boxes27": ROOT / "scenes" / "boxes27.xml",
          "panda": SHARED / "menagerie" / "franka_emika_panda" / "scene.xml"}


def build(path: Path, B: int, disable: int = 0):
    """(Simulator, MjModel) for the scene with MuJoCo compatibility, or (None, reason) when refused.
    `disable`: disable flags (MuJoCo's bits) set on both beyond the scene's own."""
    import mujoco

    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator
    from rigidsim.errors import InputError
    from rigidsim.loaders import load_scene
    from rigidsim.runner import unsupported

    model = load_scene(str(path))
    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True})
    missing = unsupported(model, r)
    if missing:
        return None, "not supported yet: " + "; ".join(missing)
    model = opts.apply(model, r)
    model.opt.disableflags |= disable
    try:
        sim = Simulator(model, B, pair_options=r)
    except InputError as e:
        return None, str(e)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    mjm.opt.disableflags |= disable
    return sim, mjm


def bench_rigidsim(sim, nu: int, nstep: int, repeats: int) -> float:
    from bench_smooth import CLOCK

    clock = CLOCK[0]
    rng = np.random.default_rng(0)
    ctrl = rng.uniform(-1, 1, size=(nstep, 1, nu)) if nu else None
    sim.step(2)  # compile / warm up
    rates = []
    for _ in range(repeats):
        sim.reset()
        t0 = clock()
        sim.step(nstep, ctrl=ctrl)
        rates.append(sim.n_envs * nstep / (clock() - t0))
    return float(np.median(rates))


def main(argv=None) -> int:
    import time

    import bench_smooth
    from bench_smooth import bench_mujoco, cli_seconds, nsteps_for

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", default="1,64,1024")
    ap.add_argument("--scenes", default="humanoid,cheetah,boxes27,panda")
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--cpu-time", action="store_true",
                    help="rates from the process's CPU time (all threads) instead of wall time, both sides: "
                         "steadier on a machine shared with other jobs, blind to how well threads scale")
    ap.add_argument("--startup-repeats", type=int, default=3)
    ap.add_argument("--startup-scene", default="humanoid")
    args = ap.parse_args(argv)
    if args.cpu_time:
        bench_smooth.CLOCK[0] = time.process_time

    from rich.console import Console
    from rich.table import Table

    from bench_record import cpu_name

    console = Console(width=max(Console().width, 132))
    os.environ["RIGIDSIM_CPU_THREADS"] = str(args.threads)
    from rigidsim.engine import runtime

    runtime.init(64, "cpu")
    clock = "CPU time" if args.cpu_time else "wall time"
    table = Table(title=f"with contacts and constraints, MuJoCo compatibility, float64, {args.threads} threads, "
                        f"{cpu_name()} (median of {args.repeats}, {clock})")
    for col in ("scene", "B", "rigidsim env-steps/s", "mujoco.rollout env-steps/s", "rigidsim µs/env-step",
                "mujoco µs/env-step", "ratio", "target"):
        table.add_column(col, justify="right")
    for name in args.scenes.split(","):
        path = SCENES[name]
        if not path.exists():
            table.add_row(name, "", f"{path} absent", "", "", "", "", "")
            continue
        for B in [int(b) for b in args.batches.split(",")]:
            sim, mjm = build(path, B)
            if sim is None:
                table.add_row(name, str(B), mjm[:100], "", "", "", "", "")
                break
            n = nsteps_for(B, args.quick)
            ours = bench_rigidsim(sim, mjm.nu, n, args.repeats)
            ref = bench_mujoco(mjm, B, n, args.repeats, args.threads)
            ratio = ours / ref
            tgt = RATIO_TARGET.get(B)
            mark = "" if tgt is None else (f"[green]≥ {tgt:g}x ok[/green]" if ratio >= tgt else f"[red]≥ {tgt:g}x[/red]")
            table.add_row(name, str(B), f"{ours:,.0f}", f"{ref:,.0f}", f"{1e6 / ours:.1f}", f"{1e6 / ref:.1f}",
                          f"{ratio:.2f}x", mark)
    console.print(table)

    if not args.no_startup:
        import tempfile

        path = SCENES[args.startup_scene]
        st = Table(title=f"start-up of `python -m rigidsim run {path.name} --steps 1` (median of "
                         f"{args.startup_repeats}), {cpu_name()}")
        for col in ("run", "cold (empty cache)", "warm (cache it left)"):
            st.add_column(col, justify="right")
        res = {}
        with tempfile.TemporaryDirectory(prefix="rigidsim-bench-") as tmp:
            for label, extra in (("smooth (disable_constraint=true)", ("--set", "disable_constraint=true")),
                                 ("with contacts and constraints", ("--set", "disable_constraint=false"))):
                colds, warms = [], []
                for k in range(args.startup_repeats):
                    cache = os.path.join(tmp, f"{len(res)}-cache{k}")
                    os.makedirs(cache)
                    colds.append(contact_cli(path, cache, tmp, extra, cli_seconds))
                    warms.append(contact_cli(path, cache, tmp, extra, cli_seconds))
                res[label] = (float(np.median(colds)), float(np.median(warms)))
        base = res["smooth (disable_constraint=true)"]
        for label, (cold, warm) in res.items():
            st.add_row(label, f"{cold:.2f} s ({cold / base[0]:.2f}x)", f"{warm:.2f} s ({warm / base[1]:.2f}x)")
        console.print(st)
    return 0


def contact_cli(path, cache, tmp, extra, cli_seconds):
    """cli_seconds with MuJoCo compatibility; the later --set overrides bench_smooth's disable_constraint."""
    return cli_seconds(path, cache, tmp, extra=("--set", "enable_mujoco_compatibility=true", *extra))


if __name__ == "__main__":
    sys.exit(main())
