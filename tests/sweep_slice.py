"""Rotating slices of the long sweeps, so that every run of the default suite (CI included) checks a few of
the items only ``RIGIDSIM_SWEEP=1`` used to reach.

Each sweep test (test_collision_models, test_constraint_rows, test_constraint_lockstep, test_mutants,
test_scene_sweep) names its full list of items and the few its default run always checks. Without
RIGIDSIM_SWEEP it also checks one *slice* of the rest: the rest, sorted, is put in a permutation fixed by the
sweep's name alone, and cut into K slices of about `per_slice` items (slice k holds perm[k::K]); the run
checks slice ``seed mod K``. The seed is, in order: ``RIGIDSIM_SWEEP_SEED`` when set, else the first 7 hex
digits of the checkout's commit (``git rev-parse HEAD``), else ``0``. Successive commits thus walk over
every slice (every item is checked within about K commits), and the seed does not depend on the machine.

A slice's test ids name the slice, the seed and the item, e.g.
``test_model_rows[slice3of12-seed1a2b3c4-dm_control/walker.xml]``. To rerun a failing slice elsewhere:

    RIGIDSIM_SWEEP_SEED=1a2b3c4 python -m pytest -p no:xdist tests/test_constraint_rows.py -k slice

(the same seed gives the same slices on any checkout whose sweep lists are the same). RIGIDSIM_SWEEP=1
checks every item, with plain ids, as before.
"""

from __future__ import annotations

import functools
import os
import random
import re
import subprocess
import zlib
from pathlib import Path
from typing import List, Sequence, Tuple

SEED_ENV = "RIGIDSIM_SWEEP_SEED"
ROOT = Path(__file__).resolve().parents[1]


def sweep_on() -> bool:
    """RIGIDSIM_SWEEP is set: every item of every sweep."""
    return bool(os.environ.get("RIGIDSIM_SWEEP"))


@functools.lru_cache(maxsize=None)
def seed() -> str:
    """The seed's label: RIGIDSIM_SWEEP_SEED, else the commit's first 7 hex digits, else "0"."""
    s = os.environ.get(SEED_ENV, "").strip().lower()
    if not s:
        try:
            p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=20)
            s = p.stdout.strip()[:7] if p.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            s = ""
    s = re.sub(r"[^0-9a-z]", "", s)[:16]
    return s or "0"


def seed_value(label: str) -> int:
    """The seed as a number: hex digits read as hex (a commit's prefix), any other text by its CRC-32."""
    return int(label, 16) if re.fullmatch(r"[0-9a-f]+", label) else zlib.crc32(label.encode())


def slice_of(name: str, items: Sequence[str], per_slice: int, label: str | None = None) -> Tuple[int, int, List[str]]:
    """(k, K, the items of slice k of K) of sweep `name` over `items` for seed `label` (default `seed()`)."""
    rest = sorted(set(items))
    if not rest:
        return 0, 0, []
    perm = random.Random(f"rigidsim-sweep:{name}").sample(rest, len(rest))  # fixed by the name alone
    nslice = -(-len(rest) // max(1, per_slice))
    k = seed_value(seed() if label is None else label) % nslice
    return k, nslice, perm[k::nslice]


def selection(name: str, full: Sequence[str], default: Sequence[str], per_slice: int) -> List[Tuple[str, str]]:
    """(item, test id) pairs a sweep test runs: every item of `full` under RIGIDSIM_SWEEP; else the `default`
    items (plain ids) and the rotating slice of the others (ids naming slice, seed and item)."""
    if sweep_on():
        return [(x, x) for x in full]
    base = [x for x in full if x in set(default)]
    k, n, extra = slice_of(name, [x for x in full if x not in set(default)], per_slice)
    return [(x, x) for x in base] + [(x, f"slice{k + 1}of{n}-seed{seed()}-{x}") for x in extra]
