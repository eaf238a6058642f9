"""The engine leaves the process's floating-point environment as it found it.

The kernel language's initialisation sets flush-to-zero / denormals-are-zero in the calling thread; without
runtime.init's restore, every later Python and numpy computation in the process reads subnormal numbers as
zero (a user's script using the Python API, our own loader: a geom size of 1e-320, which MuJoCo accepts, was
then refused as 0). Checked in a fresh process, since the test process may have initialised the engine."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.cli_util import ROOT, cli_env

SCRIPT = textwrap.dedent('''
    import numpy as np
    import rigidsim
    from rigidsim.engine.lang import ti

    b = rigidsim.Batch("cartpole", envs=2)
    b.step(n=3)
    # Python and numpy keep subnormal numbers after the engine ran
    assert float("1e-320") * 1.0 == 1e-320 and 1e-320 != 0.0, float("1e-320") * 1.0
    assert (np.array([1e-320]) * 1.0)[0] != 0.0
    assert np.nextafter(0.0, 1.0) * 1.0 > 0.0

    @ti.kernel
    def k(a: ti.types.ndarray(), x: ti.f64):
        for i in range(a.shape[0]):
            a[i] = x * 1e-10
    a = np.full(4096, -1.0)
    k(a, 1e-300)
    # the compiled kernels flush subnormal results to zero, on every thread alike
    assert np.all(a == 0.0), np.unique(a)
    print("OK")
''')


def test_python_keeps_subnormals_after_the_engine_ran(tmp_path):
    script = tmp_path / "fpenv.py"  # the kernel language reads a kernel's source from its file
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout[-2000:] + r.stderr[-2000:]
