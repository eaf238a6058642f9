"""Load time of our MJCF/URDF loaders against MuJoCo's compiler, per scene (the wall-clock check that used to
be a test: the humanoid loading in under 0.5 s).

    python benchmarks/bench_loader.py [--repeats 5] [--scenes dm_control/humanoid.xml ...]

Scenes are names under ../shared/models or paths. Per scene it prints the median wall time of
`rigidsim.loaders.load_mjcf` (imports warmed by a first load) and of ``mujoco.MjModel.from_xml_path`` (when
mujoco is installed), in ms, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models"
DEFAULT = ["dm_control/humanoid.xml", "dm_control/humanoid_CMU.xml", "dm_control/quadruped.xml",
           "menagerie/franka_emika_panda/scene.xml"]


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm imports and caches
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scenes", nargs="*", default=DEFAULT)
    a = ap.parse_args(argv)
    from rigidsim.loaders.mjcf import load_mjcf

    try:
        import mujoco
    except ImportError:
        mujoco = None
    print(f"{'scene':44s} {'rigidsim ms':>12s} {'mujoco ms':>10s} {'ratio':>6s}")
    for name in a.scenes:
        path = Path(name) if Path(name).exists() else MODELS / name
        ours = _median_ms(lambda: load_mjcf(path), a.repeats)
        if mujoco is not None:
            ref = _median_ms(lambda: mujoco.MjModel.from_xml_path(str(path)), a.repeats)
            print(f"{name:44s} {ours:12.1f} {ref:10.1f} {ours / ref:6.2f}")
        else:
            print(f"{name:44s} {ours:12.1f} {'-':>10s} {'-':>6s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
