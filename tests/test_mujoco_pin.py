"""tests/conftest.py: under CI (or RIGIDSIM_REQUIRE_MUJOCO=1) the session stops at start unless the installed
mujoco is the version pinned in pyproject.toml's test extra; without those variables a missing MuJoCo only
skips its tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_util import ROOT
from tests.conftest import pinned_mujoco


def test_the_pin_is_read_from_pyproject():
    assert pinned_mujoco() == "4.0.0"


def _pytest(tmp_path, fake: str | None, **env):
    """`pytest --collect-only` of one small file (no MuJoCo in it) in a subprocess, with a fake `mujoco` package (its
    __init__.py is `fake`) first on the path when given."""
    path = [str(ROOT)]
    if fake is not None:
        (tmp_path / "mujoco").mkdir()
        (tmp_path / "mujoco" / "__init__.py").write_text(fake)
        path.insert(0, str(tmp_path))
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "RIGIDSIM_REQUIRE_MUJOCO", "PYTEST_ADDOPTS")}
    e.update(env, PYTHONPATH=os.pathsep.join(path))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           "--collect-only", "tests/test_engine_source.py"], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("env", [{"CI": "true"}, {"RIGIDSIM_REQUIRE_MUJOCO": "1"}])
def test_another_mujoco_version_fails_the_session(tmp_path, env):
    p = _pytest(tmp_path, "__version__ = '3.3.7'\n", **env)
    text = p.stdout + p.stderr
    assert p.returncode == pytest.ExitCode.USAGE_ERROR, text
    assert "mujoco 3.3.7 is installed" in text and "mujoco==4.0.0" in text, text
    assert "collected" not in text, text  # stopped before collecting


def test_a_missing_mujoco_fails_the_session_under_ci(tmp_path):
    p = _pytest(tmp_path, "raise ImportError('no MuJoCo here')\n", CI="true")
    text = p.stdout + p.stderr
    assert p.returncode == pytest.ExitCode.USAGE_ERROR, text
    assert "`import mujoco` failed (ImportError: no MuJoCo here)" in text, text


def test_without_ci_another_version_does_not_stop_the_session(tmp_path):
    p = _pytest(tmp_path, "__version__ = '3.3.7'\n")
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_pinned_mujoco_passes_under_ci(tmp_path):
    p = _pytest(tmp_path, None, CI="true")
    assert p.returncode == 0, p.stdout + p.stderr
