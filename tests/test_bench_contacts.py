"""benchmarks/bench_contacts.py runs: a smoke run of one bundled scene (a few seconds with the kernel cache,
under 10 s without), and the scenes the other benchmarks borrow from it exist. Timings are never checked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_util import ROOT

pytest.importorskip("mujoco")
BENCH = ROOT / "benchmarks"


def test_smoke_run_prints_every_section():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    r = subprocess.run([sys.executable, str(BENCH / "bench_contacts.py"), "--quick", "--scenes", "boxes27",
                        "--batches", "2", "--steps", "5", "--threads", "1", "--scaling-threads", "",
                        "--min-env-steps", "1"], cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    for title in ("rollouts of 5 steps against mujoco.rollout", "footprint per env", "the same work",
                  "load average after"):
        assert title in r.stdout, r.stdout[-3000:]


def test_scenes_the_other_benchmarks_use():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_contacts
        import bench_stages
    finally:
        sys.path.remove(str(BENCH))
    names = {s.split(":")[0] for s in bench_stages.DEFAULT_STATES.split(",")}
    assert names <= set(bench_contacts.SCENES)
    assert set(bench_contacts.DEFAULT_SCENES.split(",")) <= set(bench_contacts.SCENES)
