"""Constraint rows against MuJoCo 4.0.0's mj_forward at the same state: counts (ne, nf, nl, nefc), efc_type,
efc_id, and efc_J, efc_pos, efc_margin, efc_frictionloss, efc_diagA, efc_R, efc_D, efc_vel, efc_aref to
rtol 1e-9 (MuJoCo's efc_J read dense: the model's jacobian option set to dense), in MuJoCo's row order.
States are sampled from MuJoCo runs of each scene, so contacts, limits and friction rows are all active."""

from __future__ import annotations

import numpy as np
import pytest

from tests.mjref import compat_sim, mujoco, mujoco_states

FLOATS = ("pos", "margin", "frictionloss", "diagA", "R", "D", "vel", "aref")

BOX = """<mujoco><option cone="{cone}" impratio="{impratio}"/>
<worldbody><geom name="floor" type="plane" size="5 5 .1" condim="{condim}" {extra}/>
<body pos="0 0 .2"><freejoint/><geom type="box" size=".1 .15 .05" condim="{condim}" friction="1 .02 .003"/></body>
<body pos=".5 0 .3"><freejoint/><geom type="sphere" size=".08" condim="{condim}" priority="1" friction=".7 .01 .002"
  solref="-2000 -30"/></body>
<body pos="-.5 0 .3"><freejoint/><geom name="cap" type="capsule" size=".05 .1" condim="{condim}" margin=".02"
  gap=".01" solimp=".8 .95 .002 .4 3"/></body>
<body pos="0 .6 .3"><freejoint/><geom name="ball" type="sphere" size=".06"/></body>
</worldbody>
<contact><pair geom1="floor" geom2="ball" condim="{condim}" solreffriction=".03 1.1" friction=".9 .9 .01 .001 .001"/>
</contact></mujoco>"""

JOINTS = """<mujoco><option timestep=".005"/>
<worldbody>
<body><joint name="h1" type="hinge" axis="0 1 0" range="-30 20" limited="true" frictionloss=".3" margin=".05"
   solreflimit=".03 .8" solimplimit=".85 .97 .01 .3 1"/>
  <geom type="capsule" fromto="0 0 0 .4 0 0" size=".03"/>
  <body pos=".4 0 0"><joint type="slide" axis="1 0 0" range="-.05 .05" frictionloss=".1"/>
    <geom type="box" size=".05 .05 .05"/>
    <body pos=".1 0 0"><joint type="ball" range="0 25"/><geom type="capsule" fromto="0 0 0 .2 0 0" size=".02"/>
    </body>
  </body>
</body>
</worldbody></mujoco>"""


def _states(mjm, n=6, every=25, seed=0, qvel_scale=1.0):
    return mujoco_states(mjm, n, every, seed, qvel_scale=qvel_scale, qvel=True)


def _mujoco_rows(mjm, qpos, qvel):
    mjm.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(mjm)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(mjm, d)
    n = d.nefc
    out = {"ne": d.ne, "nf": d.nf, "nl": d.nl, "nefc": n, "efc_J": d.efc_J[:n * mjm.nv].reshape(n, mjm.nv).copy(),
           "efc_type": d.efc_type[:n].copy(), "efc_id": d.efc_id[:n].copy()}
    for k in FLOATS:
        out["efc_" + k] = getattr(d, "efc_" + k)[:n].copy()
    return out


def _assert_same_rows(got, ref):
    """Counts, types and ids equal; Jacobian and every float of FLOATS to rtol 1e-9."""
    for k in ("ne", "nf", "nl", "nefc"):
        assert got[k] == ref[k], (k, got[k], ref[k])
    np.testing.assert_array_equal(got["efc_type"], ref["efc_type"])
    np.testing.assert_array_equal(got["efc_id"], ref["efc_id"])
    np.testing.assert_allclose(got["efc_J"], ref["efc_J"], rtol=1e-9, atol=1e-12)
    for k in FLOATS:
        np.testing.assert_allclose(got["efc_" + k], ref["efc_" + k], rtol=1e-9, atol=1e-12, err_msg=k)


def _check_scene(xml, nstates=6, every=25, qvel_scale=1.0, need=("contact",)):
    mjm = mujoco.MjModel.from_xml_string(xml)
    sim = compat_sim(mjm)
    seen = set()
    for qpos, qvel in _states(mjm, nstates, every, qvel_scale=qvel_scale):
        ref = _mujoco_rows(mjm, qpos, qvel)
        sim.reset(qpos=qpos, qvel=qvel)
        sim.forward()
        got = sim.constraints(0)
        _assert_same_rows(got, ref)
        seen |= {int(t) for t in ref["efc_type"]}
    return seen


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("condim", [1, 3, 4, 6])
def test_contact_rows(cone, condim):
    seen = _check_scene(BOX.format(cone=cone, condim=condim, impratio=1 if condim < 4 else 2.5, extra=""))
    want = 5 if condim == 1 else (7 if cone == "elliptic" else 6)
    assert want in seen


def test_contact_rows_override_margin():
    """The plane's own margin and gap (added to the pair's), contacts in the gap excluded."""
    seen = _check_scene(BOX.format(cone="pyramidal", condim=3, impratio=1, extra='margin=".03" gap=".02"'))
    assert 6 in seen


def test_joint_rows():
    """Hinge limits with margin and their own solref/solimp, a slide's limit, a ball's cone limit, dof friction."""
    seen = _check_scene(JOINTS, nstates=10, every=20, qvel_scale=4.0, need=())
    assert {1, 3} <= seen


# the default suite checks these (every row type: contacts with multi-contact, joint limits, friction loss,
# equality connect and weld with J-dot-v, tendon limits and friction); each run adds a rotating slice of the
# other models (tests/sweep_slice.py); RIGIDSIM_SWEEP=1 checks every shared model
SUBSET = {"dm_control/humanoid.xml", "dm_control/finger.xml", "dm_control/ball_in_cup.xml",
          "dm_control/quadruped.xml", "mujoco_warp/test_data/jdotv/weld_3d.xml",
          "mujoco_warp/test_data/constraints_mjvariant.xml"}


PER_SLICE = 1  # models of the rotating slice per run (a mesh scene compiles its own kernels: up to 80 s)


def _model_scenes():
    from tests.sweep_slice import selection
    from tests.test_collision_models import MODELS, NOT_BUILT

    if not MODELS.exists():
        return []
    out = []
    for p in sorted(MODELS.rglob("*.xml")):
        rel = str(p.relative_to(MODELS))
        if "common/" in rel or rel in NOT_BUILT:
            continue
        mjm = mujoco.MjModel.from_xml_path(str(p))  # every shared file compiles in MuJoCo 4.0.0: a crash fails
        # flex equalities are not built (refused at load)
        if any(int(t) not in (0, 1, 2, 3) for t in mjm.eq_type):
            continue
        if mjm.nv == 0 or mjm.nv > 60:
            continue
        out.append(rel)
    return [pytest.param(rel, id=tid) for rel, tid in selection("constraint_rows", out, SUBSET, PER_SLICE)]


@pytest.mark.parametrize("rel", _model_scenes())
def test_model_rows(rel):
    from tests.test_collision_models import MODELS

    mjm = mujoco.MjModel.from_xml_path(str(MODELS / rel))
    _check_model(mjm)


def _check_model(mjm, nstates=4, every=30):
    sim = compat_sim(mjm)
    for qpos, qvel in _states(mjm, nstates, every, qvel_scale=0.5):
        ref = _mujoco_rows(mjm, qpos, qvel)
        sim.reset(qpos=qpos, qvel=qvel)
        sim.forward()
        got = sim.constraints(0)
        _assert_same_rows(got, ref)


def test_row_storage_holds_the_spans_and_no_more():
    # efc_J keeps per row only the dof ranges of the kinematic trees it touches (layout.EFC_SPAN): the
    # widest contact row of 27 free boxes on a plane touches two boxes (12 of nv = 162 dofs), a chain's
    # contact with a free body spans the chain's tree and the body; non-contact rows get nv each
    from rigidsim import options as opts
    from rigidsim.engine import data as D
    from rigidsim.loaders import load_scene
    from tests.cli_util import ROOT

    model = load_scene(str(ROOT / "scenes" / "boxes27.xml"))
    s = D.array_sizes(model, opts.resolve(model, {}, {"enable_mujoco_compatibility": True}))
    assert (s["nefcwide"], s["efcw"]) == (0, 12)
    assert s["njsize"] == 12 * s["nefcmax"]
    from tests.mjref import model_from_mujoco

    chain = model_from_mujoco(mujoco.MjModel.from_xml_string(JOINTS.replace(
        "</worldbody>", '<body pos="0 0 1"><freejoint/><geom type="sphere" size=".1"/></body></worldbody>')))
    s = D.array_sizes(chain, opts.resolve(chain, {}, {"enable_mujoco_compatibility": True}))
    nv = chain.nv  # hinge, slide, ball (5) and the free body (6)
    assert nv == 11
    assert s["efcw"] == nv  # the chain's tree (dofs 0-4) and the body's (5-10)
    assert s["nefcwide"] == D.efc_rows(chain, 0, 1) and s["nefcwide"] > 0
    assert s["njsize"] == s["nefcwide"] * nv + (s["nefcmax"] - s["nefcwide"]) * s["efcw"]


LEGS = """<mujoco><option timestep=".005"/>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 .32"><freejoint/><geom type="box" size=".2 .1 .05"/>
  <body pos=".15 0 0"><joint type="hinge" axis="0 1 0" range="-40 40" limited="true"/>
    <geom type="capsule" fromto="0 0 0 0 0 -.1" size=".03"/></body>
  <body pos="-.15 0 0"><joint type="hinge" axis="0 1 0" range="-40 40" limited="true"/>
    <geom type="capsule" fromto="0 0 0 0 0 -.25" size=".03"/></body>
</body>
<body pos="0 .5 .2"><freejoint/><geom type="sphere" size=".08"/></body>
</worldbody></mujoco>"""


def test_every_stored_row_entry_is_written():
    # The rows stage writes every entry a row stores and nothing is left from an earlier step: with efc_J
    # filled with NaN before each forward, the rows still equal MuJoCo's (rtol 1e-9). A leg's contact spans
    # the body's free dofs and its hinge: the long (second) leg's chain skips the short leg's hinge (dof 6),
    # which must be written as a zero (a contact's rows clear only such gaps); the sphere's rows span their
    # own tree
    mjm = mujoco.MjModel.from_xml_string(LEGS)
    sim = compat_sim(mjm)
    legs_touching = 0
    for qpos, qvel in _states(mjm, 6, 20, qvel_scale=0.3):
        ref = _mujoco_rows(mjm, qpos, qvel)
        sim.reset(qpos=qpos, qvel=qvel)
        sim._d["efc_J"][:] = np.nan  # (the data arrays of the kernel, after the reset)
        sim.forward()
        got = sim.constraints(0)
        _assert_same_rows(got, ref)
        assert np.isfinite(got["efc_J"]).all()
        # rows of the long leg's contact: an exact zero at the short leg's hinge, inside the stored span
        contact = ref["efc_type"] >= int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS)
        legs_touching += int(np.any(contact & (ref["efc_J"][:, 6] == 0) & (ref["efc_J"][:, 7] != 0)))
    assert legs_touching > 0  # the gap case was exercised
    # dof friction and joint limit rows (hinge, slide, ball) write their one or three entries the same way
    mjm = mujoco.MjModel.from_xml_string(JOINTS)
    sim = compat_sim(mjm)
    kinds = set()
    for qpos, qvel in _states(mjm, 6, 25, qvel_scale=3.0):
        ref = _mujoco_rows(mjm, qpos, qvel)
        sim.reset(qpos=qpos, qvel=qvel)
        sim._d["efc_J"][:] = np.nan
        sim.forward()
        _assert_same_rows(sim.constraints(0), ref)
        kinds |= {int(t) for t in ref["efc_type"]}
    assert {int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF), int(mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT)} <= kinds
