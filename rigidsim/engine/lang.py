"""The kernel language, behind one import: every engine module writes ``from rigidsim.engine.lang import ti``.

The distribution is Quadrants (Genesis's maintained fork of Taichi: the same kernel language, imported as
``quadrants``), chosen over upstream Taichi 1.7.4 for start-up (benchmarks/bench_smooth.py, README):
its LLVM pipeline compiles our rollout kernel about twice as fast, and its *fastcache* loads a cached
kernel without re-running the Python AST transform. Switching the distribution is this file alone (and
``runtime.init``'s options): the engine uses only the common Taichi language (``ti.func``,
``ti.template``, ``ti.static``, ``ti.Vector``, ndarray arguments).

A cold compile walks each kernel's source once instead of Quadrants' twice (`_one_pass_compile`: the first
of its two passes only looks for dataclass fields to prune, and our kernels take no dataclasses), and spends
less on the source-position text kept for error messages (`_cheap_source_positions`: the same text).
Real functions (``ti.func(is_real_function=True)``, `engine.functions`) get their inlined callees' code
in their own body (`_real_function_builder`: Quadrants 1.3.3 puts it in the kernel's). A launch with
numpy arguments reuses its argument context while those arrays live (`_cached_host_array_launches`:
Quadrants caches it for its own ndarrays only).

``kernel`` is ``ti.kernel`` with fastcache on. Fastcache keys a kernel on the source text of its
functions, its argument types and the compile config, not on module-level constants (our column
layouts); ``runtime`` makes the whole cache directory depend on a hash of the engine's sources, so a
changed constant can never load a stale kernel.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import linecache
import os
import sys

# quiet: no version banner on import
os.environ.setdefault("ENABLE_QUADRANTS_HEADER_PRINT", "False")


def _linecache_class_probe(patterns):
    """Quadrants asks, for every ``@ti.func`` and ``@ti.kernel`` it decorates (about 220 of its own while it
    imports, then ours), whether the decorator sits inside a class body, by reading the caller's source
    line with ``inspect.getframeinfo``; that scans every loaded module to find the file, a quarter of the
    import. This reads the same line through ``linecache``: the same answer for code in files, without the
    scan."""

    def inside_class(level_of_class_stackframe: int) -> bool:
        try:
            frame = sys._getframe(level_of_class_stackframe)
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        except ValueError:
            return False
        if not line:  # no source to read (importlib's frozen frames): the original says False there too
            return False
        first = line.strip()
        return any(p.match(first) for p in patterns)

    inside_class._rigidsim = True
    return inside_class


class _PatchKernelImpl(importlib.abc.MetaPathFinder):
    """Swaps in the fast class probe the moment ``quadrants.lang.kernel_impl`` has run, before the rest of
    Quadrants' import decorates its own functions with it. Anything unexpected leaves Quadrants as it is."""

    NAME = "quadrants.lang.kernel_impl"

    def find_spec(self, name, path, target=None):
        if name != self.NAME:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            patterns = getattr(module, "_KERNEL_CLASS_STACKFRAME_STMT_RES", None)
            if callable(getattr(module, "_inside_class", None)) and patterns is not None:
                module._inside_class = _linecache_class_probe(patterns)

        loader.exec_module = exec_module
        return spec


if "quadrants" not in sys.modules:
    sys.meta_path.insert(0, _PatchKernelImpl())

import quadrants as ti  # noqa: E402
from quadrants.lang import impl  # noqa: E402,F401
from quadrants.lang import kernel_impl as _ki  # noqa: E402
from rigidsim.engine.layout import LAUNCH_ENV0, LAUNCH_ENV1  # noqa: E402

if not getattr(getattr(_ki, "_inside_class", None), "_rigidsim", True):  # imported before us: patch now
    _ki._inside_class = _linecache_class_probe(_ki._KERNEL_CLASS_STACKFRAME_STMT_RES)



_compile_watchers: list = []


@contextlib.contextmanager
def watch_compiles(callback):
    """Within the block, ``callback(kernel_name)`` is called each time a kernel is about to be compiled because
    the offline cache does not hold it (a fastcache miss: first use of a scene's kernels, or the first run
    after the engine's sources changed), before its compilation starts. A kernel loaded from the cache calls
    nothing. A Quadrants without the fastcache hook (`_one_pass_compile`) never calls it."""
    _compile_watchers.append(callback)
    try:
        yield
    finally:
        _compile_watchers.remove(callback)


def _one_pass_compile():
    """Quadrants compiles a kernel that is not in its fastcache in two passes over the Python source: the first
    only discovers which fields of dataclass arguments each function uses (to prune the others), the second
    builds the kernel. No kernel of ours takes a dataclass (their arguments are ndarrays, ints and static
    ints), so the first pass finds nothing to prune and its walk of every inlined function, about a third of
    a cold compile, is wasted. On a fastcache miss this answers "nothing to prune" for such kernels, so only
    the building pass runs (what Quadrants itself does on a fastcache hit). A kernel with a dataclass or
    data-oriented argument, or a Quadrants without these hooks, keeps both passes."""
    import dataclasses

    try:
        from quadrants.lang.kernel import Kernel
    except ImportError:
        return
    find = getattr(Kernel, "_try_load_fastcache", None)
    if find is None or getattr(find, "_rigidsim", False):
        return

    try:
        from quadrants.lang.util import is_data_oriented
    except ImportError:
        is_data_oriented = None

    def plain(kern, args):
        if is_data_oriented is None:
            return False
        for meta in getattr(kern, "arg_metas", ()):
            if dataclasses.is_dataclass(getattr(meta, "annotation", None)):
                return False
        return not any(dataclasses.is_dataclass(a) or is_data_oriented(a) for a in args)

    def try_load_fastcache(self, args, key):
        used = find(self, args, key)
        if used is None and getattr(self, "_l1_key", None) is not None:  # a fastcache kernel not in the cache
            for watch in tuple(_compile_watchers):
                watch(self.func.__name__)
        if used is None and plain(self, args) and hasattr(self, "used_py_dataclass_parameters_by_key_enforcing"):
            self.used_py_dataclass_parameters_by_key_enforcing[key] = set()
            return set()
        return used

    try_load_fastcache._rigidsim = True
    Kernel._try_load_fastcache = try_load_fastcache


_one_pass_compile()


def _fast_wrap(wrap, width):
    """``TextWrapper(width).wrap`` with a shortcut for what it does to a short line of printable ASCII: one line,
    its trailing spaces dropped (none for a blank line). Anything else (tabs, other whitespace, longer lines)
    goes to the original."""

    def fast(self, text):
        if self.width == width and len(text) <= width and text.isascii() and text.isprintable():
            text = text.rstrip(" ")
            return [text] if text else []
        return wrap(self, text)

    fast._rigidsim = True
    return fast


def _cheap_source_positions():
    """A cold compile spends about a quarter of its Python time on text that only an error message shows: for
    every expression node, Quadrants formats its source line with a caret line under it, each through
    ``textwrap.TextWrapper.wrap`` (width 80); it reads each function's source lines through ``inspect`` at
    every inlined call (hundreds per kernel); and it walks each function's AST once more to flatten dataclass
    attributes even when the function has none. This gives the same strings and trees for less: the wrapper's
    shortcut for short printable lines (`_fast_wrap`), the source of a function read once per process, and no
    walk when there is nothing to flatten. Anything unexpected leaves Quadrants as it is."""
    import importlib

    try:
        from quadrants.lang import _func_base, _kernel_impl_dataclass
        from quadrants.lang.ast import ast_transformer_utils as _atu
        # the module, not the `kernel` decorator the package exports under the same name
        _kernel_mod = importlib.import_module("quadrants.lang.kernel")
    except ImportError:
        return
    base = getattr(_atu, "TextWrapper", None)
    if isinstance(base, type) and not getattr(base.wrap, "_rigidsim", False):
        _atu.TextWrapper = type("TextWrapper", (base,), {"wrap": _fast_wrap(base.wrap, 80)})

    read = getattr(_func_base, "get_source_info_and_src", None)
    if callable(read) and not getattr(read, "_rigidsim", False):
        seen = {}

        def get_source_info_and_src(func):
            hit = seen.get(func)
            if hit is None:
                hit = seen[func] = read(func)
            return hit[0], list(hit[1])

        get_source_info_and_src._rigidsim = True
        _func_base.get_source_info_and_src = get_source_info_and_src
        if getattr(_kernel_mod, "get_source_info_and_src", None) is read:
            _kernel_mod.get_source_info_and_src = get_source_info_and_src

    unpack = getattr(_kernel_impl_dataclass, "unpack_ast_struct_expressions", None)
    if callable(unpack) and not getattr(unpack, "_rigidsim", False):

        def unpack_ast_struct_expressions(tree, struct_locals):
            # with no struct names, the flattening changes no node and the parsed tree has every location
            return tree if not struct_locals else unpack(tree, struct_locals=struct_locals)

        unpack_ast_struct_expressions._rigidsim = True
        _kernel_impl_dataclass.unpack_ast_struct_expressions = unpack_ast_struct_expressions


_cheap_source_positions()


def _real_function_builder():
    """An inlined ``ti.func`` called inside a real function (``ti.func(is_real_function=True)``) must emit its
    statements into that function's body. Quadrants 1.3.3 gives it the kernel's AST builder instead, so its
    loops land in the kernel and the function reads the kernel's variables (a crash in a later pass). Every
    other construct already uses the callable being compiled; this makes the inlined call do the same. With
    no real function being compiled, the answer is the kernel's builder, as before."""
    try:
        from quadrants._lib.core.quadrants_python import Function as FunctionCxx
        from quadrants.lang.kernel import Kernel
    except ImportError:
        return
    builder = getattr(Kernel, "ast_builder", None)
    if builder is None or getattr(builder, "_rigidsim", False):
        return

    def ast_builder(self):
        compiling = impl.get_runtime()._compiling_callable
        if isinstance(compiling, FunctionCxx):
            return compiling.ast_builder()
        return builder(self)

    ast_builder._rigidsim = True
    Kernel.ast_builder = ast_builder


_real_function_builder()


def _cached_host_array_launches():
    """Quadrants caches a kernel's launch context (the argument buffer it fills from the Python arguments),
    keyed by the arguments' identities, but not when an argument is a numpy array: then every launch redoes
    the per-argument work (an ``np.iinfo``, ``v.ctypes.data`` and a binding call each), about 4 us per array,
    which for our ~80 arrays made ``Simulator.step(1)`` cost ~0.5 ms over the kernel itself. A C-contiguous
    numpy array passed as an ndarray argument keeps its buffer, shape and dtype for its whole life (nothing
    here resizes an array in place), so the context filled from it stays right while the array lives; this
    lets Quadrants cache it, and evicts the entry when any of those arrays is freed (a weak reference each,
    as Quadrants does for its own ndarrays), so a later array at the same address is never served a stale
    pointer. A non-contiguous array (copied and written back by Quadrants) and every other argument are left
    as Quadrants decides."""
    import weakref

    try:
        import numpy as np
        from quadrants.lang import _func_base
        from quadrants.types import ndarray_type

        _kernel_mod = importlib.import_module("quadrants.lang.kernel")
        cache_cls = _kernel_mod.LaunchContextBufferCache
        func_base = _func_base.FuncBase
        set_args = func_base.__dict__["_recursive_set_args"].__func__
        populate, cache = cache_cls.populate_launch_ctx_from_cache, cache_cls.cache
    except (ImportError, AttributeError, KeyError):
        return
    if getattr(set_args, "_rigidsim", False):
        return
    pending = []  # the numpy arrays of the launch being prepared

    def recursive_set_args(used, basename, launch_ctx, buf, needed, provided, v, index, slot, callbacks):
        n, cacheable = set_args(used, basename, launch_ctx, buf, needed, provided, v, index, slot, callbacks)
        if (not cacheable and type(v) is np.ndarray and type(needed) is ndarray_type.NdarrayType
                and v.flags.c_contiguous):
            pending.append(v)
            cacheable = True
        return n, cacheable

    def populate_launch_ctx_from_cache(self, args_hash, launch_ctx):
        pending.clear()
        return populate(self, args_hash, launch_ctx)

    def cache_launch(self, t_kernel, args_hash, launch_ctx, buf):
        cache(self, t_kernel, args_hash, launch_ctx, buf)
        tracker = self._launch_ctx_cache_tracker.get(args_hash)
        if tracker is not None and pending:

            def evict(_ref, _self=self, _hash=args_hash, _tracker=tracker):
                _tracker.clear()
                _self._launch_ctx_cache.pop(_hash, None)
                _self._launch_ctx_cache_tracker.pop(_hash, None)

            tracker.extend(weakref.ref(a, evict) for a in pending)
        pending.clear()

    recursive_set_args._rigidsim = True
    func_base._recursive_set_args = staticmethod(recursive_set_args)
    cache_cls.populate_launch_ctx_from_cache = populate_launch_ctx_from_cache
    cache_cls.cache = cache_launch


_cached_host_array_launches()

DIST = "quadrants"
VERSION = ".".join(str(v) for v in ti.__version__)
__all__ = ["ti", "impl", "kernel", "DIST", "VERSION", "watch_compiles", "env_loop", "env_of"]

# threads of the CPU env loop, set by `runtime.init` before any kernel compiles; 0: not the CPU backend
ENV_LOOP_THREADS = 0
# True on a device (set by `runtime.init`): each env's rollout launch ends with `kernels._loop_canary`
LOOP_CANARY = False
# the most steps a rollout launch takes, 0 for no limit (set by `runtime.init`): 1 on Vulkan, whose software
# driver (llvmpipe) stops a kernel's loops after 65,535 iterations in all (`kernels._loop_canary`), which a step
# of a small scene stays within and a launch of many steps does not. A launch then records 2 frames at most
# (`constraint.record.record_constraint`)
LAUNCH_STEPS_MAX = 0
# whether the backend has real functions (LLVM's: CPU and CUDA; set by `runtime.init`): `functions.part`
REAL_FUNCTIONS = True


def kernel(fn):
    """``ti.kernel`` with fastcache: every kernel here takes all its data as arguments."""
    return ti.kernel(fastcache=True)(fn)


def env_loop() -> None:
    """Called in a kernel just before its env loop (``for b in range(B)``), at compile time: on the CPU, the
    loop runs on ENV_LOOP_THREADS threads that take one env at a time from a shared counter (dynamic
    scheduling: an env that costs more, one in a pile while another falls, holds up one thread, not a
    block of envs), whatever B is. It relies on the CPU backend's loop pass being off
    (``make_cpu_multithreading_loop=False`` in `runtime.init`), which otherwise cuts the loop into at most
    ceil(n / 512) contiguous blocks: 4 threads for 2048 iterations, whatever the machine. On a GPU the
    backend's own launch shape is kept."""
    if ENV_LOOP_THREADS:
        ti.loop_config(block_dim=1, parallelize=ENV_LOOP_THREADS)


@ti.func
def env_begin(launch: ti.template(), nenv: ti.template()):
    """The first iteration of a rollout kernel's env loop: launch[LAUNCH_ENV0] on the CPU (nenv = 0); 0 on a
    device (nenv > 0), where the loop's bounds must be compile-time numbers: with bounds read from an array
    the backend launches its full grid (65,536 threads on Vulkan) whatever B is, and each launch of a
    rollout kernel on Mesa's software driver took 0.3-1.5 s however few envs it stepped; with 0 .. nenv it
    launches nenv threads (`in_slice` then skips those outside the launch's slice)."""
    if ti.static(nenv):
        return 0
    else:
        return launch[LAUNCH_ENV0]


@ti.func
def env_end(launch: ti.template(), nenv: ti.template()):
    """The end of a rollout kernel's env loop (`env_begin`): launch[LAUNCH_ENV1] on the CPU, nenv on a device."""
    if ti.static(nenv):
        return nenv
    else:
        return launch[LAUNCH_ENV1]


@ti.func
def in_slice(i, launch: ti.template(), nenv: ti.template()) -> bool:
    """Whether iteration i of the env loop is in the launch's slice: always on the CPU (the loop's bounds are
    the slice), i in launch[LAUNCH_ENV0:LAUNCH_ENV1] on a device."""
    ok = True
    if ti.static(nenv):
        ok = launch[LAUNCH_ENV0] <= i < launch[LAUNCH_ENV1]
    return ok


def device_envs(n_envs: int) -> int:
    """The env loop's compile-time length on a device: the least power of two >= n_envs (so that nearby batch
    sizes share a compiled kernel)."""
    return 1 << max(int(n_envs) - 1, 0).bit_length()


@ti.func
def env_of(i, n):
    """The env that iteration i of an env loop over n envs works on: i * P mod n for a prime P (97, else 89
    when 97 divides n; the identity when both do), a permutation of the envs in which the iterations that
    threads take one after another are envs P apart. Neighbouring envs share cache lines in every per-env
    array (an env's qpos, ncon, time, status: a few bytes each), and two threads writing them at once make
    those lines move between cores on every store (false sharing): with one env per block, in env order, the
    cheetah scaled 1.2x from 1 to 2 threads. On a GPU (no ENV_LOOP_THREADS) the identity: neighbouring
    threads on neighbouring envs is what coalesces their loads there."""
    p = 1
    if ti.static(ENV_LOOP_THREADS):
        p = 97
        if n % 97 == 0:
            p = 89
            if n % 89 == 0:
                p = 1
    return (i * p) % n
