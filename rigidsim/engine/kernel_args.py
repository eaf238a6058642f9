"""The kernels' argument lists, generated from `layout.MODEL_ARRAYS` and `layout.DATA_ARRAYS`.

A kernel entry point in kernels.py names every packed array twice: in its signature (Taichi reads a
kernel's parameters from its source) and in the call that groups them for the ti.funcs. Both are written
between marker comments and rendered here from the tables, so a new array is one line in a table:

    # >>> generated: signature          every array as `name: ND,`, model arrays first
    # >>> generated: groups             `_model(...)` and `_data(opt_i, ...)` over the same names
    # <<< generated                     ends either region

``python -m rigidsim.engine.kernel_args`` rewrites kernels.py (and collision/kernel.py, constraint/kernel.py,
functions.py: `functions.compiled` takes every array too) in place; tests/test_kernel_args.py fails while a
file is out of date.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rigidsim.engine import layout as L

_ENGINE = Path(__file__).resolve().parent
KERNELS = _ENGINE / "kernels.py"
# every file with generated regions
FILES = (KERNELS, _ENGINE / "collision" / "kernel.py", _ENGINE / "constraint" / "kernel.py", _ENGINE / "functions.py")
WIDTH = 116
_REGION = re.compile(r"^(?P<indent>[ \t]*)# >>> generated: (?P<kind>\w+)\n(?P<body>.*?)^[ \t]*# <<< generated\n",
                     re.M | re.S)


def _wrap(items, indent: str, prefix: str = "", suffix: str = "") -> str:
    """`prefix` + the items joined by ", " + `suffix`, packed into lines of at most WIDTH characters without
    breaking an item; continuation lines are aligned after `prefix`."""
    items = list(items)
    lines, line = [], indent + prefix
    for k, item in enumerate(items):
        piece = item + (suffix if k == len(items) - 1 else ",")
        if line.strip() and len(line) + 1 + len(piece) > WIDTH and line not in (indent + prefix,):
            lines.append(line)
            line = indent + " " * len(prefix) + piece
        else:
            line = line + ("" if line == indent + prefix else " ") + piece
    lines.append(line)
    return "\n".join(lines) + "\n"


def _render_region(kind: str, indent: str) -> str:
    if kind == "signature":
        return (f"{indent}# Model:\n" + _wrap([f"{n}: ND" for n in L.MODEL_ARGS], indent, suffix=",")
                + f"{indent}# Data:\n" + _wrap([f"{n}: ND" for n in L.DATA_ARGS], indent, suffix=","))
    if kind == "groups":
        return (_wrap(L.MODEL_ARGS, indent, prefix="_model(", suffix="),")
                + _wrap(("opt_i",) + L.DATA_ARGS, indent, prefix="_data(", suffix="),"))
    raise ValueError(f"unknown generated region kind {kind!r}")


def render(text: str) -> str:
    """`text` with every generated region rendered from the tables."""
    def sub(m):
        indent = m.group("indent")
        return (f"{indent}# >>> generated: {m.group('kind')}\n" + _render_region(m.group("kind"), indent)
                + f"{indent}# <<< generated\n")

    return _REGION.sub(sub, text)


def main() -> int:
    for path in FILES:
        old = path.read_text()
        new = render(old)
        if new != old:
            path.write_text(new)
            print(f"rewrote {path}")
        else:
            print(f"{path} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
