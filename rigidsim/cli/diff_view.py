"""How `rigidsim diff` shows its report: rich tables on a terminal, plain text lines when piped.

Both show the same things: the two files (and whether either is incomplete), the attributes and options
that differ, one row per field (status, max abs and rel error, where it first differs beyond tolerance,
the tolerance used), the contacts, the notes, and the verdict with its reasons.
"""

from __future__ import annotations

from typing import Any, List, Optional

from rigidsim.diff import ContactsDiff, DiffReport, FieldDiff, geom_text, where_text


def _g(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.3g}"


def _first(r: FieldDiff) -> str:
    f = r.first
    if f is None:
        return "-"
    if "array" in f:
        idx = f"[{', '.join(map(str, f['index']))}]" if f.get("index") else ""
        return f"{f['array']}{idx}: {f['a']!r} vs {f['b']!r}"
    idx = f" [{', '.join(map(str, f['index']))}]" if f.get("index") else ""
    return f"{where_text(f)}{idx}: {f['a']!r} vs {f['b']!r}"


def _shape(r: FieldDiff) -> str:
    if r.shape_a == r.shape_b:
        s = "x".join(map(str, r.shape_a)) if r.shape_a is not None else "-"
    else:
        s = " | ".join("x".join(map(str, x)) if x is not None else "-" for x in (r.shape_a, r.shape_b))
    if r.dtype_a is not None and r.dtype_b is not None and r.dtype_a != r.dtype_b:
        s += f" ({r.dtype_a} | {r.dtype_b})"
    return s


def _file_line(label: str, i) -> str:
    state = "complete" if not i.truncated else (
        f"INCOMPLETE ({i.n_frames} of {i.expected_frames} frames)" if i.expected_frames is not None
        else f"INCOMPLETE ({i.n_frames} frames)")
    extra = f", {i.n_frames} frames" if not i.truncated else ""
    return f"{label}: {i.path} ({state}{extra}, {i.n_envs} envs, rigidsim {i.rigidsim_version})"


def _tol(r) -> str:
    return f"atol {r.atol:g}, rtol {r.rtol:g}"


def _contact_rows(c: ContactsDiff) -> List[List[str]]:
    """(what, value) rows of the contacts table."""
    rows = [["status", c.status], ["matched contacts", str(c.matched)],
            ["without a partner", f"{c.unmatched_a} in A, {c.unmatched_b} in B"]]
    if c.first_unmatched:
        f = c.first_unmatched
        rows.append(["first without a partner", f"{where_text(f)}: {geom_text(f)} in {f['file'].upper()}"])
    rows.append(["(frame, env) with other counts", str(c.count_mismatches)])
    if c.first_count_difference:
        f = c.first_count_difference
        rows.append(["first count difference", f"{where_text(f)}: {f['a']} vs {f['b']}"])
    for q, qd in c.quantities.items():
        first = "" if qd.first is None else f"; first beyond at {where_text(qd.first)}, {geom_text(qd.first)}"
        rows.append([q, f"max abs {_g(qd.max_abs)}, max rel {_g(qd.max_rel)}, {qd.n_beyond} beyond "
                        f"({_tol(qd)}){first}"])
    rows += [["note", n] for n in c.notes]
    return rows


def _verdict(rep: DiffReport) -> str:
    if rep.equal:
        return "EQUAL within tolerance (exit 0)"
    at = f": first difference at frame {rep.first_frame}" if rep.first_frame is not None else ""
    return f"DIFFER (exit 1){at}"


def text_lines(rep: DiffReport) -> List[str]:
    """The report as plain text (stdout is not a terminal)."""
    out = ["rigidsim diff", _file_line("A", rep.a), _file_line("B", rep.b)]
    if rep.options:
        out.append("options that differ (A | B):")
        out += [f"  {o.name}: {o.a!r} | {o.b!r}" for o in rep.options]
    shown = [a for a in rep.attributes if a.name != "options_yaml"]
    if shown:
        out.append("attributes that differ (A | B):")
        out += [f"  {a.name}: {a.a!r} | {a.b!r}" + ("" if a.affects_verdict else "  (note only)") for a in shown]
    out.append("fields:")
    for r in rep.fields:
        out.append(f"  {r.name}: {r.status}; shape {_shape(r)}; max abs {_g(r.max_abs)}, max rel {_g(r.max_rel)}; "
                   f"{r.n_beyond} beyond ({_tol(r)}); first: {_first(r)}")
        out += [f"    note: {n}" for n in r.notes]
        for a in (r.arrays or []):
            out.append(f"    {a['name']}: {a['status']}" + (f", max abs {_g(a['max_abs'])}" if "max_abs" in a else "")
                       + (f" ({a['a']!r} | {a['b']!r})" if "a" in a else ""))
    if rep.contacts is not None:
        out.append("contacts:")
        out += [f"  {k}: {v}" for k, v in _contact_rows(rep.contacts)]
    out += [f"note: {n}" for n in rep.notes]
    out.append(_verdict(rep))
    out += [f"  - {r}" for r in rep.reasons]
    return out


def render(rep: DiffReport, console: Any) -> None:
    """Print the report: rich tables when `console` is a terminal, plain text lines otherwise."""
    if not console.is_terminal:
        import sys

        sys.stdout.write("\n".join(text_lines(rep)) + "\n")
        return
    from rich.table import Table
    from rich.text import Text

    console.print(_file_line("A", rep.a), soft_wrap=True, markup=False)
    console.print(_file_line("B", rep.b), soft_wrap=True, markup=False)
    if rep.options or rep.attributes:
        t = Table(title="attributes and options that differ")
        for c in ("name", "A", "B", "in verdict"):
            t.add_column(c)
        for o in rep.options:
            t.add_row(f"option {o.name}", repr(o.a), repr(o.b), "yes")
        for a in rep.attributes:
            if a.name != "options_yaml":
                t.add_row(a.name, repr(a.a), repr(a.b), "yes" if a.affects_verdict else "note")
        console.print(t)
    t = Table(title="fields")
    for c in ("field", "status", "shape", "max abs", "max rel", "beyond", "first beyond tolerance", "tolerance"):
        t.add_column(c)
    style = {"equal": "green"}
    for r in rep.fields:
        t.add_row(r.name, Text(r.status, style=style.get(r.status, "bold red")), _shape(r), _g(r.max_abs),
                  _g(r.max_rel), str(r.n_beyond), Text(_first(r)), _tol(r))
    console.print(t)
    if rep.contacts is not None:
        c = Table(title="contacts (matched by geom pair per frame and env)")
        c.add_column("")
        c.add_column("")
        for k, v in _contact_rows(rep.contacts):
            c.add_row(k, Text(v))
        console.print(c)
    for n in rep.notes + [n for r in rep.fields for n in r.notes]:
        console.print(Text(f"note: {n}"), soft_wrap=True)
    console.print(Text(_verdict(rep), style="bold green" if rep.equal else "bold red"))
    for r in rep.reasons:
        console.print(Text(f"  - {r}"), soft_wrap=True)
