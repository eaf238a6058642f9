"""The local backend of `rigidsim sweep`: a pool of worker processes on this machine, alive for the whole sweep.

Each worker is a fresh interpreter (`python -m rigidsim.sweeps.local`: neither the driver's state nor its
main script is copied or run again) that runs jobs one after
another and keeps what it compiled and loaded, so a hundred short jobs of one scene pay one engine start-up
per worker. A worker's engine runs on T threads (`--threads-per-job`). The driver talks to each worker
through a pipe of its own and watches the process itself, so a worker that dies (a crash, the OOM killer)
is noticed, replaced, and its job retried. Workers ignore Ctrl-C: the driver handles it and kills them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _worker_main(conn, threads: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C and ends the workers
    from rigidsim.sweeps.job import execute, set_threads

    set_threads(threads)
    models: Dict[str, Any] = {}
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        s, key, model, out = msg
        if model is not None:
            models[key] = model
        conn.send(execute(s, models[key], Path(out)))


class _Worker:
    def __init__(self, threads: int, log: Path):
        mine, theirs = socket.socketpair()
        self.log = log
        with open(log, "ab") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "rigidsim.sweeps.local", str(theirs.fileno()),
                                          str(threads)], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err)
        theirs.close()
        self.conn = Connection(mine.detach())
        self.models: set = set()
        self.job: Optional[Any] = None

    def ended(self) -> str:
        """Why the worker is gone: its exit status and the last line it wrote to stderr."""
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        try:
            tail = [t for t in self.log.read_text(errors="replace").splitlines() if t.strip()][-1:]
        except OSError:
            tail = []
        return f"its worker process ended (exit status {code})" + (f": {tail[0].strip()}" if tail else "")


class LocalPool:
    """`workers` processes of `threads` engine threads each; jobs write their files into `partial`."""

    def __init__(self, workers: int, threads: int, partial: Path):
        self.threads = threads
        self.partial = partial
        self.node = socket.gethostname()
        self.made = 0
        self.workers = [self._new() for _ in range(max(1, workers))]

    def _new(self) -> _Worker:
        self.made += 1
        return _Worker(self.threads, self.partial / f"worker-{self.made}.log")

    def describe(self) -> str:
        return f"local: {len(self.workers)} workers x {self.threads} thread{'s' if self.threads > 1 else ''}"

    def idle(self) -> int:
        return sum(1 for w in self.workers if w.job is None)

    def start(self, job, s: Dict[str, Any]) -> None:
        w = next(w for w in self.workers if w.job is None)
        key = job.scene.sha256
        w.conn.send((s, key, None if key in w.models else job.scene.model, str(self.partial / job.file)))
        w.models.add(key)
        w.job = job

    def poll(self, timeout: float) -> List[Tuple[str, Any, Any]]:
        """Events since the last call: ('done', job, result) with the job's file in `partial`, or ('lost',
        job, why) for a job whose worker died (the worker is replaced)."""
        busy = [w for w in self.workers if w.job is not None]
        if not busy:
            return []
        ready = wait([w.conn for w in busy], timeout)  # a worker that dies closes its end: readable, then EOF
        events = []
        for w in busy:
            if w.conn not in ready:
                continue
            try:
                res = w.conn.recv()
            except (EOFError, OSError):
                events.append(("lost", w.job, w.ended()))
                self._replace(w)
                continue
            res["node"] = self.node
            events.append(("done", w.job, res))
            w.job = None
        return events

    def fetch(self, job, res) -> Optional[bytes]:
        return None  # the worker wrote the file into `partial` itself

    def _replace(self, w: _Worker) -> None:
        w.conn.close()
        self.workers[self.workers.index(w)] = self._new()

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
        for w in self.workers:
            try:
                w.proc.wait(10)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
            w.conn.close()

    def kill(self) -> None:
        for w in self.workers:
            w.proc.kill()
        for w in self.workers:
            w.proc.wait()
            w.conn.close()


if __name__ == "__main__":  # a worker: python -m rigidsim.sweeps.local FD THREADS
    _worker_main(Connection(int(sys.argv[1])), int(sys.argv[2]))
