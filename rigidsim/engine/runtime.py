"""The kernel language's runtime (`lang`), initialised once per process.

The floating-point precision of every kernel is the runtime's ``default_fp``,
fixed at ``ti.init``; so is the backend. A second `init` with the same
settings is a no-op; with different ones it raises, since the runtime cannot
switch them inside one process.

Compiled kernels are kept in an offline cache under ``cache_dir()``
(``~/.cache/rigidsim/kernels``, or ``$RIGIDSIM_CACHE_DIR``), in a folder
named after the language's version and a hash of the engine's source files
(`source_key`): fastcache keys a kernel on its functions' source text, not on
the module-level layout constants it reads, so any change to any engine file
starts a new folder and a stale kernel cannot be loaded. The folders of older
sources are removed once more than `KEEP_FOLDERS` exist.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import warnings
from pathlib import Path
from typing import Optional, Tuple

_state: Optional[Tuple[int, str]] = None

# Kernels pass groups of arrays to ti.funcs as plain Python objects built at
# compile time; the frontend warns about the constructor call, which is intended.
warnings.filterwarnings("ignore", message=r".*Calling non-(taichi|quadrants) function.*")
# Fastcache reports each module-level constant a kernel reads (our column layouts) as a "purity"
# violation: they are covered by the cache folder's source hash (`kernel_cache_path`).
warnings.filterwarnings("ignore", message=r".*\[PURE\.VIOLATION\].*")

KEEP_FOLDERS = 4  # cache folders of different engine sources kept side by side
_ENGINE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """The kernels' cache: $RIGIDSIM_CACHE_DIR itself when set, else ~/.cache/rigidsim/kernels
    (`rigidsim.cache_paths`, which the compiled-model cache shares)."""
    from rigidsim.cache_paths import CACHE_DIR_ENV, cache_root

    return cache_root() if os.environ.get(CACHE_DIR_ENV) else cache_root() / "kernels"


def source_key(engine: Path = _ENGINE) -> str:
    """A hash of every source file the kernels are built from: the engine package with its subpackages
    (collision/) and the Model contract (whose enums the kernels read as constants)."""
    h = hashlib.sha256()
    files = sorted(engine.rglob("*.py"))
    for extra in (engine.parent / "model.py", engine.parent / "loaders" / "model.py"):
        if extra.is_file():
            files.append(extra)
    for f in files:
        h.update(str(f.relative_to(engine.parent)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:20]


def cpu_threads() -> int:
    """Threads of the CPU kernels: $RIGIDSIM_CPU_THREADS, else the cores this process may run on."""
    env = os.environ.get("RIGIDSIM_CPU_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            from rigidsim.errors import InputError

            raise InputError(f"must be a whole number of threads, at least 1, not {env!r}",
                             where="RIGIDSIM_CPU_THREADS")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def kernel_cache_path(backend: str = "cpu") -> Path:
    """This engine's cache folder: the language, its version, `source_key` and, on the CPU, the thread count
    (compiled into the env loop, `lang.env_loop`; fastcache does not key on it)."""
    from rigidsim.engine import lang

    threads = f"-t{cpu_threads()}" if backend == "cpu" else ""
    return cache_dir() / f"{lang.DIST}-{lang.VERSION}-{source_key()}{threads}"


def _prune(root: Path, keep: Path) -> None:
    """Remove all but the KEEP_FOLDERS most recently used cache folders (`keep` is in use now)."""
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and p != keep and p.name.count("-") >= 2]
    except OSError:
        return
    folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for p in folders[KEEP_FOLDERS - 1:]:
        shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def _floating_point_environment_kept():
    """Give the calling thread back its floating-point environment after the block. The kernel language's
    initialisation sets flush-to-zero and denormals-are-zero in the thread that calls it (x86's MXCSR) and
    leaves them set, so that afterwards every Python and numpy computation of the process (a script using
    the Python API, the loaders, MuJoCo run beside us in the tests) silently reads and writes subnormal
    numbers (below 2.2e-308) as zero: 1e-320 * 1.0 == 0.0. The compiled kernels flush subnormals to zero
    either way (tests/test_fpenv.py). Through the C library's fegetenv/fesetenv, which save and restore
    the whole environment (MXCSR included); where they cannot be found, the block runs as it is."""
    import ctypes

    libm = _libm()
    env = ctypes.create_string_buffer(512) if libm is not None else None  # fenv_t: 32 bytes on x86-64 glibc
    if libm is not None and libm.fegetenv(env) != 0:
        libm = None
    try:
        yield
    finally:
        if libm is not None:
            libm.fesetenv(env)


def _libm():
    """The C math library (fegetenv, fesetenv), or None: glibc's by its name first (find_library runs
    ldconfig, tens of milliseconds of a warm start), then wherever find_library finds it (macOS)."""
    import ctypes

    try:
        return ctypes.CDLL("libm.so.6")
    except OSError:
        pass
    try:
        import ctypes.util

        name = ctypes.util.find_library("m")
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


ARCHS = {"cpu": "cpu", "gpu": "cuda", "vulkan": "vulkan"}  # rigidsim's backend names: the kernel language's arch


def init(precision: int = 64, backend: str = "cpu") -> None:
    """Initialise Taichi for `precision` (32 or 64) on `backend` ('cpu', 'gpu' (CUDA) or 'vulkan')."""
    global _state
    if precision not in (32, 64):
        raise ValueError(f"precision must be 32 or 64, not {precision!r}")
    if backend not in ARCHS:
        raise ValueError(f"backend must be one of {', '.join(ARCHS)}, not {backend!r}")
    if _state is not None:
        if _state != (precision, backend):
            raise RuntimeError(
                f"Taichi is already initialised for precision={_state[0]} backend={_state[1]!r} in this "
                f"process; precision={precision} backend={backend!r} needs a new process")
        return
    import io

    from rigidsim.engine.lang import ti

    from rigidsim.engine import lang

    threads = cpu_threads() if backend == "cpu" else 0
    path = kernel_cache_path(backend)
    path.mkdir(parents=True, exist_ok=True)
    try:
        os.utime(path)  # most recently used, for _prune
    except OSError:
        pass
    _prune(path.parent, path)
    arch = getattr(ti, ARCHS[backend])
    extra = {}
    if backend == "cpu":
        # a thread pool of `threads` (more than the cores when asked: the tests force 8 on 2 cores), and the
        # env loops scheduled one env at a time (`lang.env_loop`) rather than by the multithreading pass
        extra.update(cpu_max_num_threads=threads, make_cpu_multithreading_loop=False)
    lang.ENV_LOOP_THREADS = threads
    lang.LOOP_CANARY = backend != "cpu"  # `kernels._loop_canary`
    lang.REAL_FUNCTIONS = backend in ("cpu", "gpu")  # LLVM's backends: `functions.part`
    lang.LAUNCH_STEPS_MAX = 1 if backend == "vulkan" else 0
    with contextlib.redirect_stdout(io.StringIO()), _floating_point_environment_kept():
        ti.init(arch=arch, default_fp=ti.f64 if precision == 64 else ti.f32, default_ip=ti.i32,
                fast_math=False,  # MuJoCo parity: no reassociation, and NaN checks must survive
                # Compile time: the language's own IR optimization pipeline (advanced_optimization, and
                # its control-flow-graph passes) costs more than half the compile time of these large
                # serial kernels (humanoid rollout, cold: 13.0 s -> 5.5 s without it on a loaded 2-core
                # VM) and buys nothing measurable at run time, since LLVM's -O3 follows (bench_smooth,
                # same run: humanoid and cheetah ratios to mujoco.rollout within noise);
                # RIGIDSIM_TI_ADVANCED_OPT=1 turns it back on.
                advanced_optimization=os.environ.get("RIGIDSIM_TI_ADVANCED_OPT", "0") == "1",
                cfg_optimization=os.environ.get("RIGIDSIM_TI_ADVANCED_OPT", "0") == "1",
                offline_cache=True, offline_cache_file_path=str(path),
                log_level=ti.WARN, debug=False, **extra)
    _state = (precision, backend)


def finalize() -> None:
    """Finalise the runtime (compiled kernels released, the offline cache's index written); `init` is then
    needed again."""
    global _state
    if _state is None:
        return
    from rigidsim.engine.lang import ti

    ti.reset()
    _state = None


def settings() -> Optional[Tuple[int, str]]:
    """(precision, backend) Taichi was initialised with, or None."""
    return _state

