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
