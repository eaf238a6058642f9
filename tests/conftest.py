"""The suite's session-wide checks.

MuJoCo is the reference of every parity test; without it (or with another release) those tests skip or
compare with another physics, and the suite would go green having checked nothing. So when ``CI`` is set in
the environment (``.ci/run`` runs under CI=true) or ``RIGIDSIM_REQUIRE_MUJOCO=1``, the session stops before
collecting anything unless ``import mujoco`` works and ``mujoco.__version__`` is the release pinned in
pyproject.toml's ``test`` extra (the one place that names it). Locally, without those variables, the
MuJoCo tests skip as before.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def pinned_mujoco() -> str:
    """The mujoco version pinned (``mujoco==X``) in pyproject.toml's ``test`` extra."""
    text = PYPROJECT.read_text()
    try:
        import tomllib
    except ImportError:  # Python 3.10: the line itself
        m = re.search(r'^test\s*=\s*\[(.*?)\]', text, re.M | re.S)
        extra = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    else:
        extra = tomllib.loads(text)["project"]["optional-dependencies"]["test"]
    pins = [s.split("==", 1)[1].strip() for s in extra if re.match(r"mujoco\s*==", s)]
    if len(pins) != 1:
        raise RuntimeError(f"{PYPROJECT}: the test extra must pin mujoco exactly once (mujoco==X), found {extra}")
    return pins[0]


def mujoco_problem() -> str | None:
    """Why the installed mujoco is not the pinned reference, or None when it is."""
    want = pinned_mujoco()
    try:
        import mujoco
    except Exception as e:  # noqa: BLE001 - any failure to import is the answer
        return f"`import mujoco` failed ({type(e).__name__}: {e}); the parity tests need mujoco=={want}"
    have = getattr(mujoco, "__version__", None)
    if have != want:
        return (f"mujoco {have} is installed ({getattr(mujoco, '__file__', '?')}), but the parity tests compare "
                f"with mujoco=={want} (pyproject.toml's test extra)")
    return None


def _required() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("RIGIDSIM_REQUIRE_MUJOCO") == "1"


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput") or not _required():  # xdist workers: the controller checked
        return
    problem = mujoco_problem()
    if problem:
        pytest.exit(f"rigidsim's test suite requires the pinned MuJoCo here (CI or RIGIDSIM_REQUIRE_MUJOCO=1 is "
                    f"set): {problem}. Install it with pip install '.[test]'.", returncode=pytest.ExitCode.USAGE_ERROR)
