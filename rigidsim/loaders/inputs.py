"""The files a scene compile reads, recorded for the compiled-model cache (`model_cache`).

The loaders read every input file through `read_bytes` and test the existence
of every path they look at through `is_file`; while a `recording()` block is
open (`load_scene` opens one around a compile), each read file is noted with
the SHA-256 of its bytes and each test with its answer. A cached Model is
reused only while every recorded file still has those bytes and every tested
path still gives the same answer (`unchanged`). Outside a recording both
functions are plain ``Path.read_bytes`` / ``Path.is_file``.

This module imports nothing of rigidsim, so that any loader can use it.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
from pathlib import Path
from typing import Dict, Iterator, Optional

PACKAGE_PATH_ENV = "RIGIDSIM_PACKAGE_PATH"  # folders holding the URDF packages (rigidsim.loaders.urdf)
ENVIRONMENT = (PACKAGE_PATH_ENV,)  # the environment variables the loaders read: part of a cache entry's key


class Inputs:
    """What one compile read: ``files`` absolute path -> sha256 hex of its bytes; ``probes`` absolute
    path -> whether it was a file."""

    def __init__(self) -> None:
        self.files: Dict[str, str] = {}
        self.probes: Dict[str, bool] = {}


_current: contextvars.ContextVar[Optional[Inputs]] = contextvars.ContextVar("rigidsim_inputs", default=None)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(path) -> str:
    return os.path.abspath(os.fspath(path))


@contextlib.contextmanager
def recording() -> Iterator[Inputs]:
    """Record the files read and the paths tested inside the block (nested blocks record into their own)."""
    rec = Inputs()
    token = _current.set(rec)
    try:
        yield rec
    finally:
        _current.reset(token)


def active() -> bool:
    return _current.get() is not None


def read_bytes(path) -> bytes:
    """``Path(path).read_bytes()``, noted in the open recording."""
    data = Path(path).read_bytes()
    rec = _current.get()
    if rec is not None:
        rec.files[_key(path)] = digest(data)
    return data


def note_read(path, sha256: str) -> None:
    """Note a file whose bytes (of digest ``sha256``) the caller took from its own in-process cache."""
    rec = _current.get()
    if rec is not None:
        rec.files[_key(path)] = sha256


def is_file(path) -> bool:
    """``Path(path).is_file()``, noted in the open recording."""
    ok = Path(path).is_file()
    rec = _current.get()
    if rec is not None:
        rec.probes.setdefault(_key(path), ok)
    return ok


def unchanged(files: Dict[str, str], probes: Dict[str, bool]) -> bool:
    """Whether every file still has the recorded bytes and every tested path still gives the same answer."""
    try:
        for p, ok in probes.items():
            if os.path.isfile(p) != ok:
                return False
        for p, sha in files.items():
            with open(p, "rb") as fh:
                if digest(fh.read()) != sha:
                    return False
    except OSError:
        return False
    return True
