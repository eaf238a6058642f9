"""The device code path on Vulkan (issue 30), run here on Mesa's software driver (llvmpipe; `.ci/run` installs
mesa-vulkan-drivers), against the CPU engine at float32: the same scene, batch and steps through the real
command line, every frame compared. The Vulkan runs skip when this machine has no Vulkan device; choosing a
backend is tested without one. Every bundled scene: tests/test_backend_vulkan_sweep.py.

Three faults made a Vulkan run wrong without a word before: llvmpipe ends all the loops of a kernel once they
have iterated 65,535 times together (a 100-step launch of the cheetah did 68 steps); the constraint stage's
parts, called as real functions, compiled to nothing on Vulkan (the cheetah never moved); and the contact pool's
atomic counter ran once a launch there (a run's final frame showed the contacts of the frame before it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.cli_util import ROOT, assert_clean_error, cli_env, rigidsim, shared_model
from rigidsim import runner
from rigidsim.errors import InputError

STEPS, ENVS = 100, 4
F32 = dict(rtol=1e-5, atol=1e-5)  # two float32 engines, 100 steps: float32 rounding, far below any physics

needs_vulkan = pytest.mark.skipif(not runner.vulkan_available(),
                                  reason="no Vulkan device on this machine (apt-get install mesa-vulkan-drivers)")


# ---------------------------------------------------------------------------------------------------- choosing
def test_vulkan_without_a_device_is_exit_2_naming_the_driver(tmp_path):
    """No Vulkan driver (the loader pointed at none): exit 2 before anything is built, naming the package."""
    p = rigidsim("run", "pendulum", "--backend", "vulkan", "--steps", "2", "--out", tmp_path / "t.h5",
                 env={"VK_ICD_FILENAMES": str(tmp_path / "none.json"), "VK_DRIVER_FILES": str(tmp_path / "none.json")})
    text = assert_clean_error(p, 2)
    assert "--backend vulkan" in text and "mesa-vulkan-drivers" in text
    assert not (tmp_path / "t.h5").exists()


@pytest.mark.parametrize("cuda, vulkan, took", [(True, True, "gpu"), (False, True, "vulkan"),
                                                (False, False, "cpu")])
def test_auto_takes_cuda_then_vulkan_then_the_cpu_and_says_which(monkeypatch, cuda, vulkan, took):
    monkeypatch.setattr(runner, "cuda_available", lambda: cuda)
    monkeypatch.setattr(runner, "vulkan_available", lambda: vulkan)
    said = []
    assert runner.resolve_backend("auto", said.append) == took
    assert len(said) == 1 and f"({took})" in said[0]
    assert runner.resolve_backend("AUTO") == took  # nothing said when nobody listens


def test_an_unknown_backend_names_the_choices():
    with pytest.raises(InputError, match="cpu, gpu, vulkan, auto"):
        runner.resolve_backend("metal")


# ---------------------------------------------------------------------------------------------------- on Vulkan
def _runs(tmp_path, scene, *extra, vulkan_may_fail=False, sensors=False):
    """(Vulkan file, CPU float32 file) of the same run of `scene` (with `sensors`, its sensordata recorded too).
    `vulkan_may_fail`: the Vulkan run may end with exit 1 naming the driver's loop limit (the file then holds
    the frames before it, complete=false)."""
    out = {}
    record = "qpos,qvel,xpos,contacts" + (",sensordata" if sensors else "")
    for backend in ("vulkan", "cpu"):
        out[backend] = tmp_path / f"{backend}.h5"
        p = rigidsim("run", scene, "--backend", backend, "--precision", "32", "--steps", STEPS, "--envs", ENVS,
                     "--record", record, "--out", out[backend], *extra, timeout=900)
        if backend == "vulkan" and vulkan_may_fail and p.returncode == 1:
            assert "65,535 iterations" in p.stderr and "Traceback" not in p.stderr, p.stdout + p.stderr
            continue
        assert p.returncode == 0, p.stdout + p.stderr
    return out["vulkan"], out["cpu"]


def _python(path, code: str) -> str:
    """Run `code` (dedented) as the script `path` in a fresh process (one backend a process; a file, since the
    kernel language reads a kernel's source from it); its standard output."""
    path.write_text(textwrap.dedent(code))
    p = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def _read(path):
    import h5py

    with h5py.File(path, "r") as f:
        got = {k: f[k][()] for k in ("time", "qpos", "qvel", "xpos")}
        got["backend"] = f.attrs["backend"]
        got["complete"] = int(f.attrs["complete"])
        got["init_qpos"] = f["init/qpos"][()]
        if "contacts" in f:
            got["contacts"] = {k: f["contacts"][k][()] for k in f["contacts"]}
        if "sensordata" in f:
            got["sensordata"] = f["sensordata"][()]
    return got


@pytest.fixture(scope="module")
def free_cheetah(tmp_path_factory):
    scene = shared_model("dm_control/cheetah.xml")
    return [_read(p) for p in _runs(tmp_path_factory.mktemp("free"), scene, "--set", "disable_constraint=true")]


@needs_vulkan
def test_vulkan_does_every_step_of_a_free_run(free_cheetah):
    """The 68-of-100 fault: 100 steps of 0.01 s end at t = 1 in every env, in the CPU engine's states."""
    vk, cpu = free_cheetah
    assert vk["backend"] == "vulkan" and cpu["backend"] == "cpu"
    assert vk["time"].shape == cpu["time"].shape == (STEPS + 1,)
    np.testing.assert_allclose(vk["time"][-1], STEPS * 0.01, rtol=1e-6)
    for k in ("qpos", "qvel", "xpos"):
        np.testing.assert_allclose(vk[k], cpu[k], **F32, err_msg=k)
    assert np.abs(vk["qpos"][-1] - vk["qpos"][0]).max() > 1.0  # it fell: 100 steps of free fall


@needs_vulkan
def test_a_kernel_cut_short_by_the_driver_fails_its_env(tmp_path):
    """`kernels._loop_canary` on the driver itself. Two envs whose loops run 1,000 iterations each pass; when
    one of them runs 70,000, past llvmpipe's limit (cut at 65,535), both fail with FAIL_LOOP_LIMIT at the
    launch's first step: the driver runs up to 8 invocations together, one loop for all of them, with one
    counter (an env beside a long one is flagged too: a run fails rather than go on wrong)."""
    stdout = _python(tmp_path / "spin.py", """
        import numpy as np
        from rigidsim.engine import runtime
        runtime.init(32, "vulkan")
        from rigidsim.engine import kernels, layout as L
        from rigidsim.engine.lang import ti

        @ti.kernel
        def spin(n: ti.types.ndarray(), out: ti.types.ndarray(), status: ti.types.ndarray(),
                 launch: ti.types.ndarray()):
            for b in range(2):
                x = 0
                for k in range(n[b]):
                    x += 1
                out[b] = x
                kernels._loop_canary(b, 7, status, launch)

        def nd(a):
            x = ti.ndarray(ti.i32, a.shape)
            x.from_numpy(a)
            return x

        launch = np.zeros(L.NLAUNCH, np.int32)
        launch[L.LAUNCH_CANARY] = 2
        for iters in ([1000, 1000], [1000, 70000]):
            out, status = nd(np.zeros(2, np.int32)), nd(np.zeros((2, 4), np.int32))
            spin(nd(np.array(iters, np.int32)), out, status, nd(launch))
            print("OUT", out.to_numpy().tolist(), "STATUS", status.to_numpy().tolist())
    """)
    from rigidsim.engine import layout as L

    cut = [L.ENV_FAILED, 7, L.FAIL_LOOP_LIMIT, 0]
    assert stdout.splitlines() == [f"OUT [1000, 1000] STATUS {[[0] * 4] * 2}",
                                   f"OUT [1000, 65535] STATUS {[cut, cut]}"], stdout


def test_the_loop_limit_failure_names_the_driver_and_what_to_do():
    """The message a run fails with when an env's launch was cut short (exit 1, through SimulationError)."""
    from rigidsim.engine import layout as L
    from rigidsim.engine.simulator import Simulator
    from rigidsim.loaders import load_scene

    sim = Simulator(load_scene("pendulum"), 3)
    sim._status[1, :4] = (L.ENV_FAILED, 41, L.FAIL_LOOP_LIMIT, 0)
    step, env, msg = sim._failure()
    assert (step, env) == (41, 1)
    assert "65,535" in msg and "llvmpipe" in msg and "--backend cpu" in msg and "step 41." in msg
    sim._status[1, 3] = L.STAGE_NAMES.index("constraint solver")  # a staged launch's task (`kernels._staged`)
    assert "from step 41 (constraint solver)." in sim._failure()[2]


@pytest.fixture(scope="module")
def cheetah(tmp_path_factory):
    return [_read(p) for p in _runs(tmp_path_factory.mktemp("contacts"), shared_model("dm_control/cheetah.xml"))]


@needs_vulkan
def test_vulkan_matches_the_cpu_with_contacts(cheetah):
    """The cheetah lands on its feet: states and contacts of every frame, the final one included (it showed
    the contacts of the frame before it while the contact pool's rows came from an atomic counter, which llvmpipe ran once a launch)."""
    vk, cpu = cheetah
    for k in ("time", "qpos", "qvel", "xpos"):
        np.testing.assert_allclose(vk[k], cpu[k], **F32, err_msg=k)
    assert np.abs(vk["qvel"][-1]).max() > 0.0  # it moved (the constraint stage ran)
    cv, cc = vk["contacts"], cpu["contacts"]
    np.testing.assert_array_equal(cv["offsets"], cc["offsets"])  # the same contacts, frame by frame
    n = cc["offsets"][STEPS * ENVS]  # the rows of frames 0 .. STEPS - 1; the final frame's follow
    assert 0 < n < cc["offsets"][-1]
    np.testing.assert_array_equal(cv["geom"], cc["geom"])
    for k in ("position", "normal", "penetration"):
        np.testing.assert_allclose(cv[k], cc[k], **F32, err_msg=k)
    np.testing.assert_allclose(cv["force"], cc["force"], rtol=1e-4, atol=1e-4 * np.abs(cc["force"]).max())
    # the final frame's contacts are where its feet are, not where they were a step before
    assert np.abs(cc["position"][n:] - cc["position"][n - (cc["offsets"][-1] - n):n]).max() > 1e-5


@needs_vulkan
def test_batch_on_vulkan(tmp_path):
    """The Python API on the device: `Batch.step` with controls, `qpos`/`time` read back, `reset` of some envs,
    `frame()`, against the same calls on the CPU (each backend in a process of its own)."""
    scene = shared_model("dm_control/cheetah.xml")
    got = {}
    for backend in ("vulkan", "cpu"):
        stdout = _python(tmp_path / f"batch_{backend}.py", f"""
            import json, sys
            import numpy as np
            from rigidsim import Batch
            b = Batch({str(scene)!r}, envs=3, options={{"disable_constraint": True}}, precision=32,
                      backend={backend!r})
            u = np.linspace(-1, 1, 3 * b.model.nu).reshape(3, b.model.nu)
            b.step(ctrl=u, n=30)
            b.reset(envs=[1])
            b.step(ctrl=u, n=5)
            f = b.frame()
            print(json.dumps({{"qpos": b.qpos.tolist(), "time": b.time.tolist(), "xpos": f["xpos"].tolist()}}))
        """)
        import json

        got[backend] = {k: np.asarray(v) for k, v in json.loads(stdout.strip().splitlines()[-1]).items()}
    np.testing.assert_allclose(got["vulkan"]["time"], [0.35, 0.05, 0.35], rtol=1e-5)
    for k, v in got["cpu"].items():
        np.testing.assert_allclose(got["vulkan"][k], v, **F32, err_msg=k)
    assert np.abs(got["cpu"]["qpos"][0] - got["cpu"]["qpos"][2]).max() > 1e-3  # the controls differ per env


def _same_contacts(cv, cc, atol=F32["atol"]):
    """The contacts of every frame of the Vulkan file `cv` (which may end early) are the CPU's `cc`: the same
    pairs, frame by frame; points, normals and depths within `atol`; forces within 1e-4 of the largest."""
    rows = cc["offsets"][len(cv["offsets"]) - 1]
    np.testing.assert_array_equal(cv["offsets"], cc["offsets"][:len(cv["offsets"])])
    np.testing.assert_array_equal(cv["geom"], cc["geom"][:rows])
    for k in ("position", "normal", "penetration"):
        np.testing.assert_allclose(cv[k], cc[k][:rows], rtol=F32["rtol"], atol=atol, err_msg=k)
    if rows:
        np.testing.assert_allclose(cv["force"], cc["force"][:rows], rtol=1e-4,
                                   atol=1e-4 * np.abs(cc["force"][:rows]).max())


BOXES_ON_A_FLOOR = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
{boxes}  </worldbody>
</mujoco>
"""


@needs_vulkan
def test_contact_capacity_grows_on_vulkan(tmp_path):
    """18 boxes resting on a floor make 72 contacts, more than the 64 the contact capacity starts with: each env
    pauses after its first forward pass, the buffers grow, and the paused envs do the step again in a launch of
    their own (the staged launch's resume: `kernels._staged_begin`). Every frame and contact as the CPU's."""
    from rigidsim.engine.simulator import CONTACTS_START

    boxes = "".join(f'    <body pos="{0.5 * (k % 6)} {0.5 * (k // 6)} 0.099"><freejoint/>'
                    f'<geom type="box" size="0.1 0.1 0.1"/></body>\n' for k in range(18))
    scene = tmp_path / "boxes.xml"
    scene.write_text(BOXES_ON_A_FLOOR.format(boxes=boxes))
    vk, cpu = (_read(p) for p in _runs(tmp_path, scene))
    assert cpu["contacts"]["offsets"][ENVS] == 18 * 4 * ENVS > CONTACTS_START * ENVS  # frame 0: 72 an env
    for k in ("time", "qpos", "qvel", "xpos"):
        np.testing.assert_allclose(vk[k], cpu[k], **F32, err_msg=k)
    _same_contacts(vk["contacts"], cpu["contacts"])
