"""Newton's low-rank direction (rigidsim.engine.solver.lowrank) against MuJoCo 4.0.0 on MuJoCo's own rows.

A three-legged walker (18 dofs, condim-3 feet, hinge limits) falls and walks on a plane under random
controls: with one or two feet down an island has at most 8 rows (2 nrow + 2 <= nvi: the low-rank path),
with three feet and limits more (the dense factor). qacc and efc_force must equal MuJoCo's to 1e-6 of their
largest entry, efc_state exactly and every island's iteration count exactly: a wrong direction changes the
counts before it changes the answer.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests import solver_util as U
from tests.mjref import mujoco
from tests.test_solver import assert_newton

_LEG = """
<body pos="{x} {y} 0" euler="0 0 {yaw}">
  <joint name="j{k}a" type="hinge" axis="0 0 1" range="-40 40" limited="true"/>
  <joint name="j{k}b" type="hinge" axis="0 1 0" range="-60 60" limited="true"/>
  <geom type="capsule" fromto="0 0 0 0.15 0 0" size="0.025"/>
  <body pos="0.15 0 0">
    <joint name="j{k}c" type="hinge" axis="0 1 0" range="-90 10" limited="true"/>
    <geom type="capsule" fromto="0 0 0 0.1 0 -0.15" size="0.02"/>
    <body pos="0.1 0 -0.15">
      <joint name="j{k}d" type="hinge" axis="0 1 0" range="-60 60" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" contype="0" conaffinity="0"/>
      <geom name="foot{k}" type="sphere" pos="0 0 -0.1" size="0.03" condim="3"/>
    </body>
  </body>
</body>"""

LEGGED = """<mujoco><option jacobian="dense" solver="Newton" cone="{cone}"/>
<default><geom contype="0" conaffinity="1" friction="0.9"/><joint damping="0.2"/></default>
<worldbody>
<geom type="plane" size="5 5 0.1" contype="1" conaffinity="0"/>
<body pos="0 0 0.32"><freejoint/><geom type="sphere" size="0.08" contype="0" conaffinity="0"/>
""" + "".join(_LEG.format(k=k, x=0.05 * np.cos(a), y=0.05 * np.sin(a), yaw=np.degrees(a))
              for k, a in enumerate(2 * np.pi * np.arange(3) / 3)) + """
</body></worldbody>
<actuator>""" + "".join(f'<motor joint="j{k}{n}" gear="3"/>' for k in range(3) for n in "abcd") + """</actuator></mujoco>"""


def _walk(mjm, nsteps=600, every=5):
    rng = np.random.default_rng(3)

    def ctrl(i, d):
        d.ctrl[:] = np.sin(0.02 * i + np.arange(mjm.nu)) + 0.3 * rng.uniform(-1, 1, mjm.nu)

    return U.sample(mjm, nsteps, every, ctrl=ctrl)


@pytest.mark.parametrize("islands", [True, False])
def test_lowrank_matches_mujoco(islands):
    mjm = mujoco.MjModel.from_xml_string(LEGGED.format(cone="pyramidal"))
    if not islands:
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    assert mjm.nv == 18
    snaps = _walk(mjm)
    # one tree: every island is all 18 dofs and all rows; both paths must be taken
    low = sum(2 * s["nefc"] + 2 <= mjm.nv for s in snaps)
    assert 10 <= low and len(snaps) - low >= 10, (low, len(snaps))
    assert_newton(mjm, snaps)


def test_elliptic_keeps_dense_factor():
    """The same walker with elliptic cones (the low-rank path does not take CONE-state contacts)."""
    mjm = mujoco.MjModel.from_xml_string(LEGGED.format(cone="elliptic"))
    assert_newton(mjm, _walk(mjm, 300, 7))
