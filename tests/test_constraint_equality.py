"""Equality rows (connect, weld, joint, tendon) and tendon friction-loss and limit rows against MuJoCo 4.0.0's
mj_forward at the same state, to rtol 1e-9 as in test_constraint_rows: counts, efc_type, efc_id, the dense
efc_J, pos, margin, frictionloss, diagA, R, D, vel and aref (connect and weld rows' aref with MuJoCo's J-dot
qvel correction). States are sampled from MuJoCo runs of each scene."""

from __future__ import annotations

import numpy as np
import pytest

from tests.mjref import compat_sim, mujoco
from tests.test_constraint_rows import FLOATS, _check_scene, _mujoco_rows, _states

EQ, FRI_TENDON, LIM_TENDON = 0, 2, 4  # mjCNSTR_EQUALITY, mjCNSTR_FRICTION_TENDON, mjCNSTR_LIMIT_TENDON

# connect: two bodies on different trees (ball chain and a free body), two links of one chain (dofs common to
# both sides), a body to the world, and two sites with their own solref
CONNECT = """<mujoco><option timestep=".005"/>
<worldbody><geom type="plane" size="3 3 .1"/>
<body name="a" pos="0 0 1"><joint type="ball"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
  <body name="b" pos=".3 0 0"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
    <site name="s1" pos=".3 0 0"/>
    <body name="b2" pos=".3 0 0"><joint type="hinge" axis="0 0 1"/><joint type="slide" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 .2 0 0" size=".02"/></body></body></body>
<body name="c" pos=".5 0 1"><freejoint/><geom type="box" size=".05 .05 .05"/>
  <site name="s2" pos="0 .02 0" quat="1 .2 0 .1"/></body>
</worldbody>
<equality><connect body1="b" body2="c" anchor=".3 0 0"/><connect body1="a" anchor="0 0 .1"/>
<connect site1="s1" site2="s2" solref=".03 .9"/><connect body1="b2" body2="a" anchor=".2 0 0" solimp=".8 .9 .02 .4 3"/>
</equality></mujoco>"""

# weld: relpose and torquescale, a body to the world, two sites (rotated), a tree's body to a free body with an
# anchor, and two links of one chain
WELD = """<mujoco><option timestep=".005" gravity="0 0 -3"/>
<worldbody>
<body name="a" pos="0 0 1"><joint type="ball"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" contype="0"/>
  <body name="b" pos=".3 0 0"><joint type="hinge" axis="0 1 0"/><joint type="slide" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" contype="0"/><site name="s1" pos=".3 0 0" quat="1 .3 .1 0"/>
    <body name="b2" pos=".3 0 0"><joint type="hinge" axis="1 0 0"/><geom type="sphere" size=".03" contype="0"/>
    </body></body></body>
<body name="c" pos=".7 0 1"><freejoint/><geom type="box" size=".05 .05 .05" contype="0"/>
  <site name="s2" pos="0 .02 0" quat="1 .2 0 .1"/></body>
<body name="e" pos="-.5 0 1"><freejoint/><geom type="box" size=".05 .04 .03" contype="0"/></body>
</worldbody>
<equality><weld body1="b" body2="c" relpose=".3 .1 0 1 .1 .2 .3" torquescale="2.5"/>
<weld body1="e" solref=".04 .7"/>
<weld site1="s1" site2="s2" torquescale=".4"/>
<weld body1="a" body2="e" anchor=".1 .2 .3" solimp=".8 .9 .01 .3 3"/>
<weld body1="b2" body2="a" torquescale="0"/>
</equality></mujoco>"""

# joint and tendon equalities (quartic coupling, one joint alone), a fixed and a spatial tendon with limits
# (margin, own solref/solimp) and friction loss
JOINT_TENDON = """<mujoco><option timestep=".005"/>
<worldbody>
<body pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0" ref=".2"/>
  <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/><site name="t0" pos=".1 0 .05"/>
  <body pos=".3 0 0"><joint name="j2" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
    <site name="t1" pos=".2 0 .05"/>
    <body pos=".3 0 0"><joint name="j3" type="slide" axis="1 0 0"/><geom type="box" size=".04 .04 .04"/>
      <site name="t2" pos="0 0 .05"/></body></body></body>
<body pos="1 0 1"><joint name="j4" type="hinge" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 .3 0" size=".03"/>
  <body pos="0 .3 0"><joint name="j5" type="slide" axis="0 1 0"/><geom type="sphere" size=".04"/></body></body>
</worldbody>
<tendon>
<fixed name="f1" limited="true" range="-.2 .3" frictionloss=".2" margin=".05" solreflimit=".03 .8"
  solimplimit=".8 .95 .01 .4 2" solreffriction=".05 1.2" solimpfriction=".7 .9 .02 .5 1">
  <joint joint="j1" coef="1"/><joint joint="j2" coef="-.5"/></fixed>
<spatial name="s1" limited="true" range=".3 .5" frictionloss=".1"><site site="t0"/><site site="t1"/><site site="t2"/>
</spatial>
<fixed name="f2"><joint joint="j4" coef="1"/><joint joint="j5" coef="2"/></fixed>
<fixed name="f3"><joint joint="j3" coef="1"/></fixed>
</tendon>
<equality>
<joint joint1="j4" joint2="j1" polycoef=".1 .5 -.3 .2 .05"/>
<joint joint1="j3" polycoef=".02 0 0 0 0" solref=".03 1"/>
<joint joint1="j5" joint2="j2" polycoef="0 1 0 0 0"/>
<tendon tendon1="f2" tendon2="f3" polycoef=".05 -.7 .2 .1 .3"/>
<tendon tendon1="s1" polycoef=".1 0 0 0 0"/>
</equality></mujoco>"""

# rows whose Jacobian is all zeros, which MuJoCo drops: a connect and a weld between two bodies fixed to the
# world, a spatial tendon between two sites of one body (friction loss, a limit it always violates, and an
# equality), next to rows that stay
EMPTY = """<mujoco><option timestep=".005"/>
<worldbody>
<body name="w1" pos="0 0 1"><geom type="sphere" size=".05" contype="0"/>
  <site name="u0" pos="0 0 0"/><site name="u1" pos=".1 0 0"/></body>
<body name="w2" pos=".5 0 1"><geom type="sphere" size=".05" contype="0"/></body>
<body name="m" pos="0 1 1"><joint name="h" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0"
  size=".03" contype="0"/></body>
</worldbody>
<tendon><spatial name="rigid" limited="true" range="0 .05" frictionloss=".3"><site site="u0"/><site site="u1"/>
</spatial>
<fixed name="fh" frictionloss=".1"><joint joint="h" coef="1"/></fixed></tendon>
<equality><connect body1="w1" body2="w2" anchor="0 0 0"/><weld body1="w2"/><tendon tendon1="rigid"/>
<connect body1="m" anchor=".3 0 0"/></equality></mujoco>"""


def _types(seen):
    return {int(t) for t in seen}


def test_connect_rows():
    """Connect between bodies of two trees, two links of one chain, a body and the world, and two sites."""
    seen = _check_scene(CONNECT, nstates=6, every=25)
    assert EQ in _types(seen)


def test_weld_rows():
    """Weld with relpose and torquescale (2.5, 0.4, 0), to the world, between sites, with an anchor."""
    seen = _check_scene(WELD, nstates=6, every=25)
    assert EQ in _types(seen)


def test_joint_and_tendon_rows():
    """Joint and tendon equalities (quartic polycoef, a single joint, a spatial tendon alone) and tendon
    friction-loss and limit rows of a fixed and a spatial tendon."""
    seen = _check_scene(JOINT_TENDON, nstates=8, every=25, qvel_scale=2.0)
    assert {EQ, FRI_TENDON, LIM_TENDON} <= _types(seen)


def test_empty_rows_dropped():
    """Rows with an all-zero Jacobian are not made (MuJoCo's mj_addConstraint); their neighbours are."""
    mjm = mujoco.MjModel.from_xml_string(EMPTY)
    ref = _mujoco_rows(mjm, mjm.qpos0, np.array([0.7]))
    assert ref["ne"] == 3 and ref["nf"] == 1 and ref["nl"] == 0  # only the live connect and fixed tendon
    _check_scene(EMPTY, nstates=3, every=20)


def test_equality_disabled():
    """The equality disable flag removes every equality row (and only those)."""
    xml = JOINT_TENDON.replace('<option timestep=".005"/>', '<option timestep=".005"><flag equality="disable"/>'
                                                            '</option>')
    seen = _check_scene(xml, nstates=3, every=25, qvel_scale=2.0)
    assert EQ not in _types(seen) and FRI_TENDON in _types(seen)


@pytest.mark.parametrize("xml,off", [(CONNECT, (1, 2)), (WELD, (0, 3)), (JOINT_TENDON, (0, 3))])
def test_eq_active_per_env(xml, off):
    """eq_active starts as eq_active0 and is per env: env 1 with some equalities switched off has the rows of
    MuJoCo with the same eq_active, env 0 keeps them all."""
    mjm = mujoco.MjModel.from_xml_string(xml)
    sim = compat_sim(mjm, 2)
    for qpos, qvel in _states(mjm, 3, 25):
        sim.reset(qpos=qpos, qvel=qvel)
        np.testing.assert_array_equal(sim.get("eq_active"), np.broadcast_to(mjm.eq_active0, (2, mjm.neq)))
        sim._d["eq_active"][1, list(off)] = 0  # the CPU backend's Data, as a user toggles d.eq_active
        sim.forward()
        for env in (0, 1):
            active = mjm.eq_active0.copy()
            if env == 1:
                active[list(off)] = 0
            ref = _mujoco_rows_active(mjm, qpos, qvel, active)
            got = sim.constraints(env)
            for k in ("ne", "nf", "nl", "nefc"):
                assert got[k] == ref[k], (env, k, got[k], ref[k])
            np.testing.assert_array_equal(got["efc_id"], ref["efc_id"])
            np.testing.assert_allclose(got["efc_J"], ref["efc_J"], rtol=1e-9, atol=1e-12)
            for k in FLOATS:
                np.testing.assert_allclose(got["efc_" + k], ref["efc_" + k], rtol=1e-9, atol=1e-12, err_msg=k)


def _mujoco_rows_active(mjm, qpos, qvel, active):
    mjm.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(mjm)
    d.qpos[:], d.qvel[:] = qpos, qvel
    d.eq_active[:] = active
    mujoco.mj_forward(mjm, d)
    n = d.nefc
    out = {"ne": d.ne, "nf": d.nf, "nl": d.nl, "nefc": n, "efc_J": d.efc_J[:n * mjm.nv].reshape(n, mjm.nv).copy(),
           "efc_id": d.efc_id[:n].copy()}
    for k in FLOATS:
        out["efc_" + k] = getattr(d, "efc_" + k)[:n].copy()
    return out
