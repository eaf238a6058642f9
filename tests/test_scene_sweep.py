"""Every scene runs through the real command line (RIGIDSIM_SWEEP=1; the default run checks one scene/mode pair,
a rotating slice, tests/sweep_slice.py): each scene of ../shared/models
(dm_control/common/* are include-only files) and of the repo's scenes/, 1000 steps, B = 8, with the default
options and with MuJoCo compatibility (`--set enable_mujoco_compatibility=true`): exit 0, a complete file of
1001 frames, and no NaN or Inf in any of its float datasets; or, for the pairs of DIVERGES (a scheme that is
unstable on the scene, as MuJoCo computing it is), exit 1 naming the step, with the finished frames kept. Each
scene compiles its own kernels (5-30 s cold), so the default suite does not run it."""

from __future__ import annotations

import os
import re

import h5py
import numpy as np
import pytest

from tests.cli_util import MODELS, ROOT, rigidsim

PER_SLICE = 1  # scene/mode pairs per run without RIGIDSIM_SWEEP (one cold compile: 5-30 s, and 1000 steps)
NSTEP, NENV = 1000, 8
MODES = {"default": (), "mujoco": ("--set", "enable_mujoco_compatibility=true")}

# scene/mode pairs rigidsim refuses as not supported yet (an unbuilt feature), with the refusal
_FLUID = ("not supported yet: fluid forces with the approximate_implicitfast integrator (the default options' "
          "integrator), whose fluid velocity derivatives are not built")
NOT_SUPPORTED = {f"dm_control/{n}.xml:default": _FLUID for n in ("fish", "fish_kick", "swimmer", "swimmer_kick")}
# scene/mode pairs whose run must stop with exit 1 (a diverging state, reported with its step and env), and
# why that is the right answer
DIVERGES = {
    "mujoco_warp/test_data/pendula.xml:default": (
        "the default options' integrator, Genesis's approximate_implicitfast, is unstable on this scene (timestep "
        "0.02, damped and sprung joints against their limits): MuJoCo computing the same scheme (explicit Euler "
        "with the damping added to the armature, test_engine_integrators."
        "test_approximate_implicitfast_is_euler_with_the_damping_as_armature) follows our run to 1e-6 up to "
        "step 765 and diverges at step 768, ours at 772; euler and implicitfast run the 1000 steps"),
}


def _scenes():
    out = []
    if MODELS.exists():
        out += [p for p in sorted(MODELS.rglob("*.xml")) if "common/" not in str(p.relative_to(MODELS))]
    out += sorted(p for p in (ROOT / "scenes").iterdir() if p.suffix in (".xml", ".urdf"))
    return out


def _name(p):
    return str(p.relative_to(MODELS)) if MODELS in p.parents else "scenes/" + p.name


def _params():
    from tests.sweep_slice import selection

    pairs = {f"{_name(p)}:{mode}": (p, mode) for p in _scenes() for mode in MODES}
    out = []
    for key, tid in selection("scene_sweep", list(pairs), (), PER_SLICE):
        marks = [pytest.mark.skip(reason=NOT_SUPPORTED[key])] if key in NOT_SUPPORTED else []
        out.append(pytest.param(*pairs[key], id=tid, marks=marks))
    return out


def _bad_floats(f):
    """Names of the float datasets of the file that hold a NaN or an Inf."""
    bad = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f" and obj.size:
            if not np.isfinite(obj[()]).all():
                bad.append(name)

    f.visititems(visit)
    return bad


@pytest.mark.parametrize("path,mode", _params())
def test_scene_runs(path, mode, tmp_path):
    out = tmp_path / "o.h5"
    p = rigidsim("run", path, "--steps", NSTEP, "--envs", NENV, "--out", out, "--quiet", *MODES[mode],
                 timeout=1800)
    text = p.stdout + p.stderr
    line = f"{_name(path)} [{mode}]: exit {p.returncode}" + (f": {text.strip()[-300:]}" if p.returncode else "")
    report = os.environ.get("RIGIDSIM_SWEEP_REPORT")
    if report:
        with open(report, "a") as fh:
            fh.write(line.replace("\n", " | ") + "\n")
    key = f"{_name(path)}:{mode}"
    if key in DIVERGES:  # exit 1 naming the step and env; the file keeps the finished frames, all finite
        assert p.returncode == 1 and re.search(r"at step \d+ in env \d+", text), text
        with h5py.File(out, "r") as f:
            assert not bool(f.attrs["complete"]) and 0 < f["qpos"].shape[0] < NSTEP + 1
            assert not _bad_floats(f)
        return
    assert p.returncode == 0, text
    with h5py.File(out, "r") as f:
        assert bool(f.attrs["complete"])
        assert f["qpos"].shape[:2] == (NSTEP + 1, NENV), f["qpos"].shape
        assert not _bad_floats(f)
