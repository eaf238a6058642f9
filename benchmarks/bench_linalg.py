"""The Newton solve's dense linear algebra, one operation at a time, rigidsim's kernel functions against
MuJoCo's C routines in the same run, one thread.

    python benchmarks/bench_linalg.py [--sizes 27,60] [--rounds 15]

For a random symmetric positive definite n x n matrix (n = 27 is the humanoid's Hessian): the dense Cholesky
factor (`solver.linalg.chol_factor` against `mju_cholFactor`) and the solve with it (`chol_solve` against
`mju_cholSolve`). Both sum in the same order (mju_dot's four partial sums); before timing, the factors are
checked equal to MuJoCo's to the bit and the solutions to 1e-12 (they differ in the last bit or two: the
compiled back substitutions round differently).

Ours: a kernel that runs the operation many times over in each of 16 envs (the factor on a fresh copy of the
matrix each time; the copy alone is timed too and taken off). MuJoCo's: a Python loop over the function (its
matrix copied back before each factor), less the same loop over a call of the same arity on 1-element
arrays, which is the binding's cost. Medians over interleaved rounds, µs per operation.

What it shows: the solve stage of `bench_stages.py` costs 1.5-2.5x MuJoCo's in the same steps, and these
are the steps a Newton iteration spends most in on a scene like the humanoid. The kernel language's CPU
backend emits scalar code (no SIMD: LLVM's vectorizers do not run) and computes each array index in 32
bits then widens it, where MuJoCo's mju_dot is AVX.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

B = 16
MINVAL = 1e-15  # mjMINVAL


def ours(n: int, reps: int):
    """name -> a function returning µs per operation (ours), and the factor it computes."""
    from rigidsim.engine import layout as L
    from rigidsim.engine.groups import _Flat, _Group
    from rigidsim.engine.lang import ti
    from rigidsim.engine.solver.linalg import chol_factor, chol_solve

    @ti.func
    def body(d: ti.template(), b, reps, n, op):
        for _ in range(reps):
            if op <= 1:  # a fresh copy of the matrix; op 1 then factors it
                for i in range(n):
                    for j in range(i + 1):
                        d.solver_H[b, i, j] = d.solver_Hcone[b, i, j]
                if op == 1:
                    chol_factor(d.solver_H, b, n, MINVAL)
            else:
                chol_solve(d, d.solver_H, b, n, L.SV_GRAD, L.SV_MGRAD)

    @ti.kernel
    def run(opt: ti.types.ndarray(), H: ti.types.ndarray(), H0: ti.types.ndarray(), V: ti.types.ndarray(),
            VI: ti.types.ndarray(), reps: ti.i32, op: ti.i32):
        for b in range(opt[0]):
            body(_Group(solver_H=_Flat(H, opt[1], opt[2]), solver_Hcone=_Flat(H0, opt[1], opt[2]),
                        solver_v=_Flat(V, opt[3], L.NSOLV), solver_vi=_Flat(VI, opt[4], L.NSOLVI)),
                 b, reps, opt[5], op)

    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    mat = a @ a.T + n * np.eye(n)
    H = np.zeros((B, n, n))
    H0 = np.broadcast_to(mat, (B, n, n)).copy()
    V = np.zeros((B, n, L.NSOLV))
    V[:, :, L.SV_GRAD] = rng.standard_normal(n)
    VI = np.zeros((B, n, L.NSOLVI), np.int32)
    VI[:, :, L.SVI_LIST] = np.arange(n)
    opt = np.array([B, n * n, n, n * L.NSOLV, n * L.NSOLVI, n], np.int32)
    flat = (H.reshape(-1), H0.reshape(-1), V.reshape(-1), VI.reshape(-1))

    def timed(op):
        run(opt, *flat, 1, op)
        t0 = time.perf_counter()
        run(opt, *flat, reps, op)
        return 1e6 * (time.perf_counter() - t0) / (B * reps)

    run(opt, *flat, 1, 1)
    factor = np.tril(H[0]).copy()
    run(opt, *flat, 1, 2)
    x = V[0, :, L.SV_MGRAD].copy()
    return {"copy": lambda: timed(0), "factor": lambda: timed(1), "solve": lambda: timed(2)}, mat, factor, \
        V[0, :, L.SV_GRAD].copy(), x


def theirs(mat, vec, calls: int):
    """name -> a function returning µs per call of MuJoCo's routine (and the binding's cost alone), and the
    factor it computes."""
    import mujoco

    n = mat.shape[0]
    work = mat.copy()
    res = np.zeros(n)
    one = np.zeros(1)

    def loop(f):
        def run():
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            return 1e6 * (time.perf_counter() - t0) / calls
        return run

    def factor():
        work[...] = mat
        mujoco.mju_cholFactor(work, MINVAL)

    def copy_call():
        work[...] = mat
        mujoco.mju_scl(one, one, 1.0)  # one array like mju_cholFactor's, and a number

    factor()
    fac = np.tril(work).copy()
    mujoco.mju_cholSolve(res, work, vec)
    x = res.copy()
    return {"factor": loop(factor), "copy+call": loop(copy_call),
            "solve": loop(lambda: mujoco.mju_cholSolve(res, work, vec)),
            "call3": loop(lambda: mujoco.mju_add(one, one, one))}, fac, x


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="27,60",
                    help="matrix sizes n (below about 20, MuJoCo's call is too short to time through its binding)")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    os.environ["RIGIDSIM_CPU_THREADS"] = "1"

    from rich.console import Console
    from rich.table import Table

    from bench_record import cpu_name
    from rigidsim.engine import runtime

    runtime.init(64, "cpu")
    table = Table(title=f"dense linear algebra of the Newton solve, µs per operation, rigidsim | MuJoCo, one thread, "
                        f"float64, {cpu_name()} (median of {args.rounds} interleaved rounds)")
    for col in ("n", "factor (chol_factor | mju_cholFactor)", "solve (chol_solve | mju_cholSolve)"):
        table.add_column(col, justify="right")
    for n in (int(s) for s in args.sizes.split(",")):
        reps = max(20, 200000 // (n * n * n // 6 + 50))
        mine, mat, factor, vec, x = ours(n, reps)
        ref, fac_ref, x_ref = theirs(mat, vec, max(200, reps * 2))
        if not (np.array_equal(factor, fac_ref) and np.allclose(x, x_ref, rtol=1e-12, atol=0.0)):
            print(f"n = {n}: the factors or the solutions differ (max {np.abs(factor - fac_ref).max():.3g}, "
                  f"{np.abs(x - x_ref).max():.3g}); not timed")
            continue
        t = {k: [] for k in ("f", "s", "mf", "ms")}
        for _ in range(args.rounds):
            copy = mine["copy"]()
            t["f"].append(mine["factor"]() - copy)
            t["s"].append(mine["solve"]())
            t["mf"].append(ref["factor"]() - ref["copy+call"]())
            t["ms"].append(ref["solve"]() - ref["call3"]())
        med = {k: float(np.median(v)) for k, v in t.items()}
        table.add_row(str(n), *[f"{med[a]:.2f} | {med[b]:.2f} ({med[b] / med[a]:.2f}x)"
                                for a, b in (("f", "mf"), ("s", "ms"))])
    Console(width=max(Console().width, 120)).print(table)
    print("Each cell: rigidsim | MuJoCo (the ratio MuJoCo / rigidsim: above 1, rigidsim is faster). MuJoCo's "
          "figures have the Python binding's cost per call taken off.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
