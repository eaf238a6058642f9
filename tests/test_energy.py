"""energy.joint_kinetic_energy against MuJoCo's own mj_energyVel (1/2 qvel' M qvel with the armature) at
random states: every joint type, bodies with several joints at offset anchors and reference angles."""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.energy import joint_kinetic_energy
from tests.cli_util import ROOT, shared_model

mujoco = pytest.importorskip("mujoco")

# a slide, two hinges and a ball in one body, all with anchors off the body origin and reference positions;
# a child with a hinge and a slide; armature on some dofs
MULTI = """<mujoco><worldbody>
<body pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">
  <joint type="slide" axis="1 0.5 0" pos="0.1 0 0.2" ref="0.3" armature="0.2"/>
  <joint type="hinge" axis="0 1 1" pos="0.2 0.1 0" ref="0.5"/>
  <joint type="hinge" axis="1 0 0" pos="0.05 0 0.1" armature="0.1"/>
  <joint type="ball" pos="0 0.3 0.1"/>
  <geom type="box" size="0.1 0.2 0.3" pos="0.1 0 0" quat="1 0.3 0 0.2"/>
  <body pos="0 0 -0.5"><joint type="hinge" axis="0 0 1" pos="0.1 0.1 0"/><joint type="slide" axis="0 1 0"/>
    <geom type="capsule" size="0.05 0.2" pos="0.1 0 0"/></body>
</body>
<body pos="1 0 0"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3" pos="0.1 0.05 0" euler="10 20 30"/></body>
</worldbody></mujoco>"""

_NAMES = ("body_parentid", "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_axis", "jnt_pos", "qpos0",
          "body_mass", "body_inertia", "body_iquat", "body_ipos", "dof_armature")


def _random_states(mjm, n, seed):
    rng = np.random.default_rng(seed)
    qpos = np.tile(mjm.qpos0, (n, 1))
    for j in range(mjm.njnt):
        a, t = mjm.jnt_qposadr[j], mjm.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            q = rng.normal(size=(n, 4))
            qpos[:, a:a + 3], qpos[:, a + 3:a + 7] = rng.normal(size=(n, 3)), q / np.linalg.norm(q, axis=1, keepdims=True)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=(n, 4))
            qpos[:, a:a + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
        else:
            qpos[:, a] = rng.uniform(-1.5, 1.5, n)
    return qpos, rng.normal(size=(n, mjm.nv))


def _check(mjm, n=6, seed=0):
    mjm.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(mjm)
    qpos, qvel = _random_states(mjm, n, seed)
    ref, xpos, xquat = [], [], []
    for k in range(n):
        d.qpos[:], d.qvel[:] = qpos[k], qvel[k]
        mujoco.mj_forward(mjm, d)
        ref.append(d.energy[1])
        xpos.append(d.xpos.copy())
        xquat.append(d.xquat.copy())
    model = {k: np.asarray(getattr(mjm, k)) for k in _NAMES}
    ke = joint_kinetic_energy(qpos, qvel, np.array(xpos), np.array(xquat), model)
    np.testing.assert_allclose(ke, ref, rtol=1e-12)
    assert min(ref) > 0


def test_every_joint_type_with_offsets_and_several_joints_per_body():
    _check(mujoco.MjModel.from_xml_string(MULTI))


@pytest.mark.parametrize("scene", ["cartpole", "chain"])
def test_bundled_scenes(scene):
    _check(mujoco.MjModel.from_xml_path(str(ROOT / "scenes" / f"{scene}.xml")))


def test_humanoid():
    _check(mujoco.MjModel.from_xml_path(str(shared_model("dm_control/humanoid.xml"))))
