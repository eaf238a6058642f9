"""Trajectories against MuJoCo, batch independence, determinism, rollout framing and failures.

1000-step trajectories (constraints disabled, a fixed control sequence) of
dm_control scenes match mj_step's qpos to 1e-8 with the scene's own
integrator and with euler / implicitfast / rk4; the inline feature scene
does the same without ../shared. float32 runs in a subprocess (the
precision is fixed per process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from rigidsim.errors import SimulationError
from tests.cli_util import MODELS, shared_model
from tests.mjref import mujoco, mujoco_rollout
from tests.test_engine_helpers import (
    FEATURES_XML, TENDON_XML, TRANSMISSION_XML, force_env_slices, our_model, without_constraints,
)

ROOT = Path(__file__).resolve().parents[1]
EULER, RK4, IMPLICITFAST = 0, 1, 3
APPROX = 100


def _controls(mjm, n, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 1], 1.0)
    return rng.uniform(lo, hi, size=(n, mjm.nu))


def _mujoco_traj(mjm, ctrl, qpos0=None, qvel0=None):
    d = mujoco.MjData(mjm)
    if qpos0 is not None:
        d.qpos[:] = qpos0
    if qvel0 is not None:
        d.qvel[:] = qvel0
    return mujoco_rollout(mjm, d, ctrl)[0]


def _ours(mjm, ctrl, n_envs=1, qpos0=None, qvel0=None, every=1):
    from rigidsim.engine.simulator import Simulator

    sim = Simulator(our_model(mjm), n_envs)
    sim.reset(qpos=qpos0, qvel=qvel0)
    frames = list(sim.rollout(len(ctrl), every=every, ctrl=ctrl))
    return sim, frames


def _assert_matches_mujoco(mjm, ctrl, what, qvel0=None, tol=1e-8):
    """Our single-env rollout of `ctrl` keeps qpos within `tol` of mj_step's at every step."""
    ref = _mujoco_traj(mjm, ctrl, qvel0=qvel0)
    _, frames = _ours(mjm, ctrl, qvel0=qvel0)
    got = np.array([f["qpos"][0] for f in frames])
    assert got.shape == ref.shape
    err = np.abs(got - ref).max()
    assert err < tol, f"{what} integrator {mjm.opt.integrator}: max |dqpos| {err:.3g}"


def _load(rel, integrator=None):
    mjm = without_constraints(mujoco.MjModel.from_xml_path(str(shared_model(rel))))
    if integrator is not None:
        mjm.opt.integrator = integrator
    return mjm


TRAJ = [("pendulum", None), ("acrobot", None), ("cartpole", None), ("cheetah", None), ("humanoid", None),
        ("pendulum", RK4), ("acrobot", EULER), ("cartpole", IMPLICITFAST), ("cheetah", IMPLICITFAST),
        ("cheetah", RK4), ("humanoid", IMPLICITFAST)]


@pytest.mark.parametrize("name,integrator", TRAJ)
def test_dm_control_trajectory_matches_mujoco(name, integrator):
    mjm = _load(f"dm_control/{name}.xml", integrator)
    n = 1000
    ctrl = _controls(mjm, n)
    _assert_matches_mujoco(mjm, ctrl, name)


# scenes with tendons, tendon actuators and fluid forces, with the integrator each asks for
TRAJ_MORE = ["dm_control/swimmer.xml", "dm_control/fish.xml", "dm_control/ball_in_cup.xml",
             "dm_control/quadruped.xml", "menagerie/franka_emika_panda/panda.xml"]


@pytest.mark.parametrize("rel", TRAJ_MORE)
def test_tendon_and_fluid_trajectory_matches_mujoco(rel):
    mjm = _load(rel)
    n = 1000
    ctrl = _controls(mjm, n, seed=5)
    _assert_matches_mujoco(mjm, ctrl, rel)


@pytest.mark.parametrize("integrator,fluid", [(EULER, True), (RK4, True), (IMPLICITFAST, False)])
def test_inline_tendon_trajectory_matches_mujoco(integrator, fluid):
    """implicitfast: tendon damping and a tendon actuator's velocity bias enter qDeriv, which has entries
    between sibling dofs that implicitfast drops (fluid derivatives are not built: no fluid there)."""
    mjm = without_constraints(mujoco.MjModel.from_xml_string(TENDON_XML))
    if not fluid:
        mjm.opt.density = mjm.opt.viscosity = 0.0
    mjm.opt.integrator = integrator
    n = 500
    ctrl = _controls(mjm, n, seed=integrator)
    _assert_matches_mujoco(mjm, ctrl, "inline")


@pytest.mark.parametrize("integrator", [EULER, IMPLICITFAST, RK4])
def test_inline_transmission_trajectory_matches_mujoco(integrator):
    """Ball and free joint transmissions (implicitfast: their velocity bias couples the joint's dofs) and a
    slider-crank."""
    mjm = without_constraints(mujoco.MjModel.from_xml_string(TRANSMISSION_XML))
    mjm.opt.integrator = integrator
    ctrl = _controls(mjm, 500, seed=integrator + 20)
    _assert_matches_mujoco(mjm, ctrl, "inline")


def test_ball_servo_setpoint_wraps_as_mujoco():
    """An integrator servo (intvelocity) on a ball joint driven one way: MuJoCo 4 keeps its act at the
    representative of the setpoint nearest the joint's rotation (period 2 pi |gear|) instead of letting it
    grow; ours follows step for step."""
    xml = """<mujoco><option timestep="0.01"/><worldbody><body pos="0 0 1"><joint name="ball" type="ball"
             damping="0.5"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body></worldbody>
             <actuator><intvelocity joint="ball" gear="-0.2 0.1 0.3 0 0 0" kp="0.5" kv="0.1"/></actuator>
             </mujoco>"""
    mjm = without_constraints(mujoco.MjModel.from_xml_string(xml))
    ctrl = np.full((1500, 1), 3.0)
    ref = _mujoco_traj(mjm, ctrl)
    sim, frames = _ours(mjm, ctrl)
    acts = np.array([f["act"][0, 0] for f in frames])
    assert acts.max() - acts.min() < 0.5 * 3.0 * 1500 * mjm.opt.timestep  # wrapped, not integrated to 45
    got = np.array([f["qpos"][0] for f in frames])
    assert np.abs(got - ref).max() < 1e-8


SPINNING = """
<mujoco><option timestep="0.01" gravity="0 0 -9.81"/><worldbody>
  <body name="box" pos="0 0 1"><freejoint/><geom type="box" size="0.3 0.1 0.05"/>
    <body name="welded" pos="0.3 0 0"><geom type="sphere" size="0.1"/></body></body>
  <body name="arm" pos="1 0 1"><freejoint/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
    <body pos="0.3 0 0"><joint type="hinge" axis="0 0 1" damping="0.1"/><geom type="box" size="0.1 0.05 0.02"/></body>
  </body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("integrator", [IMPLICITFAST, RK4])
def test_spinning_free_bodies_match_mujoco(integrator):
    """MuJoCo 4's implicitfast solves a standalone free body's block with the gyroscopic derivative (the box,
    with a welded child), but not a free body with jointed children (the arm); RK4 is Munthe-Kaas on SO(3)."""
    mjm = without_constraints(mujoco.MjModel.from_xml_string(SPINNING))
    mjm.opt.integrator = integrator
    rng = np.random.default_rng(2)
    qvel0 = rng.normal(size=mjm.nv) * 6
    _assert_matches_mujoco(mjm, np.zeros((300, 0)), "spinning", qvel0=qvel0)


@pytest.mark.parametrize("integrator", [EULER, IMPLICITFAST, RK4])
def test_inline_trajectory_matches_mujoco(integrator):
    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    mjm.opt.integrator = integrator
    n = 500
    ctrl = _controls(mjm, n, seed=integrator)
    _assert_matches_mujoco(mjm, ctrl, "inline")


def test_batch_envs_evolve_bitwise_as_single_runs():
    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    mjm.opt.integrator = RK4
    B, n = 4, 60
    rng = np.random.default_rng(7)
    qvel0 = 0.3 * rng.normal(size=(B, mjm.nv))
    ctrl = np.stack([_controls(mjm, n, seed=b) for b in range(B)], axis=1)
    _, batch = _ours(mjm, ctrl, n_envs=B, qvel0=qvel0)
    for b in range(B):
        _, single = _ours(mjm, ctrl[:, b:b + 1], n_envs=1, qvel0=qvel0[b])
        for fb, fs in zip(batch, single):
            for k in fb:
                assert np.array_equal(fb[k][b], fs[k][0]), (k, b)


def test_same_command_same_numbers():
    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    ctrl = _controls(mjm, 50)
    _, a = _ours(mjm, ctrl, n_envs=2)
    _, b = _ours(mjm, ctrl, n_envs=2)
    for fa, fb in zip(a, b):
        for k in fa:
            assert np.array_equal(fa[k], fb[k])


def test_rollout_frames_and_step_agree():
    from rigidsim.engine.simulator import Simulator

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    n, every = 10, 3
    ctrl = _controls(mjm, n, seed=2)
    sim = Simulator(our_model(mjm), 2)
    frames = list(sim.rollout(n, every=every, ctrl=ctrl))
    # frames at steps 0, 3, 6, 9, and the final state at step 10 (SPEC: every does not divide n)
    steps = [0, 3, 6, 9, 10]
    assert len(frames) == n // every + 2 == len(steps)
    h = mjm.opt.timestep
    np.testing.assert_allclose([f["time"][0] for f in frames], [s * h for s in steps], rtol=1e-14, atol=0)
    keys = {"time", "qpos", "qvel", "qacc", "ctrl", "act", "xpos", "xquat"}
    assert set(frames[0]) == keys
    assert frames[1]["xpos"].shape == (2, mjm.nbody, 3) and frames[1]["xquat"].shape == (2, mjm.nbody, 4)
    # frame t is the state after steps[t] steps, with qacc from the forward pass at that state
    ref = Simulator(our_model(mjm), 2)
    at = Simulator(our_model(mjm), 2)
    for t, f in enumerate(frames):
        if t:
            ref.step(steps[t] - steps[t - 1], ctrl=ctrl[steps[t - 1]:steps[t]])
        assert np.array_equal(ref.get("qpos"), f["qpos"]) and np.array_equal(ref.get("qvel"), f["qvel"])
        if steps[t] < n:
            np.testing.assert_array_equal(f["ctrl"], np.broadcast_to(ctrl[steps[t]], (2, mjm.nu)))
        else:  # the final state holds the last step's ctrl
            np.testing.assert_array_equal(f["ctrl"], np.broadcast_to(ctrl[n - 1], (2, mjm.nu)))
        at.reset(qpos=f["qpos"], qvel=f["qvel"], act=f["act"], ctrl=f["ctrl"])
        at.forward()
        assert np.array_equal(at.get("qacc"), f["qacc"])
        assert np.array_equal(at.get("xpos"), f["xpos"])
    # the last frame is the state after the rollout
    assert np.array_equal(frames[-1]["qpos"], sim.get("qpos"))


def test_rollout_streams_in_chunks(monkeypatch):
    from rigidsim.engine import simulator as S

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    ctrl = _controls(mjm, 40, seed=5)
    _, whole = _ours(mjm, ctrl)
    monkeypatch.setattr(S, "FRAME_BUDGET_BYTES", 1)  # one frame per launch
    _, chunked = _ours(mjm, ctrl)
    assert len(whole) == len(chunked) == 41
    for a, b in zip(whole, chunked):
        assert np.array_equal(a["qpos"], b["qpos"]) and np.array_equal(a["qacc"], b["qacc"])


def test_rollout_blocks_match_frames_when_every_does_not_divide(monkeypatch):
    """Blocks of one launch each, at any buffer size: the same frames as `rollout`, steps 0, 3, ..., 39, 40."""
    from rigidsim.engine import simulator as S

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    ctrl = _controls(mjm, 40, seed=6)
    _, whole = _ours(mjm, ctrl, n_envs=2, every=3)
    expect_steps = list(range(0, 40, 3)) + [40]
    assert len(whole) == len(expect_steps) == 40 // 3 + 2
    for budget in (1, 3 * 2 * 8 * 200, S.FRAME_BUDGET_BYTES):
        monkeypatch.setattr(S, "FRAME_BUDGET_BYTES", budget)
        sim = S.Simulator(our_model(mjm), 2)
        steps, rows = [], []
        for st, block in sim.rollout_blocks(40, every=3, ctrl=ctrl):
            assert block.shape[0] == len(st) >= 1
            steps += list(st)
            f = sim.fields(block)
            rows += [{k: v[t].copy() for k, v in f.items()} for t in range(len(st))]
        assert steps == expect_steps, budget
        for a, b in zip(whole, rows):
            for k in a:
                assert np.array_equal(a[k], b[k]), (budget, k)
    assert np.array_equal(whole[-1]["qpos"], sim.get("qpos"))


def test_rollout_in_env_slices_is_the_rollout_of_the_whole_batch(monkeypatch):
    """A window launched as slices of the env loop (3 slices of 5 envs: 1, 2 and 2 iterations, envs spread by
    `lang.env_of`) steps each env as the whole batch does, bit for bit, frame by frame and into the final
    state; the slices of each window cover every env once."""
    from rigidsim.engine.simulator import Simulator

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    B, n = 5, 40
    rng = np.random.default_rng(11)
    qvel0 = 0.3 * rng.normal(size=(B, mjm.nv))
    ctrl = np.stack([_controls(mjm, n, seed=b) for b in range(B)], axis=1)
    whole_sim, whole = _ours(mjm, ctrl, n_envs=B, qvel0=qvel0, every=3)
    sim = Simulator(our_model(mjm), B)
    sim.reset(qvel=qvel0)
    launches = force_env_slices(monkeypatch, sim)
    sliced = list(sim.rollout(n, every=3, ctrl=ctrl))
    windows = [launches[k:k + 3] for k in range(0, len(launches), 3)]
    assert len(windows) >= 2 and all(not r for w in windows for r, _ in w)
    for w in windows:
        assert [e for _, e in w] == [(0, 1), (1, 3), (3, 5)]
    assert len(sliced) == len(whole) == n // 3 + 2
    for a, b in zip(whole, sliced):
        for k in a:
            assert np.array_equal(a[k], b[k]), k
    assert np.array_equal(whole_sim.get("qpos"), sim.get("qpos"))
    assert np.array_equal(whole_sim.get("qvel"), sim.get("qvel"))


def test_env_slices_keep_launches_near_launch_seconds(monkeypatch):
    """`_slices`: one launch per LAUNCH_SECONDS of a window's timed steps, at most as many as give each
    thread SLICE_ENVS_PER_THREAD envs; one while no step is timed, or on a device (no CPU env loop).
    `_hot_steps`: a window's least steps."""
    from rigidsim.engine import lang
    from rigidsim.engine import simulator as S

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    sim = S.Simulator(our_model(mjm), 1024)
    monkeypatch.setattr(lang, "ENV_LOOP_THREADS", 2)
    sim._step_seconds = None
    assert sim._slices(16) == 1
    sim._step_seconds = 0.05  # 16 steps: 0.8 s, four launches of LAUNCH_SECONDS = 0.2 s
    assert sim._slices(16) == int(16 * 0.05 / S.LAUNCH_SECONDS) == 4
    sim._step_seconds = 1.0  # as many as 1024 envs give 2 threads 64 envs each in every slice
    assert sim._slices(16) == 1024 // (S.SLICE_ENVS_PER_THREAD * 2) == 8
    monkeypatch.setattr(lang, "ENV_LOOP_THREADS", 16)
    assert sim._slices(16) == 1
    monkeypatch.setattr(lang, "ENV_LOOP_THREADS", 0)
    assert sim._slices(16) == 1
    sim._step_seconds = 0.001
    monkeypatch.setattr(lang, "ENV_LOOP_THREADS", 2)
    assert sim._slices(16) == 1  # 16 ms: one launch
    # a window is at least STEPS_HOT steps, fewer when they would take longer than WINDOW_SECONDS
    assert sim._hot_steps() == S.STEPS_HOT == 16
    sim._step_seconds = 0.5
    assert sim._hot_steps() == int(S.WINDOW_SECONDS / 0.5) == 4
    sim._step_seconds = 10.0
    assert sim._hot_steps() == 1


def test_nonfinite_env_stops_and_is_reported():
    from rigidsim.engine.simulator import Simulator

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    sim = Simulator(our_model(mjm), 3)
    qpos = np.tile(mjm.qpos0, (3, 1))
    qpos[2, 0] = np.nan
    sim.reset(qpos=qpos)
    got = []
    with pytest.raises(SimulationError, match=r"qpos is NaN at step 0 in env 2") as e:
        for f in sim.rollout(5):
            got.append(f)
    assert got == [] and e.value.step == 0 and e.value.env == 2

    # a failure later in the run: a velocity that overflows after a few steps
    sim.reset(qvel=np.where(np.arange(3)[:, None] == 1, 1e154, 0.0) * np.ones((3, mjm.nv)))
    got = []
    with pytest.raises(SimulationError, match=r"(qpos|qvel|qacc) is (NaN|Inf) at step \d+ in env 1") as e:
        for f in sim.rollout(50, every=2):
            got.append(f)
    assert e.value.env == 1
    assert len(got) == -(-e.value.step // 2)
    for f in got:
        assert np.isfinite(f["qpos"]).all() and np.isfinite(f["qacc"]).all()


def test_approximate_implicitfast_uses_the_damped_matrix():
    from rigidsim.engine.simulator import Simulator

    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    rng = np.random.default_rng(11)
    qvel = rng.normal(size=mjm.nv)
    ctrl = rng.uniform(-0.5, 0.5, size=mjm.nu)
    act = rng.normal(size=mjm.na) * 0.3
    d = mujoco.MjData(mjm)
    d.qvel[:], d.ctrl[:], d.act[:] = qvel, ctrl, act
    mujoco.mj_forward(mjm, d)
    # qDeriv of implicitfast, d(qfrc_passive + qfrc_actuator)/dqvel: diagonal for joint transmissions
    qderiv = np.diag(-mjm.dof_damping)
    for i in range(mjm.nu):
        lo, hi = mjm.actuator_forcerange[i]
        if mjm.actuator_forcelimited[i] and not lo < d.actuator_force[i] < hi:
            continue
        bias_vel = mjm.actuator_biasprm[i, 2] if mjm.actuator_biastype[i] == 1 else 0.0
        gain_vel = mjm.actuator_gainprm[i, 2] if mjm.actuator_gaintype[i] == 1 else 0.0
        if gain_vel:
            if mjm.actuator_dyntype[i] == 0:
                bias_vel += gain_vel * ctrl[i]
            else:
                assert not mjm.actuator_actearly[i]
                bias_vel += gain_vel * d.act[mjm.actuator_actadr[i]]
        dof = mjm.jnt_dofadr[mjm.actuator_trnid[i, 0]]
        qderiv[dof, dof] += mjm.actuator_gear[i, 0] ** 2 * bias_vel
    full = np.zeros((mjm.nv, mjm.nv))
    mujoco.mj_fullM(mjm, d, full)
    expect = np.linalg.solve(full - mjm.opt.timestep * qderiv, d.qfrc_smooth)

    m = our_model(mjm)
    m.opt.integrator = APPROX
    sim = Simulator(m, 1)
    sim.reset(qvel=qvel, ctrl=ctrl, act=act)
    sim.forward()
    np.testing.assert_allclose(sim.get("qacc")[0], expect, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sim.get("qM")[0], full, rtol=1e-12, atol=1e-12)  # qM stays the mass matrix
    frames = list(sim.rollout(20))
    assert np.isfinite(frames[-1]["qpos"]).all()



# a slide limited to [0, 1] carrying a damped, sprung ball joint, and a damped fixed tendon, at timestep 0.02:
# Genesis's approximate_implicitfast is unstable here (the pendula scene of ../shared shows it first)
APPROX_LIMITS_XML = """
<mujoco>
  <option timestep="0.02"/>
  <default><geom type="box" pos=".1 .2 .3" size=".1 .2 .3"/><joint damping="0.25" stiffness="0.1"/></default>
  <worldbody>
    <body pos="2.5 0 0">
      <joint type="slide" axis="0.4 0.5 0.6" range="0 1"/>
      <joint type="ball"/>
      <geom/>
    </body>
    <body pos="1 0 0">
      <joint name="h1" type="hinge" axis="0.1 0.2 0.3"/>
      <joint name="s1" type="slide" axis="0.4 0.5 0.6" range="0 1"/>
      <geom/>
    </body>
  </worldbody>
  <tendon>
    <fixed limited="true" range="-0.3 2" stiffness=".3" damping=".4">
      <joint joint="h1" coef=".3"/><joint joint="s1" coef="-.4"/>
    </fixed>
  </tendon>
</mujoco>"""


def test_approximate_implicitfast_is_euler_with_the_damping_as_armature():
    """Genesis's approximate_implicitfast with constraint rows is MuJoCo's explicit Euler (eulerdamp off) on the
    model whose dof armature is raised by h * dof_damping and tendon armature by h * tendon_damping, with the
    constraint rows' diagApprox still from the unraised model's invweight0 (the raise is made after compiling):
    qM then is qH = qM - h qDeriv, which the scheme factors, solves with and integrates explicitly. Our run
    follows that MuJoCo run to 1e-9 for 400 steps, and both diverge together: the scheme is unstable on this
    scene (energy grows from step ~400), so the failure is the scheme's, not ours."""
    from rigidsim.engine.simulator import Simulator

    mjm = mujoco.MjModel.from_xml_string(APPROX_LIMITS_XML)
    m = our_model(mjm)
    m.opt.integrator = APPROX
    h = mjm.opt.timestep
    mjm.dof_armature[:] += h * mjm.dof_damping
    mjm.tendon_armature[:] += h * mjm.tendon_damping
    mjm.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    mjm.opt.integrator = EULER
    d = mujoco.MjData(mjm)
    ref, mj_diverged, nefc = [d.qpos.copy()], None, 0
    for i in range(1000):
        mujoco.mj_step(mjm, d)
        ref.append(d.qpos.copy())
        nefc = max(nefc, d.nefc)
        if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number or np.abs(d.qvel).max() > 1e6:
            mj_diverged = i
            break
    assert mj_diverged is not None and 600 < mj_diverged and nefc > 0  # the limits act

    sim = Simulator(m, 1)
    got = []
    with pytest.raises(SimulationError, match=r"is (NaN|Inf) at step") as e:
        for f in sim.rollout(1000):
            got.append(f["qpos"][0].copy())
    np.testing.assert_allclose(np.array(got[:401]), np.array(ref[:401]), rtol=0, atol=1e-9)
    assert mj_diverged <= e.value.step <= mj_diverged + 10

_F32 = textwrap.dedent("""
    import json, sys
    import numpy as np, mujoco
    sys.path.insert(0, {root!r})
    from tests.mjref import model_from_mujoco
    from rigidsim.engine.simulator import Simulator
    out = {{}}
    for name, src in {cases!r}:
        mjm = mujoco.MjModel.from_xml_path(src) if not src.lstrip().startswith("<") else mujoco.MjModel.from_xml_string(src)
        mjm.opt.disableflags |= 1
        rng = np.random.default_rng(0)
        lo = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 0], -1.0)
        hi = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 1], 1.0)
        ctrl = rng.uniform(lo, hi, size=(100, mjm.nu))
        d = mujoco.MjData(mjm)
        for c in ctrl:
            d.ctrl[:] = c
            mujoco.mj_step(mjm, d)
        sim = Simulator(model_from_mujoco(mjm), 2, precision=32)
        sim.step(100, ctrl=ctrl[:, None, :])
        q = sim.get("qpos")
        out[name] = [str(q.dtype), float(np.abs(q - d.qpos).max())]
    print(json.dumps(out))
""")


def test_float32_within_1e_3_over_100_steps():
    cases = [("features", FEATURES_XML)]
    cheetah = MODELS / "dm_control" / "cheetah.xml"
    if cheetah.exists():
        cases.append(("cheetah", str(cheetah)))
    code = _F32.format(root=str(ROOT), cases=cases)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    for name, (dtype, err) in res.items():
        assert dtype == "float32", name
        assert err < 1e-3, f"{name}: float32 qpos error {err:.3g}"
