"""The kernel-language shim (rigidsim/engine/lang.py): its fast class probe answers as Quadrants' own and is
in place before Quadrants decorates its own functions on import (the start-up saving it exists for)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_class_probe_installed_before_quadrants_decorates_its_own_functions():
    # inspect.getframeinfo is what the original probe calls for every decorated function; with the shim
    # imported first, importing Quadrants and the whole engine never calls it.
    code = textwrap.dedent(
        """
        import inspect
        calls = []
        orig = inspect.getframeinfo
        inspect.getframeinfo = lambda *a, **k: (calls.append(1), orig(*a, **k))[1]
        import rigidsim.engine.lang
        import rigidsim.engine.kernels
        from quadrants.lang import kernel_impl
        assert kernel_impl._inside_class._rigidsim
        print(len(calls))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "0"


def test_class_probe_matches_quadrants_original():
    from rigidsim.engine.lang import ti
    from quadrants.lang import kernel_impl

    fast = kernel_impl._inside_class
    assert fast._rigidsim
    import inspect
    import re

    def original(level):  # Quadrants' rule, written out: the caller's line starts a class body
        line = inspect.getframeinfo(sys._getframe(level + 1))[3][0].strip()
        return any(re.compile(p.pattern).match(line) for p in kernel_impl._KERNEL_CLASS_STACKFRAME_STMT_RES)

    seen = []

    def probe(f):
        seen.append((fast(3), original(2)))
        return f

    class Plain:
        @probe
        def method(self):
            pass

    @ti.data_oriented
    class Oriented(object):
        @probe
        def method(self):
            pass

    @probe
    def free():
        pass

    assert seen == [(True, True), (True, True), (False, False)]


def test_cold_compile_walks_each_function_once(tmp_path):
    # Quadrants' first compile pass only discovers dataclass fields to prune; our kernels take none, so the
    # shim skips it: on an empty kernel cache, a function inlined once is walked once, not twice. The kernel
    # still computes what it says, cold and then warm (from the cache).
    code = textwrap.dedent(
        """
        import importlib
        import numpy as np
        from rigidsim.engine import runtime
        from rigidsim.engine.lang import kernel, ti
        runtime.init(64, "cpu")
        F = importlib.import_module("quadrants.lang.func")
        walks = []
        orig = F.Func.__call__
        def counting(self, *a, **k):
            if getattr(self.func, "__name__", "") == "plus_one":
                walks.append(1)
            return orig(self, *a, **k)
        F.Func.__call__ = counting

        @ti.func
        def plus_one(x):
            return x + 1.0

        @kernel
        def k(a: ti.types.ndarray(), s: ti.template()):
            for i in range(a.shape[0]):
                a[i] = plus_one(a[i]) * s

        a = np.arange(4.0)
        k(a, 3)
        print(len(walks), a.tolist())
        """
    )
    script = tmp_path / "one_pass.py"  # the kernel language reads a kernel's source from its file
    script.write_text(code)
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": str(tmp_path / "cache")}
    for expect_walks in ("1", "0"):  # cold, then warm: the cached kernel is loaded without walking the source
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
                           cwd=str(ROOT))
        assert r.returncode == 0, r.stderr
        walks, values = r.stdout.strip().splitlines()[-1].split(" ", 1)
        assert walks == expect_walks
        assert values == "[3.0, 6.0, 9.0, 12.0]"


def test_fast_wrap_gives_textwrap_lines():
    # The caret text Quadrants builds for every expression goes through TextWrapper(width=80).wrap; the shim's
    # shortcut must give the same lines for every source line of the engine and Quadrants, and for caret
    # lines under them, blank lines, and lines at and past the width.
    import random
    import textwrap as tw

    import quadrants

    from rigidsim.engine.lang import _fast_wrap

    wrapper = tw.TextWrapper(width=80)
    fast = _fast_wrap(tw.TextWrapper.wrap, 80)
    lines = []
    for root in (ROOT / "rigidsim", Path(quadrants.__file__).parent / "lang"):
        for f in sorted(root.rglob("*.py")):
            lines += f.read_text().split("\n")
    rng = random.Random(0)
    carets = []
    for line in lines:
        a = rng.randint(0, max(len(line), 1))
        e = rng.randint(a, max(len(line), 1))
        hint = " " * a + "^" * (e - a)
        carets.append(hint + " " * (len(line) - len(hint)))
    odd = ["", " ", " " * 85, "x" * 80, "x" * 81, "a\tb", "  foo-bar baz  ", "a  b ", "é", "x" * 79 + "  "]
    shortcut = 0
    for text in lines + carets + odd:
        assert fast(wrapper, text) == wrapper.wrap(text), repr(text)
        shortcut += len(text) <= 80 and text.isascii() and text.isprintable()
    assert shortcut > len(lines)  # the shortcut is what most lines take


def test_source_positions_shim_installed_and_errors_still_point_at_the_line(tmp_path):
    # The shim's replacements are in place, and a kernel that does not compile still gets Quadrants' message:
    # the file, the line and a caret under the offending expression.
    code = textwrap.dedent(
        """
        import importlib
        import numpy as np
        from rigidsim.engine import runtime
        from rigidsim.engine.lang import kernel, ti
        runtime.init(64, "cpu")
        atu = importlib.import_module("quadrants.lang.ast.ast_transformer_utils")
        fb = importlib.import_module("quadrants.lang._func_base")
        dc = importlib.import_module("quadrants.lang._kernel_impl_dataclass")
        assert atu.TextWrapper.wrap._rigidsim
        assert fb.get_source_info_and_src._rigidsim
        assert importlib.import_module("quadrants.lang.kernel").get_source_info_and_src._rigidsim
        assert dc.unpack_ast_struct_expressions._rigidsim

        @ti.func
        def broken(x):
            return x + undefined_name_here

        @kernel
        def k(a: ti.types.ndarray()):
            for i in range(a.shape[0]):
                a[i] = broken(a[i])

        try:
            k(np.zeros(3))
        except Exception as e:
            print(str(e))
        """
    )
    script = tmp_path / "positions.py"
    script.write_text(code)
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
                       cwd=str(ROOT))
    assert r.returncode == 0, r.stderr
    lineno = code.splitlines().index("    return x + undefined_name_here") + 1
    assert f'File "{script}", line {lineno}, in broken:' in r.stdout
    assert "    return x + undefined_name_here\n" in r.stdout
    assert "               ^^^^^^^^^^^^^^^^^^^" in r.stdout  # under the undefined name


def test_real_function_calling_an_inlined_function_with_a_loop(tmp_path):
    # An inlined ti.func called inside a real function must emit its loop into that function (Quadrants
    # 1.3.3 emits it into the kernel, and a later pass crashes); the shim fixes the builder. Checked against
    # numpy, cold and then warm.
    code = textwrap.dedent(
        """
        import numpy as np
        from rigidsim.engine import runtime
        from rigidsim.engine.lang import kernel, ti
        runtime.init(64, "cpu")

        @ti.func
        def add_row(x: ti.template(), y: ti.template(), b, n):
            for i in range(n):
                y[b, i] = y[b, i] + x[b, i] * (i + 1)

        @ti.func(is_real_function=True)
        def part(b: ti.i32, n: ti.i32, x: ti.types.ndarray(), y: ti.types.ndarray()):
            add_row(x, y, b, n)

        @kernel
        def k(x: ti.types.ndarray(), y: ti.types.ndarray()):
            for b in range(x.shape[0]):
                for s in range(2):
                    part(b, x.shape[1] - s, x, y)

        x = np.arange(12.0).reshape(3, 4) + 1.0
        y = np.zeros((3, 4))
        k(x, y)
        w = np.arange(1.0, 5.0)
        expect = 2 * x * w
        expect[:, 3] -= x[:, 3] * 4
        print(np.array_equal(y, expect))
        """
    )
    script = tmp_path / "real_function.py"
    script.write_text(code)
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
                           cwd=str(ROOT))
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip().splitlines()[-1] == "True"


def test_numpy_arguments_reuse_the_cached_launch_context_and_never_a_freed_array(tmp_path):
    # The shim lets Quadrants cache the launch context of C-contiguous numpy arguments (Simulator.step(1)
    # spent ~0.5 ms re-filling it). Content written between launches is read fresh; an array freed and
    # replaced (its address and id often reused) evicts the entry, so every launch writes its own array;
    # a Fortran-ordered array (copied and written back by Quadrants) is never served from the cache.
    code = textwrap.dedent(
        """
        import gc
        import numpy as np
        from rigidsim.engine import runtime
        from rigidsim.engine.lang import kernel, ti
        runtime.init(64, "cpu")

        @kernel
        def scale(x: ti.types.ndarray(), y: ti.types.ndarray(), s: ti.i32):
            for i in range(x.shape[0]):
                y[i] = x[i] * s

        @kernel
        def fill(y: ti.types.ndarray(), s: ti.i32):
            for i, j in ti.ndrange(y.shape[0], y.shape[1]):
                y[i, j] = s * 100 + i * 10 + j

        cache = scale._primal.launch_context_buffer_cache._launch_ctx_cache
        x, y = np.arange(5.0), np.zeros(5)
        scale(x, y, 2)
        assert len(cache) == 1  # cached (without the shim Quadrants caches nothing with numpy arguments)
        x[:] = [7.0, 1.0, 0.0, -2.0, 3.5]
        scale(x, y, 2)
        assert len(cache) == 1 and np.array_equal(y, 2 * x)
        del x, y
        gc.collect()
        assert len(cache) == 0  # evicted with its arrays
        for k in range(40):
            x, y = np.arange(5.0) + k, np.zeros(5)
            scale(x, y, 3)
            assert np.array_equal(y, 3 * x), k
            del x, y
        gc.collect()
        assert len(cache) == 0
        yf = np.zeros((3, 2), order="F")
        i, j = np.meshgrid(np.arange(3), np.arange(2), indexing="ij")
        for s in (1, 2, 3):
            fill(yf, s)
            assert np.array_equal(yf, s * 100 + i * 10 + j), s
        assert len(fill._primal.launch_context_buffer_cache._launch_ctx_cache) == 0
        print("ok")
        """
    )
    script = tmp_path / "launch_cache.py"
    script.write_text(code)
    env = {**os.environ, "RIGIDSIM_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env,
                       cwd=str(ROOT))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "ok"
