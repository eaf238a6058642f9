"""`rigidsim sweep`: many runs (scenes x seeds x option overrides) on this machine or a Ray cluster, one
command, one manifest, one exit status (docs/SPEC.md, "Sweeps").

    import rigidsim
    report = rigidsim.sweep("grid.yaml", out="runs/", baseline="runs-main/")
    report.exit_code                      # 0 all ran and equal the baseline, 1 a job failed or differs

The grid file is read and checked whole, every scene loaded, before any job starts (`grid`). Each job is
`rigidsim run`'s own code in a long-lived worker (`job`): a process of the local pool (`local`, default) or
an actor on a Ray cluster (`ray_backend`). Its file is written under ``DIR/.partial`` and renamed into DIR
once whole, by the driver; ``DIR/manifest.jsonl`` gets its line as it ends. With a baseline folder each
finished file is compared with the baseline's file of the same name by `rigidsim diff`'s code. Ctrl-C or
SIGTERM ends the workers, removes ``DIR/.partial`` (no partial file is left) and exits 130 or 143; the
manifest then lists what finished, and `resume` runs only the rest.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

from rigidsim.errors import InputError
from rigidsim.sweeps.grid import Grid, Job, load as load_grid

__all__ = ["sweep", "SweepReport", "BACKENDS"]

BACKENDS = ("local", "ray")
MANIFEST = "manifest.jsonl"
PARTIAL = ".partial"
SCHEMA = "rigidsim-sweep"


class Terminated(Exception):
    """SIGTERM reached the driver."""


@dataclasses.dataclass
class SweepReport:
    out: Path
    backend: str
    workers: str
    jobs: List[Dict[str, Any]]  # one manifest entry per job of the grid, in the grid's order
    baseline: Optional[str]
    seconds: float
    exit_code: int
    interrupted: bool = False
    skipped: int = 0  # jobs done before (--resume)

    def counts(self) -> Dict[str, int]:
        c = {"jobs": len(self.jobs), "ok": 0, "failed": 0, "error": 0, "not_run": 0, "skipped": self.skipped}
        for j in self.jobs:
            c[j.get("status", "not_run")] = c.get(j.get("status", "not_run"), 0) + 1
        if self.baseline is not None:
            for k in ("equal", "differs", "missing"):
                c[k] = sum(1 for j in self.jobs if j.get("diff") == k)
        return c

    def to_json(self) -> Dict[str, Any]:
        return {"schema": SCHEMA, "schema_version": 1, "out": str(self.out), "backend": self.backend,
                "workers": self.workers, "baseline": self.baseline, "seconds": round(self.seconds, 3),
                "exit_code": self.exit_code, "interrupted": self.interrupted, "counts": self.counts(),
                "jobs": self.jobs}


def _make_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, expected a folder for the sweep's files", where="--out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make the folder {out}: {e.strerror}", where="--out") from None
    if not os.access(out, os.W_OK):
        raise InputError(f"cannot write into {out}: the folder is read-only", where="--out")


def read_manifest(out: Path) -> Dict[str, Dict[str, Any]]:
    """The last line of each job id in DIR's manifest (a line cut by a kill is skipped)."""
    lines: Dict[str, Dict[str, Any]] = {}
    p = out / MANIFEST
    if not p.is_file():
        return lines
    for text in p.read_text(errors="replace").splitlines():
        try:
            d = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(d, dict) and isinstance(d.get("id"), str):
            lines[d["id"]] = d
    return lines


def _append(out: Path, entry: Dict[str, Any]) -> None:
    with open(out / MANIFEST, "a") as f:
        f.write(json.dumps(entry, sort_keys=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def first_difference(report) -> Optional[Dict[str, Any]]:
    """The earliest difference of a `rigidsim diff` report: {field, frame, env, text}."""
    best = None
    for r in report.fields:
        if r.status == "equal":
            continue
        frame = r.first.get("frame") if r.first else None
        cand = {"field": r.name, "frame": frame, "env": r.first.get("env") if r.first else None}
        if best is None or (frame is not None and (best["frame"] is None or frame < best["frame"])):
            best = cand
    c = report.contacts
    if c is not None and c.status != "equal":
        firsts = [f for f in [c.first_count_difference, c.first_unmatched] + [q.first for q in c.quantities.values()]
                  if f is not None]
        if firsts:
            f = min(firsts, key=lambda f: f["frame"])
            if best is None or best["frame"] is None or f["frame"] < best["frame"]:
                best = {"field": "contacts", "frame": f["frame"], "env": f.get("env")}
    if best is None:
        best = {"field": None, "frame": None, "env": None}
    best["text"] = report.reasons[0] if report.reasons else ""
    if best["field"] is not None:
        best["text"] = next((t for t in report.reasons if best["field"] in t), best["text"])
    return best


def compare(path: Path, base: Path, rtol: Iterable[str], atol: Iterable[str]) -> Dict[str, Any]:
    """{diff: equal | differs | missing, first_difference} of a job's file against the baseline's."""
    if not base.is_file():
        return {"diff": "missing", "first_difference": None}
    if not path.is_file():
        return {"diff": "differs", "first_difference": {"field": None, "frame": None, "env": None,
                                                       "text": "the job wrote no file"}}
    from rigidsim.diff import diff_files

    try:
        rep = diff_files(str(path), str(base), rtol=rtol, atol=atol)
    except InputError as e:
        return {"diff": "differs", "first_difference": {"field": None, "frame": None, "env": None, "text": str(e)}}
    if rep.exit_code == 0:
        return {"diff": "equal", "first_difference": None}
    return {"diff": "differs", "first_difference": first_difference(rep)}


def _check_args(backend: str, jobs: Optional[int], threads: int, retries: int, baseline, out, rtol, atol) -> None:
    if backend not in BACKENDS:
        raise InputError(f"--backend must be one of {', '.join(BACKENDS)}, got '{backend}'", where="--backend")
    if jobs is not None and (isinstance(jobs, bool) or int(jobs) < 1):
        raise InputError(f"--jobs must be at least 1, got {jobs}", where="--jobs")
    if int(threads) < 1:
        raise InputError(f"--threads-per-job must be at least 1, got {threads}", where="--threads-per-job")
    if int(retries) < 0:
        raise InputError(f"--retries must be 0 or more, got {retries}", where="--retries")
    if baseline is not None and not Path(baseline).is_dir():
        raise InputError(f"the baseline folder {baseline} does not exist", where="--baseline")
    if baseline is not None and Path(out).exists() and Path(baseline).resolve() == Path(out).resolve():
        raise InputError(f"--baseline {baseline} is the sweep's own --out folder: each file would be compared "
                         f"with itself. Write the sweep to another folder", where="--baseline")
    from rigidsim.diff.tolerance import _parse_tol

    _parse_tol(rtol, "--rtol", 0.0)
    _parse_tol(atol, "--atol", 0.0)


def _entry(job: Job, res: Dict[str, Any], attempts: int) -> Dict[str, Any]:
    e = {"id": job.id, "scene": job.scene.name, "seed": job.seed, "overrides": job.overrides, "file": job.file,
         "status": res["status"], "exit": res["exit"], "seconds": res.get("seconds"),
         "env_steps_per_s": res.get("env_steps_per_s"), "node": res.get("node")}
    if res.get("message"):
        e["message"] = res["message"]
    if attempts > 1:
        e["attempts"] = attempts
    return e


def sweep(grid: str | Path | Mapping[str, Any], out: str | Path, *, backend: str = "local",
          address: Optional[str] = None, jobs: Optional[int] = None, threads_per_job: int = 1,
          baseline: Optional[str | Path] = None, rtol: Iterable[str] = (), atol: Iterable[str] = (),
          resume: bool = False, retries: int = 2, base: Optional[str | Path] = None,
          progress: Optional[Callable[[int, int, Dict[str, Any]], None]] = None,
          started: Optional[Callable[[str, int, int], None]] = None) -> SweepReport:
    """Run every job of `grid` (a grid file's path, or its mapping with paths relative to `base`) into the
    folder `out`; see the module docstring. `progress(done, total, entry)` after each job, `started(workers,
    to_run, skipped)` once the workers are up. Bad input raises InputError before any job starts;
    KeyboardInterrupt and `Terminated` propagate after the workers are ended and the partial files removed."""
    t0 = time.perf_counter()
    rtol, atol = [str(x) for x in rtol], [str(x) for x in atol]
    _check_args(backend, jobs, threads_per_job, retries, baseline, out, rtol, atol)
    g: Grid = load_grid(grid, Path(base) if base is not None else None)
    out = Path(out)
    _make_out(out)
    done_before = read_manifest(out) if resume else {}
    skip = {j.id: done_before[j.id] for j in g.jobs if j.id in done_before
            and done_before[j.id].get("status") in ("ok", "failed") and (out / j.file).is_file()}
    todo = [j for j in g.jobs if j.id not in skip]
    base_dir = Path(baseline) if baseline is not None else None
    results: Dict[str, Dict[str, Any]] = {}
    for job in g.jobs:
        if job.id in skip:
            e = results[job.id] = dict(skip[job.id])
            if base_dir is not None:
                e.update(compare(out / job.file, base_dir / job.file, rtol, atol))

    partial = out / PARTIAL
    shutil.rmtree(partial, ignore_errors=True)
    if not resume and (out / MANIFEST).exists():
        (out / MANIFEST).unlink()
    partial.mkdir()
    threads = int(threads_per_job)
    pool = None
    interrupted = False
    old_term = None
    try:
        try:
            old_term = signal.signal(signal.SIGTERM, _on_term)
        except ValueError:  # not the main thread
            pass
        if todo:
            if backend == "ray":
                from rigidsim.sweeps.ray_backend import RayPool

                pool = RayPool(address, jobs, threads, {s.sha256: s.model for s in g.scenes
                                                        if any(j.scene is s for j in todo)})
            else:
                from rigidsim.sweeps.local import LocalPool, cores

                n = jobs if jobs is not None else max(1, cores() // threads)
                pool = LocalPool(min(n, len(todo)), threads, partial)
        workers = pool.describe() if pool is not None else "none (every job was done)"
        if started is not None:
            started(workers, len(todo), len(skip))
        _drive(g, pool, todo, results, out, partial, base_dir, rtol, atol, int(retries), progress)
    except (KeyboardInterrupt, Terminated):
        interrupted = True
        if pool is not None:
            pool.kill()
            pool = None
        shutil.rmtree(partial, ignore_errors=True)
        raise
    finally:
        if pool is not None:
            pool.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if not interrupted:
            shutil.rmtree(partial, ignore_errors=True)
    entries = [results[j.id] for j in g.jobs]
    bad = any(e["status"] != "ok" for e in entries) or (
        base_dir is not None and any(e.get("diff") != "equal" for e in entries))
    return SweepReport(out=out, backend=backend, workers=workers, jobs=entries,
                       baseline=None if base_dir is None else str(base_dir), seconds=time.perf_counter() - t0,
                       exit_code=1 if bad else 0, skipped=len(skip))


def _on_term(signum, frame):
    raise Terminated()


def _drive(g: Grid, pool, todo: List[Job], results: Dict[str, Dict[str, Any]], out: Path, partial: Path,
           base_dir: Optional[Path], rtol, atol, retries: int, progress) -> None:
    """Hand the jobs to the pool's idle workers and record each as it ends."""
    from rigidsim.sweeps.job import spec

    pending = deque(todo)
    attempts: Dict[str, int] = {}
    running = 0
    total, finished = len(g.jobs), len(g.jobs) - len(todo)
    while pending or running:
        while pending and pool.idle():
            job = pending.popleft()
            attempts[job.id] = attempts.get(job.id, 0) + 1
            pool.start(job, spec(g, job))
            running += 1
        if running == 0 and pending and getattr(pool, "stuck", lambda: False)():
            res = {"status": "error", "exit": 1, "message": "no worker is left in the Ray cluster to run it"}
            while pending:
                job = pending.popleft()
                finished += 1
                results[job.id] = _record(job, res, attempts.get(job.id, 0), out, partial, base_dir, rtol, atol, pool)
                if progress is not None:
                    progress(finished, total, results[job.id])
            break
        for kind, job, res in pool.poll(0.25):
            running -= 1
            if kind == "lost" and attempts[job.id] <= retries:
                pending.appendleft(job)  # run again first: the other jobs keep their order
                continue
            if kind != "done":
                res = {"status": "error", "exit": 1, "message": res}
            finished += 1
            results[job.id] = _record(job, res, attempts[job.id], out, partial, base_dir, rtol, atol, pool)
            if progress is not None:
                progress(finished, total, results[job.id])


def _record(job: Job, res: Dict[str, Any], attempts: int, out: Path, partial: Path, base_dir: Optional[Path],
            rtol, atol, pool) -> Dict[str, Any]:
    """Move a finished job's file into DIR, add its manifest line (with the baseline's verdict)."""
    target, tmp = out / job.file, partial / job.file
    data = pool.fetch(job, res) if pool is not None else None
    if data is not None:
        tmp.write_bytes(data)
    if tmp.is_file():
        os.replace(tmp, target)
    elif target.exists():  # an error left no file: an older file of this id is not this run's
        target.unlink()
    res.pop("has_file", None)
    e = _entry(job, res, attempts)
    if base_dir is not None:
        e.update(compare(target, base_dir / job.file, rtol, atol))
    _append(out, e)
    return e
