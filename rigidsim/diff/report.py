"""The report of `rigidsim diff` (its JSON schema: the package's docstring) and its sentences."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

from rigidsim.diff.tolerance import DEFAULT_ATOL, DEFAULT_RTOL
from rigidsim.errors import InputError

SCHEMA = "rigidsim-diff"
SCHEMA_VERSION = 1


@dataclass
class FileInfo:
    path: str
    n_frames: int
    expected_frames: Optional[int]
    complete: bool
    truncated: bool
    n_envs: Optional[int]
    rigidsim_version: Optional[str]


@dataclass
class AttrDiff:
    name: str
    a: Any
    b: Any
    affects_verdict: bool


@dataclass
class OptionDiff:
    name: str
    a: Any
    b: Any


@dataclass
class FieldDiff:
    name: str
    status: str  # equal | differ | only_a | only_b | shapes_differ
    shape_a: Optional[List[int]] = None
    shape_b: Optional[List[int]] = None
    dtype_a: Optional[str] = None
    dtype_b: Optional[str] = None
    frames_compared: Optional[int] = None
    envs_compared: Optional[int] = None
    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    max_abs: Optional[float] = None
    max_rel: Optional[float] = None
    n_beyond: int = 0
    first: Optional[Dict[str, Any]] = None
    notes: List[str] = field(default_factory=list)
    arrays: Optional[List[Dict[str, Any]]] = None  # model only: the arrays that differ


@dataclass
class QuantityDiff:
    atol: float
    rtol: float
    max_abs: float = 0.0
    max_rel: float = 0.0
    n_beyond: int = 0
    first: Optional[Dict[str, Any]] = None


@dataclass
class ContactsDiff:
    status: str  # equal | differ | only_a | only_b
    frames_compared: int = 0
    envs_compared: int = 0
    matched: int = 0
    unmatched_a: int = 0
    unmatched_b: int = 0
    count_mismatches: int = 0
    first_count_difference: Optional[Dict[str, Any]] = None
    first_unmatched: Optional[Dict[str, Any]] = None
    quantities: Dict[str, QuantityDiff] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)


@dataclass
class DiffReport:
    a: FileInfo
    b: FileInfo
    verdict: str
    exit_code: int
    first_frame: Optional[int]
    reasons: List[str]
    tolerance: Dict[str, Any]
    attributes: List[AttrDiff]
    options: List[OptionDiff]
    fields: List[FieldDiff]
    contacts: Optional[ContactsDiff]
    notes: List[str] = field(default_factory=list)
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION

    @property
    def equal(self) -> bool:
        return self.verdict == "equal"

    def to_dict(self) -> Dict[str, Any]:
        d = dataclasses.asdict(self)
        head = {"schema": d.pop("schema"), "schema_version": d.pop("schema_version")}
        return _jsonable({**head, **d})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        return _jsonable(v.item())
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def write_json(report: DiffReport, path: str) -> None:
    """Write the JSON report to `path` ('-': stdout); an unwritable path is an InputError."""
    text = report.to_json()
    if path == "-":
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise InputError(f"cannot write the JSON report ({e.strerror or e}); choose a writable path",
                         where=f"--json {path}") from None


def _show(v: Any) -> str:
    if isinstance(v, str):
        return repr(v) if len(v) < 70 else repr(v[:64] + "...")
    return str(v)


def where_text(first: Mapping[str, Any]) -> str:
    """'frame 3, env 1' (+ ', t = 0.006')."""
    parts = [f"frame {first['frame']}"]
    if first.get("env") is not None:
        parts.append(f"env {first['env']}")
    if first.get("time") is not None:
        parts.append(f"t = {first['time']:.6g}")
    return ", ".join(parts)


def geom_text(first: Mapping[str, Any]) -> str:
    """A contact's geom pair: 'floor/box3 (geoms 0, 4)' with the file's geom names ('#5' for an unnamed
    geom), 'geoms (0, 4)' without them."""
    g = first["geom"]
    names = first.get("geom_names")
    if not names:
        return f"geoms ({', '.join(map(str, g))})"
    return "/".join(n or f"#{i}" for n, i in zip(names, g)) + f" (geoms {', '.join(map(str, g))})"


def _field_reason(r: FieldDiff) -> str:
    if r.status in ("only_a", "only_b"):
        return f"{r.name}: only in {'A' if r.status == 'only_a' else 'B'}"
    if r.status == "shapes_differ":
        return f"{r.name}: shapes differ ({r.shape_a} vs {r.shape_b})"
    if r.name == "model":
        names = ", ".join(a["name"] for a in (r.arrays or [])[:6])
        more = "" if len(r.arrays or []) <= 6 else f" and {len(r.arrays) - 6} more"
        return f"model: {names}{more} differ"
    parts = []
    if r.first is not None:
        idx = f" [{', '.join(map(str, r.first['index']))}]" if r.first.get("index") else ""
        parts.append(f"differs beyond tolerance from {where_text(r.first)}{idx}: {r.first['a']!r} vs "
                     f"{r.first['b']!r} (max abs error {r.max_abs:.3g})")
    parts += [n for n in r.notes if n.startswith(("frames differ", "envs differ"))]
    return f"{r.name}: " + "; ".join(parts)


def _contacts_reason(c: ContactsDiff) -> str:
    if c.status in ("only_a", "only_b"):
        return f"contacts: only in {'A' if c.status == 'only_a' else 'B'}"
    parts = []
    if c.first_count_difference:
        f = c.first_count_difference
        parts.append(f"counts differ at {c.count_mismatches} (frame, env) from {where_text(f)}: {f['a']} vs {f['b']}")
    if c.first_unmatched:
        f = c.first_unmatched
        parts.append(f"{c.unmatched_a} contacts of A and {c.unmatched_b} of B have no partner (geom pair), first at "
                     f"{where_text(f)}: {geom_text(f)} in {f['file'].upper()}")
    for q, qd in c.quantities.items():
        if qd.first is not None:
            parts.append(f"{q} beyond tolerance from {where_text(qd.first)} ({geom_text(qd.first)}; "
                         f"max abs error {qd.max_abs:.3g})")
    parts += [n for n in c.notes if n.startswith(("frames differ", "envs differ"))]
    return "contacts: " + "; ".join(parts)
