"""Compare two trajectory files (`rigidsim diff A B`): the regression check a CI job runs.

This package holds the top level (attributes, verdict) and `reading` (the files), `tolerance`, `values`
(frame datasets, the model, contacts) and `report` (the report, its JSON and sentences).

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
first_count_difference: {frame, env, time, a, b}, first_unmatched: {frame, env, time, geom, geom_names, file},
quantities: {position|normal|force|penetration: {atol, rtol, max_abs, max_rel, n_beyond,
first: {frame, env, time, geom, geom_names, a, b}}}, notes}`` (``geom_names``: the pair's names from
/model/geom_names, '' for an unnamed geom; absent when neither file holds names). Non-finite numbers are
written as the strings "inf", "-inf" and "nan". Later versions only add keys.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from rigidsim.diff.reading import SPECIAL_GROUPS, _File
from rigidsim.diff.report import (AttrDiff, ContactsDiff, DiffReport, FieldDiff, OptionDiff, _contacts_reason,
                                  _field_reason, _show, geom_text, where_text, write_json)
from rigidsim.diff.tolerance import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance, _check_names, _parse_tol
from rigidsim.diff.values import CONTACT_QUANTITIES, _Comparison
from rigidsim.errors import InputError
from rigidsim.trajectory import RECORDABLE

__all__ = ["DiffReport", "FieldDiff", "ContactsDiff", "diff_files", "geom_text", "known_fields", "where_text",
           "write_json"]

# root attributes whose difference alone makes the verdict "differ": what was simulated
VERDICT_ATTRS = ("options_yaml", "scene_sha256", "dt", "n_envs", "n_steps", "record_every", "complete", "n_frames")
# reported, but not a difference by themselves: how and where it was computed
NOTE_ATTRS = ("rigidsim_version", "scene", "precision", "backend", "seed", "format_version", "format")
# attributes that differ between two runs of one command (a timestamp): never compared. None today.
VOLATILE_ATTRS: Tuple[str, ...] = ()


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
