"""The Ray backend of `rigidsim sweep` (pip install 'rigidsim[ray]'): long-lived actors on a Ray cluster.

Ray is imported only here, and only for `--backend ray`. The driver connects to the cluster that
`--address` or RAY_ADDRESS names (never a bare `ray.init()`, which could start or attach to a stale local
cluster), and starts one actor per T CPUs of each node (T = `--threads-per-job`; each actor reserves T CPUs
and its engine runs on T threads). An actor runs jobs one after another and keeps what it compiled, as a
local worker does. Each scene's compiled Model is put in the object store once and reaches the nodes by
value, so they need no shared file system; a job's file comes back as bytes and only the driver writes into
the sweep's folder. An actor lost with its node is dropped (replaced where the cluster has room) and its
job run again, up to `--retries` times; a job whose run fails (exit 1) is a result and is not retried.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from rigidsim.errors import InputError

RAY_HINT = "pip install 'rigidsim[ray]'"


class RayWorker:
    """The actor: runs jobs in this worker process, the scenes' Models cached by the object store."""

    def __init__(self, threads: int):
        from rigidsim.sweeps.job import set_threads

        set_threads(threads)
        import ray

        self.node = ray.get_runtime_context().get_node_id()
        self.tmp = Path(tempfile.mkdtemp(prefix="rigidsim-sweep-"))

    def ready(self) -> str:
        return self.node

    def run(self, s: Dict[str, Any], model) -> Tuple[Dict[str, Any], Optional[bytes]]:
        from rigidsim.sweeps.job import execute

        out = self.tmp / s["file"]
        res = execute(s, model, out)
        res["node"] = self.node
        data = None
        if out.is_file():
            data = out.read_bytes()
            out.unlink()
        return res, data


def _import_ray():
    try:
        import ray
    except ImportError:
        raise InputError(f"--backend ray needs Ray, which is not installed: {RAY_HINT}", where="--backend") from None
    return ray


def _reachable(address: str) -> None:
    """A host:port address must answer a TCP connection within 5 s (ray.init would wait much longer)."""
    if address in ("auto", "local") or "://" in address and not address.startswith("ray://"):
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--address must be HOST:PORT (the head node's GCS address, e.g. 127.0.0.1:6379) or "
                         f"ray://HOST:PORT, got '{address}'", where="--address")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except OSError as e:
        raise InputError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}. Start one with "
                         f"`ray start --head` on the head node, or give its address", where="--address") from None


class RayPool:
    """Actors of `threads` CPUs each on the cluster at `address` (or RAY_ADDRESS)."""

    def __init__(self, address: Optional[str], workers: Optional[int], threads: int, models: Dict[str, Any]):
        ray = self.ray = _import_ray()
        self.owned = False
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS")
            if not address:
                raise InputError("--backend ray needs the cluster's address: --address HOST:PORT or RAY_ADDRESS "
                                 "(`ray start --head` prints it)", where="--address")
            _reachable(address)
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except Exception as e:
                raise InputError(f"cannot connect to the Ray cluster at {address}: {type(e).__name__}: {e}",
                                 where="--address") from None
            self.owned = True
        self.threads = threads
        self.max_workers = workers
        self.cls = ray.remote(RayWorker).options(num_cpus=threads, max_restarts=0)
        self.refs = {k: ray.put(m) for k, m in models.items()}  # each scene's Model, once in the object store
        self.ready: List[Any] = []  # actors that answered, idle
        self.starting: Dict[Any, Any] = {}  # ready() ref -> actor not yet placed or started
        self.inflight: Dict[Any, Tuple[Any, Any]] = {}  # run() ref -> (actor, job)
        self.lost_at: Optional[float] = None
        n = self._capacity()
        if n == 0:
            raise InputError(f"no node of the Ray cluster has {threads} CPUs free for a job "
                             f"(--threads-per-job {threads})", where="--threads-per-job")
        for _ in range(min(n, workers) if workers else n):
            self._spawn()

    def _capacity(self) -> int:
        """How many actors of `threads` CPUs the cluster's alive nodes hold."""
        n = 0
        for node in self.ray.nodes():
            if node.get("Alive"):
                n += int(node.get("Resources", {}).get("CPU", 0)) // self.threads
        return n

    def _spawn(self) -> None:
        a = self.cls.remote(self.threads)
        self.starting[a.ready.remote()] = a

    def describe(self) -> str:
        return f"ray: {len(self.ready) + len(self.starting)} actors x {self.threads} CPU{'s' if self.threads > 1 else ''}"

    def idle(self) -> int:
        if not self.ready and not self.inflight and not self.starting:
            self._refill()
        return len(self.ready)

    def start(self, job, s: Dict[str, Any]) -> None:
        a = self.ready.pop()
        self.inflight[a.run.remote(s, self.refs[job.scene.sha256])] = (a, job)

    def _refill(self) -> None:
        """Actors for the room the alive nodes have left (after a node was lost)."""
        alive = len(self.ready) + len(self.starting) + len(self.inflight)
        want = self._capacity()
        if self.max_workers:
            want = min(want, self.max_workers)
        for _ in range(max(0, want - alive)):
            self._spawn()

    def poll(self, timeout: float) -> List[Tuple[str, Any, Any]]:
        ray = self.ray
        refs = list(self.inflight) + list(self.starting)
        if not refs:
            return []
        done, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        done += ray.wait([r for r in refs if r not in done], num_returns=len(refs) - len(done), timeout=0)[0]
        events = []
        for ref in done:
            if ref in self.starting:
                a = self.starting.pop(ref)
                try:
                    ray.get(ref)
                    self.ready.append(a)
                except ray.exceptions.RayError:
                    pass  # an actor that could not start (its node went away): dropped
                continue
            a, job = self.inflight.pop(ref)
            try:
                res, data = ray.get(ref)
            except ray.exceptions.RayTaskError as e:  # raised in our code: not a lost node
                events.append(("error", job, f"internal error on the worker: {e}"))
                self.ready.append(a)
                continue
            except ray.exceptions.RayError as e:  # the actor, its process or its node was lost
                events.append(("lost", job, f"its Ray worker was lost ({type(e).__name__})"))
                self._refill()
                continue
            res["_bytes"] = data
            events.append(("done", job, res))
            self.ready.append(a)
        return events

    def fetch(self, job, res) -> Optional[bytes]:
        return res.pop("_bytes", None)

    def stuck(self) -> bool:
        """Nothing runs or is idle, and no actor could start: the cluster has no room left."""
        if self.ready or self.inflight:
            self.lost_at = None
            return False
        if self.starting:
            if self.lost_at is None:
                self.lost_at = time.monotonic()
            return time.monotonic() - self.lost_at > 60
        return True

    def _end(self) -> None:
        for a in self.ready + list(self.starting.values()) + [a for a, _ in self.inflight.values()]:
            try:
                self.ray.kill(a)
            except Exception:
                pass
        if self.owned:
            self.ray.shutdown()

    def close(self) -> None:
        self._end()

    def kill(self) -> None:
        self._end()
