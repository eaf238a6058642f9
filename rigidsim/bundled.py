"""The example scenes and options files that ship with rigidsim.

In a wheel they live in ``rigidsim/_bundled/``; in a source checkout they are
the repository's ``scenes/`` and ``configs/`` folders. Scenes written by others
ship under ``scenes/third_party/<source>/`` with their licence; the files at the
top of each such folder are scenes too (runnable by name), the files below them
(``common/``) are only included by them.
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
    folders = [d] + sorted(p for p in (d / "third_party").glob("*") if p.is_dir())
    return sorted((p for f in folders for p in f.iterdir() if p.suffix in (".xml", ".urdf")),
                  key=lambda p: p.name)


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
    if not desc and "third_party" in path.parts:  # shipped unmodified: its source folder says where it is from
        desc = f"{path.parent.name}'s {path.stem}, unmodified (scenes/third_party/{path.parent.name}, with its LICENSE)"
    return path.stem, desc
