"""`rigidsim sweep --backend ray` on a real multi-node Ray cluster on this machine: a head node of 0 CPUs and
two worker nodes of 1 CPU each (`ray.cluster_utils.Cluster`), every address loopback, one cluster for the
module, shut down by the fixture (never `ray stop`, which would end other clusters of this machine).

With Ray 2.60 a cluster given node_ip_address 127.0.0.1 still had its driver dial the machine's own network
address until RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set too; the fixture sets both, and a test asserts the
address is 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.cli_util import cli_cmd, cli_env, rigidsim
from tests.sweep_util import GRID, leftovers, manifest, write_grid

LOOPBACK = "127.0.0.1"
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
os.environ.update(RAY_ENV)  # before Ray is imported: it reads them then (this process is a driver too)

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rigidsim[ray]')")
from ray.cluster_utils import Cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": LOOPBACK,
                                                      "include_dashboard": False})
    try:
        for _ in range(2):
            c.add_node(num_cpus=1, node_ip_address=LOOPBACK)
        c.wait_for_nodes()
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()


def _workers(c):
    return [n for n in c.list_all_nodes() if n is not c.head_node]


@pytest.fixture(scope="module")
def local_files(tmp_path_factory):
    """The grid on the local backend, to compare the Ray backend's files with."""
    import rigidsim

    d = tmp_path_factory.mktemp("local")
    rep = rigidsim.sweep(GRID, d, jobs=2)
    assert rep.exit_code == 0
    return d


def test_cluster_is_loopback_with_two_worker_nodes(cluster):
    assert cluster.address.split(":")[0] == LOOPBACK
    assert len(_workers(cluster)) == 2


def test_grid_on_ray_equals_local_byte_for_byte_on_both_nodes(cluster, local_files, tmp_path):
    """The command line on the cluster: exit 0, every job's file the local backend's bytes, jobs on both
    worker nodes, and no file written but by the driver into --out."""
    out = tmp_path / "ray"
    p = rigidsim("sweep", write_grid(tmp_path), "--out", out, "--backend", "ray", "--address", cluster.address,
                 env=RAY_ENV)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = manifest(out)
    assert len(lines) == 8 and all(e["status"] == "ok" for e in lines)
    for e in lines:
        assert (out / e["file"]).read_bytes() == (local_files / e["file"]).read_bytes(), e["file"]
    ids = {n.node_id for n in _workers(cluster)}
    used = {e["node"] for e in lines}
    assert used == ids, (used, ids)
    assert leftovers(out) == []


def test_a_worker_node_removed_mid_sweep_and_the_sweep_completes(cluster, local_files, tmp_path):
    """The Python API on the cluster; when the first job ends, the other worker node (busy with a job) is
    removed: its job is run again on the node left, every job ends ok, and the files are still the local
    backend's bytes."""
    import rigidsim

    removed = []

    def progress(done, total, entry):
        if not removed:
            other = [n for n in _workers(cluster) if n.node_id != entry["node"]]
            removed.append(other[0].node_id)
            cluster.remove_node(other[0], allow_graceful=False)

    try:
        rep = rigidsim.sweep({**GRID, "scenes": ["falling_objects"]}, tmp_path / "o", backend="ray",
                             address=cluster.address, retries=2, progress=progress)
    finally:
        cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)  # the next test has two worker nodes again
        cluster.wait_for_nodes()
    assert rep.exit_code == 0, rep.jobs
    assert all(e["status"] == "ok" for e in rep.jobs)
    retried = [e for e in rep.jobs if e.get("attempts", 1) > 1]
    assert retried and all(e["node"] != removed[0] for e in retried), rep.jobs
    for e in rep.jobs:
        assert (tmp_path / "o" / e["file"]).read_bytes() == (local_files / e["file"]).read_bytes()


def test_sigint_on_ray_exits_130_without_partial_files_then_resume(cluster, tmp_path):
    # 3 jobs of ~1.5 s: the signal comes as the first ends, while the second runs
    grid = write_grid(tmp_path, steps=1500, envs=32, scenes=["falling_objects"], seeds=[0, 1, 2], grid=None)
    out = tmp_path / "out"
    proc = subprocess.Popen(cli_cmd("sweep", grid, "--out", out, "--backend", "ray", "--address", cluster.address),
                            env={**cli_env(), **RAY_ENV}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not ((out / "manifest.jsonl").exists()
                                               and (out / "manifest.jsonl").read_text().strip()):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    first = manifest(out)
    assert 1 <= len(first) < 3 and leftovers(out) == []
    assert sorted(x.name for x in out.glob("*.h5")) == sorted(e["file"] for e in first)
    p = rigidsim("sweep", grid, "--out", out, "--resume", "--json", "-")  # the rest, locally: the same bytes
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["counts"]["skipped"] == len(first) and len(manifest(out)) == 3
