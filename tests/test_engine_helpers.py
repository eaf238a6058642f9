"""Shared helpers of the engine tests: inline scenes, random states, MuJoCo references."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from tests.cli_util import MODELS
from tests.mjref import model_from_mujoco, mujoco

# A scene exercising every supported smooth feature: free, ball, hinge and slide joints, armature,
# damping, springs with springref, gravity compensation (passive and through actuators), a mocap
# body, sites and offset geoms; motor, position, velocity, intvelocity, damper and general
# (filter, filterexact, actearly) actuators with ctrl/force/act ranges and a joint actfrcrange.
FEATURES_XML = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="mocap" mocap="true" pos="0.3 0 1"><geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
    <body name="torso" pos="0 0 1.5" quat="0.9 0.1 0.2 0.3">
      <freejoint/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
      <site name="s0" pos="0.1 0.02 0" quat="0.7 0.7 0 0"/>
      <body name="ball" pos="0.3 0 0">
        <joint name="ball" type="ball" damping="0.3" stiffness="2" armature="0.01"/>
        <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" euler="10 20 30"/>
        <body name="arm" pos="0.2 0 0" gravcomp="0.5">
          <joint name="hinge1" type="hinge" axis="0 1 0" damping="0.5" stiffness="3" springref="0.2" armature="0.02"
                 actuatorfrclimited="true" actuatorfrcrange="-2 2" actuatorgravcomp="true"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
          <body name="slider" pos="0 0 -0.3" gravcomp="1">
            <joint name="slide" type="slide" axis="1 0 0" damping="0.2" stiffness="1" ref="0.1"/>
            <geom type="sphere" size="0.05" pos="0.02 0.01 0"/>
            <site name="s1" pos="0 0 -0.05"/>
            <body name="tip" pos="0 0 -0.1">
              <joint name="hinge2" type="hinge" axis="1 0 0" ref="0.3"/>
              <joint name="hinge3" type="hinge" axis="0 0 1" damping="0.1"/>
              <geom type="ellipsoid" size="0.03 0.04 0.05" pos="0 0 -0.05" mass="2"/>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="pend" pos="1 0 1">
      <joint name="pend" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hinge1" gear="2" ctrllimited="true" ctrlrange="-1 1"/>
    <position joint="slide" kp="20" forcelimited="true" forcerange="-3 3"/>
    <velocity joint="hinge2" kv="0.2"/>
    <intvelocity joint="hinge3" kp="5" actrange="-1 1"/>
    <damper joint="pend" kv="0.4" ctrlrange="0 1"/>
    <general joint="pend" dyntype="filter" dynprm="0.05" gainprm="1.5" biastype="affine" biasprm="0.1 -0.3 -0.2"/>
    <general joint="hinge2" dyntype="filterexact" dynprm="0.02" gainprm="0.8" actearly="true"/>
    <general joint="hinge3" dyntype="integrator" gaintype="affine" gainprm="1 0.2 0.05" actlimited="true" actrange="-2 2"/>
  </actuator>
</mujoco>
"""


# Tendons and fluid: a fixed tendon coupling a chain joint with two sibling joints (its implicitfast derivative
# has entries outside qM's sparsity, which implicitfast drops), a spatial tendon through sites on three bodies
# and the world with a pulley, tendon springs with a dead band and dampers, actuators on both tendons (one with
# a velocity bias), and the inertia-box fluid model with density, viscosity and wind on a free body and a chain.
TENDON_XML = """
<mujoco>
  <option timestep="0.002" density="1.2" viscosity="0.02" wind="0.4 -0.3 0.1"/>
  <worldbody>
    <site name="anchor" pos="0.2 0 2"/>
    <site name="anchor2" pos="-0.3 0.1 1.8"/>
    <body name="arm1" pos="0 0 1.5">
      <joint name="h1" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
      <site name="s1" pos="0.4 0 0.02"/>
      <body name="arm2" pos="0.4 0 0">
        <joint name="h2" type="hinge" axis="0 1 0"/>
        <joint name="sl" type="slide" axis="1 0 0" damping="0.3"/>
        <geom type="box" size="0.15 0.03 0.02" pos="0.15 0 0"/>
        <site name="s2" pos="0.3 0.01 0"/>
        <body name="finger_a" pos="0.3 0.05 0">
          <joint name="fa" type="hinge" axis="0 0 1" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01"/>
        </body>
        <body name="finger_b" pos="0.3 -0.05 0">
          <joint name="fb" type="hinge" axis="0 0 1" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01"/>
        </body>
      </body>
    </body>
    <body name="float" pos="0 0.5 1">
      <freejoint/>
      <geom type="ellipsoid" size="0.1 0.05 0.03"/>
      <site name="s3" pos="0.05 0 0.02"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="couple" stiffness="2" damping="0.4" springlength="-0.1 0.2">
      <joint joint="h2" coef="0.7"/>
      <joint joint="fa" coef="0.5"/>
      <joint joint="fb" coef="-0.5"/>
    </fixed>
    <spatial name="rope" stiffness="5" damping="0.2" springlength="0.6 0.9">
      <site site="anchor"/>
      <site site="s1"/>
      <site site="s2"/>
      <pulley divisor="2"/>
      <site site="anchor2"/>
      <site site="s3"/>
    </spatial>
  </tendon>
  <actuator>
    <position tendon="couple" kp="3" kv="0.5"/>
    <motor tendon="rope" gear="1.5" ctrllimited="true" ctrlrange="-1 1"/>
    <motor joint="h1" gear="2"/>
  </actuator>
</mujoco>
"""


# Ball and free joint transmissions (joint and jointinparent, one with a velocity bias; servos on the ball, whose
# setpoints MuJoCo 4 wraps modulo 2 pi |gear|) and a slider-crank.
TRANSMISSION_XML = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <site name="slidersite" pos="0.6 0 1" euler="0 90 0"/>
    <body name="base" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 0 1" damping="0.2"/>
      <geom type="box" size="0.1 0.1 0.05"/>
      <body name="link" pos="0.2 0 0" quat="0.9 0.2 0.3 0.1">
        <joint name="ball" type="ball" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <site name="cranksite" pos="0.3 0.05 0"/>
      </body>
    </body>
    <body name="puck" pos="0 1 1">
      <freejoint name="free"/>
      <geom type="ellipsoid" size="0.1 0.06 0.04"/>
      <body pos="0.1 0 0"><joint name="flap" type="hinge" axis="0 1 0"/><geom type="box" size="0.05 0.02 0.01"/></body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="ball" gear="0.3 -0.2 0.5 0 0 0"/>
    <position jointinparent="ball" gear="0.1 0.4 -0.2 0 0 0" kp="2" kv="0.3"/>
    <intvelocity joint="ball" gear="-0.2 0.1 0.3 0 0 0" kp="1.5" kv="0.1" actrange="-9 9"/>
    <motor jointinparent="free" gear="0.5 0.2 -0.3 0.1 -0.2 0.3"/>
    <general joint="free" gear="0 0.3 0.1 0.2 0 -0.1" biastype="affine" biasprm="0 0 -0.4"/>
    <motor cranklength="0.4" cranksite="cranksite" slidersite="slidersite" gear="1.5"/>
    <motor joint="flap"/>
  </actuator>
</mujoco>
"""


def shared_xmls():
    """Every scene file under ../shared/models (skipping include-only files), relative names."""
    if not MODELS.exists():
        return []
    out = []
    for p in sorted(MODELS.rglob("*.xml")):
        rel = p.relative_to(MODELS).as_posix()
        if "/common/" in rel or "assets" in rel.split("/"):
            continue
        out.append(rel)
    return out


@functools.lru_cache(maxsize=None)
def mj_model(src: str):
    """A MuJoCo model from a path under ../shared/models or from inline XML (starting with '<')."""
    if src.lstrip().startswith("<"):
        return mujoco.MjModel.from_xml_string(src)
    return mujoco.MjModel.from_xml_path(str(MODELS / src))


def random_state(mjm, rng, scale=0.3):
    """A random (qpos, qvel, ctrl, act): quaternions normalized, ctrl inside ctrlrange where limited."""
    qpos = np.array(mjm.qpos0, dtype=float)
    qpos += rng.normal(size=mjm.nq) * scale
    for j in range(mjm.njnt):
        t, a = mjm.jnt_type[j], mjm.jnt_qposadr[j]
        if t in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            a = a + 3 if t == mujoco.mjtJoint.mjJNT_FREE else a
            q = rng.normal(size=4)
            qpos[a:a + 4] = q / np.linalg.norm(q)
    qvel = rng.normal(size=mjm.nv)
    lo = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mjm.actuator_ctrllimited, mjm.actuator_ctrlrange[:, 1], 1.0)
    ctrl = rng.uniform(lo - 0.2 * (hi - lo), hi + 0.2 * (hi - lo))  # some outside the range: clamping
    act = rng.normal(size=mjm.na) * 0.5
    return qpos, qvel, ctrl, act


def without_constraints(mjm):
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    return mjm


def our_model(mjm):
    return model_from_mujoco(mjm)


def assert_close(ours, ref, name, rtol=1e-9, atol_scale=1e-10):
    ref = np.asarray(ref, dtype=float)
    scale = max(1.0, float(np.abs(ref).max())) if ref.size else 1.0
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol_scale * scale, err_msg=name)


def shared_path(rel: str) -> Path:
    return MODELS / rel


def count_launches(monkeypatch, sim) -> list:
    """Record each rollout launch of `sim`: returns the list into which each launch's (resume, envs) is
    appended."""
    launches = []
    launch = sim._launch

    def counted(*a, **k):
        launches.append((bool(k.get("resume")), k.get("envs")))
        return launch(*a, **k)

    monkeypatch.setattr(sim, "_launch", counted)
    return launches


def force_env_slices(monkeypatch, sim, slices: int = 3) -> list:
    """Make every rollout window of `sim` launch in `slices` slices of its env loop (at most one env each),
    whatever its step time; returns its launches as `count_launches` does."""
    monkeypatch.setattr(sim, "_slices", lambda n: min(slices, sim.n_envs))
    return count_launches(monkeypatch, sim)
