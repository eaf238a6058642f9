"""How `rigidsim sweep` shows itself: a progress bar on a terminal (a line per job when piped), then a table
of the jobs (plain lines when piped) and a verdict line."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from rigidsim.sweeps.grid import overrides_text


def difference_text(e: Dict[str, Any]) -> str:
    d = e.get("diff")
    if d is None:
        return ""
    if d == "missing":
        return "missing: the baseline has no file of this id"
    f = e.get("first_difference")
    if d != "differs" or not f:
        return d
    where = [f"field {f['field']}"] if f.get("field") else []
    if f.get("frame") is not None:
        where.append(f"frame {f['frame']}")
    if f.get("env") is not None:
        where.append(f"env {f['env']}")
    text = f.get("text") or ""
    if not where:
        return f"differs: {text}" if text else "differs"
    return f"differs: {', '.join(where)}" + (f" ({text})" if text else "")


def job_line(e: Dict[str, Any]) -> str:
    """One job as a plain line: status, file, what it ran, time, rate, baseline verdict, message."""
    parts = [f"{e['status']:<6}", e["file"], f"{e['scene']} seed {e['seed']}"]
    if e.get("overrides"):
        parts.append(overrides_text(e["overrides"]))
    if e.get("seconds") is not None:
        parts.append(f"{e['seconds']:.2f} s")
    if e.get("env_steps_per_s"):
        parts.append(f"{e['env_steps_per_s']:,.0f} env-steps/s")
    if e.get("diff"):
        parts.append(difference_text(e))
    if e.get("message"):
        parts.append(e["message"])
    return "  ".join(parts)


def table(report):
    from rich.table import Table

    base = report.baseline is not None
    t = Table(title=f"rigidsim sweep: {len(report.jobs)} jobs in {report.out} ({report.workers})", title_justify="left")
    for col in ("status", "file", "scene", "seed", "overrides", "s", "env-steps/s", "node"):
        t.add_column(col, justify="right" if col in ("seed", "s", "env-steps/s") else "left", overflow="fold")
    if base:
        t.add_column("baseline", overflow="fold")
    for e in report.jobs:
        color = {"ok": "green", "failed": "red", "error": "red"}.get(e["status"], "")
        row = [f"[{color}]{e['status']}[/]" if color else e["status"], e["file"], e["scene"], str(e["seed"]),
               overrides_text(e.get("overrides") or {}),
               "" if e.get("seconds") is None else f"{e['seconds']:.2f}",
               f"{e['env_steps_per_s']:,.0f}" if e.get("env_steps_per_s") else "", _node(e.get("node"))]
        if base:
            d = difference_text(e)
            row.append(f"[green]{d}[/]" if d == "equal" else f"[red]{d}[/]")
        t.add_row(*row)
    return t


def _node(node: Optional[str]) -> str:
    return "" if not node else node if len(node) <= 16 else node[:12] + "…"


def verdict(report) -> str:
    c = report.counts()
    parts = [f"{c['ok']} ok"] + [f"{c[k]} {k}" for k in ("failed", "error") if c[k]]
    if c["skipped"]:
        parts.append(f"{c['skipped']} done before (--resume)")
    if report.baseline is not None:
        parts.append(f"against {report.baseline}: {c['equal']} equal, {c['differs']} differ, {c['missing']} missing")
    head = "PASS" if report.exit_code == 0 else "FAIL"
    return f"{head}: {c['jobs']} jobs, " + ", ".join(parts) + f" in {report.seconds:.1f} s (exit {report.exit_code})"


def problems(report) -> List[str]:
    """The lines of the jobs that failed, could not run or differ (shown with --quiet too)."""
    return [job_line(e) for e in report.jobs
            if e["status"] != "ok" or (report.baseline is not None and e.get("diff") != "equal")]
