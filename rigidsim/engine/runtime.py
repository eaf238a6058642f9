"""Taichi, initialised once per process.

The floating-point precision of every kernel is Taichi's ``default_fp``,
fixed at ``ti.init``; so is the backend. A second `init` with the same
settings is a no-op; with different ones it raises, since Taichi cannot
switch them inside one process. Compiled kernels are kept in an offline
cache (``~/.cache/rigidsim/taichi``, or ``$RIGIDSIM_CACHE_DIR``), so a
second start skips compilation.
"""

from __future__ import annotations

import os
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
