"""MuJoCo's whole MJCF schema, attribute by attribute, against rigidsim's loader (`tests/schema_sweep.py`).

The whole sweep (about 4,600 cases over MuJoCo 4.0's 1,873 element attributes) takes about 35 s on one core:
the default run judges every other case (which half by the commit), RIGIDSIM_SWEEP=1 all of them, and every
attribute is checked to have cases either way. Asserted:

* rigidsim never crashes (an exception that is not an InputError, in the loader, the option resolution or
  the engine's feature check): no exception list;
* a refusal of what MuJoCo compiles that says "not supported" gives the element's file:line and names the
  element, the attribute or the value;
* every other disagreement of a judged case (compiled fields differ, rigidsim accepts what MuJoCo refuses, rigidsim refuses
  without saying it is unsupported) is listed, with that outcome, in tests/data/schema_sweep_gaps.txt, and
  every listed case still disagrees that way: a fixed gap must leave the list.
"""

from __future__ import annotations

import re

import pytest

from tests import schema_sweep as SW
from tests.sweep_slice import slice_of, sweep_on

pytest.importorskip("mujoco")


@pytest.fixture(scope="module")
def sweep():
    """(every case, the cases judged): all of them under RIGIDSIM_SWEEP; else every other case, which half by
    the commit (`sweep_slice`), so that two commits judge the whole schema."""
    if sweep_on():
        return SW.run_all()
    k, n, _ = slice_of("schema_sweep", ("even", "odd"), 1)
    return SW.run_all(stride=n, offset=k)


@pytest.fixture(scope="module")
def results(sweep):
    return sweep[1]


def _show(cases):
    return "\n".join(f"[{c.outcome}] {'/'.join(c.path)} {c.attr}={c.text!r} ({c.label})\n    MuJoCo: "
                     f"{c.mujoco or 'compiles'}\n    rigidsim: {c.rigidsim or 'compiles'}"
                     + (f"\n    {c.detail}" if c.detail else "") for c in cases[:15])


def test_sweep_covers_mujocos_schema(sweep):
    results = sweep[0]
    schema = {(p, a) for p, attrs in SW.mujoco_schema() for a in attrs}
    swept = {(c.path, c.attr) for c in results}
    assert len(schema) > 1500  # the installed MuJoCo's schema was read
    # every attribute has a case, except references and names of elements without any (sites' 'type'...)
    missing = {(p, a) for p, a in schema - swept if not (SW.kind_of(p, a) or ("s",))[0] == "s"}
    assert not missing, sorted(missing)[:20]
    print(f"\n{len(results)} cases over {len(swept)} attributes; judged: {SW.counts(sweep[1])}")


def test_no_crash(results):
    crashes = [c for c in results if c.outcome == "crash"]
    assert not crashes, "rigidsim crashed:\n" + _show(crashes)


def test_unsupported_refusals_name_what(results):
    """An InputError that locates the element (file:line) and names the element, the attribute or its value."""
    vague = [c for c in results if c.outcome == "unsupported"
             and (not re.search(r"sweep\.xml:\d+", c.rigidsim)
                  or not any(w in c.rigidsim for w in (f"<{c.path[-1]}", c.attr, c.text or "\0")))]
    assert not vague, "refused as unsupported without locating or naming the element:\n" + _show(vague)


def test_disagreements_are_the_listed_gaps(sweep):
    """Every disagreement of the judged cases is listed, and every listed gap of a judged case still happens
    (a listed gap of no case at all is stale too)."""
    every, results = sweep
    gaps = SW.read_gaps()
    failing = [c for c in results if c.outcome in SW.FAILING]
    new = [c for c in failing if gaps.get(c.key) != c.outcome]
    assert not new, f"{len(new)} disagreements with MuJoCo not in {SW.GAPS_FILE.name}:\n" + _show(new)
    by_key = {c.key: c for c in results}
    cases = {c.key for c in every}
    stale = [f"{o} {' '.join(k)} (now {by_key[k].outcome if k in by_key else 'not swept'})"
             for k, o in gaps.items() if k not in cases or (k in by_key and by_key[k].outcome != o)]
    assert not stale, f"{len(stale)} listed gaps no longer happen; remove them from {SW.GAPS_FILE.name}:\n" + \
        "\n".join(stale[:20])
