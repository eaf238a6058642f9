"""Start-up of `rigidsim run SCENE --steps 1 --envs 1`, cold and warm, per scene, with MuJoCo's as a reference.

Each round is a fresh process, timed by wall clock from its start to its exit:

- cold: an empty kernel cache (a new RIGIDSIM_CACHE_DIR), so the run compiles every kernel the scene needs;
- warm: the same command again on the cache the cold round left (what every later run of the scene costs);
- mujoco: `python -c` that imports mujoco, compiles the scene with MjModel.from_xml_path and takes one
  mj_step (the reference a user compares the start-up with).

`--backend vulkan` times the Vulkan path instead (`--precision 32`); there a cold round also starts from an
empty shader cache of the driver (MESA_SHADER_CACHE_DIR: Mesa's software driver compiles each kernel to
machine code once more, and keeps it there).

Medians over the rounds (default 1 cold and 3 warm: a cold round costs 10-60 s on a 2-core machine). The
table names the machine and the load average before and after, since other work on the machine slows
every figure. Scenes: the bundled pendulum, boxes27 and humanoid, and, when ../shared/models exists, the
Panda (and the Go2 and the Shadow Hand, when those folders exist).

    python benchmarks/bench_startup.py                      # every scene found, 1 cold + 3 warm rounds
    python benchmarks/bench_startup.py --scenes pendulum,humanoid --cold 3 --warm 5
    python benchmarks/bench_startup.py --scenes pendulum,cheetah --backend vulkan --no-mujoco
    python benchmarks/bench_startup.py --scenes humanoid --record qpos,qvel,xpos,xquat,contacts   # no sensors
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"


def _scenes():
    """(label, SCENE argument for rigidsim, MJCF path for mujoco) of every scene found."""
    sys.path.insert(0, str(ROOT))
    from rigidsim.bundled import find_scene

    out = []
    for name in ("pendulum", "boxes27", "humanoid"):
        p = find_scene(name)
        if p is not None:
            out.append((name, name, p))
    for label, rel in (("cheetah", "dm_control/cheetah.xml"),
                       ("panda", "menagerie/franka_emika_panda/scene.xml"),
                       ("go2", "menagerie/unitree_go2/scene.xml"),
                       ("shadow_hand", "menagerie/shadow_hand/scene_right.xml")):
        p = SHARED / rel
        if p.is_file():
            out.append((label, str(p), p))
    return out


def _time(cmd, env) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return dt


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", default="", help="comma list of labels (default: every scene found)")
    ap.add_argument("--cold", type=int, default=1, help="cold rounds per scene (each an empty cache)")
    ap.add_argument("--warm", type=int, default=3, help="warm rounds per scene (and mujoco rounds)")
    ap.add_argument("--no-mujoco", action="store_true", help="leave out the mujoco column")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "vulkan"), help="the backend to time")
    ap.add_argument("--record", default=None, help="run's --record (default: run's default set, sensordata "
                    "included for a scene with sensors)")
    args = ap.parse_args()

    scenes = _scenes()
    if not args.scenes:
        scenes = [s for s in scenes if s[0] != "cheetah"]  # by name only (the default table predates it)
    if args.scenes:
        want = args.scenes.split(",")
        unknown = set(want) - {s[0] for s in scenes}
        if unknown:
            raise SystemExit(f"unknown or absent scenes: {', '.join(sorted(unknown))}")
        scenes = [s for s in scenes if s[0] in want]

    load0 = os.getloadavg()
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {_cpu_model()}, "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"{args.cold} cold + {args.warm} warm rounds, medians, backend {args.backend}"
          f"{', --record ' + args.record if args.record else ''}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="rigidsim-startup-") as tmp:
        out = Path(tmp) / "out.h5"
        base = dict(os.environ)
        base["PYTHONPATH"] = str(ROOT) + (os.pathsep + base["PYTHONPATH"] if base.get("PYTHONPATH") else "")
        for label, scene, xml in scenes:
            cmd = [sys.executable, "-m", "rigidsim", "run", scene, "--steps", "1", "--envs", "1",
                   "--out", str(out), "--quiet"]
            if args.backend != "cpu":
                cmd += ["--backend", args.backend, "--precision", "32"]
            if args.record:
                cmd += ["--record", args.record]
            cold, warm = [], []
            for k in range(args.cold):
                env = dict(base, RIGIDSIM_CACHE_DIR=str(Path(tmp) / f"cache-{label}-{k}"),
                           MESA_SHADER_CACHE_DIR=str(Path(tmp) / f"mesa-{label}-{k}"))
                cold.append(_time(cmd, env))
                if k == 0:
                    for _ in range(args.warm):
                        warm.append(_time(cmd, env))
            mj = []
            if not args.no_mujoco:
                code = ("import mujoco; m = mujoco.MjModel.from_xml_path(%r); d = mujoco.MjData(m); "
                        "mujoco.mj_step(m, d)" % str(xml))
                for _ in range(args.warm):
                    mj.append(_time([sys.executable, "-c", code], base))
            med = lambda v: f"{statistics.median(v):.1f} s" if v else "-"
            rows.append((label, med(cold), med(warm), med(mj) if mj else "-"))
            print(f"  {label}: cold {[round(x, 1) for x in cold]}, warm {[round(x, 2) for x in warm]}, "
                  f"mujoco {[round(x, 2) for x in mj]}", flush=True)
    load1 = os.getloadavg()
    print(f"# load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    print()
    print("| scene | cold (first run) | warm (later runs) | mujoco: load + 1 step |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
