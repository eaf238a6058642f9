"""Taichi, initialised once per process.

The floating-point precision of every kernel is Taichi's ``default_fp``,
fixed at ``ti.init``; so is the backend. A second `init` with the same
settings is a no-op; with different ones it raises, since Taichi cannot
switch them inside one process. Compiled kernels are kept in an offline
cache (``~/.cache/rigidsim/taichi``, or ``$RIGIDSIM_CACHE_DIR``), so a
second start skips compilation.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import warnings
from pathlib import Path
from typing import Optional, Tuple

_state: Optional[Tuple[int, str]] = None

# quiet: no version banner on import, no "Starting on arch" line on init
os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "False")

# Kernels pass groups of arrays to ti.funcs as plain Python objects built at
# compile time; Taichi warns about the constructor call, which is intended.
warnings.filterwarnings("ignore", message=r".*Calling non-taichi function.*")


def cache_dir() -> Path:
    env = os.environ.get("RIGIDSIM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "rigidsim" / "taichi"


def _memoize_source_positions(store: Optional[Path] = None) -> None:
    """Memoize Taichi 1.7's per-AST-node source-position text.

    Taichi's frontend formats a "File ..., line ..., ^^^^" message (a TextWrapper over the source lines)
    for every AST node it transforms, every time a ti.func is inlined; that is about half of the
    transform of the rollout kernel, which runs on every process start (the offline cache key is
    computed from its result). The message depends only on the function's file, first line, name and
    indentation and the node's span, so equal keys give the very same text: compiled code, cache keys
    and error messages are unchanged.

    With `store`, the memo is also kept on disk next to the offline cache: a warm start then formats no
    message at all (a third of the transform). Entries are kept per source file with a hash of the file's
    text, and dropped when the file changes; new entries are written back at exit.
    """
    try:
        from taichi.lang.ast import ast_transformer_utils as atu
    except ImportError:  # pragma: no cover - another Taichi layout
        return
    ctx_cls = getattr(atu, "ASTTransformerContext", None)
    orig = getattr(ctx_cls, "get_pos_info", None)
    if orig is None or getattr(orig, "_rigidsim_memo", False):
        return
    memo = {}
    loops = ("For", "While", "FunctionDef", "If")
    if store is not None:
        memo.update(_load_positions(store))
        n_loaded = len(memo)
        atexit.register(lambda: len(memo) != n_loaded and _save_positions(store, memo))

    def get_pos_info(self, node):
        kind = node.__class__.__name__
        key = (self.file, self.lineno_offset, self.func.func.__name__ if self.func is not None else None,
               self.indent, kind if kind in loops else "", getattr(node, "lineno", None),
               getattr(node, "end_lineno", None), getattr(node, "col_offset", None),
               getattr(node, "end_col_offset", None),
               node.body[0].lineno if kind in loops and getattr(node, "body", None) else None)
        msg = memo.get(key)
        if msg is None:
            msg = memo[key] = orig(self, node)
        return msg

    get_pos_info._rigidsim_memo = True
    ctx_cls.get_pos_info = get_pos_info


def _file_hash(path, seen: dict):
    h = seen.get(path)
    if h is None:
        try:
            h = hashlib.sha1(Path(path).read_bytes()).hexdigest()
        except OSError:
            h = ""
        seen[path] = h
    return h


def _load_positions(store: Path) -> dict:
    """The stored source-position texts whose source files are unchanged."""
    try:
        with open(store, "rb") as f:
            hashes, entries = pickle.load(f)
    except Exception:  # missing, partial or from another layout: start empty
        return {}
    seen: dict = {}
    ok = {path for path, h in hashes.items() if h and _file_hash(path, seen) == h}
    return {k: v for k, v in entries.items() if k[0] in ok}


def _save_positions(store: Path, memo: dict) -> None:
    seen: dict = {}
    hashes = {}
    for k in memo:
        if k[0] not in hashes:
            hashes[k[0]] = _file_hash(k[0], seen)
    try:
        tmp = store.with_name(f"{store.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump((hashes, dict(memo)), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, store)
    except OSError:  # a read-only cache: the memo still works within the process
        pass


def init(precision: int = 64, backend: str = "cpu") -> None:
    """Initialise Taichi for `precision` (32 or 64) on `backend` ('cpu' or 'gpu')."""
    global _state
    if precision not in (32, 64):
        raise ValueError(f"precision must be 32 or 64, not {precision!r}")
    if backend not in ("cpu", "gpu"):
        raise ValueError(f"backend must be 'cpu' or 'gpu', not {backend!r}")
    if _state is not None:
        if _state != (precision, backend):
            raise RuntimeError(
                f"Taichi is already initialised for precision={_state[0]} backend={_state[1]!r} in this "
                f"process; precision={precision} backend={backend!r} needs a new process")
        return
    import contextlib
    import io

    import taichi as ti

    path = cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    _memoize_source_positions(path / "source_positions.pkl")
    arch = ti.cpu if backend == "cpu" else ti.cuda
    extra = {}
    if backend == "cpu" and os.environ.get("RIGIDSIM_CPU_THREADS"):
        extra["cpu_max_num_threads"] = int(os.environ["RIGIDSIM_CPU_THREADS"])
    with contextlib.redirect_stdout(io.StringIO()):
        ti.init(arch=arch, default_fp=ti.f64 if precision == 64 else ti.f32, default_ip=ti.i32,
                fast_math=False,  # MuJoCo parity: no reassociation, and NaN checks must survive
                # Compile time: Taichi's control-flow-graph optimization passes cost ~7x compile time
                # on these large serial kernels (rollout: 87 s with them, 12 s without) and buy
                # nothing measurable at run time; RIGIDSIM_TI_CFG_OPT=1 turns them back on.
                cfg_optimization=os.environ.get("RIGIDSIM_TI_CFG_OPT", "0") == "1",
                offline_cache=True, offline_cache_file_path=str(path),
                log_level=ti.WARN, debug=False, **extra)
    _state = (precision, backend)


def settings() -> Optional[Tuple[int, str]]:
    """(precision, backend) Taichi was initialised with, or None."""
    return _state
