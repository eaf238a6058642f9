"""Run the real `rigidsim` command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MODELS = SHARED / "models"


def shared_model(rel: str) -> Path:
    """Path of a third-party model under ../shared/models; skip when absent."""
    p = MODELS / rel
    if not p.exists():
        pytest.skip(f"{p} is not present (../shared is absent in this checkout)")
    return p


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("RIGIDSIM_DEBUG", None)
    env["COLUMNS"] = "200"
    return env


def cli_cmd(*args: str) -> list:
    return [sys.executable, "-m", "rigidsim", *map(str, args)]


def rigidsim(*args, cwd=None, timeout=600, env=None) -> subprocess.CompletedProcess:
    """Run the command line; `env`: variables to set on top of `cli_env()`."""
    return subprocess.run(cli_cmd(*args), cwd=cwd, env={**cli_env(), **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_clean_error(p: subprocess.CompletedProcess, code: int = 2) -> str:
    """The process failed with `code`, said why, and printed no traceback."""
    text = p.stdout + p.stderr
    assert p.returncode == code, f"exit {p.returncode}, expected {code}:\n{text}"
    assert "Traceback" not in text, text
    assert "rigidsim:" in p.stderr, text
    return text
