"""Compare two trajectory files (`rigidsim diff A B`): the regression check a CI job runs.

`diff_files` reads both files field by field (numpy and h5py only: no engine, so the command starts fast)
and returns a `DiffReport`; the command line renders it and `DiffReport.to_json` writes it (schema below).

What is compared
----------------
* Every dataset present in either file (``--fields`` narrows this): ``time``, ``qpos``, ``qvel``, ... and any
  dataset a later format version adds. Axis 0 is the frame and axis 1 the env; the frames (and envs) common
  to both files are compared value by value, in blocks of frames so memory stays bounded whatever the file
  size. A different number of frames or envs is a difference; so is a field that one file lacks. Values are
  compared as float64, so a float32 file can be compared with a float64 one (the dtypes are reported).
* ``contacts``: per frame and env, contacts are matched by their (geom a, geom b) pair, as recorded. Several
  contacts of one pair are matched greedily by nearest position: the closest two first, then the closest two
  of the rest, ... (ties: in file order). Reported: the (frame, env) where the contact counts differ,
  contacts of one file without a partner in the other, and the largest position, normal, force and
  penetration errors over the matched contacts.
* ``model``: the /model group, array by array (and its size attributes), as one entry.
* The root attributes. ``options_yaml`` is compared option by option (each file's YAML parsed), naming the
  options that differ. Differences in `VERDICT_ATTRS` (what was simulated: the options, the scene's
  content, dt, envs, steps, recording, a run that did not finish) make the verdict "differ"; the others
  (`NOTE_ATTRS`: rigidsim version, the scene's path as given, precision, backend, seed, and any attribute this
  version does not know) are reported as notes only, since the data shows whether they changed the result.
  `VOLATILE_ATTRS` (attributes that differ between two runs of one command) are not compared: none today.

Tolerance
---------
As numpy.isclose with A's value ``a`` and B's value ``b``: a value differs when ``|a - b| > atol + rtol*|b|``.
NaN equals NaN and an infinity equals the same infinity; anything else against a NaN or an infinity differs.
The defaults are ``rtol = atol = 0``: rigidsim is deterministic, so two runs of one command on one machine
give bit-for-bit equal files, and any difference is worth a look. ``--atol 1e-9`` sets the default of every
field; ``--atol qpos=1e-9`` one field's; a contact quantity may be named alone (``--atol contacts.force=1e-6``)
and falls back to ``contacts``. The relative error reported is ``|a - b| / |b|`` over the values where b is
a non-zero number.

Exit code: 0 equal within tolerance, 1 differ, 2 bad input (`InputError`: a file missing, not HDF5,
truncated or damaged, not a rigidsim trajectory, of a newer format_version; an unknown field name).

JSON report (``schema: "rigidsim-diff"``, ``schema_version: 1``)
-----------------------------------------------------------------
``verdict`` "equal" | "differ"; ``exit_code`` 0 | 1; ``first_frame`` the first frame where values (or
contacts) differ beyond tolerance, or null; ``reasons`` the differences as sentences; ``a``, ``b``: per
file ``path``, ``n_frames`` (frames held), ``expected_frames``, ``complete``, ``truncated`` (not complete, or
fewer frames than its n_steps and record_every imply), ``n_envs``, ``rigidsim_version``; ``tolerance``
``{rtol, atol, fields: {NAME: {rtol, atol}}}``; ``attributes`` ``[{name, a, b, affects_verdict}]`` (those that
differ); ``options`` ``[{name, a, b}]`` (options in force that differ; null on a side that lacks it);
``fields`` ``[{name, status, shape_a, shape_b, dtype_a, dtype_b, frames_compared, envs_compared, atol, rtol,
max_abs, max_rel, n_beyond, first, notes, arrays}]`` where status is "equal", "differ", "only_a", "only_b"
or "shapes_differ" (not comparable: only the shapes are reported) and ``first`` is
``{frame, env, index, time, a, b}`` (``model``: ``{array, index, a, b}``; ``arrays`` lists the model arrays
that differ); ``contacts`` null when neither file holds contacts or they are not selected, else
``{status, frames_compared, envs_compared, matched, unmatched_a, unmatched_b, count_mismatches,
first_count_difference: {frame, env, time, a, b}, first_unmatched: {frame, env, time, geom, file},
quantities: {position|normal|force|penetration: {atol, rtol, max_abs, max_rel, n_beyond,
first: {frame, env, time, geom, a, b}}}, notes}``. Non-finite numbers are written as the strings "inf",
"-inf" and "nan". Later versions only add keys.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import h5py
import numpy as np

from rigidsim.errors import InputError
from rigidsim.trajectory import FORMAT, FORMAT_VERSION, RECORDABLE, expected_frames

SCHEMA = "rigidsim-diff"
SCHEMA_VERSION = 1
DEFAULT_RTOL = 0.0
DEFAULT_ATOL = 0.0

# root attributes whose difference alone makes the verdict "differ": what was simulated
VERDICT_ATTRS = ("options_yaml", "scene_sha256", "dt", "n_envs", "n_steps", "record_every", "complete", "n_frames")
# reported, but not a difference by themselves: how and where it was computed
NOTE_ATTRS = ("rigidsim_version", "scene", "precision", "backend", "seed", "format_version", "format")
# attributes that differ between two runs of one command (a timestamp): never compared. None today.
VOLATILE_ATTRS: Tuple[str, ...] = ()

CONTACT_QUANTITIES = ("position", "normal", "force", "penetration")
SPECIAL_GROUPS = ("contacts", "model")

_BLOCK_BYTES = 8 << 20  # float64 bytes of one field read at once, per file (a few temporaries of this size)
_CONTACT_ROWS = 1 << 20  # contact rows read at once, per file


# ---------------------------------------------------------------------------------------------- the report
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


# ---------------------------------------------------------------------------------------------- reading
def _py(v: Any) -> Any:
    """An attribute value as plain Python (str, int, float, bool, list)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [_py(x) for x in v.tolist()] if v.ndim else _py(v.item())
    if isinstance(v, np.generic):
        return v.item()
    return v


class _File:
    """One trajectory file, opened read-only and checked; every read names the file when it fails."""

    def __init__(self, path: str, label: str):
        self.path, self.label = str(path), label
        p = Path(path)
        if not p.exists():
            raise InputError("no such file; expected a trajectory file written by `rigidsim run`", where=self.path)
        if p.is_dir():
            raise InputError("is a directory; expected a trajectory file written by `rigidsim run`", where=self.path)
        try:
            hdf5 = h5py.is_hdf5(self.path)
        except OSError as e:
            raise InputError(f"cannot be read ({e.strerror or e})", where=self.path) from None
        if not hdf5:
            raise InputError("is not an HDF5 file; expected a trajectory file written by `rigidsim run`",
                             where=self.path)
        try:
            self.f = h5py.File(self.path, "r")
        except OSError as e:
            raise InputError(f"is an HDF5 file that cannot be read: it is truncated or damaged, or still being "
                             f"written (h5py: {e})",
                             where=self.path) from None
        try:
            self.attrs = {k: _py(v) for k, v in self.f.attrs.items()}
        except (OSError, RuntimeError, KeyError, ValueError) as e:
            self.close()
            raise InputError(f"its attributes cannot be read: the file is truncated or damaged (h5py: {e})",
                             where=self.path) from None
        if self.attrs.get("format") != FORMAT:
            self.close()
            raise InputError(f"is an HDF5 file but not a rigidsim trajectory (its root has no format = "
                             f"'{FORMAT}' attribute); expected a file written by `rigidsim run`", where=self.path)
        ver = self.attrs.get("format_version")
        if not isinstance(ver, int) or isinstance(ver, bool):
            self.close()
            raise InputError(f"is not a valid rigidsim trajectory: format_version is {ver!r}, expected an integer",
                             where=self.path)
        if ver > FORMAT_VERSION:
            self.close()
            raise InputError(f"has format_version {ver}, written by a newer rigidsim; this rigidsim reads "
                             f"format_version {FORMAT_VERSION} and older: upgrade rigidsim to compare it",
                             where=self.path)
        self.datasets = self._walk()
        self.B = self._int_attr("n_envs")
        self.T = self._frames()

    def _walk(self) -> Dict[str, h5py.Dataset]:
        """Every dataset outside /contacts and /model, by its path without the leading '/'."""
        out: Dict[str, h5py.Dataset] = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in SPECIAL_GROUPS:
                out[name] = obj

        try:
            self.f.visititems(visit)
        except (OSError, RuntimeError, KeyError) as e:
            raise self.damaged("its layout", e) from None
        return out

    def _int_attr(self, k: str) -> Optional[int]:
        v = self.attrs.get(k)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def _frames(self) -> int:
        if "time" in self.datasets and self.datasets["time"].ndim == 1:
            return int(self.datasets["time"].shape[0])
        return self._int_attr("n_frames") or 0

    def damaged(self, what: str, e: BaseException) -> InputError:
        return InputError(f"cannot read {what}: the file is truncated or damaged (h5py: {e})", where=self.path)

    def read(self, ds: h5py.Dataset, sel=()) -> np.ndarray:
        try:
            return np.asarray(ds[sel])
        except (OSError, RuntimeError, KeyError, ValueError) as e:
            raise self.damaged(ds.name, e) from None

    def info(self) -> FileInfo:
        a = self.attrs
        n_steps, every = self._int_attr("n_steps"), self._int_attr("record_every")
        expect = expected_frames(n_steps, every) if n_steps is not None and every and every > 0 else None
        complete = bool(a.get("complete", False))
        truncated = (not complete) or (expect is not None and self.T < expect)
        return FileInfo(path=self.path, n_frames=self.T, expected_frames=expect, complete=complete,
                        truncated=truncated, n_envs=self.B, rigidsim_version=a.get("rigidsim_version"))

    def close(self) -> None:
        try:
            self.f.close()
        except Exception:
            pass


# ---------------------------------------------------------------------------------------------- tolerances
def _float(text: str, flag: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v < 0:
        raise InputError(f"expected a non-negative number, got '{text}'", where=flag)
    return v


def _parse_tol(args: Iterable[str], flag: str, default: float) -> Tuple[float, Dict[str, float]]:
    """`--atol 1e-9` (the default of every field) and `--atol qpos=1e-9` (one field), repeatable and
    comma-separable; the last value given for a name wins."""
    per: Dict[str, float] = {}
    for arg in args:
        for item in str(arg).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, _, val = item.partition("=")
                name = name.strip()
                if not name:
                    raise InputError(f"expected FIELD=VALUE or VALUE, got '{item}'", where=flag)
                per[name] = _float(val.strip(), f"{flag} {name}")
            else:
                default = _float(item, flag)
    return default, per


@dataclass
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    rtols: Dict[str, float] = field(default_factory=dict)
    atols: Dict[str, float] = field(default_factory=dict)

    def of(self, name: str) -> Tuple[float, float]:
        """(atol, rtol) of a field: its own, else its parent's ('contacts.force' -> 'contacts'), else the default."""
        def pick(per: Mapping[str, float], dflt: float) -> float:
            for key in (name, name.split(".")[0]):
                if key in per:
                    return per[key]
            return dflt

        return pick(self.atols, self.atol), pick(self.rtols, self.rtol)

    def as_dict(self) -> Dict[str, Any]:
        names = sorted(set(self.rtols) | set(self.atols))
        return {"rtol": self.rtol, "atol": self.atol,
                "fields": {n: {"rtol": self.of(n)[1], "atol": self.of(n)[0]} for n in names}}


def _check_names(names: Iterable[str], known: Sequence[str], flag: str) -> None:
    for n in names:
        if n not in known:
            close = difflib.get_close_matches(n, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise InputError(f"unknown field '{n}'; {hint}the fields are {', '.join(known)}", where=flag)


# ---------------------------------------------------------------------------------------------- values
def _errors(a: np.ndarray, b: np.ndarray, atol: float, rtol: float):
    """Elementwise |a - b| (inf where one is NaN or they are different infinities), the relative error
    |a - b| / |b| (0 where b is zero or not finite) and the mask of values beyond atol + rtol*|b|."""
    with np.errstate(all="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        d = np.where(same, 0.0, np.abs(a - b))
        d = np.where(np.isnan(d), np.inf, d)
        nz = (b != 0) & np.isfinite(b)
        rel = np.where(nz, d / np.where(nz, np.abs(b), 1.0), 0.0)
        finite = np.isfinite(a) & np.isfinite(b)
        beyond = ~same & (~finite | (d > atol + rtol * np.abs(b)))
    return d, rel, beyond


def _max(x: np.ndarray) -> float:
    return float(x.max()) if x.size else 0.0


def _is_text(ds: h5py.Dataset) -> bool:
    return ds.dtype.kind in "OSUV" or h5py.check_string_dtype(ds.dtype) is not None


def _num(v: Any) -> Any:
    return _py(v) if not isinstance(v, (float, np.floating)) else float(v)


class _Comparison:
    """One comparison of two open files."""

    def __init__(self, fa: _File, fb: _File, tol: Tolerance):
        self.fa, self.fb, self.tol = fa, fb, tol
        self._time = None

    def time_at(self, frame: int) -> Optional[float]:
        """A's time of a frame (B's when A lacks it), for the report."""
        for f in (self.fa, self.fb):
            ds = f.datasets.get("time")
            if ds is not None and ds.ndim == 1 and frame < ds.shape[0]:
                return float(f.read(ds, frame))
        return None

    # ---- one dataset with a frame axis
    def field(self, name: str) -> FieldDiff:
        da, db = self.fa.datasets.get(name), self.fb.datasets.get(name)
        atol, rtol = self.tol.of(name)
        if da is None or db is None:
            ds = da if da is not None else db
            return FieldDiff(name, "only_a" if da is not None else "only_b",
                             shape_a=list(da.shape) if da is not None else None,
                             shape_b=list(db.shape) if db is not None else None,
                             dtype_a=str(da.dtype) if da is not None else None,
                             dtype_b=str(db.dtype) if db is not None else None, atol=atol, rtol=rtol,
                             notes=[f"only {'A' if da is not None else 'B'} holds {name} {list(ds.shape)}"])
        r = FieldDiff(name, "equal", shape_a=list(da.shape), shape_b=list(db.shape), dtype_a=str(da.dtype),
                      dtype_b=str(db.dtype), atol=atol, rtol=rtol)
        if r.dtype_a != r.dtype_b:
            r.notes.append(f"dtypes differ: {r.dtype_a} vs {r.dtype_b} (values compared as float64)")
        sa, sb = tuple(da.shape), tuple(db.shape)
        if _is_text(da) or _is_text(db):
            if sa != sb or _is_text(da) != _is_text(db):
                r.status = "shapes_differ"
                return r
            eq = np.array_equal(self.fa.read(da), self.fb.read(db))
            r.status, r.n_beyond = ("equal", 0) if eq else ("differ", 1)
            return r
        if len(sa) != len(sb) or sa[2:] != sb[2:] or len(sa) == 0:
            if len(sa) == 0 and sa == sb:  # a scalar dataset
                d, rel, beyond = _errors(np.float64(self.fa.read(da)), np.float64(self.fb.read(db)), atol, rtol)
                r.max_abs, r.max_rel, r.n_beyond = float(d), float(rel), int(beyond)
                r.status = "differ" if beyond else "equal"
                return r
            r.status = "shapes_differ"
            r.notes.append(f"shapes differ beyond frames and envs: {list(sa)} vs {list(sb)}")
            return r
        T = min(sa[0], sb[0])
        r.frames_compared = T
        if sa[0] != sb[0]:
            r.notes.append(f"frames differ: A has {sa[0]}, B has {sb[0]} (the first {T} compared)")
        has_env = len(sa) >= 2
        E = min(sa[1], sb[1]) if has_env else None
        r.envs_compared = E
        if has_env and sa[1] != sb[1]:
            r.notes.append(f"envs differ: A has {sa[1]}, B has {sb[1]} (the first {E} compared)")
        row = int(np.prod((E,) + sa[2:], dtype=np.int64)) if has_env else 1
        step = max(1, _BLOCK_BYTES // max(1, row * 8))
        max_abs = max_rel = 0.0
        for t0 in range(0, T, step):
            t1 = min(T, t0 + step)
            sel = np.s_[t0:t1, :E] if has_env else np.s_[t0:t1]
            a = self.fa.read(da, sel).astype(np.float64, copy=False)
            b = self.fb.read(db, sel).astype(np.float64, copy=False)
            d, rel, beyond = _errors(a, b, atol, rtol)
            max_abs, max_rel = max(max_abs, _max(d)), max(max_rel, _max(rel))
            n = int(beyond.sum())
            if n and r.first is None:
                idx = np.unravel_index(int(np.argmax(beyond)), beyond.shape)
                frame = t0 + int(idx[0])
                r.first = {"frame": frame, "env": int(idx[1]) if has_env else None,
                           "index": [int(i) for i in idx[2:]], "time": self.time_at(frame),
                           "a": float(a[idx]), "b": float(b[idx])}
            r.n_beyond += n
        r.max_abs, r.max_rel = max_abs, max_rel
        if r.n_beyond or sa[0] != sb[0] or (has_env and sa[1] != sb[1]):
            r.status = "differ"
        return r

    # ---- the /model group
    def model(self) -> FieldDiff:
        ga, gb = self.fa.f.get("model"), self.fb.f.get("model")
        atol, rtol = self.tol.of("model")
        if ga is None or gb is None:
            return FieldDiff("model", "only_a" if ga is not None else "only_b", atol=atol, rtol=rtol,
                             notes=[f"only {'A' if ga is not None else 'B'} holds /model"])
        r = FieldDiff("model", "equal", atol=atol, rtol=rtol, arrays=[])
        try:
            attrs_a = {k: _py(v) for k, v in ga.attrs.items()}
            attrs_b = {k: _py(v) for k, v in gb.attrs.items()}
            names_a = {k for k, v in ga.items() if isinstance(v, h5py.Dataset)}
            names_b = {k for k, v in gb.items() if isinstance(v, h5py.Dataset)}
        except (OSError, RuntimeError, KeyError) as e:
            raise self.fa.damaged("/model", e) from None
        for k in sorted(set(attrs_a) | set(attrs_b)):
            if attrs_a.get(k) != attrs_b.get(k):
                r.arrays.append({"name": f"@{k}", "status": "differ", "a": attrs_a.get(k), "b": attrs_b.get(k)})
                r.first = r.first or {"array": f"@{k}", "index": [], "a": attrs_a.get(k), "b": attrs_b.get(k)}
                r.n_beyond += 1
        max_abs = max_rel = 0.0
        for k in sorted(names_a | names_b):
            if k not in names_a or k not in names_b:
                r.arrays.append({"name": k, "status": "only_a" if k in names_a else "only_b"})
                r.n_beyond += 1
                continue
            da, db = ga[k], gb[k]
            a, b = self.fa.read(da), self.fb.read(db)
            entry = {"name": k, "shape_a": list(a.shape), "shape_b": list(b.shape)}
            if a.shape != b.shape or _is_text(da) != _is_text(db):
                r.arrays.append({**entry, "status": "shapes_differ"})
                r.n_beyond += 1
                continue
            if _is_text(da):
                ne = np.asarray(a != b)
                if ne.any():
                    idx = np.unravel_index(int(np.argmax(ne)), ne.shape) if ne.ndim else ()
                    r.arrays.append({**entry, "status": "differ", "n_beyond": int(ne.sum())})
                    r.first = r.first or {"array": k, "index": [int(i) for i in idx], "a": _py(a[idx]),
                                          "b": _py(b[idx])}
                    r.n_beyond += int(ne.sum())
                continue
            d, rel, beyond = _errors(a.astype(np.float64), b.astype(np.float64), atol, rtol)
            max_abs, max_rel = max(max_abs, _max(d)), max(max_rel, _max(rel))
            if beyond.any():
                idx = np.unravel_index(int(np.argmax(beyond)), beyond.shape) if beyond.ndim else ()
                r.arrays.append({**entry, "status": "differ", "max_abs": _max(d), "n_beyond": int(beyond.sum())})
                r.first = r.first or {"array": k, "index": [int(i) for i in idx], "a": _num(a[idx]), "b": _num(b[idx])}
                r.n_beyond += int(beyond.sum())
        r.max_abs, r.max_rel = max_abs, max_rel
        if r.arrays:
            r.status = "differ"
        return r

    # ---- contacts
    def contacts(self) -> ContactsDiff:
        ga, gb = self.fa.f.get("contacts"), self.fb.f.get("contacts")
        if ga is None or gb is None:
            r = ContactsDiff("only_a" if ga is not None else "only_b")
            r.notes.append(f"only {'A' if ga is not None else 'B'} holds contacts")
            return r
        r = ContactsDiff("equal")
        for q in CONTACT_QUANTITIES:
            atol, rtol = self.tol.of(f"contacts.{q}")
            r.quantities[q] = QuantityDiff(atol=atol, rtol=rtol)
        Ba, Bb = self._contact_envs(self.fa, ga), self._contact_envs(self.fb, gb)
        Ta, Tb = (len(ga["offsets"]) - 1) // Ba, (len(gb["offsets"]) - 1) // Bb
        T, E = min(Ta, Tb), min(Ba, Bb)
        r.frames_compared, r.envs_compared = T, E
        if Ta != Tb:
            r.notes.append(f"frames differ: A has {Ta}, B has {Tb} (the first {T} compared)")
        if Ba != Bb:
            r.notes.append(f"envs differ: A has {Ba}, B has {Bb} (the first {E} compared)")
        t0 = 0
        step = max(1, (1 << 16) // max(E, 1))
        while t0 < T:
            t1 = min(T, t0 + step)
            ca, cb = self._contact_block(self.fa, ga, Ba, t0, t1), self._contact_block(self.fb, gb, Bb, t0, t1)
            if t1 - t0 > 1 and max(ca["rows"], cb["rows"]) > _CONTACT_ROWS:
                step = max(1, (t1 - t0) // 2)  # too many contacts at once: fewer frames per block
                continue
            self._compare_contact_block(r, t0, t1, E, self._load_rows(self.fa, ga, ca, E),
                                        self._load_rows(self.fb, gb, cb, E))
            t0 = t1
        if (r.unmatched_a or r.unmatched_b or r.count_mismatches or Ta != Tb or Ba != Bb
                or any(q.n_beyond for q in r.quantities.values())):
            r.status = "differ"
        return r

    def _contact_envs(self, f: _File, g: h5py.Group) -> int:
        B = f.B or 1
        n = len(g["offsets"]) - 1
        if B <= 0 or n < 0 or n % B:
            raise InputError(f"contacts/offsets holds {n + 1} entries, which is not frames x {B} envs + 1: "
                             f"the file is damaged", where=f.path)
        return B

    def _contact_block(self, f: _File, g: h5py.Group, B: int, t0: int, t1: int) -> Dict[str, Any]:
        offs = f.read(g["offsets"], np.s_[t0 * B: t1 * B + 1]).astype(np.int64)
        counts = np.diff(offs).reshape(t1 - t0, B)
        return {"offs": offs, "counts": counts, "rows": int(offs[-1] - offs[0]), "B": B, "t0": t0}

    def _load_rows(self, f: _File, g: h5py.Group, blk: Dict[str, Any], E: int) -> Dict[str, Any]:
        """The contact rows of a block of frames, of the first E envs, with each row's slot (frame - t0)*E + env."""
        offs, counts, B = blk["offs"], blk["counts"], blk["B"]
        r0, r1 = int(offs[0]), int(offs[-1])
        n_rows = len(g["geom"])
        if r0 < 0 or r1 > n_rows or np.any(counts < 0):
            raise InputError(f"contacts/offsets points past the {n_rows} contact rows: the file is truncated or "
                             f"damaged", where=f.path)
        slot_full = np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1))
        frame, env = slot_full // B, slot_full % B
        keep = env < E
        rows = {k: f.read(g[k], np.s_[r0:r1])[keep] for k in ("geom",) + CONTACT_QUANTITIES}
        rows = {k: (v.astype(np.int64) if k == "geom" else v.astype(np.float64)) for k, v in rows.items()}
        rows["slot"] = frame[keep] * E + env[keep]
        rows["counts"] = counts[:, :E]
        return rows

    def _where(self, t0: int, E: int, slot: int) -> Dict[str, Any]:
        frame = t0 + int(slot) // E
        return {"frame": frame, "env": int(slot) % E, "time": self.time_at(frame)}

    def _compare_contact_block(self, r: ContactsDiff, t0: int, t1: int, E: int, A: Dict, B: Dict) -> None:
        mism = A["counts"] != B["counts"]
        if mism.any():
            r.count_mismatches += int(mism.sum())
            if r.first_count_difference is None:
                s = int(np.argmax(mism.reshape(-1)))
                r.first_count_difference = {**self._where(t0, E, s), "a": int(A["counts"].reshape(-1)[s]),
                                            "b": int(B["counts"].reshape(-1)[s])}
        ma, mb = self._match(A, B)
        r.matched += len(ma)
        un_a = np.ones(len(A["slot"]), bool)
        un_a[ma] = False
        un_b = np.ones(len(B["slot"]), bool)
        un_b[mb] = False
        r.unmatched_a += int(un_a.sum())
        r.unmatched_b += int(un_b.sum())
        if r.first_unmatched is None and (un_a.any() or un_b.any()):
            cands = []
            for X, un, name in ((A, un_a, "a"), (B, un_b, "b")):
                if un.any():
                    i = int(np.flatnonzero(un)[np.argmin(X["slot"][un])])
                    cands.append((int(X["slot"][i]), name, X["geom"][i]))
            slot, name, geom = min(cands, key=lambda c: (c[0], c[1]))
            r.first_unmatched = {**self._where(t0, E, slot), "geom": [int(x) for x in geom], "file": name}
        if not len(ma):
            return
        order = np.argsort(A["slot"][ma], kind="stable")
        ma, mb = ma[order], mb[order]
        slots = A["slot"][ma]
        for q in CONTACT_QUANTITIES:
            qd = r.quantities[q]
            a, b = A[q][ma], B[q][mb]
            d, rel, beyond = _errors(a, b, qd.atol, qd.rtol)
            qd.max_abs, qd.max_rel = max(qd.max_abs, _max(d)), max(qd.max_rel, _max(rel))
            rows = beyond.reshape(len(ma), -1).any(axis=1)
            qd.n_beyond += int(rows.sum())
            if rows.any() and qd.first is None:
                i = int(np.argmax(rows))
                qd.first = {**self._where(t0, E, slots[i]), "geom": [int(x) for x in A["geom"][ma[i]]],
                            "a": a[i].tolist(), "b": b[i].tolist()}

    @staticmethod
    def _match(A: Dict, B: Dict) -> Tuple[np.ndarray, np.ndarray]:
        """Row indices (into A, into B) of matched contacts: same slot and geom pair; several of one pair
        greedily by nearest position (the closest two first; ties in file order)."""
        if not len(A["slot"]) or not len(B["slot"]):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        g = np.concatenate([A["geom"], B["geom"]])
        lo = int(g.min())
        G = int(g.max()) - lo + 1

        def keys(X):
            return (X["slot"] * G + (X["geom"][:, 0] - lo)) * G + (X["geom"][:, 1] - lo)

        ka, kb = keys(A), keys(B)
        oa, ob = np.argsort(ka, kind="stable"), np.argsort(kb, kind="stable")
        ua, sa, na = np.unique(ka[oa], return_index=True, return_counts=True)
        ub, sb, nb = np.unique(kb[ob], return_index=True, return_counts=True)
        _, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
        out_a, out_b = [], []
        combos = np.stack([na[ia], nb[ib]], axis=1)
        for ca, cb in np.unique(combos, axis=0):
            sel = (combos[:, 0] == ca) & (combos[:, 1] == cb)
            rows_a = oa[sa[ia[sel]][:, None] + np.arange(ca)]  # [groups, ca] original rows
            rows_b = ob[sb[ib[sel]][:, None] + np.arange(cb)]
            if ca == 1 and cb == 1:
                out_a.append(rows_a[:, 0])
                out_b.append(rows_b[:, 0])
                continue
            with np.errstate(all="ignore"):
                dist = np.linalg.norm(A["position"][rows_a][:, :, None, :] - B["position"][rows_b][:, None, :, :],
                                      axis=-1)
            dist = np.nan_to_num(dist, nan=np.finfo(np.float64).max, posinf=np.finfo(np.float64).max)
            groups = np.arange(len(rows_a))
            for _ in range(min(ca, cb)):
                flat = np.argmin(dist.reshape(len(rows_a), -1), axis=1)
                i, j = flat // cb, flat % cb
                out_a.append(rows_a[groups, i])
                out_b.append(rows_b[groups, j])
                dist[groups, i, :] = np.inf
                dist[groups, :, j] = np.inf
        if not out_a:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(out_a), np.concatenate(out_b)


# ---------------------------------------------------------------------------------------------- attributes
def _options(yaml_text: Any) -> Optional[Dict[str, Any]]:
    import yaml

    if not isinstance(yaml_text, str):
        return None
    try:
        v = yaml.safe_load(yaml_text)
    except yaml.YAMLError:
        return None
    return v if isinstance(v, dict) else None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                              and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def _compare_attrs(fa: _File, fb: _File) -> Tuple[List[AttrDiff], List[OptionDiff]]:
    attrs, options = [], []
    for k in list(dict.fromkeys(list(fa.attrs) + list(fb.attrs))):
        if k in VOLATILE_ATTRS:
            continue
        a, b = fa.attrs.get(k), fb.attrs.get(k)
        if _same(a, b):
            continue
        if k == "options_yaml":
            oa, ob = _options(a), _options(b)
            if oa is not None and ob is not None:
                for name in dict.fromkeys(list(oa) + list(ob)):
                    if not _same(oa.get(name), ob.get(name)):
                        options.append(OptionDiff(name, oa.get(name), ob.get(name)))
                if not options:
                    continue  # the same options written differently (key order, number format)
        attrs.append(AttrDiff(k, a, b, affects_verdict=k in VERDICT_ATTRS))
    return attrs, options


# ---------------------------------------------------------------------------------------------- top level
def known_fields(fa: Optional[_File] = None, fb: Optional[_File] = None) -> List[str]:
    """Field names for --fields: time, the recordable fields, what the files hold, contacts, model."""
    names = ["time"] + [n for n in RECORDABLE if n != "contacts"]
    for f in (fa, fb):
        if f is not None:
            names += sorted(n for n in f.datasets if n not in names)
    return list(dict.fromkeys(names + ["contacts", "model"]))


def _selected(fa: _File, fb: _File, fields: Optional[Sequence[str]]) -> List[str]:
    present = [n for n in known_fields(fa, fb)
               if n in fa.datasets or n in fb.datasets or (n in SPECIAL_GROUPS and (n in fa.f or n in fb.f))]
    if fields is None:
        return present
    missing = [n for n in fields if n not in present]
    if missing:
        raise InputError(f"neither file holds {', '.join(missing)}; they hold {', '.join(present)}", where="--fields")
    return [n for n in present if n in fields]


def diff_files(path_a: str, path_b: str, *, rtol: Iterable[str] = (), atol: Iterable[str] = (),
               fields: Optional[str | Sequence[str]] = None) -> DiffReport:
    """Compare two trajectory files; raises InputError (exit 2) for a bad file or argument."""
    rtol_d, rtols = _parse_tol(rtol, "--rtol", DEFAULT_RTOL)
    atol_d, atols = _parse_tol(atol, "--atol", DEFAULT_ATOL)
    if isinstance(fields, str):
        fields = [s.strip() for s in fields.split(",") if s.strip()]
        if not fields:
            raise InputError("expected a comma list of fields, got nothing", where="--fields")
    fa = _File(path_a, "A")
    try:
        fb = _File(path_b, "B")
    except BaseException:
        fa.close()
        raise
    try:
        known = known_fields(fa, fb)
        tol_names = known + [f"contacts.{q}" for q in CONTACT_QUANTITIES]
        _check_names(rtols, tol_names, "--rtol")
        _check_names(atols, tol_names, "--atol")
        if fields is not None:
            _check_names(fields, known, "--fields")
        tol = Tolerance(rtol=rtol_d, atol=atol_d, rtols=rtols, atols=atols)
        return _diff(fa, fb, tol, _selected(fa, fb, fields))
    finally:
        fa.close()
        fb.close()


def _diff(fa: _File, fb: _File, tol: Tolerance, names: List[str]) -> DiffReport:
    cmp = _Comparison(fa, fb, tol)
    ia, ib = fa.info(), fb.info()
    attrs, options = _compare_attrs(fa, fb)
    reasons: List[str] = []
    notes: List[str] = []
    for label, i in (("A", ia), ("B", ib)):
        if i.truncated:
            held = (f"{i.n_frames} of {i.expected_frames} frames" if i.expected_frames is not None
                    else f"{i.n_frames} frames")
            why = "complete = false" if not i.complete else "fewer frames than n_steps and record_every imply"
            notes.append(f"{label} ({i.path}) is incomplete (an interrupted or failed run): {held}, {why}")
    if ia.truncated != ib.truncated:
        short = "A" if ia.truncated else "B"
        reasons.append(f"{short} is incomplete and the other file is complete")
    for o in options:
        reasons.append(f"option {o.name}: {_show(o.a)} vs {_show(o.b)}")
    for at in attrs:
        if at.affects_verdict and at.name != "options_yaml" and not (at.name in ("complete", "n_frames")
                                                                     and ia.truncated != ib.truncated):
            reasons.append(f"attribute {at.name}: {_show(at.a)} vs {_show(at.b)}")
        elif at.name == "options_yaml" and not options:
            reasons.append("attribute options_yaml differs (not readable as options)")
        elif not at.affects_verdict:
            notes.append(f"attribute {at.name}: {_show(at.a)} vs {_show(at.b)} (not a difference by itself)")
    results: List[FieldDiff] = []
    contacts = None
    for n in names:
        if n == "contacts":
            contacts = cmp.contacts()
        elif n == "model":
            results.append(cmp.model())
        else:
            results.append(cmp.field(n))
    first_frames = []
    for r in results:
        if r.status == "equal":
            continue
        reasons.append(_field_reason(r))
        if r.first is not None and r.first.get("frame") is not None:
            first_frames.append(r.first["frame"])
    if contacts is not None and contacts.status != "equal":
        reasons.append(_contacts_reason(contacts))
        firsts = [contacts.first_count_difference, contacts.first_unmatched]
        for f in firsts + [q.first for q in contacts.quantities.values()]:
            if f is not None:
                first_frames.append(f["frame"])
    differ = bool(reasons)
    return DiffReport(a=ia, b=ib, verdict="differ" if differ else "equal", exit_code=1 if differ else 0,
                      first_frame=min(first_frames) if first_frames else None, reasons=reasons,
                      tolerance=tol.as_dict(), attributes=attrs, options=options, fields=results,
                      contacts=contacts, notes=notes)


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
                     f"{where_text(f)}: geoms {tuple(f['geom'])} in {f['file'].upper()}")
    for q, qd in c.quantities.items():
        if qd.first is not None:
            parts.append(f"{q} beyond tolerance from {where_text(qd.first)} (geoms {tuple(qd.first['geom'])}; "
                         f"max abs error {qd.max_abs:.3g})")
    parts += [n for n in c.notes if n.startswith(("frames differ", "envs differ"))]
    return "contacts: " + "; ".join(parts)
