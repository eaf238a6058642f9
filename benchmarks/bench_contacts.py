"""What a user gets: whole `rigidsim run` rollouts of contact scenes against `mujoco.rollout`, same run,
same threads, same initial states, same controls.

    python benchmarks/bench_contacts.py                       # the full run (a few minutes to ~20 on 2 cores)
    python benchmarks/bench_contacts.py --quick               # a smoke run: small B, 20 steps, 1 repeat
    python benchmarks/bench_contacts.py --scenes humanoid --batches 1,1024 --steps 200 --repeats 3 \
        --threads 2 --scaling-threads 1,2 --scaling-batch 1024

What is timed. rigidsim: the path `rigidsim run` takes (rigidsim/runner.py `_run`), less process start-up,
engine build and file writing. The scene is loaded, its options resolved with `--set
enable_mujoco_compatibility=true` (MuJoCo's defaults under the MJCF's own <option>, as MuJoCo reads it),
float64 on the CPU, the Simulator built, reset to the initial state and its rollout kernel prepared, all
untimed; then the clock runs over one whole consumption of `runner.frame_blocks` (what `_run` feeds to the
trajectory writer: `Simulator.rollout_blocks` launches, the frames split into fields, the contact rows with
their forces picked out), `--steps` steps (default 200). Two recordings:

- default: what `rigidsim run` records without --record / --every (runner.parse_record(None) and
  runner.with_sensors, RunArgs' every): today qpos, qvel, xpos, xquat, the contacts and, for a scene with
  sensors (the humanoid, the cheetah), sensordata, every step;
- off: `--record qpos --every STEPS`, the least the command line records: frame 0 and the final state.

The state is reset and the kernel prepared (untimed, as `_run` does before its clock starts) before every
timed rollout, so each one pays what a fresh run pays after its build (the first touch of the newly
allocated batched arrays included). MuJoCo: one persistent
`mujoco.rollout.Rollout(nthread=T)` pool and T MjData per scene and B, timed over `Rollout.rollout(...,
nstep=STEPS)` called as a user calls it (outputs allocated by the call; MuJoCo always returns the full
physics state and the sensor data of every step), the model as the MJCF says, float64. Both sides start
every env from the same qpos/qvel (time 0, no warm start) and read the same controls, uniform in [-1, 1],
seeded, different for every step and env ([STEPS, B, nu]; MuJoCo gets them as [B, STEPS, nu]). One repeat
runs MuJoCo, rigidsim off and rigidsim default back to back (the order rotates between repeats), each
`--min-env-steps / (B * STEPS)` rollouts long at least (so B = 1 repeats are not a few milliseconds);
figures are medians over `--repeats` of env-steps per second (B * STEPS / wall seconds), µs per env-step
(1e6 / that rate: wall time with T threads) and the ratio of the medians rigidsim / MuJoCo, with the
spread of the per-repeat ratios.

Scenes: the dm_control humanoid from its qpos0 (it falls, lands about step 75 and lies and rolls on the
floor until step 200), the dm_control cheetah under the random controls, the Menagerie Panda
(franka_emika_panda/scene.xml) under the random controls, and the 27-box pile at rest
(../shared/models/bench/boxes27_pile.xml: 27 boxes of 0.2 m stacked 3x3x3 on a plane, MuJoCo's default
options). The pile is settled first, in MuJoCo with the scene's own options: mj_step from qpos0 for at least
500 steps (1 s) and then until max |qvel| < 2e-3 (at most 5000 steps); that qpos and qvel (time reset to 0,
no warm start) are the initial state of both engines. The table "same work" prints, at the largest B, how
far apart the two engines' final qpos are and the contacts of env 0 at the end: a check that both simulate
the same thing, not a parity test.

Sections: throughput at `--threads` (default 2) for each B of `--batches` (default 1,1024), both
recordings against the same MuJoCo figure; scaling: at `--scaling-batch` (default 1024) with recording
off, each engine's speed-up from the first to the last of `--scaling-threads` (default 1,2) and their ratio;
footprint: bytes per env of rigidsim's batched Data arrays (every array `Simulator` holds for the batch,
`engine/data.py` make_data, summed nbytes / B: reserved capacity, of which an env touches only the head of
its contact and row buffers) and of one recorded frame, next to what MuJoCo allocates per MjData (nbuffer +
narena; a batch of B MjData costs B times that; `mujoco.rollout` holds only T of them) and what
`mujoco.rollout` needs per env (the initial state and its outputs). Each thread count runs in its own
subprocess (RIGIDSIM_CPU_THREADS must be set before the engine initialises). The start-up section of the
previous version is gone: `bench_startup.py` times cold and warm `rigidsim run` starts per scene;
`--no-startup` is still accepted and does nothing.

Targets (issue 29), printed beside the figures: B = 1024 >= 1.2x with recording off (goal 1.5x), >= 1.0x
with the default recording; B = 1 >= 1.0x; scaling >= 0.95 of MuJoCo's. A benchmark, never a test: nothing
here asserts a timing. The header names the CPU, its cores, the date, the commit and the load average
before and after: the figures of a machine shared with other work move between runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SHARED = ROOT.parent / "shared" / "models"


def _first(*paths: Path) -> Path:
    return next((p for p in paths if p.exists()), paths[0])


SCENES = {
    "humanoid": _first(SHARED / "dm_control" / "humanoid.xml", ROOT / "scenes" / "third_party" / "dm_control" / "humanoid.xml"),
    "cheetah": SHARED / "dm_control" / "cheetah.xml",
    "panda": SHARED / "menagerie" / "franka_emika_panda" / "scene.xml",
    "boxes27_pile": SHARED / "bench" / "boxes27_pile.xml",
    # 27 boxes falling onto a plane: not in the default list here, kept for bench_stages.py's states
    "boxes27": ROOT / "scenes" / "boxes27.xml",
}
DEFAULT_SCENES = "humanoid,cheetah,panda,boxes27_pile"
SETTLE = {"boxes27_pile"}  # scenes started at rest: settled in MuJoCo first (module docstring)
SETTLE_MIN, SETTLE_MAX, SETTLE_VEL = 500, 5000, 2e-3
SETS = ("enable_mujoco_compatibility=true",)

# issue 29: (target, goal) of rigidsim / mujoco.rollout env-steps/s, by (recording, B)
TARGETS = {("off", 1024): (1.2, 1.5), ("default", 1024): (1.0, None), ("off", 1): (1.0, None),
           ("default", 1): (1.0, None)}
SCALING_TARGET = 0.95


def build(path: Path, B: int, disable: int = 0):
    """(Simulator, MjModel) for the scene with MuJoCo compatibility, or (None, reason) when refused.
    `disable`: disable flags (MuJoCo's bits) set on both beyond the scene's own. (bench_stages.py and
    bench_step_call.py build their scenes with it.)"""
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


# ----------------------------------------------------------------------------------------------- the worker
def initial_state(mjm, settle: bool):
    """(qpos, qvel, note): qpos0 at rest, or the settled state of a scene in SETTLE (module docstring)."""
    import mujoco

    d = mujoco.MjData(mjm)
    if not settle:
        return d.qpos.copy(), d.qvel.copy(), "qpos0"
    k = 0
    while k < SETTLE_MAX:
        mujoco.mj_step(mjm, d)
        k += 1
        if k >= SETTLE_MIN and np.abs(d.qvel).max() < SETTLE_VEL:
            break
    return d.qpos.copy(), d.qvel.copy(), f"settled: {k} MuJoCo steps, max |qvel| {np.abs(d.qvel).max():.1e}"


def cli_defaults():
    """(record, every) of `rigidsim run` without --record and --every."""
    from rigidsim.runner import RunArgs, parse_record

    return parse_record(None), RunArgs.__dataclass_fields__["every"].default


class Ours:
    """One scene and B on rigidsim's command-line path (runner._run), built and prepared, untimed."""

    def __init__(self, path: Path, B: int, qpos, qvel, ctrl, precision: int = 64):
        from rigidsim import options as opts
        from rigidsim import runner
        from rigidsim.engine.simulator import Simulator
        from rigidsim.loaders import load_scene
        from rigidsim.reset import initial_states

        self.runner = runner
        model = load_scene(str(path))
        resolved = opts.resolve(model, {}, opts.parse_set(SETS), precision=precision, backend="cpu")
        missing = runner.unsupported(model, resolved)
        self.refused = ("not supported yet: " + "; ".join(missing)) if missing else None
        if missing:
            return
        self.model = model = opts.apply(model, resolved)
        init = {"qpos": np.broadcast_to(qpos, (B, model.nq)).copy(), "qvel": np.broadcast_to(qvel, (B, model.nv)).copy()}
        self.state = initial_states(model, resolved, B, None, init, 0)
        self.ctrl = np.ascontiguousarray(ctrl) if model.nu else None
        if self.ctrl is not None:
            self.state["ctrl"] = self.ctrl[0]  # as --ctrl does
        self.sim = Simulator(model, B, precision=precision, backend="cpu", pair_options=resolved)
        self.sim.reset(**{k: np.asarray(v) for k, v in self.state.items()})
        self.sim.prepare()

    def run(self, steps: int, mode: str, default):
        """(seconds, final qpos [B, nq], env 0's contacts at the end or None) of one rollout from the
        initial state; the reset and prepare before it are not timed."""
        sim = self.sim
        sim.reset(**{k: np.asarray(v) for k, v in self.state.items()})
        record, every = default if mode == "default" else (("qpos",), steps)
        if mode == "default":  # and the sensordata of a scene with sensors, as `rigidsim run` records it
            record = self.runner.with_sensors(tuple(record), True, self.model, lambda _: None)
        rec_contacts = "contacts" in record and bool(sim.npair) and bool(sim.nefcmax)
        ctrl = None if self.ctrl is None else self.ctrl[:steps]  # as --ctrl's rows are cut to --steps
        # as _run does before its clock starts: a launch of 0 steps with the run's arrays
        sim.prepare(steps, every, ctrl, rec_contacts, "sensordata" in record)
        final = ncon = None
        t0 = time.perf_counter()
        for _, _, fv, crows in self.runner.frame_blocks(sim, self.model, steps, every, ctrl, record,
                                                        rec_contacts):
            final = fv["qpos"][-1]
            if crows is not None:
                ncon = crows["count"][-1, 0]
        dt = time.perf_counter() - t0
        return dt, np.array(final), (None if ncon is None else int(ncon))

    def footprint(self, ncon: int = 0) -> dict:
        """Bytes per env of the batched Data arrays, and of one recorded frame of the default recording with
        `ncon` contacts (its fixed part, and its rows in the launch's contact pool)."""
        from rigidsim.engine import layout as L

        sim = self.sim
        sim._set_layout(True)  # the frame layout of the default recording (contacts included)
        arrays = {k: int(v.nbytes) for k, v in sim._d.items()}
        arrays["status"] = int(sim._status.nbytes)
        top = sorted(arrays.items(), key=lambda kv: -kv[1])[:3]
        B = sim.n_envs
        return {"bytes": sum(arrays.values()) / B, "top": [(k, v / B) for k, v in top],
                "frame": (sim._fwidth + ncon * L.NCREC) * np.dtype(sim.dtype).itemsize}


class Theirs:
    """mujoco.rollout for one scene and B: T MjData, the initial states, the controls, a persistent pool."""

    def __init__(self, mjm, B: int, T: int, qpos, qvel, ctrl):
        import mujoco
        from mujoco import rollout

        self.mujoco, self.m, self.T = mujoco, mjm, T
        self.datas = [mujoco.MjData(mjm) for _ in range(T)]
        d = mujoco.MjData(mjm)
        d.qpos[:], d.qvel[:] = qpos, qvel
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        s0 = np.zeros(mujoco.mj_stateSize(mjm, spec))
        mujoco.mj_getState(mjm, d, s0, spec)
        self.nstate = s0.size
        self.init = np.tile(s0, (B, 1))
        self.ctrl = np.ascontiguousarray(ctrl.transpose(1, 0, 2)) if mjm.nu else None
        self.pool = rollout.Rollout(nthread=T)
        self.pool.__enter__()
        c = None if self.ctrl is None else self.ctrl[:, :2]
        self.pool.rollout(mjm, self.datas, self.init, c, nstep=2)  # the pool's threads started

    def run(self, steps: int):
        t0 = time.perf_counter()
        state, _ = self.pool.rollout(self.m, self.datas, self.init, self.ctrl, nstep=steps)
        dt = time.perf_counter() - t0
        return dt, state[:, -1].copy()

    def close(self):
        self.pool.__exit__(None, None, None)

    def final_contacts(self, final_state) -> int:
        d = self.mujoco.MjData(self.m)
        self.mujoco.mj_setState(self.m, d, final_state, self.mujoco.mjtState.mjSTATE_FULLPHYSICS)
        self.mujoco.mj_forward(self.m, d)
        return int(d.ncon)

    def footprint(self, steps: int) -> dict:
        return {"mjdata": int(self.datas[0].nbuffer + self.datas[0].narena), "nbuffer": int(self.datas[0].nbuffer),
                "narena": int(self.datas[0].narena), "maxuse_arena": max(int(d.maxuse_arena) for d in self.datas),
                "rollout_per_env": 8 * (self.nstate * (steps + 1) + self.m.nsensordata * steps)}


def measure(name: str, path: Path, B: int, T: int, steps: int, repeats: int, modes, min_env_steps: int,
            mjm, qpos, qvel, precision: int = 64) -> dict:
    ctrl = np.random.default_rng(0).uniform(-1, 1, size=(steps, B, mjm.nu))
    ours = Ours(path, B, qpos, qvel, ctrl, precision)
    if ours.refused:
        return {"refused": ours.refused[:200]}
    default = cli_defaults()
    theirs = Theirs(mjm, B, T, qpos, qvel, ctrl)
    inner = max(1, math.ceil(min_env_steps / (B * steps)))
    sides = ["mujoco"] + [f"ours_{m}" for m in modes]
    for m in modes:  # one short run of each: the kernels and their argument contexts are ready
        ours.run(min(steps, 2), m, default)
    secs = {s: [] for s in sides}
    final = {}
    try:
        for rep in range(repeats):
            order = sides[rep % len(sides):] + sides[:rep % len(sides)]
            for s in order:
                total = 0.0
                for _ in range(inner):
                    if s == "mujoco":
                        dt, final[s] = theirs.run(steps)
                    else:
                        dt, final[s], ncon = ours.run(steps, s[5:], default)
                        if ncon is not None:
                            final["ncon"] = ncon
                    total += dt
                secs[s].append(total / inner)
            print(f"  {name} B={B} T={T} repeat {rep + 1}/{repeats}: " +
                  ", ".join(f"{s} {1e6 * secs[s][-1] / (B * steps):.1f} µs/env-step" for s in sides),
                  file=sys.stderr, flush=True)
        mj_final = final["mujoco"]
        nq = mjm.nq
        out = {"rate": {s: [B * steps / t for t in v] for s, v in secs.items()}, "inner": inner,
               "dqpos": float(np.abs(final[sides[1]] - mj_final[:, 1:1 + nq]).max()),
               "ncon_ours": final.get("ncon"), "ncon_mujoco": theirs.final_contacts(mj_final[0]),
               "footprint_ours": ours.footprint(final.get("ncon") or 0), "footprint_mujoco": theirs.footprint(steps)}
    finally:
        theirs.close()
    return out


def worker(spec: dict) -> int:
    import mujoco

    from rigidsim.engine import runtime

    runtime.init(spec.get("precision", 64), "cpu")  # RIGIDSIM_CPU_THREADS is set in this process's environment
    res = {"scenes": {}}
    for name in spec["scenes"]:
        path = SCENES[name]
        if not path.exists():
            res["scenes"][name] = {"absent": str(path)}
            continue
        mjm = mujoco.MjModel.from_xml_path(str(path))
        qpos, qvel, note = initial_state(mjm, name in SETTLE)
        sc = res["scenes"][name] = {"start": note, "nv": int(mjm.nv), "nu": int(mjm.nu), "B": {}}
        for B in spec["batches"]:
            r = measure(name, path, B, spec["threads"], spec["steps"], spec["repeats"], spec["modes"],
                        spec["min_env_steps"], mjm, qpos, qvel, spec.get("precision", 64))
            sc["B"][str(B)] = r
            if "refused" in r:
                break
    Path(spec["out"]).write_text(json.dumps(res))
    return 0


# ----------------------------------------------------------------------------------------------- the report
def machine() -> str:
    from bench_record import cpu_name

    import datetime

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "-uno"], capture_output=True,
                               text=True).stdout.strip()
        commit = (commit or "unknown") + (" (uncommitted changes)" if dirty else "")
    except OSError:
        commit = "unknown"
    import mujoco

    return (f"{cpu_name()}, {os.cpu_count()} cores; {datetime.datetime.now():%Y-%m-%d %H:%M}; commit {commit}; "
            f"mujoco {mujoco.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}")


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_worker(T: int, spec: dict, tmp: str) -> dict:
    out = os.path.join(tmp, f"threads{T}.json")
    spec = {**spec, "threads": T, "out": out}
    env = {**os.environ, "RIGIDSIM_CPU_THREADS": str(T), "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)], env=env,
                       cwd=str(ROOT))
    if r.returncode != 0:
        raise SystemExit(f"the worker for {T} threads failed (exit {r.returncode})")
    return json.loads(Path(out).read_text())


def med(v) -> float:
    return float(np.median(v))


def mark(ratio: float, target, goal=None) -> str:
    if target is None:
        return ""
    text = f"≥ {target:g}x" + (f", goal {goal:g}x" if goal else "")
    return f"[green]{text}: ok[/green]" if ratio >= target else f"[red]{text}: missed[/red]"


def _kib(n: float) -> str:
    return f"{n / 1024:,.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):,.1f} MiB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", default=DEFAULT_SCENES, help=f"comma list out of {','.join(SCENES)}")
    ap.add_argument("--batches", default=None, help="comma list of B (default 1,1024; --quick 1,16)")
    ap.add_argument("--steps", type=int, default=None, help="steps per rollout (default 200; --quick 20)")
    ap.add_argument("--repeats", type=int, default=None, help="repeats, medians reported (default 3; --quick 1)")
    ap.add_argument("--threads", type=int, default=2, help="threads of both engines in the throughput tables")
    ap.add_argument("--scaling-threads", default="1,2", help="thread counts of the scaling table ('' skips it)")
    ap.add_argument("--scaling-batch", type=int, default=None, help="B of the scaling table (default 1024; --quick 16)")
    ap.add_argument("--min-env-steps", type=int, default=None,
                    help="rollouts per repeat: enough for this many env-steps (default 20000; --quick 100)")
    ap.add_argument("--precision", type=int, choices=(64, 32), default=64,
                    help="rigidsim's floats (MuJoCo's are always float64); 32 is the GPU default")
    ap.add_argument("--quick", action="store_true", help="a smoke run: B 1,16, 20 steps, 1 repeat")
    ap.add_argument("--no-startup", action="store_true", help="accepted for old command lines; no start-up "
                                                              "section any more (bench_startup.py)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(json.loads(args.worker))

    q = args.quick
    batches = [int(b) for b in (args.batches or ("1,16" if q else "1,1024")).split(",") if b]
    steps = args.steps or (20 if q else 200)
    repeats = args.repeats or (1 if q else 3)
    scal_B = args.scaling_batch or (16 if q else 1024)
    min_env = args.min_env_steps if args.min_env_steps is not None else (100 if q else 20000)
    scal_T = [int(t) for t in args.scaling_threads.split(",") if t.strip()]
    scenes = [s for s in args.scenes.split(",") if s]
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        ap.error(f"unknown scenes {', '.join(unknown)}; known: {', '.join(SCENES)}")

    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 160))  # the tables whole, also when piped
    default_rec, default_every = cli_defaults()
    load0 = load_avg()
    console.print(f"# {machine()}")
    console.print(f"# load average before: {load0}; {steps} steps per rollout, medians of {repeats} repeats, "
                  f"wall time{'; --quick: a smoke run, not figures' if q else ''}")

    base = {"scenes": scenes, "steps": steps, "repeats": repeats, "min_env_steps": min_env,
            "precision": args.precision}
    results = {}
    with tempfile.TemporaryDirectory(prefix="rigidsim-bench-contacts-") as tmp:
        main_B = batches + ([scal_B] if args.threads in scal_T and scal_B not in batches else [])
        results[args.threads] = run_worker(args.threads, {**base, "batches": main_B, "modes": ["off", "default"]}, tmp)
        for T in scal_T:
            if T != args.threads:
                results[T] = run_worker(T, {**base, "batches": [scal_B], "modes": ["off"]}, tmp)
    main_res = results[args.threads]["scenes"]

    table = Table(title=f"`rigidsim run`-like rollouts of {steps} steps against mujoco.rollout, MuJoCo "
                        f"compatibility, rigidsim float{args.precision}, {args.threads} threads (median of "
                        f"{repeats})")
    for col in ("scene", "B", "recording", "rigidsim env-steps/s", "mujoco env-steps/s", "rigidsim µs/env-step",
                "mujoco µs/env-step", "ratio", "per repeat", "target"):
        table.add_column(col, justify="right")
    for name in scenes:
        sc = main_res[name]
        if "absent" in sc:
            table.add_row(name, "", "", f"{sc['absent']} absent", *[""] * 6)
            continue
        for B in batches:
            r = sc["B"].get(str(B))
            if r is None:
                continue
            if "refused" in r:
                table.add_row(name, str(B), "", r["refused"][:60], *[""] * 6)
                break
            ref = r["rate"]["mujoco"]
            for mode in ("off", "default"):
                ours = r["rate"][f"ours_{mode}"]
                ratio = med(ours) / med(ref)
                each = [a / b for a, b in zip(ours, ref)]
                tgt = TARGETS.get((mode, B), (None, None))
                table.add_row(name, str(B), mode, f"{med(ours):,.0f}", f"{med(ref):,.0f}",
                              f"{1e6 / med(ours):.1f}", f"{1e6 / med(ref):.1f}", f"{ratio:.2f}x",
                              f"{min(each):.2f}-{max(each):.2f}x", mark(ratio, *tgt))
    console.print(table)
    console.print(f"  recording off: --record qpos --every {steps} (frame 0 and the final state); default: "
                  f"--record {','.join(default_rec)}[,sensordata: a scene with sensors] --every {default_every} "
                  f"(`rigidsim run`'s default); mujoco: "
                  f"mujoco.rollout (full physics state and sensor data of every step) in both rows; ratio: rigidsim "
                  f"/ mujoco env-steps/s")

    if len(scal_T) >= 2:
        t0, t1 = scal_T[0], scal_T[-1]
        st = Table(title=f"scaling: {t0} -> {t1} threads at B = {scal_B}, recording off (median of {repeats})")
        for col in ("scene", f"rigidsim T={t0} env-steps/s", f"rigidsim T={t1}", "rigidsim speed-up",
                    f"mujoco T={t0}", f"mujoco T={t1}", "mujoco speed-up", "ours / mujoco's", "target"):
            st.add_column(col, justify="right")
        for name in scenes:
            try:
                a = results[t0]["scenes"][name]["B"][str(scal_B)]["rate"]
                b = results[t1]["scenes"][name]["B"][str(scal_B)]["rate"]
            except KeyError:
                st.add_row(name, "absent or refused", *[""] * 7)
                continue
            so = med(b["ours_off"]) / med(a["ours_off"])
            sm = med(b["mujoco"]) / med(a["mujoco"])
            st.add_row(name, f"{med(a['ours_off']):,.0f}", f"{med(b['ours_off']):,.0f}", f"{so:.2f}x",
                       f"{med(a['mujoco']):,.0f}", f"{med(b['mujoco']):,.0f}", f"{sm:.2f}x", f"{so / sm:.2f}",
                       mark(so / sm, SCALING_TARGET))
        console.print(st)

    bmax = max(batches)
    ft = Table(title=f"footprint per env, B = {bmax}")
    for col in ("scene", "rigidsim Data", "its largest arrays", "a recorded frame (default)",
                "MjData: nbuffer + narena", "arena used", "mujoco.rollout in + out"):
        ft.add_column(col, justify="right")
    wt = Table(title=f"the same work: the end of the last rollout, B = {bmax}")
    for col in ("scene", "initial state", "max |Δqpos| at the end", "contacts of env 0 at the end (ours / mujoco)"):
        wt.add_column(col, justify="right")
    for name in scenes:
        sc = main_res[name]
        r = sc.get("B", {}).get(str(bmax))
        if r is None or "refused" in r:
            continue
        fo, fm = r["footprint_ours"], r["footprint_mujoco"]
        ft.add_row(name, _kib(fo["bytes"]), ", ".join(f"{k} {_kib(v)}" for k, v in fo["top"]), _kib(fo["frame"]),
                   f"{_kib(fm['nbuffer'])} + {_kib(fm['narena'])}", _kib(fm["maxuse_arena"]),
                   _kib(fm["rollout_per_env"]))
        wt.add_row(name, sc["start"], f"{r['dqpos']:.1e}", f"{r['ncon_ours']} / {r['ncon_mujoco']}")
    console.print(ft)
    console.print("  rigidsim Data: every batched array the Simulator holds, nbytes / B (reserved: an env touches only "
                  "the head of its contact and row buffers); a recorded frame: one env's row of the default "
                  "recording's frame buffer and its rows in the contact pool (env 0's contacts at the end); MjData: what one MjData allocates (B of them for a batch of MjData; "
                  "mujoco.rollout holds one per thread, arena used: the most any of them used); mujoco.rollout "
                  f"in + out: per env, the initial state and {steps} steps of state and sensor data")
    console.print(wt)
    console.print(f"# load average after: {load_avg()} (before: {load0})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
