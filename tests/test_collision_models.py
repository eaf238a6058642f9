"""Contacts of every third-party model in ../shared/models whose colliders are all built, against MuJoCo's
mj_collision, at states of MuJoCo's own runs (random controls, so bodies fall, touch and slide): same geom
pairs and counts, dist/pos/frame within 1e-9 (1e-6 for the pairs that go through GJK/EPA), parameters
exact. The models that need a collider not built yet are listed, so the list must shrink as colliders land
(a test fails when it is out of date).

MuJoCo tests the geoms of two bodies that have several through their bounding-volume trees first (the
midphase), and so does rigidsim (`rigidsim.engine.bvh`, `collision.broadphase.midphase`). The midphase only
drops pairs whose geoms are apart, or touching exactly where a box test's rounding says apart: the Panda's
finger pads (boxes) touch exactly at qpos0 (box-box distance -7e-18) and MuJoCo's midphase drops two of
their four pairs at an inner node of the fingers' trees. `test_midphase_ties` checks that those ties go as
MuJoCo's do, with the midphase on and off (mjDSBL_MIDPHASE), and the trees themselves against mjModel's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import MODELS
from tests.collision_util import assert_same_contacts, mujoco_contacts, rigidsim_contacts
from tests.mjref import mujoco, mujoco_states, random_ctrl

pytestmark = pytest.mark.skipif(not MODELS.exists(), reason="../shared/models is absent")

# the models that still need a collider not built (none at present)
NOT_BUILT: set = set()
# a model whose geoms touch exactly at qpos0 where MuJoCo's midphase drops some pairs (the module docstring)
MIDPHASE_TIES = "menagerie/franka_emika_panda/scene.xml"


# the default suite checks these (together they use every collider the shared models use: primitives,
# meshes with multi-contact, height fields; the dog's ill-conditioned multi-contact states); each run adds a
# rotating slice of the other models (tests/sweep_slice.py); RIGIDSIM_SWEEP=1 checks every shared model (each
# compiles its own collision kernel)
SUBSET = {"mujoco_warp/test_data/primitives.xml", "menagerie/franka_emika_panda/scene.xml",
          "mujoco_warp/test_data/hfield/hfield.xml", "dm_control/humanoid.xml", "dm_control/dog.xml",
          "dm_control/finger.xml"}


# models in which MuJoCo finds no contact at qpos0 nor at any of `_states`' states (MuJoCo 4.0.0, checked): for
# them the test checks that we find none either; every other model must have contacts, so that the comparison
# is never vacuous (a test fails when this list is out of date)
CONTACT_FREE = {f"dm_control/{n}.xml" for n in (
    "acrobot", "acrobot_kick", "ball_in_cup", "cartpole", "cartpole_kick", "finger", "finger_kick", "fish",
    "fish_kick", "lqr", "pendulum", "pendulum_kick", "point_mass", "point_mass_kick", "reacher", "reacher_kick",
    "swimmer", "swimmer_kick")} | {"menagerie/franka_emika_panda/panda_nohand.xml"} | {
    f"mujoco_warp/test_data/{n}.xml" for n in ("actuation/actuators", "actuation/slidercrank", "jdotv/connect_2d",
                                               "pendula")}
PER_SLICE = 1  # models of the rotating slice per run (each may compile a collision kernel: 5-40 s cold)


def _colliding_models():
    from tests.sweep_slice import selection

    if not MODELS.exists():
        return []
    full = [str(p.relative_to(MODELS)) for p in sorted(MODELS.rglob("*.xml"))]
    full = [r for r in full if "common/" not in r and r not in NOT_BUILT]
    return [pytest.param(rel, id=tid) for rel, tid in selection("collision_models", full, SUBSET, PER_SLICE)]


def _resolve(path):
    from rigidsim import options as opts
    from rigidsim.loaders import load_scene

    m = load_scene(str(path))
    return m, opts.resolve(m, {}, {"enable_mujoco_compatibility": True})


def test_not_built_list_is_current():
    from rigidsim.engine.collision_pairs import collision_pairs
    from rigidsim.runner import unbuilt_colliders

    need = set()
    for p in sorted(MODELS.rglob("*.xml")):
        rel = str(p.relative_to(MODELS))
        if "common/" in rel:
            continue
        m, r = _resolve(p)
        if unbuilt_colliders(m, r):
            need.add(rel)
        elif rel in NOT_BUILT:
            assert len(collision_pairs(m, r)[0]) > 0
    assert need == NOT_BUILT


def _states(mjm, n=24, every=12, seed=0):
    """qpos of a MuJoCo run with new random controls at every step, one state per `every` steps."""
    def ctrl(t, d, rng):
        if mjm.nu:
            d.ctrl[:] = random_ctrl(mjm, rng)

    return mujoco_states(mjm, n, every, seed, ctrl=ctrl)


# colliders that run GJK/EPA (compared within 1e-6: their iterations amplify last-bit differences of the poses)
GJK_COLLIDERS = {"convex", "convex_multi", "hfield", "mesh", "mesh_multi", "hfield_mesh"}


def test_contact_free_list_is_current():
    """MuJoCo alone (no kernel, ~5 s): the models without any contact at the test's states are CONTACT_FREE."""
    free = set()
    for p in sorted(MODELS.rglob("*.xml")):
        rel = str(p.relative_to(MODELS))
        if "common/" in rel:
            continue
        mjm = mujoco.MjModel.from_xml_path(str(p))
        if not any(mujoco_contacts(mujoco, mjm, np.vstack([mjm.qpos0, _states(mjm)]))):
            free.add(rel)
    assert free == CONTACT_FREE


@pytest.mark.parametrize("rel", _colliding_models())
def test_model_contacts_match_mujoco(rel):
    from rigidsim.engine.collision.params import collider_of

    path = MODELS / rel
    model, _ = _resolve(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    q = np.vstack([mjm.qpos0, _states(mjm)])
    ref = mujoco_contacts(mujoco, mjm, q)
    ncon = sum(len(e) for e in ref)
    assert (ncon == 0) == (rel in CONTACT_FREE), f"{rel}: MuJoCo finds {ncon} contacts; CONTACT_FREE is out of date"
    ours = rigidsim_contacts(model, q)

    def gjk(c):
        return collider_of(*(int(mjm.geom_type[g]) for g in c["geom"])) in GJK_COLLIDERS

    for want, tol in ((True, 1e-6), (False, 1e-9)):
        pick = lambda envs: [[c for c in e if gjk(c) == want] for e in envs]  # noqa: E731
        assert_same_contacts(pick(ours), pick(ref), tol, f"{rel} (gjk={want})")


def _pairs(env):
    return sorted(c["geom"] for c in env)


def test_midphase_ties():
    """The Panda at qpos0: MuJoCo's midphase drops the finger pads' pairs (70, 79) and (71, 78), which touch
    to the last bit (an inner node pair of the fingers' trees is apart in its rounding), and keeps (72, 81)
    and (73, 80), which touch the same way; ours drops and keeps the same. With the midphase disabled
    (mjDSBL_MIDPHASE, `<flag midphase="disable"/>`) both keep all four."""
    from rigidsim.model import DSBL_MIDPHASE

    path = MODELS / MIDPHASE_TIES
    model, _ = _resolve(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    q = mjm.qpos0[None]
    with_mid = mujoco_contacts(mujoco, mjm, q)
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)
    without = mujoco_contacts(mujoco, mjm, q)
    ties = sorted(set(_pairs(without[0])) - set(_pairs(with_mid[0])))
    assert ties == [(70, 79), (71, 78)]  # what this test is about: MuJoCo's midphase drops exact ties
    assert all(abs(c["dist"]) < 1e-12 for c in without[0] if c["geom"] in ties)
    assert {(72, 81), (73, 80)} <= set(_pairs(with_mid[0]))
    assert_same_contacts(rigidsim_contacts(model, q), with_mid, 1e-6, "midphase on")
    model.opt.disableflags |= DSBL_MIDPHASE
    assert_same_contacts(rigidsim_contacts(model, q), without, 1e-6, "midphase off")


@pytest.mark.parametrize("rel", sorted({MIDPHASE_TIES, "dm_control/humanoid.xml", "dm_control/dog.xml",
                                        "mujoco_warp/test_data/primitives.xml"}))
def test_body_trees_match_mujoco(rel):
    """Our bounding-volume trees of MuJoCo's compiled model are mjModel's, bit for bit (the midphase's ties
    depend on the last bits of the boxes); of our own compile, the same trees with the boxes within 1e-12
    (our compile's mesh boxes and inertial frames differ from MuJoCo's in the last bits)."""
    from rigidsim.engine.bvh import body_trees
    from tests.mjref import model_from_mujoco

    mjm = mujoco.MjModel.from_xml_path(str(MODELS / rel))
    nb = int(mjm.body_bvhnum.sum())
    want = {"body_bvhadr": np.where(mjm.body_bvhnum > 0, mjm.body_bvhadr, -1), "body_bvhnum": mjm.body_bvhnum,
            "bvh_child": mjm.bvh_child[:nb], "bvh_nodeid": mjm.bvh_nodeid[:nb], "bvh_depth": mjm.bvh_depth[:nb]}
    for model in (model_from_mujoco(mjm), _resolve(MODELS / rel)[0]):
        got = body_trees(model)
        for k, v in want.items():
            assert np.array_equal(got[k].reshape(-1), np.asarray(v).reshape(-1)), k
    assert np.array_equal(body_trees(model_from_mujoco(mjm))["bvh_aabb"], mjm.bvh_aabb[:nb])
    assert np.allclose(body_trees(_resolve(MODELS / rel)[0])["bvh_aabb"], mjm.bvh_aabb[:nb], rtol=0, atol=1e-12)
