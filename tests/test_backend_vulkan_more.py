"""Shared models with contacts (more, and RK4, under RIGIDSIM_SWEEP=1) on Vulkan (issue 30), as
tests/test_backend_vulkan_sweep.py runs the bundled scenes: 100 steps of 4 envs through `rigidsim run` on Mesa's
software driver, against the CPU; and the precision a device takes."""

from __future__ import annotations

import os

import pytest

from tests.cli_util import assert_clean_error, rigidsim
from tests.test_backend_vulkan import needs_vulkan
from tests.test_backend_vulkan_sweep import sweep

SHARED = ("dm_control/hopper.xml",)  # with contacts; the cheetah is in test_backend_vulkan.py
# under RIGIDSIM_SWEEP=1 (the suite's 15 minutes): more shared models with contacts, the finger's convex mesh pair
# (2 min of collision compile) and RK4 (the unstaged device path: its own compile)
SHARED_LONG = ("dm_control/walker.xml", "dm_control/ball_in_cup.xml", "dm_control/finger.xml")


@needs_vulkan
@pytest.mark.parametrize("scene", [f"shared:{m}" for m in SHARED])
def test_shared_models_on_vulkan(tmp_path, scene):
    """As the bundled scenes, with the sensordata (the hopper's touch sensors and subtree velocity): the sensor
    code on the device, within float32's own divergence."""
    sweep(tmp_path, scene, sensors=True)


@needs_vulkan
@pytest.mark.skipif(os.environ.get("RIGIDSIM_SWEEP") != "1",
                    reason="RIGIDSIM_SWEEP=1: more shared models and RK4 on the software driver (minutes of compile)")
@pytest.mark.parametrize("scene", [f"shared:{m}" for m in SHARED_LONG] + ["pendulum+rk4"])
def test_more_shared_models_and_rk4_on_vulkan(tmp_path, scene):
    """RK4's step is one task (`kernels.staged`), the other integrators' six."""
    sweep(tmp_path, scene)


def test_float64_on_vulkan_is_refused_naming_why(tmp_path):
    """`--precision 64` on Vulkan is exit 2 before anything is built (the kernel language compiles sin and cos to
    GLSL's 32-bit functions: a float64 kernel failed to compile with an internal error), and so is `Batch`'s;
    a device's default precision is 32."""
    from rigidsim import Batch, runner
    from rigidsim.errors import InputError

    p = rigidsim("run", "pendulum", "--backend", "vulkan", "--precision", "64", "--steps", "2",
                 "--out", tmp_path / "t.h5")
    if runner.vulkan_available():
        text = assert_clean_error(p, 2)
        assert "--precision 64 is not available on Vulkan" in text and "--precision 32" in text
        assert not (tmp_path / "t.h5").exists()
    with pytest.raises(InputError, match="precision 64 is not available on Vulkan"):
        runner.resolve_precision(64, "vulkan", where="precision")
    assert [runner.resolve_precision(None, b) for b in ("cpu", "gpu", "vulkan")] == [64, 32, 32]
    assert runner.resolve_precision(32, "vulkan") == 32 and runner.resolve_precision(64, "gpu") == 64
    with pytest.raises(InputError, match="precision must be 32 or 64"):
        Batch("pendulum", precision=16)
