"""Every bundled scene on Vulkan (issue 30), through `rigidsim run` on Mesa's software driver, against the CPU
engine at float32: 100 steps of 4 envs (shared models and RK4: tests/test_backend_vulkan_more.py). Files
of their own so that the suite's two processes share the Vulkan tests (`--dist loadfile`).

Two float32 engines round differently (the driver's division and square root, its instruction order), and a
contact scene grows such differences as MuJoCo's own runs grow a 1e-9 perturbation (tests/test_parity_scenes):
the humanoid's qvel is 1e-8 apart after one step, 3e-5 after 100. The bound is that rule's, at float32's scale:
per frame, GAIN times the CPU's own divergence (to that frame) from a perturbation of qpos0 by PERTURB (about
a float32 rounding of an O(1) coordinate), plus FLOOR."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import rigidsim, shared_model
from tests.test_backend_vulkan import ENVS, F32, STEPS, _read, _runs, _same_contacts, needs_vulkan

GAIN, FLOOR, PERTURB = 10.0, F32["atol"], 1e-7


PILES = ("boxes27", "sphere_bin")  # the two piles fail alike on llvmpipe (the loop limit): one per commit
HEAVY = ("falling_objects", "humanoid")  # the two slowest to compile on llvmpipe (~30 s each): one per commit


def _bundled():
    """Every bundled scene but one of the two piles and one of HEAVY, a different one of each per commit
    (tests/sweep_slice.py); all under RIGIDSIM_SWEEP=1."""
    from rigidsim.bundled import scene_names
    from tests.sweep_slice import selection

    names = scene_names()
    keep = [n for n in names if n not in PILES + HEAVY]
    piles = selection("vulkan_piles", [n for n in names if n in PILES], (), 1)
    heavy = selection("vulkan_heavy", [n for n in names if n in HEAVY], (), 1)
    return [pytest.param(x, id=x) for x in keep] + [pytest.param(x, id=tid) for x, tid in piles + heavy]


def _perturbed_cpu(tmp_path, scene, extra, cpu):
    """The CPU's float32 run of the same command from qpos0 + N(0, PERTURB) in each env."""
    init = tmp_path / "init.npy"
    q0 = cpu["init_qpos"]
    np.save(init, (q0 + PERTURB * np.random.default_rng(0).standard_normal(q0.shape)).astype(np.float64))
    out = tmp_path / "cpu_perturbed.h5"
    record = "qpos,qvel,xpos" + (",sensordata" if "sensordata" in cpu else "")
    p = rigidsim("run", scene, "--backend", "cpu", "--precision", "32", "--steps", STEPS, "--envs", ENVS,
                 "--record", record, "--init", init, "--out", out, *extra, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    return _read(out)


def sweep(tmp_path, scene, sensors=False):
    """`scene` (a bundled name, shared:PATH, or pendulum+rk4) on Vulkan and on the CPU, compared: every frame's
    state and contacts (and with `sensors`, its sensordata, recorded)."""
    extra = ()
    if scene.startswith("shared:"):
        scene = shared_model(scene[len("shared:"):])
    elif scene == "pendulum+rk4":
        scene, extra = "pendulum", ("--set", "integrator=RK4", "--keyframe", "horizontal")
    pile = scene in PILES
    vk, cpu = (_read(p) for p in _runs(tmp_path, scene, *extra, vulkan_may_fail=pile, sensors=sensors))
    n = len(vk["time"])
    if pile:  # the frames before the failure: the launch that failed wrote nothing
        assert 30 <= n < STEPS and vk["complete"] == 0, n
    else:
        assert n == STEPS + 1 and vk["complete"] == 1, n
    np.testing.assert_allclose(vk["time"], cpu["time"][:n], **F32)
    # the states, and the sensordata of a scene with sensors (recorded by default; scaled by its largest value)
    fields = ("qpos", "qvel", "xpos") + (("sensordata",) if "sensordata" in cpu else ())
    if "contacts" not in cpu:  # no contact to grow a difference: float32 tolerances
        for k in fields:
            np.testing.assert_allclose(vk[k], cpu[k], **F32, err_msg=k)
        return
    other = _perturbed_cpu(tmp_path, scene, extra, cpu)
    worst = 0.0
    for k in fields:
        err = np.abs(vk[k] - cpu[k][:n]).reshape(n, -1).max(axis=1)
        own = np.abs(other[k] - cpu[k]).reshape(STEPS + 1, -1).max(axis=1)[:n]
        scale = max(1.0, float(np.abs(cpu[k]).max())) if k == "sensordata" else 1.0
        bound = GAIN * np.maximum.accumulate(own) + FLOOR * scale
        t = int(np.argmax(err / bound))
        print(f"{k}: max {err.max():.3g} apart; nearest its bound at frame {t}: {err[t]:.3g}, bound {bound[t]:.3g}")
        assert (err <= bound).all(), f"{k}: frame {t}: Vulkan off the CPU by {err[t]:.3g}, beyond {bound[t]:.3g}"
        if k == "xpos":
            worst = bound.max()
    if "contacts" in cpu:
        _same_contacts(vk["contacts"], cpu["contacts"], atol=worst)


@needs_vulkan
@pytest.mark.parametrize("scene", _bundled())
def test_every_bundled_scene_on_vulkan(tmp_path, scene):
    """Every frame's state and contacts as the CPU's (with contacts: within float32's own divergence). The piles
    fail on llvmpipe once they land: exit 1 naming the limit, and the frames before it are the CPU's."""
    sweep(tmp_path, scene)


