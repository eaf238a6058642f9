"""The example scenes and options files that ship with rigidsim.

In a wheel they live in ``rigidsim/_bundled/``; in a source checkout they are
the repository's ``scenes/`` and ``configs/`` folders.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Tuple

_PKG = Path(__file__).resolve().parent


def _folder(name: str) -> Optional[Path]:
    for cand in (_PKG / "_bundled" / name, _PKG.parent / name):
        if cand.is_dir():
            return cand
    return None


def scene_files() -> List[Path]:
    d = _folder("scenes")
    if d is None:
        return []
    return sorted(p for p in d.iterdir() if p.suffix in (".xml", ".urdf"))


def scene_names() -> List[str]:
    return [p.stem for p in scene_files()]


def find_scene(name: str) -> Optional[Path]:
    for p in scene_files():
        if name in (p.stem, p.name):
            return p
    return None


def config_files() -> List[Path]:
    d = _folder("configs")
    return sorted(d.glob("*.yaml")) if d else []


def describe(path: Path) -> Tuple[str, str]:
    """(name, one-line description) of a bundled file: its first comment line."""
    text = path.read_text(errors="replace")[:2000]
    m = re.search(r"<!--\s*(.*?)\s*-->", text, re.S) if path.suffix != ".yaml" else re.search(r"^#\s*(.*)$", text, re.M)
    desc = " ".join(m.group(1).split()) if m else ""
    return path.stem, desc
