"""Compile and load cost of each rollout-kernel variant: what a change to kernel code does to start-up.

    python benchmarks/bench_compile.py [--scene humanoid] [--repeats 3]

For each variant a user switches between (the integrators, float64 and float32), in fresh
processes: the cold prepare (the kernel compiled into an empty cache), the size of the cached kernel
(the LLVM IR the offline cache holds; loading it costs time in proportion to its size), and the warm
prepare (the kernel loaded from that cache), median of --repeats. "prepare" is `Simulator.prepare()`
alone: Python start-up, imports and the runtime's start are left out (bench_smooth.py times the whole
command). Every change that adds kernel code should say what it did to these columns.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "models" / "dm_control"
VARIANTS = (("approximate_implicitfast", 64), ("euler", 64), ("implicitfast", 64), ("rk4", 64),
            ("approximate_implicitfast", 32))

_CHILD = r"""
import json, sys, time
from rigidsim.engine import runtime
scene, integrator, precision = sys.argv[1], sys.argv[2], int(sys.argv[3])
runtime.init(precision, "cpu")
from rigidsim import options as opts
from rigidsim.engine.simulator import Simulator
from rigidsim.loaders import load_scene
m = load_scene(scene)
r = opts.resolve(m, {}, {"disable_constraint": True, "integrator": integrator}, precision=precision, backend="cpu")
sim = Simulator(opts.apply(m, r), 1, precision=precision, pair_options=r)
t = time.perf_counter()
sim.prepare()
print(json.dumps({"prepare": time.perf_counter() - t}))
"""


def prepare_seconds(scene: Path, integrator: str, precision: int, cache: str) -> float:
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    r = subprocess.run([sys.executable, "-c", _CHILD, str(scene), integrator, str(precision)], cwd=str(ROOT), env=env,
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])["prepare"]


def cached_bytes(cache: str) -> int:
    return sum(p.stat().st_size for p in Path(cache).rglob("*.qdc"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", default="humanoid", help="a dm_control model name under ../shared, or a path")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    scene = Path(args.scene) if Path(args.scene).suffix else MODELS / f"{args.scene}.xml"
    if not scene.exists():
        print(f"{scene} is absent", file=sys.stderr)
        return 2

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"rollout kernel variants, {scene.name}, constraints disabled (prepare only)")
    for col in ("integrator", "precision", "cold prepare", "cached kernel", "warm prepare", "warm µs per KB"):
        table.add_column(col, justify="right")
    for integrator, precision in VARIANTS:
        with tempfile.TemporaryDirectory(prefix="rigidsim-compile-") as cache:
            cold = prepare_seconds(scene, integrator, precision, cache)
            size = cached_bytes(cache)
            warm = float(np.median([prepare_seconds(scene, integrator, precision, cache) for _ in range(args.repeats)]))
        table.add_row(integrator, str(precision), f"{cold:.2f} s", f"{size / 1024:.0f} KB", f"{warm:.3f} s",
                      f"{1e6 * warm / max(size / 1024, 1):.0f}")
    Console(width=max(Console().width, 110)).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
