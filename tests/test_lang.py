"""The kernel-language shim (rigidsim/engine/lang.py): its fast class probe answers as Quadrants' own and is
in place before Quadrants decorates its own functions on import (the start-up saving it exists for)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


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
