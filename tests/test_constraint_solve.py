"""The forward pass with constraints end to end (our rows, our solver) against MuJoCo 4.0.0, and closed forms.

- qacc and efc_force after `forward` equal mj_forward's (Newton, rtol 1e-6) at states sampled from MuJoCo
  runs of shared models and inline scenes;
- free runs (our own state each step) of dm_control scenes match MuJoCo's qpos to 1e-6 over 100 steps;
- closed forms: a box resting on a plane, a box sliding to rest at mu g, a pendulum stopped by its limit.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.mjref import compat_sim, model_from_mujoco, mujoco, test_stage
from tests.test_constraint_rows import BOX, JOINTS, _states


def _sim(mjm, n_envs=1):
    return compat_sim(mjm, n_envs)


def _forward_parity(mjm, states, rtol=1e-6):
    sim = _sim(mjm)
    d = mujoco.MjData(mjm)
    for qpos, qvel in states:
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(mjm, d)
        sim.reset(qpos=qpos, qvel=qvel)
        sim.forward()
        got = sim.constraints(0)
        assert got["nefc"] == d.nefc
        scale = max(1.0, float(np.abs(d.qacc).max()))
        np.testing.assert_allclose(sim.get("qacc")[0], d.qacc, rtol=rtol, atol=rtol * scale)
        fscale = max(1.0, float(np.abs(d.efc_force).max())) if d.nefc else 1.0
        np.testing.assert_allclose(got["efc_force"], d.efc_force[:d.nefc], rtol=rtol, atol=rtol * fscale)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [1, 3, 4, 6])
def test_forward_contacts(cone, condim):
    mjm = mujoco.MjModel.from_xml_string(BOX.format(cone=cone, condim=condim, impratio=1 if condim < 4 else 2.5,
                                                    extra=""))
    _forward_parity(mjm, _states(mjm, 6, 25))


def test_forward_joints():
    mjm = mujoco.MjModel.from_xml_string(JOINTS)
    _forward_parity(mjm, _states(mjm, 10, 20, qvel_scale=4.0))


FREE_RUN = ["dm_control/cheetah.xml", "dm_control/hopper.xml", "dm_control/walker.xml"]


@pytest.mark.parametrize("rel", FREE_RUN)
def test_free_run(rel):
    """100 steps from a perturbed keyframe-free start, each side on its own state: qpos within 1e-6."""
    from tests.test_collision_models import MODELS

    if not (MODELS / rel).exists():
        pytest.skip("../shared/models not present")
    mjm = mujoco.MjModel.from_xml_path(str(MODELS / rel))
    d = mujoco.MjData(mjm)
    rng = np.random.default_rng(1)
    d.qvel[:] = rng.normal(0, 0.3, mjm.nv)
    mujoco.mj_forward(mjm, d)
    sim = _sim(mjm)
    sim.reset(qpos=d.qpos.copy(), qvel=d.qvel.copy())
    ref = []
    for _ in range(100):
        mujoco.mj_step(mjm, d)
        ref.append(d.qpos.copy())
    got = [f["qpos"][0] for f in sim.rollout(100)][1:]
    np.testing.assert_allclose(np.array(got), np.array(ref), rtol=0, atol=1e-6)


BOX_ON_PLANE = """<mujoco><option timestep=".002" cone="{cone}" noslip_iterations="{noslip}"/>
<worldbody><geom type="plane" size="5 5 .1" friction="{mu} .005 .0001"/>
<body pos="0 0 .05"><freejoint/><geom type="box" size=".1 .1 .05" mass="1" friction="{mu} .005 .0001"/></body>
</worldbody></mujoco>"""


def _rollout(mjm, qvel=None, nstep=1000, every=10):
    sim = _sim(mjm)
    if qvel is not None:
        sim.reset(qpos=mjm.qpos0.copy(), qvel=qvel)
    return [f for f in sim.rollout(nstep, every=every)]


def test_box_at_rest():
    """A box resting on a plane for 10 s stays within 1 mm of where it settles."""
    mjm = mujoco.MjModel.from_xml_string(BOX_ON_PLANE.format(cone="pyramidal", noslip=0, mu=1))
    frames = _rollout(mjm, nstep=5000, every=50)
    z = np.array([f["qpos"][0, 2] for f in frames])
    xy = np.array([f["qpos"][0, :2] for f in frames])
    assert abs(z[-1] - z[10]) < 1e-3 and abs(z[-1] - 0.05) < 1e-3
    assert np.abs(xy).max() < 1e-3


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_box_sliding_decelerates_at_mu_g(cone):
    """A box launched at 2 m/s along x on a plane with friction 0.5 decelerates at mu g within 2 %."""
    mu = 0.5
    mjm = mujoco.MjModel.from_xml_string(BOX_ON_PLANE.format(cone=cone, noslip=0, mu=mu))
    frames = _rollout(mjm, qvel=np.array([2.0, 0, 0, 0, 0, 0]), nstep=150, every=1)
    t = np.array([f["time"][0] for f in frames])
    vx = np.array([f["qvel"][0, 0] for f in frames])
    sel = (t > 0.05) & (vx > 0.3)  # after the first contact transient, while still sliding
    slope = np.polyfit(t[sel], vx[sel], 1)[0]
    g = 9.81
    assert abs(-slope - mu * g) < 0.02 * mu * g, (slope, mu * g)


PENDULUM = """<mujoco><option timestep=".002"/>
<worldbody><body><joint name="j" type="hinge" axis="0 1 0" range="-90 30" limited="true"/>
<geom type="capsule" fromto="0 0 0 .5 0 0" size=".02" mass="1"/></body></worldbody></mujoco>"""


def test_pendulum_stops_at_limit():
    """A horizontal pendulum (rod of 0.5 m about y; +angle turns it downwards) falls 30 degrees onto its upper
    limit. The limit row's reference dynamics is a critically damped spring of time constant tc = 0.02 s, so
    the overshoot past the limit stays below v0 tc / e (v0 the impact speed, from energy: the rod's
    m g L/2 sin 30 = I v0^2 / 2), it settles within 0.5 degree of the limit and stays; and the whole run is
    MuJoCo's to 1e-6."""
    mjm = mujoco.MjModel.from_xml_string(PENDULUM)
    frames = _rollout(mjm, nstep=2000, every=1)
    q = np.array([f["qpos"][0, 0] for f in frames])
    lim = np.deg2rad(30)
    d = mujoco.MjData(mjm)
    ref = [d.qpos[0]]
    for _ in range(2000):
        mujoco.mj_step(mjm, d)
        ref.append(d.qpos[0])
    np.testing.assert_allclose(q, np.array(ref), rtol=0, atol=1e-6)
    L, g = 0.5, 9.81
    inertia = float(mjm.body_inertia[1, 1] + mjm.body_mass[1] * np.sum(mjm.body_ipos[1, [0, 2]] ** 2))
    v0 = np.sqrt(2 * mjm.body_mass[1] * g * (L / 2) * np.sin(lim) / inertia)
    assert q.max() - lim < v0 * 0.02 / np.e
    assert abs(q[-1] - lim) < np.deg2rad(0.5)
    assert abs(q[-1] - q[-200]) < 1e-5


STACK = """<mujoco><option timestep=".002" cone="elliptic" noslip_iterations="10"/>
<worldbody><geom type="plane" size="5 5 .1"/>
{bodies}</worldbody></mujoco>"""


def test_stack_of_five_boxes_stands():
    """Five 10 cm boxes stacked (elliptic cone, noslip) stand for 10 s: after settling into the soft contacts
    (2 mm, in the first second), every box stays within 1 mm of where it settled, and none slid sideways."""
    bodies = "".join(f'<body pos="0 0 {0.05 + 0.1 * k:.2f}"><freejoint/><geom type="box" size=".05 .05 .05"/></body>\n'
                     for k in range(5))
    mjm = mujoco.MjModel.from_xml_string(STACK.format(bodies=bodies))
    frames = _rollout(mjm, nstep=5000, every=500)
    q0 = mjm.qpos0.reshape(5, 7)[:, :3]
    settled = frames[1]["qpos"][0].reshape(5, 7)[:, :3]
    assert np.abs(settled - q0).max() < 5e-3
    for f in frames[1:]:
        q = f["qpos"][0].reshape(5, 7)[:, :3]
        assert np.abs(q - settled).max() < 1e-3
        assert np.abs(q[:, :2] - q0[:, :2]).max() < 1e-6


COUPLED = """<mujoco><option timestep="0.001"/>
<worldbody>
  <body name="thumb"><joint name="thumb" type="hinge" axis="0 -1 0" damping=".5"/>
    <geom type="capsule" fromto="0 0 0 .04 0 0" size=".007" density="500"/></body>
  <body name="finger" pos="0 .1 0"><joint name="finger" type="hinge" axis="0 -1 0" damping=".5"/>
    <geom type="capsule" fromto="0 0 0 .04 0 0" size=".007" density="500"/></body>
</worldbody>
<tendon><fixed name="coupling"><joint joint="thumb" coef="-.5"/><joint joint="finger" coef=".5"/></fixed></tendon>
<equality><tendon tendon1="coupling" solimp="0.95 0.99 0.001" solref=".005 .5"/></equality>
</mujoco>"""


def test_approximate_implicitfast_solves_with_the_damped_matrix():
    """Genesis's approximate_implicitfast solves qacc_smooth with qH = qM - h qDeriv; the constraint solve must
    use that matrix too (its Gauss term, Hessian and scale), else the damping acts explicitly whenever a row
    exists (two light damped fingers coupled by a tendon equality blew up in 20 steps). Two identical fingers
    in the same state satisfy the coupling exactly, so the solve must return qacc_smooth = qH^-1 qfrc_smooth
    (from MuJoCo's qM and qfrc_smooth), the coupling row with no force."""
    from rigidsim.engine import layout as L
    from rigidsim.engine.simulator import Simulator

    mjm = mujoco.MjModel.from_xml_string(COUPLED)
    model = model_from_mujoco(mjm)
    model.opt.integrator = L.INT_APPROX_IMPLICITFAST
    sim = Simulator(model, 1, kinematics_only=True, stage=test_stage())
    d = mujoco.MjData(mjm)
    h = mjm.opt.timestep
    for q, v in ((0.3, -2.0), (-1.1, 4.0), (2.0, 0.0)):
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(mjm, d)
        full = np.zeros((mjm.nv, mjm.nv))
        mujoco.mj_fullM(mjm, d, full)
        expect = np.linalg.solve(full + h * np.diag(mjm.dof_damping), d.qfrc_smooth)
        sim.reset(qpos=d.qpos.copy(), qvel=d.qvel.copy())
        sim.forward()
        rows = sim.constraints(0)
        assert rows["nefc"] == 1 and rows["efc_force"][0] == 0.0
        np.testing.assert_allclose(sim.get("qacc")[0], expect, rtol=1e-12, atol=1e-12)
