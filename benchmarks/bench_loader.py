"""Load time of our MJCF/URDF loaders against MuJoCo's compiler, per scene (the wall-clock check that used to
be a test: the humanoid loading in under 0.5 s), and what a fresh process pays for `load_scene` with and
without the compiled-model cache.

    python benchmarks/bench_loader.py [--repeats 5] [--scenes dm_control/humanoid.xml ...] [--no-startup]

Scenes are names under ../shared/models or paths. Per scene it prints, in ms:

* ``rigidsim``: the median wall time of `rigidsim.loaders.load_mjcf` in this process (imports and the
  in-process mesh cache warmed by a first load; no disk cache);
* ``mujoco``: ``mujoco.MjModel.from_xml_path`` (when mujoco is installed), and the ratio;
* ``cold`` / ``hulls`` / ``warm``: `load_scene` in a new process (its imports not counted) with an empty
  compiled-model cache; with only the hull graphs cached (what an edit of the XML leaves); with the Model
  cached. Each the median of ``--repeats`` processes, in a temporary RIGIDSIM_CACHE_DIR.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models"
DEFAULT = ["dm_control/humanoid.xml", "dm_control/humanoid_CMU.xml", "dm_control/quadruped.xml",
           "menagerie/franka_emika_panda/scene.xml"]
_CHILD = ("import sys, time\nfrom rigidsim.loaders import load_scene\nt = time.perf_counter()\n"
          "load_scene(sys.argv[1])\nprint(1e3 * (time.perf_counter() - t))\n")


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm imports and caches
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def _child_ms(path: Path, cache: Path) -> float:
    env = dict(os.environ, RIGIDSIM_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("RIGIDSIM_MODEL_CACHE", None)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return float(out.split()[-1])


def startup_ms(path: Path, repeats: int):
    """(cold, hulls only, warm) median ms of `load_scene` in new processes."""
    cold, hulls, warm = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        for _ in range(repeats):
            shutil.rmtree(cache / "models", ignore_errors=True)
            cold.append(_child_ms(path, cache))
            warm.append(_child_ms(path, cache))
            for p in (cache / "models").glob("*.npz"):
                p.unlink()  # the Model entries; models/hulls stays
            hulls.append(_child_ms(path, cache))
    return statistics.median(cold), statistics.median(hulls), statistics.median(warm)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scenes", nargs="*", default=DEFAULT)
    ap.add_argument("--no-startup", action="store_true", help="leave out the new-process cold/hulls/warm loads")
    a = ap.parse_args(argv)
    from rigidsim.loaders.mjcf import load_mjcf

    try:
        import mujoco
    except ImportError:
        mujoco = None
    print(f"{'scene':44s} {'rigidsim ms':>12s} {'mujoco ms':>10s} {'ratio':>6s}"
          + ("" if a.no_startup else f" {'cold ms':>9s} {'hulls ms':>9s} {'warm ms':>8s}"))
    for name in a.scenes:
        path = Path(name) if Path(name).exists() else MODELS / name
        ours = _median_ms(lambda: load_mjcf(path), a.repeats)
        if mujoco is not None:
            ref = _median_ms(lambda: mujoco.MjModel.from_xml_path(str(path)), a.repeats)
            line = f"{name:44s} {ours:12.1f} {ref:10.1f} {ours / ref:6.2f}"
        else:
            line = f"{name:44s} {ours:12.1f} {'-':>10s} {'-':>6s}"
        if not a.no_startup:
            cold, hulls, warm = startup_ms(path, a.repeats)
            line += f" {cold:9.1f} {hulls:9.1f} {warm:8.1f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
