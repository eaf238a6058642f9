"""Collision detection per step against MuJoCo's mj_collision, on the same states, in one run.

    python benchmarks/bench_collision.py [--batches 1,1024] [--repeats 5] [--threads 2] [--scenes ...]

Scenes (issue 10): 27 boxes on a plane and 64 spheres in a bin (scenes/boxes27.xml, scenes/sphere_bin.xml), the dm_control humanoid lying on the floor, and
the Panda (menagerie franka_emika_panda/scene.xml). The states are those of one MuJoCo trajectory of each
scene (every step of it, the first B), so the contacts are the ones a simulation meets: resting, sliding,
colliding. Per B it times

- rigidsim: one `collision_kernel` launch (mj_kinematics then mj_collision in every env, float64, CPU,
  `--threads` threads), the state already in place;
- MuJoCo: `mj_kinematics` + `mj_collision` on B MjData holding the same states, split over `--threads`
  Python threads (the bindings release the GIL), the same work;

and prints median µs per env-step of wall time and the ratio (rigidsim env-steps/s over MuJoCo's; target at
B=1024: >= 1). A scene with a pair whose collider is not built yet gets a row saying which, not a figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "models"


def cpu_name() -> str:
    from bench_record import cpu_name as name  # one definition, beside this file

    return name()


def scenes():
    """name -> (path, initial qpos adjuster or None); the boxes and the bin are bundled scenes."""
    def lying(mjm, q):
        q[2] = 0.12
        q[3:7] = (np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0)  # turned 90 degrees about y: lying on its back
        return q

    return {"boxes27": (ROOT / "scenes" / "boxes27.xml", None), "sphere_bin64": (ROOT / "scenes" / "sphere_bin.xml", None),
            "humanoid_lying": (SHARED / "dm_control" / "humanoid.xml", lying),
            "panda": (SHARED / "menagerie" / "franka_emika_panda" / "scene.xml", None)}


def trajectory(mujoco, mjm, n, adjust):
    d = mujoco.MjData(mjm)
    if adjust is not None:
        d.qpos[:] = adjust(mjm, d.qpos.copy())
    rng = np.random.default_rng(0)
    out = np.zeros((n, mjm.nq))
    for t in range(n):
        if mjm.nu:
            d.ctrl[:] = rng.uniform(-1, 1, mjm.nu) * 0.3
        mujoco.mj_step(mjm, d)
        out[t] = d.qpos
    return out


def bench_mujoco(mujoco, mjm, states, repeats, threads):
    datas = [mujoco.MjData(mjm) for _ in range(len(states))]
    for d, q in zip(datas, states):
        d.qpos[:] = q
    chunks = [datas[k::threads] for k in range(threads)]

    def work(ds):
        for d in ds:
            mujoco.mj_kinematics(mjm, d)
            mujoco.mj_collision(mjm, d)

    times = []
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            list(pool.map(work, chunks))
            times.append(time.perf_counter() - t0)
    ncon = sum(d.ncon for d in datas)
    return float(np.median(times[1:])), ncon


def bench_rigidsim(model, r, states, repeats):
    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator

    sim = Simulator(opts.apply(model, r), len(states), kinematics_only=True, pair_options=r)
    sim.reset(qpos=states)
    sim.collide()  # compile / load
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sim._collide_launch()
        times.append(time.perf_counter() - t0)
    sim._check_contacts()
    return float(np.median(times)), int(sim.contacts()["count"].sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="1,1024")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scenes", default=",".join(scenes()))
    args = ap.parse_args(argv)
    import mujoco
    from rich.console import Console
    from rich.table import Table

    os.environ["RIGIDSIM_CPU_THREADS"] = str(args.threads)
    from rigidsim import options as opts
    from rigidsim.loaders import load_scene
    from rigidsim.runner import unbuilt_colliders

    batches = [int(b) for b in args.batches.split(",")]
    table = Table(title=f"kinematics + collision per env-step, float64, {args.threads} threads "
                        f"(median of {args.repeats}; {cpu_name()}, "
                        f"{os.cpu_count()} cores)")
    for col in ("scene", "B", "contacts/env", "rigidsim µs/env-step", "mujoco µs/env-step", "ratio", "target"):
        table.add_column(col, justify="right")
    for name in args.scenes.split(","):
        path, adjust = scenes()[name]
        if not path.exists():
            table.add_row(name, "", "", f"{path} is absent", "", "", "")
            continue
        mjm = mujoco.MjModel.from_xml_path(str(path))
        model = load_scene(str(path))
        r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True, "max_collision_pairs": 100000})
        missing = unbuilt_colliders(model, r)
        if missing:
            table.add_row(name, "", "", "not supported yet: " + "; ".join(m.split(" (")[0] for m in missing), "", "", "")
            continue
        traj = trajectory(mujoco, mjm, max(batches), adjust)
        for B in batches:
            states = traj[-B:]
            ours, n_ours = bench_rigidsim(model, r, states, args.repeats)
            ref, n_ref = bench_mujoco(mujoco, mjm, states, args.repeats, args.threads)
            ratio = ref / ours
            tgt = "≥ 1x" if B >= 1024 else ""
            table.add_row(name, str(B), f"{n_ref / B:.1f}" + ("" if n_ours == n_ref else f" (ours {n_ours / B:.1f})"),
                          f"{1e6 * ours / B:.2f}", f"{1e6 * ref / B:.2f}", f"{ratio:.2f}x", tgt)
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
