"""`<option viscosity>` and `<option density>`: read as numbers, and their fluid forces match MuJoCo.

Issue 28: a four-line MJCF with `<option viscosity="0.1"/>` ended in an internal TypeError (the loader kept
viscosity as text, and `unsupported_features` compared it with 0). The loader's Model must equal MuJoCo's
compile; the engine's qfrc_fluid and qacc must equal mj_forward's at a moving state (MuJoCo's inertia-box
fluid model: Stokes drag from viscosity, quadratic drag from density), and a short run must follow mj_step.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.compare.model import compare_models, model_from_mujoco
from tests.cli_util import assert_clean_error, rigidsim
from tests.mjref import mujoco

# a free box and a hinged capsule, no contacts: only gravity and the fluid act
XML = """<mujoco>
  <option {opt}/>
  <worldbody>
    <body pos="0 0 1"><freejoint/><geom type="box" size=".1 .2 .05"/></body>
    <body pos="1 0 1"><joint type="hinge" axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/></body>
  </worldbody>
</mujoco>
"""
OPTS = ["viscosity=\"0.1\"", "density=\"1.2\"", "viscosity=\"0.05\" density=\"1000\""]


def _write(tmp_path, opt):
    p = tmp_path / "fluid.xml"
    p.write_text(XML.format(opt=opt))
    return p


@pytest.mark.parametrize("opt", OPTS)
def test_loader_reads_fluid_options_as_numbers(tmp_path, opt):
    from rigidsim.loaders import load_scene
    from rigidsim.engine.data import unsupported_features

    p = _write(tmp_path, opt)
    ours = load_scene(str(p))
    assert isinstance(ours.opt.viscosity, float) and isinstance(ours.opt.density, float)
    assert compare_models(ours, model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))) == []
    assert unsupported_features(ours) == []  # euler, the MJCF default: the fluid model is built


def test_compare_models_sees_an_option_held_as_text():
    mjm = mujoco.MjModel.from_xml_string(XML.format(opt='viscosity="0.1"'))
    ours, ref = model_from_mujoco(mjm), model_from_mujoco(mjm)
    ours.opt.viscosity = "0.1"
    assert any("viscosity" in b for b in compare_models(ours, ref))


@pytest.mark.parametrize("opt", OPTS)
def test_fluid_forces_match_mujoco(tmp_path, opt):
    from rigidsim.engine.simulator import Simulator
    from rigidsim.loaders import load_scene

    p = _write(tmp_path, opt)
    mjm = mujoco.MjModel.from_xml_path(str(p))
    rng = np.random.default_rng(3)
    qvel = rng.normal(size=mjm.nv) * 2.0
    d = mujoco.MjData(mjm)
    d.qvel[:] = qvel
    mujoco.mj_forward(mjm, d)
    assert np.abs(d.qfrc_fluid).max() > 1e-3  # the fluid acts at this state
    sim = Simulator(load_scene(str(p)), 1)
    sim.reset(qvel=qvel[None])
    sim.forward()
    for k in ("qfrc_fluid", "qacc"):
        got, ref = sim.get(k)[0], getattr(d, k)
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9 * max(1.0, np.abs(ref).max()), err_msg=k)
    # 200 euler steps follow mj_step
    frames = list(sim.rollout(200, every=200))
    for _ in range(200):
        mujoco.mj_step(mjm, d)
    np.testing.assert_allclose(frames[-1]["qpos"][0], d.qpos, atol=1e-9)


def test_cli_runs_viscosity_scene_under_mujoco_compatibility(tmp_path):
    """The issue's scene: MuJoCo compatibility keeps the MJCF's euler integrator; the run follows mj_step."""
    import h5py

    p = _write(tmp_path, 'viscosity="0.1"')
    out = tmp_path / "t.h5"
    r = rigidsim("run", p, "--steps", "50", "--out", out, "--record", "qpos", "-q",
                 "--set", "enable_mujoco_compatibility=true")
    assert r.returncode == 0, r.stdout + r.stderr
    mjm = mujoco.MjModel.from_xml_path(str(p))
    d = mujoco.MjData(mjm)
    for _ in range(50):
        mujoco.mj_step(mjm, d)
    with h5py.File(out) as f:
        qpos = np.asarray(f["qpos"])
    np.testing.assert_allclose(qpos[-1, 0], d.qpos, atol=1e-9)


def test_cli_refuses_fluid_under_default_integrator_naming_the_option(tmp_path):
    """rigidsim's own default integrator (approximate_implicitfast) has no fluid derivatives: a clean refusal
    that names the option and the way out, exit 2."""
    p = _write(tmp_path, 'viscosity="0.1"')
    text = assert_clean_error(rigidsim("run", p, "--steps", "5", "--out", tmp_path / "t.h5"))
    assert "viscosity" in text and "integrator=euler" in text


@pytest.mark.parametrize("opt,bad", [('viscosity="abc"', "viscosity"), ('viscosity="0.1 0.2"', "viscosity"),
                                     ('density="x"', "density")])
def test_cli_bad_fluid_option_is_a_clean_error(tmp_path, opt, bad):
    p = _write(tmp_path, opt)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(p))
    text = assert_clean_error(rigidsim("run", p, "--steps", "5", "--out", tmp_path / "t.h5"))
    assert bad in text
