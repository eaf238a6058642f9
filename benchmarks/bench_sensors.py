"""The cost of sensors per env-step: a rollout recording sensordata against the same rollout without it, beside
MuJoCo's cost of its sensor stages (mj_sensorPos, mj_sensorVel, mj_sensorAcc with what they call: mj_subtreeVel,
mj_rnePostConstraint, the energies) measured in the same run.

Ours: `Simulator.rollout_blocks` of STEPS steps, B envs, recording every step, from the scene's keyframe 0 (or
qpos0) with random controls, with `sensors=True` and without; the difference per env-step is the sensors'. The
engine runs on one thread (RIGIDSIM_CPU_THREADS=1) to compare per core. MuJoCo: STEPS `mj_step`s of one MjData
from the same start with the same controls, with sensors enabled and with `<flag sensor="disable">`
(mjDSBL_SENSOR); the difference per step is its sensor stages'. Medians of ROUNDS rounds each, alternated.

Scenes: the bundled humanoid (dm_control's: 34 sensors, 66 values; force, torque and touch sensors among them)
and, with ../shared/models, the dm_control quadruped (32 sensors, 20 of them rangefinders over its height
field) and the hopper.

    python benchmarks/bench_sensors.py [--envs 64] [--steps 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RIGIDSIM_CPU_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "models"

import numpy as np  # noqa: E402


def _scenes():
    from rigidsim.bundled import find_scene

    out = [("humanoid", find_scene("humanoid"))]
    for label, rel in (("quadruped", "dm_control/quadruped.xml"), ("hopper", "dm_control/hopper.xml")):
        if (SHARED / rel).is_file():
            out.append((label, SHARED / rel))
    return out


def _ours(sim, steps, ctrl, sensors) -> float:
    sim.reset(**sim._start)
    t0 = time.perf_counter()
    for _ in sim.rollout_blocks(steps, 1, ctrl, sensors=sensors):
        pass
    return time.perf_counter() - t0


def _mujoco(mujoco, mjm, steps, ctrl, sensors) -> float:
    d = mujoco.MjData(mjm)
    if mjm.nkey:
        mujoco.mj_resetDataKeyframe(mjm, d, 0)
    if sensors:
        mjm.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    else:
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    t0 = time.perf_counter()
    for t in range(steps):
        d.ctrl[:] = ctrl[t, 0]
        mujoco.mj_step(mjm, d)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import mujoco

    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator
    from rigidsim.loaders import load_scene
    from rigidsim.reset import keyframe_state

    load0 = os.getloadavg()
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, load "
          f"{load0[0]:.2f}; B = {args.envs}, {args.steps} steps, every step recorded, 1 thread, medians of "
          f"{args.rounds}", flush=True)
    rows = []
    scenes = _scenes()
    for label, path in scenes:
        m0 = load_scene(str(path))
        r = opts.resolve(m0, {}, {"enable_mujoco_compatibility": True})
        model = opts.apply(m0, r)
        sim = Simulator(model, args.envs, pair_options=r)
        st = keyframe_state(model, "0" if model.nkey else None)
        sim._start = {k: np.broadcast_to(np.asarray(v), (args.envs,) + np.shape(v)).copy()
                      for k, v in st.items() if k in ("qpos", "qvel", "act", "ctrl")}
        mjm = mujoco.MjModel.from_xml_path(str(path))
        rng = np.random.default_rng(0)
        lo, hi = (mjm.actuator_ctrlrange.T if mjm.nu else (np.zeros(0), np.zeros(0)))
        ctrl = (lo + (hi - lo) * rng.random((args.steps, 1, mjm.nu))).astype(np.float64)
        for s in (False, True):  # compile both variants first
            _ours(sim, 2, ctrl[:2], s)
        on, off, mon, moff = [], [], [], []
        for _ in range(args.rounds):
            off.append(_ours(sim, args.steps, ctrl, False))
            on.append(_ours(sim, args.steps, ctrl, True))
            moff.append(_mujoco(mujoco, mjm, args.steps, ctrl, False))
            mon.append(_mujoco(mujoco, mjm, args.steps, ctrl, True))
        n = args.steps * args.envs
        ours = (statistics.median(on) - statistics.median(off)) / n * 1e6
        ours_base = statistics.median(off) / n * 1e6
        mj = (statistics.median(mon) - statistics.median(moff)) / args.steps * 1e6
        mj_base = statistics.median(moff) / args.steps * 1e6
        rows.append((label, f"{model.nsensor} / {model.nsensordata}", f"{ours_base:.1f}", f"{ours:.2f}",
                     f"{100 * ours / ours_base:.1f} %", f"{mj_base:.1f}", f"{mj:.2f}",
                     f"{100 * mj / mj_base:.1f} %", f"{mj / ours:.2f}x" if ours > 0 else "-"))
        print(f"  {label}: ours off {[round(x, 3) for x in off]} on {[round(x, 3) for x in on]}; "
              f"mujoco off {[round(x, 4) for x in moff]} on {[round(x, 4) for x in mon]}", flush=True)
    print()
    print("| scene | sensors / values | ours: µs per env-step | + sensors (µs) | share | mujoco: µs per step | "
          "+ sensors (µs) | share | mujoco / ours (sensor cost) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
