"""Every command of the README runs as written (issue 28, item 14).

The ```bash blocks' commands and the ```python blocks run in document order, in one fresh temporary folder,
with `rigidsim` and `python` on PATH (this interpreter, this checkout first on PYTHONPATH), and each must
exit 0. Not run: the set-up and test-suite commands (SETUP, listed exactly: they install packages or run the
whole suite).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

SETUP = {
    "python3 -m venv .venv && . .venv/bin/activate && pip install '.[plot,viz,mujoco]'",
    "pip install '.[test]' && python -m pytest -q -n 2 --dist loadfile",
}


def _blocks():
    text = README.read_text()
    items = []
    for m in re.finditer(r"^```(bash|python)\n(.*?)^```", text, re.S | re.M):
        lang, body = m.group(1), m.group(2)
        line = text[:m.start()].count("\n") + 1
        if lang == "python":
            items.append(pytest.param("python", body, id=f"L{line}-python"))
            continue
        for k, cmd in enumerate(c for c in body.splitlines() if c.strip()):
            if cmd.strip() in SETUP:
                continue
            items.append(pytest.param("bash", cmd, id=f"L{line + 1 + k}-{cmd.split()[0]}-{cmd.split()[1] if len(cmd.split()) > 1 else ''}"))
    return items


BLOCKS = _blocks()


def test_readme_is_short_and_keeps_the_setup_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 360
    for cmd in SETUP:
        assert cmd in text, f"the README no longer holds the set-up command {cmd!r}: update SETUP"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    bindir = d / ".bin"
    bindir.mkdir()
    for name, argv in (("rigidsim", f'"{sys.executable}" -m rigidsim'), ("python", f'"{sys.executable}"')):
        p = bindir / name
        p.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        p.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("DISPLAY", None)
    return d, env


@pytest.mark.parametrize("lang,code", BLOCKS)
def test_readme_command(lang, code, workdir):
    d, env = workdir
    cmd = [sys.executable, "-c", code] if lang == "python" else ["bash", "-c", code]
    r = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{code}\nexit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
