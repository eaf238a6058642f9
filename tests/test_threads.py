"""Every thread works: with RIGIDSIM_CPU_THREADS=8 on a machine of fewer cores, each of the 8 threads of the
kernels' pool gets a fair share of a rollout's CPU time, at B = 64 and at B = 1024 (issue 29: the CPU
backend's loop pass used to cut the env loop into blocks of 512 iterations, so at most 4 threads ever
worked). CPU time per thread is read from /proc (Linux)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="per-thread CPU time from /proc")

PROBE = r"""
import json, os, sys
from pathlib import Path

def cpu_ms():
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            text = Path(f"/proc/self/task/{t}/sched").read_text()
            out[t] = float(next(l for l in text.splitlines() if l.startswith("se.sum_exec_runtime")).split(":")[1])
        except (OSError, StopIteration):
            f = Path(f"/proc/self/task/{t}/stat").read_text().rsplit(")", 1)[1].split()
            out[t] = (int(f[11]) + int(f[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")
    return out

from rigidsim.bundled import find_scene
from rigidsim.engine.simulator import Simulator
from rigidsim.loaders import load_scene

model = load_scene(str(find_scene("falling_objects")))
res = {}
for B, steps in ((64, 400), (1024, 40)):
    sim = Simulator(model, B)
    sim.step(2)  # compiled, warm
    before = cpu_ms()
    sim.step(steps)
    after = cpu_ms()
    res[B] = sorted((after[t] - before.get(t, 0.0) for t in after), reverse=True)
print(json.dumps(res))
"""


@pytest.mark.parametrize("threads", [8])
def test_every_thread_works(threads):
    env = dict(os.environ, RIGIDSIM_CPU_THREADS=str(threads), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=600,
                         cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    for B, per_thread in res.items():
        workers = per_thread[:threads]
        fair = sum(workers) / threads
        # the main thread waits for the pool: the `threads` busiest are the pool's workers, and each got at
        # least a quarter of an even share (a worker left idle has ~0)
        assert min(workers) > 0.25 * fair, (B, per_thread)
        # and no thread beyond them did a worker's share
        assert all(t < 0.25 * fair for t in per_thread[threads:]), (B, per_thread)
