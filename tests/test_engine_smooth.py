"""Stage-by-stage parity with MuJoCo at random states, float64, constraints disabled.

kinematics vs mj_kinematics; qM vs mj_fullM; qfrc_bias, qfrc_passive,
qfrc_actuator, actuator quantities and qacc vs mj_forward; on an inline
scene covering every supported feature and on every scene of
../shared/models (the engine supports all of them: a refusal fails the test).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from rigidsim.errors import InputError
from tests.cli_util import MODELS
from tests.mjref import mujoco
from tests.test_engine_helpers import (FEATURES_XML, TENDON_XML, TRANSMISSION_XML, assert_close, our_model, random_state,
                                       shared_xmls, without_constraints)

B = 3
KIN = ("xpos", "xmat", "xipos", "ximat", "geom_xpos", "geom_xmat", "site_xpos", "site_xmat", "xanchor", "xaxis")
FWD = ("qfrc_bias", "qfrc_passive", "qfrc_actuator", "qfrc_smooth", "qacc_smooth", "qacc", "actuator_length",
       "actuator_velocity", "actuator_force", "act_dot", "cdof", "cinert", "subtree_com", "cvel", "cdof_dot", "crb",
       "ten_length", "ten_velocity", "qfrc_fluid", "qfrc_spring", "qfrc_damper")


def _sim(mjm, n=B):
    from rigidsim.engine.simulator import Simulator

    return Simulator(our_model(mjm), n)


def _states(mjm, seed):
    rng = np.random.default_rng(seed)
    return [random_state(mjm, rng) for _ in range(B)]


def _check_stages(mjm, seed=0):
    sim = _sim(mjm)
    states = _states(mjm, seed)
    qpos, qvel, ctrl, act = (np.array([s[k] for s in states]) for k in range(4))
    mocap_pos = mocap_quat = None
    if mjm.nmocap:
        rng = np.random.default_rng(seed + 1)
        mocap_pos = rng.normal(size=(B, mjm.nmocap, 3))
        mq = rng.normal(size=(B, mjm.nmocap, 4))
        mocap_quat = mq / np.linalg.norm(mq, axis=-1, keepdims=True)
    sim.reset(qpos=qpos, qvel=qvel, ctrl=ctrl, act=act, mocap_pos=mocap_pos, mocap_quat=mocap_quat)
    sim.kinematics()
    kin = {k: sim.get(k) for k in KIN + ("xquat",)}
    sim.forward()
    got = {k: sim.get(k) for k in FWD + ("qM", "qpos", "ten_J")}
    for b in range(B):
        d = mujoco.MjData(mjm)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[b], qvel[b], ctrl[b]
        if mjm.na:
            d.act[:] = act[b]
        if mjm.nmocap:
            d.mocap_pos[:], d.mocap_quat[:] = mocap_pos[b], mocap_quat[b]
        mujoco.mj_kinematics(mjm, d)
        for k in KIN:
            assert_close(kin[k][b].reshape(getattr(d, k).shape), getattr(d, k), f"{k} env {b}")
        # quaternions up to sign
        sign = np.where(np.sum(kin["xquat"][b] * d.xquat, axis=1) < 0, -1.0, 1.0)[:, None]
        assert_close(kin["xquat"][b] * sign, d.xquat, f"xquat env {b}")
        mujoco.mj_forward(mjm, d)
        full = np.zeros((mjm.nv, mjm.nv))
        mujoco.mj_fullM(mjm, d, full)
        assert_close(got["qM"][b], full, f"qM env {b}")
        assert_close(got["qpos"][b], d.qpos, f"qpos (normalized) env {b}")
        assert_close(got["ten_J"][b], dense_ten_j(mjm, d), f"ten_J env {b}")
        for k in FWD:
            ref = getattr(d, k)
            assert_close(got[k][b].reshape(ref.shape), ref, f"{k} env {b}")


def dense_ten_j(mjm, d):
    """MuJoCo's ten_J as a dense [ntendon, nv] array (MuJoCo 4 stores it in the model's sparsity pattern)."""
    out = np.zeros((mjm.ntendon, mjm.nv))
    tj = np.asarray(d.ten_J).reshape(-1)
    for t in range(mjm.ntendon):
        adr, nnz = mjm.ten_J_rowadr[t], mjm.ten_J_rownnz[t]
        out[t, mjm.ten_J_colind[adr:adr + nnz]] = tj[adr:adr + nnz]
    return out


def test_inline_features():
    _check_stages(without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML)))


def test_inline_tendons_and_fluid():
    mjm = without_constraints(mujoco.MjModel.from_xml_string(TENDON_XML))
    assert mjm.ntendon == 2 and mjm.opt.density > 0
    _check_stages(mjm, seed=11)


def test_inline_ball_free_and_slider_crank_transmissions():
    mjm = without_constraints(mujoco.MjModel.from_xml_string(TRANSMISSION_XML))
    assert sorted(set(mjm.actuator_trntype.tolist())) == [0, 1, 2]
    _check_stages(mjm, seed=13)


@pytest.mark.parametrize("flag", ["mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_ACTUATION"])
def test_inline_tendons_disable_flags(flag):
    mjm = without_constraints(mujoco.MjModel.from_xml_string(TENDON_XML))
    mjm.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    _check_stages(mjm, seed=12)


@pytest.mark.parametrize("flag", ["mjDSBL_GRAVITY", "mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_ACTUATION",
                                  "mjDSBL_CLAMPCTRL"])
def test_inline_disable_flags(flag):
    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    mjm.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    _check_stages(mjm, seed=3)


def test_inline_spring_and_damper_disabled():
    mjm = without_constraints(mujoco.MjModel.from_xml_string(FEATURES_XML))
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_SPRING) | int(mujoco.mjtDisableBit.mjDSBL_DAMPER)
    _check_stages(mjm, seed=4)


@pytest.mark.parametrize("rel", shared_xmls() or ["(no ../shared)"])
def test_shared_model_stages(rel):
    if rel.startswith("("):
        pytest.skip("../shared/models is absent")
    # every shared scene compiles in MuJoCo 4.0.0 (all 53 files): a failure to compile fails the test
    mjm = without_constraints(mujoco.MjModel.from_xml_path(str(MODELS / rel)))
    _check_stages(mjm, seed=zlib.crc32(rel.encode()) % 1000)


def test_unsupported_is_refused_with_the_element_name():
    from rigidsim.engine.simulator import Simulator

    xml = """<mujoco><worldbody><body><joint name="j" type="slide"/><geom size="0.1"/>
             <site name="a"/></body><site name="b" pos="0 0 1"/></worldbody>
             <tendon><spatial name="rope" armature="0.1"><site site="a"/><site site="b"/></spatial></tendon></mujoco>"""
    m = our_model(mujoco.MjModel.from_xml_string(xml))
    with pytest.raises(InputError, match="rope"):
        Simulator(m, 1)


def test_implicit_is_refused():
    from rigidsim.engine.simulator import Simulator

    mjm = mujoco.MjModel.from_xml_string(FEATURES_XML)
    mjm.opt.integrator = int(mujoco.mjtIntegrator.mjINT_IMPLICIT)
    with pytest.raises(InputError, match="not supported yet"):
        Simulator(our_model(mjm), 1)
