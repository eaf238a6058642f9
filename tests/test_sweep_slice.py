"""tests/sweep_slice.py: the rotating slices partition a sweep's extra items, the seed picks one, and the ids
name it."""

from __future__ import annotations

import pytest

from tests import sweep_slice as S

ITEMS = [f"scene{i:02d}.xml" for i in range(23)]


def test_slices_partition_the_items():
    seen = []
    k0, n, _ = S.slice_of("demo", ITEMS, 4, "0")
    assert n == 6
    for k in range(n):
        kk, nn, part = S.slice_of("demo", ITEMS, 4, format(k, "x"))
        assert (kk, nn) == (k, n) and 3 <= len(part) <= 4
        seen += part
    assert sorted(seen) == ITEMS  # every item in exactly one slice


def test_the_slice_depends_on_the_seed_alone():
    a = S.slice_of("demo", ITEMS, 4, "1a2b3c4")
    assert S.slice_of("demo", list(reversed(ITEMS)), 4, "1a2b3c4") == a  # not on the items' order
    assert a[0] == 0x1a2b3c4 % 6
    assert S.seed_value("not-hex") == S.seed_value("not-hex") != S.seed_value("0")


def test_seed_from_the_environment_names_the_ids(monkeypatch):
    monkeypatch.delenv("RIGIDSIM_SWEEP", raising=False)
    monkeypatch.setenv(S.SEED_ENV, "00000b")
    S.seed.cache_clear()
    try:
        sel = S.selection("demo", ITEMS, ITEMS[:2], 4)
        assert sel[:2] == [(ITEMS[0], ITEMS[0]), (ITEMS[1], ITEMS[1])]
        k, n, part = S.slice_of("demo", ITEMS[2:], 4, "00000b")
        assert n == 6 and k == 11 % 6
        assert sel[2:] == [(x, f"slice{k + 1}of6-seed00000b-{x}") for x in part]
        monkeypatch.setenv("RIGIDSIM_SWEEP", "1")
        assert S.selection("demo", ITEMS, ITEMS[:2], 4) == [(x, x) for x in ITEMS]
    finally:
        S.seed.cache_clear()


def test_seed_defaults_to_the_commit(monkeypatch):
    import subprocess

    monkeypatch.delenv(S.SEED_ENV, raising=False)
    S.seed.cache_clear()
    try:
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=S.ROOT, capture_output=True, text=True)
        if p.returncode:
            pytest.skip("not a git checkout")
        assert S.seed() == p.stdout.strip()[:7]
    finally:
        S.seed.cache_clear()
