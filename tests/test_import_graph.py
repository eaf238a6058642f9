"""No import cycles inside the `rigidsim` package.

Every ``import`` and ``from ... import`` statement of every module is read
with `ast` (relative forms and ``from rigidsim.x import y`` resolved: an edge
goes to ``rigidsim.x.y`` when that is a module, else to ``rigidsim.x``).
Imports written inside functions count too: a function-level import that
only dodges a cycle at import time still leaves the two modules depending on
each other. Only ``if TYPE_CHECKING:`` blocks are left out. The data flows
one way (STYLE.md), so the graph must be acyclic; a failure names the cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

ROOT = Path(__file__).resolve().parents[1]


def package_modules(pkg_dir: Path) -> Dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package folder."""
    out = {}
    for f in sorted(pkg_dir.rglob("*.py")):
        parts = list(f.relative_to(pkg_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _type_checking_nodes(tree: ast.AST) -> Set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skip.update(id(n) for n in ast.walk(child))
    return skip


def module_imports(name: str, path: Path, modules: Dict[str, Path]) -> Dict[str, int]:
    """The package modules `name` imports -> the line of the first such import."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_nodes(tree)
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out: Dict[str, int] = {}

    def add(target: Optional[str], line: int) -> None:
        if target and target in modules and target != name:
            out.setdefault(target, line)

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            for a in node.names:
                sub = f"{src}.{a.name}"
                add(sub if sub in modules else src, node.lineno)
    return out


def import_graph(pkg_dir: Path) -> Dict[str, Dict[str, int]]:
    modules = package_modules(pkg_dir)
    return {m: module_imports(m, p, modules) for m, p in modules.items()}


def cyclic_components(graph: Dict[str, Dict[str, int]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    comps: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(sorted(c) for c in comps)


def find_cycles(graph: Dict[str, Dict[str, int]]) -> List[List[str]]:
    """One shortest cycle per cyclic component, through its first module, as a path a -> ... -> a."""
    cycles = []
    for comp in cyclic_components(graph):  # a shortest cycle through the component's first module (breadth-first)
        members, start = set(comp), min(comp)
        prev = {start: None}
        queue, found = [start], None
        while queue and found is None:
            nxt = []
            for v in queue:
                for w in sorted(graph[v]):
                    if w == start:
                        found = v
                        break
                    if w in members and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            queue = nxt
        path, v = [], found
        while v is not None:
            path.append(v)
            v = prev[v]
        cycles.append(path[::-1] + [start])
    return cycles


def describe(cycle: List[str], graph: Dict[str, Dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_rigidsim_has_no_import_cycle():
    graph = import_graph(ROOT / "rigidsim")
    assert "rigidsim.model" in graph and "rigidsim.loaders.mjcf" in graph  # the walk found the package
    cycles = find_cycles(graph)
    assert not cycles, "import cycles in rigidsim:\n" + "\n".join(
        f"{describe(c, graph)}\n  (every module of this circle: {', '.join(comp)})"
        for c, comp in zip(cycles, cyclic_components(graph)))


def _write_pkg(tmp_path: Path, files: Dict[str, str]) -> Path:
    for rel, text in files.items():
        f = tmp_path / "pkg" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return tmp_path / "pkg"


def test_finds_cycles_through_every_import_form(tmp_path):
    """The walker sees absolute, relative, from-package and function-level imports, and names the cycle."""
    pkg = _write_pkg(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "from pkg.sub.b import thing\n",
        "sub/a.py": "from pkg.sub import c\n",
        "sub/b.py": "def f():\n    from . import a\n",
        "sub/c.py": "from ..sub.b import thing\nthing = 1\n",
        "d.py": "import pkg.e\n",
        "e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.sub.b"] == {"pkg.sub.a": 2}
    assert graph["pkg.sub.a"] == {"pkg.sub.c": 1}
    assert graph["pkg.sub.c"] == {"pkg.sub.b": 1}
    assert graph["pkg.d"] == {"pkg.e": 1} and graph["pkg.e"] == {}
    assert find_cycles(graph) == [["pkg.sub.a", "pkg.sub.c", "pkg.sub.b", "pkg.sub.a"]]
    assert describe(find_cycles(graph)[0], graph) == (
        "pkg.sub.a (line 1) -> pkg.sub.c (line 1) -> pkg.sub.b (line 2) -> pkg.sub.a")
