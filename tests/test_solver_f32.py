"""The constraint solver compiles and runs in float32 (in a child process: a process holds one precision).

A sanity check of the float32 build, not a parity test: on a contact scene with both cones, Newton, CG and
noslip give finite accelerations whose cost (in float64, tests/solver_util.primal_cost) is within 1e-3 of
MuJoCo's float64 optimum; float32 rounding (1e-7) keeps the solver from its 1e-8 tolerance, so it stops on
the iteration limit or a line search without improvement instead.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent('''
    import numpy as np
    from rigidsim.engine import runtime
    runtime.init(32, "cpu")
    from tests import solver_util as U
    worst = 0.0
    for solver, cone, ns in (("Newton", "pyramidal", 0), ("Newton", "elliptic", 0), ("CG", "elliptic", 0),
                             ("Newton", "elliptic", 10), ("Newton", "pyramidal", 10)):
        mjm = U.inline_model(U.PILE, solver, cone, ns=ns, condim=4, impratio=1.0)
        snaps = U.sample(mjm, 300, 15)
        dd = U.run(mjm, snaps)
        for b, s in enumerate(snaps):
            r = U.results(dd, b, mjm.nv, s["nefc"])
            assert np.all(np.isfinite(r["qacc"])), (solver, cone, ns, b)
            ours, theirs = U.primal_cost(s, r["qacc"].astype(float)), U.primal_cost(s, s["qacc"])
            if ns == 0:
                worst = max(worst, abs(ours - theirs) / abs(theirs))
    print("WORST", worst)
''')


def test_float32_build():
    res = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    worst = float(res.stdout.split("WORST")[-1])
    assert worst <= 1e-3, worst
