"""The kernel language, behind one import: every engine module writes ``from rigidsim.engine.lang import ti``.

The distribution is Quadrants (Genesis's maintained fork of Taichi: the same kernel language, imported as
``quadrants``), chosen over upstream Taichi 1.7.4 for start-up (benchmarks/bench_smooth.py, README):
its LLVM pipeline compiles our rollout kernel about twice as fast, and its *fastcache* loads a cached
kernel without re-running the Python AST transform. Switching the distribution is this file alone (and
``runtime.init``'s options): the engine uses only the common Taichi language (``ti.func``,
``ti.template``, ``ti.static``, ``ti.Vector``, ndarray arguments).

``kernel`` is ``ti.kernel`` with fastcache on. Fastcache keys a kernel on the source text of its
functions, its argument types and the compile config, not on module-level constants (our column
layouts); ``runtime`` makes the whole cache directory depend on a hash of the engine's sources, so a
changed constant can never load a stale kernel.
"""

from __future__ import annotations

import linecache
import os
import sys

# quiet: no version banner on import
os.environ.setdefault("ENABLE_QUADRANTS_HEADER_PRINT", "False")

import quadrants as ti  # noqa: E402
from quadrants.lang import impl  # noqa: E402,F401

DIST = "quadrants"
VERSION = ".".join(str(v) for v in ti.__version__)
__all__ = ["ti", "impl", "kernel", "DIST", "VERSION"]


def kernel(fn):
    """``ti.kernel`` with fastcache: every kernel here takes all its data as arguments."""
    return ti.kernel(fastcache=True)(fn)


def _fast_class_probe() -> None:
    """Quadrants asks, for every ``@ti.func`` and ``@ti.kernel`` it decorates, whether the decorator sits
    inside a class body, by reading the caller's source line with ``inspect.getframeinfo``; that scans
    every loaded module to find the file (a third of the engine's import time). Read the same line
    through ``linecache`` instead: the same answer for code in files, without the scan."""
    try:
        from quadrants.lang import kernel_impl as ki
    except ImportError:  # pragma: no cover - another layout
        return
    orig = getattr(ki, "_inside_class", None)
    patterns = getattr(ki, "_KERNEL_CLASS_STACKFRAME_STMT_RES", None)
    if orig is None or patterns is None or getattr(orig, "_rigidsim", False):
        return

    def inside_class(level_of_class_stackframe: int) -> bool:
        try:
            frame = sys._getframe(level_of_class_stackframe)
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        except ValueError:
            return False
        if not line:  # no source file (an interactive session): ask the original
            return orig(level_of_class_stackframe + 1)
        first = line.strip()
        return any(p.match(first) for p in patterns)

    inside_class._rigidsim = True
    ki._inside_class = inside_class


_fast_class_probe()
