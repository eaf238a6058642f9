"""Properties of the engine's kernel source that the compiled code depends on."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "rigidsim" / "engine"


def _taichi_functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                name = ast.unparse(dec)
                if name in ("ti.func", "ti.kernel", "ti.real_func"):
                    yield node


def _kernel_functions():
    """(path, function) of every ti.func and ti.kernel of the engine."""
    for path in sorted(ENGINE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for fn in _taichi_functions(tree):
            yield path, fn


def test_no_augmented_assignment_to_array_elements():
    """`a[i] += x` in a ti.func or ti.kernel compiles to a seq_cst atomic (a CAS loop for doubles);
    each env is owned by one thread, so the engine writes `a[i] = a[i] + x` instead."""
    found = []
    n_funcs = 0
    for path, fn in _kernel_functions():
        n_funcs += 1
        for node in ast.walk(fn):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
                found.append(f"{path.name}:{node.lineno} in {fn.name}: {ast.unparse(node)}")
    assert n_funcs > 20  # the walk sees the engine's kernels and funcs
    assert not found, "atomic read-modify-writes in engine kernels:\n" + "\n".join(found)


def test_kernels_name_no_fixed_float_type():
    """Kernel code computes in the float the run chose (`float`: float64, or float32 with --precision 32).
    A local typed ti.f64 made the float32 Panda's first compile print 35 'Assign may lose precision'
    warnings (multicontact's and EPA's direction matrices), and computes in float64 where a device has
    little of it."""
    found = []
    for path, fn in _kernel_functions():
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr in ("f64", "f32") and ast.unparse(node.value) == "ti":
                found.append(f"{path.relative_to(ENGINE)}:{node.lineno} in {fn.name}")
    assert not found, "fixed float types in engine kernels:\n" + "\n".join(found)
