"""Shared by the sweep tests: the 2 scenes x 2 seeds x 2 options grid, and what a job's plain run is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import yaml

GRID = {"scenes": ["pendulum", "falling_objects"], "seeds": [0, 1], "grid": {"dt": [0.002, 0.004]},
        "envs": 2, "steps": 40}


def write_grid(folder: Path, name: str = "grid.yaml", **changes) -> Path:
    p = folder / name
    p.write_text(yaml.safe_dump({**GRID, **changes}))
    return p


def manifest(out: Path) -> List[Dict]:
    return [json.loads(t) for t in (out / "manifest.jsonl").read_text().splitlines() if t.strip()]


def run_args(entry: Dict, grid: Dict = GRID) -> List[str]:
    """The `rigidsim run` command line of a manifest entry's job."""
    args = ["run", entry["scene"], "--steps", grid["steps"], "--envs", grid["envs"], "--seed", entry["seed"]]
    for k, v in entry["overrides"].items():
        args += ["--set", f"{k}={v}"]
    return [str(a) for a in args]


def leftovers(out: Path) -> List[str]:
    """What a sweep must never leave in its folder: partial files, temporary files, the work folder."""
    return [p.name for p in out.iterdir() if p.name.startswith(".")]
