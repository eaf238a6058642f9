"""The stage table, the notes and the one-line verdict of `rigidsim compare`, and its JSON form."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List

from rigidsim.compare.stages import Comparison, Stage


def _num(x: float) -> str:
    if math.isinf(x):
        return "mismatch"
    if math.isnan(x):
        return "nan"
    return f"{x:.3g}"


def _error(s: Stage) -> str:
    if s.name == "model":
        return f"{int(s.error)} fields differ" if s.error else "0 fields differ"
    return _num(s.error)


def _tol(s: Stage) -> str:
    return "0 (ints exact; floats 1e-9, masses rtol 1e-6)" if s.name == "model" else f"{s.tol:g}"


def header(c: Comparison) -> List[str]:
    compat = ("enable_mujoco_compatibility: true (set by compare: MuJoCo's semantics)" if c.compat_default else
              f"enable_mujoco_compatibility: {str(c.compat).lower()} (from your options)")
    return [f"rigidsim vs MuJoCo: {c.scene}, {c.steps} steps from {c.start}, {c.envs} env"
            f"{'s' if c.envs > 1 else ''}; {compat}"]


def rows(c: Comparison) -> List[List[str]]:
    return [[f"{s.number} {s.name}", s.what, _error(s), _tol(s), "pass" if s.ok else "FAIL",
             s.detail if (not s.ok or s.error) else ""] for s in c.stages]


COLUMNS = ("stage", "compared", "max error", "tolerance", "result", "largest at")


def table(c: Comparison):
    """The stage table as a rich Table (the CLI prints it as plain text when stdout is not a terminal)."""
    from rich.table import Table

    t = Table(title=header(c)[0], show_header=True, title_justify="left")
    for col in COLUMNS:
        t.add_column(col, overflow="fold")
    for r in rows(c):
        style = None if r[4] == "pass" else "bold red"
        t.add_row(*r, style=style)
    return t


def plain(c: Comparison) -> str:
    """The stage table as text, one stage a line (for pipes and files)."""
    lines = header(c)
    for r in rows(c):
        lines.append("  " + " | ".join(x for x in r if x))
    return "\n".join(lines)


def verdict(c: Comparison) -> str:
    bad = c.first_failure()
    if bad is None:
        return f"rigidsim matches MuJoCo on {c.scene} ({len(c.stages)} stages)"
    if bad.name == "model":
        line = f"rigidsim differs from MuJoCo at stage 1 (model): {_error(bad)}; first {bad.detail}"
    else:
        line = (f"rigidsim differs from MuJoCo at stage {bad.number} ({bad.name}): max error {_error(bad)} > "
                f"{_tol(bad)}" + (f" ({bad.detail})" if bad.detail else ""))
    if not c.compat:
        line += ("; enable_mujoco_compatibility is false, so rigidsim follows Genesis's conventions and a "
                 "difference is expected")
    return line


def to_json(c: Comparison) -> Dict[str, Any]:
    def num(x):
        return None if math.isnan(x) else ("inf" if math.isinf(x) else x)

    return {"scene": c.scene, "steps": c.steps, "envs": c.envs, "start": c.start,
            "enable_mujoco_compatibility": c.compat, "passed": c.ok, "verdict": verdict(c), "notes": c.notes,
            "stages": [{"stage": s.number, "name": s.name, "compared": s.what, "max_error": num(s.error),
                        "tolerance": s.tol, "passed": s.ok, "detail": s.detail} for s in c.stages]}


def write_json(c: Comparison, path: str) -> None:
    with open(path, "w") as f:
        json.dump(to_json(c), f, indent=2)
        f.write("\n")
