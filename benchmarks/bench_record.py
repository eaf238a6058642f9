"""The cost of recording: `rigidsim run` with and without the trajectory, same process, interleaved.

    python benchmarks/bench_record.py [--repeats 5] [--steps 2000] [--batches 1,64] [--compression none,lzf,gzip]

For dm_control humanoid with constraints disabled (float64, CPU), each batch
size B, and each --compression asked for, it runs `rigidsim.runner.run`
(what the command line calls) alternately:

- recorded: the default fields (qpos, qvel, xpos, xquat, contacts) every
  step, --every 1;
- baseline: `--record qpos --every 100000`, the near-zero recording (frame 0
  and the final state).

Both runs read the same random controls per step and env (`--ctrl`, [N, B, nu],
seeded), so the envs' trajectories differ and the compressors see realistic data.

The time compared is the simulate phase, `RunResult.seconds`: from the end of
the engine build (Taichi compiled or loaded from the cache, the kernel
prepared) to the output file closed and renamed. It includes creating the
file, writing /model, every launch of the engine and every dataset write.
Engine build and process start-up are the same with or without recording and
are left out (`bench_smooth.py` measures start-up). The table prints medians
over the repeats, the ratio of the medians, the median of the per-repeat
ratios (each repeat runs the two back to back), and the recorded state size.
The file goes to a temporary folder (the OS page cache: the disk's own speed
is not measured).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models" / "dm_control"


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--compression", default="none", help="comma list out of none,lzf,gzip")
    ap.add_argument("--scene", default=str(MODELS / "humanoid.xml"))
    args = ap.parse_args()

    from rigidsim.runner import RunArgs, run

    batches = [int(b) for b in args.batches.split(",")]
    comps = [c.strip() for c in args.compression.split(",") if c.strip()]
    print(f"# {Path(args.scene).name}, disable_constraint, float64 CPU, {args.steps} steps, medians of {args.repeats}; "
          f"{os.cpu_count()} cores, {cpu_name()}, {time.strftime('%Y-%m-%d')}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="rigidsim-bench-rec-") as tmp:
        from rigidsim.loaders import load_scene

        nu = load_scene(args.scene).nu
        ctrls = {}

        def ctrl_file(B):
            """Random controls per step and env (seeded): the envs' trajectories differ, as in real use, so a
            compressor does not see 64 copies of one trajectory."""
            if B not in ctrls:
                ctrls[B] = os.path.join(tmp, f"ctrl{B}.npy")
                np.save(ctrls[B], np.random.default_rng(0).uniform(-1, 1, size=(args.steps, B, nu)))
            return ctrls[B] if nu else None

        def one(B, record, every, comp):
            out = os.path.join(tmp, "bench.h5")
            r = run(RunArgs(scene=args.scene, steps=args.steps, envs=B, out=out, record=record, every=every,
                            sets=("disable_constraint=true",), quiet=True, compression=comp, ctrl=ctrl_file(B)))
            assert r.complete
            size = os.path.getsize(out)
            with h5py.File(out, "r") as f:  # bytes of recorded state
                state = sum(f[k].size * f[k].dtype.itemsize for k in ("qpos", "qvel", "xpos", "xquat") if k in f)
            os.unlink(out)
            return r.seconds, r.frames, size, state

        for B in batches:
            one(B, "qpos", 100000, "none")  # warm up: the kernels of this batch size, the page cache
            for comp in comps:
                rec, base, ratios = [], [], []
                for _ in range(args.repeats):
                    t_rec, frames, size, state = one(B, None, 1, comp)
                    t_base, _, _, _ = one(B, "qpos", 100000, comp)
                    rec.append(t_rec)
                    base.append(t_base)
                    ratios.append(t_rec / t_base)
                rows.append((B, comp, float(np.median(base)), float(np.median(rec)), float(np.median(rec) / np.median(base)),
                             float(np.median(ratios)), frames, state, size))
                print(f"  B={B} {comp}: baseline {np.round(base, 3).tolist()} recorded {np.round(rec, 3).tolist()}",
                      file=sys.stderr, flush=True)
    print()
    print("| B | compression | baseline s (record qpos, every 100000) | recorded s (default fields, every 1) | "
          "ratio of medians | median of ratios | frames | state MB | file MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for B, comp, tb, tr, ratio, mratio, frames, state, size in rows:
        print(f"| {B} | {comp} | {tb:.3f} | {tr:.3f} | {ratio:.2f}x | {mratio:.2f}x | {frames} | {state / 1e6:.1f} | "
              f"{size / 1e6:.1f} |")


if __name__ == "__main__":
    main()
