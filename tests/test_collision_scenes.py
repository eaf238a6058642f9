"""Contacts of whole scenes against MuJoCo's mj_collision at the same states (order-free: same geom pairs and
counts; dist, pos and frame within 1e-9 for analytic pairs; condim, friction, solref, solreffriction,
solimp and margin exact). Scenes are compiled by MuJoCo (tests/mjref.model_from_mujoco), so the collision
stage is tested on its own; the CLI tests cover our loader's path."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import ROOT
from tests.mjref import model_from_mujoco, mujoco
from tests.collision_util import assert_same_contacts, mujoco_contacts, rigidsim_contacts, trajectory

SPHERES_ON_PLANES = """
<mujoco>
  <default><geom contype="2" conaffinity="1"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" contype="1" conaffinity="2" friction="0.7 0.01 0.002"
          solref="0.03 1.2" priority="0"/>
    <geom name="ramp" type="plane" size="1 1 .1" pos="3 0 0.5" euler="0 30 0" contype="1" conaffinity="2"
          solmix="3" solimp="0.8 0.9 0.002 0.4 3" margin="0.01" gap="0.005"/>
    <body pos="0 0 0.09"><freejoint/><geom name="a" type="sphere" size="0.1" friction="1.5 0.1 0.001"/></body>
    <body pos="0.5 0 0.3"><freejoint/><geom name="b" type="sphere" size="0.1" margin="0.25" condim="6"
          solmix="0.5" solref="-1000 -20"/></body>
    <body pos="3 0 0.6"><freejoint/><geom name="c" type="sphere" size="0.15" priority="2" condim="4"
          solref="0.05 0.7" solimp="0.7 0.95 0.01 0.6 2" gap="0.02"/></body>
    <body pos="1 1 0.05"><freejoint/><geom name="d" type="sphere" size="0.1" solmix="0"/></body>
  </worldbody>
  <contact>
    <pair geom1="d" geom2="floor" condim="1" friction="0.3 0.3 0.01 0.001 0.001" solref="0.02 0.9"
          solreffriction="0.01 0.5" solimp="0.85 0.9 0.001 0.5 2" margin="0.02" gap="0.01"/>
  </contact>
</mujoco>
"""


def _random_states(mjm, n, rng, lift=0.3):
    """qpos rows: each free body moved by up to `lift` up or down and turned at random."""
    q = np.tile(mjm.qpos0, (n, 1))
    for j in range(mjm.njnt):
        if mjm.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            a = mjm.jnt_qposadr[j]
            q[:, a:a + 3] += rng.uniform(-lift, lift, (n, 3))
            quat = rng.normal(size=(n, 4))
            q[:, a + 3:a + 7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q


@pytest.fixture(scope="module")
def spheres():
    mjm = mujoco.MjModel.from_xml_string(SPHERES_ON_PLANES)
    return mjm, model_from_mujoco(mjm)


def test_plane_sphere_contacts_match_mujoco(spheres):
    """Spheres against a floor and a tilted ramp: penetrating, within margin, beyond it; geom priority,
    solmix (zero, unequal), direct solref, an explicit <pair>; 64 random states and the initial one."""
    mjm, model = spheres
    rng = np.random.default_rng(0)
    q = np.vstack([mjm.qpos0, _random_states(mjm, 64, rng)])
    ref = mujoco_contacts(mujoco, mjm, q)
    assert sum(len(r) for r in ref) > 100  # the states do make contacts
    assert_same_contacts(rigidsim_contacts(model, q), ref, 1e-9, "spheres")


OVERRIDE = """
<mujoco>
  <option o_margin="0.05" o_solref="0.04 0.8" o_solimp="0.8 0.9 0.01 0.3 4" o_friction="0.6 0.6 0.02 0.001 0.002">
    <flag override="{flag}"/>
  </option>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" friction="0 0 0"/>
    <body pos="0 0 0.12"><freejoint/><geom type="sphere" size="0.1" friction="0 0 0" margin="0.001"/></body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("flag", ["enable", "disable"])
def test_override_flag_and_least_friction_match_mujoco(flag):
    """<flag override>: margin, solref, solimp and friction from <option>'s o_ values; without it a zero
    friction becomes mjMINMU. Heights from touching to beyond the overridden margin."""
    mjm = mujoco.MjModel.from_xml_string(OVERRIDE.format(flag=flag))
    q = np.tile(mjm.qpos0, (5, 1))
    q[:, 2] = [0.09, 0.1, 0.1005, 0.12, 0.149]
    ref = mujoco_contacts(mujoco, mjm, q)
    assert [len(r) for r in ref] == ([1, 1, 1, 1, 1] if flag == "enable" else [1, 1, 1, 0, 0])
    assert_same_contacts(rigidsim_contacts(model_from_mujoco(mjm), q), ref, 1e-9, f"override {flag}")


BOX_PILE = """
<mujoco>
  <worldbody>
    <geom name="table" type="box" size="1 1 0.1" pos="0 0 -0.1"/>
    <body pos="0 0 0.11"><freejoint/><geom type="box" size="0.1 0.15 0.1" margin="0.002"/></body>
    <body pos="0.05 0.02 0.33" euler="0 0 30"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.3 0 0.2" euler="40 20 0"><freejoint/><geom type="box" size="0.05 0.08 0.12"/></body>
    <body pos="-0.3 0.1 0.3"><freejoint/><geom type="sphere" size="0.08" gap="0.01"/></body>
    <body pos="-0.2 -0.3 0.3" euler="80 0 0"><freejoint/><geom type="capsule" size="0.05 0.15"/></body>
    <body pos="0.1 -0.35 0.5" euler="0 0 0"><freejoint/><geom type="capsule" size="0.04 0.1"/></body>
  </worldbody>
</mujoco>
"""




@pytest.fixture(scope="module")
def box_pile():
    mjm = mujoco.MjModel.from_xml_string(BOX_PILE)
    return mjm, model_from_mujoco(mjm), trajectory(mujoco, mjm, 120)


@pytest.mark.parametrize("broadphase", ["sap", "all_vs_all"])
def test_box_pile_contacts_match_mujoco(box_pile, broadphase):
    """Boxes, a sphere and capsules falling on a box table and on each other (MuJoCo's own trajectory):
    sphere-box, capsule-box and box-box contacts, with either broadphase."""
    mjm, model, q = box_pile
    ref = mujoco_contacts(mujoco, mjm, q)
    assert sum(len(r) for r in ref) > 500
    ours = rigidsim_contacts(model, q, {"broadphase_traversal": broadphase})
    assert_same_contacts(ours, ref, 1e-9, f"box pile {broadphase}")


def test_contact_pruning_merges_close_contacts_of_a_pair(box_pile):
    """contact_pruning_tolerance: the pruned contacts are unpruned ones (same order within a pair); every
    unpruned contact lies within the tolerance of a kept one of its pair; kept ones of a pair are at least the
    tolerance apart. Checked at 0.05 m on the box pile, where it does remove contacts."""
    mjm, model, q = box_pile
    tol = 0.05
    full = rigidsim_contacts(model, q)
    pruned = rigidsim_contacts(model, q, {"contact_pruning_tolerance": tol})
    removed = 0
    for env_full, env_pruned in zip(full, pruned):
        for g in {c["geom"] for c in env_full}:
            a = [c["pos"] for c in env_full if c["geom"] == g]
            k = [c["pos"] for c in env_pruned if c["geom"] == g]
            removed += len(a) - len(k)
            it = iter(a)  # kept contacts appear in the unpruned list, in order
            assert all(any(np.array_equal(x, y) for y in it) for x in k)
            assert all(min(np.linalg.norm(x - y) for y in k) < tol for x in a)
            assert all(np.linalg.norm(x - y) >= tol for i, x in enumerate(k) for y in k[:i])
    assert removed > 0


def test_sweep_and_prune_equals_all_pairs_on_64_spheres():
    """64 spheres in a bin, 100 states (50 of MuJoCo's run as they pile up, 50 shaken at random): the two
    broadphases give identical contacts, in the same order, and they are MuJoCo's."""
    mjm = mujoco.MjModel.from_xml_path(str(ROOT / "scenes" / "sphere_bin.xml"))
    model = model_from_mujoco(mjm)
    rng = np.random.default_rng(1)
    pile = trajectory(mujoco, mjm, 50, every=20)
    shaken = pile + np.concatenate([np.zeros((50, 0))] + [
        np.hstack([rng.uniform(-0.05, 0.05, (50, 3)), np.zeros((50, 4))]) for _ in range(64)], axis=1)
    q = np.vstack([pile, shaken])
    sap = rigidsim_contacts(model, q, {"broadphase_traversal": "sap", "max_collision_pairs": 5000})
    allp = rigidsim_contacts(model, q, {"broadphase_traversal": "all_vs_all", "max_collision_pairs": 5000})
    assert sum(len(e) for e in sap) > 3000
    for a, b in zip(sap, allp):
        assert [c["geom"] for c in a] == [c["geom"] for c in b]
        for x, y in zip(a, b):
            assert x["dist"] == y["dist"] and np.array_equal(x["pos"], y["pos"])
            assert np.array_equal(x["frame"], y["frame"])
    assert_same_contacts(sap, mujoco_contacts(mujoco, mjm, q), 1e-9, "sphere bin")


ELLIPSOIDS = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <geom name="wall" type="plane" size="1 1 .1" pos="2 0 1" zaxis="-1 0 0.3"/>
    <body pos="0 0 0.2"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3" margin="0.01"/></body>
    <body pos="1.8 0 0.5"><freejoint/><geom type="ellipsoid" size="0.3 0.05 0.1" contype="1"/></body>
    <body pos="0 1 0.3"><freejoint/><geom type="ellipsoid" size="0.2 0.2 0.2" gap="0.01"/></body>
  </worldbody>
</mujoco>
"""


def test_plane_ellipsoid_contacts_match_mujoco():
    """Ellipsoids against a floor and a tilted wall (MuJoCo's plane-convex collider): 80 random poses near the
    planes, a round one included; penetrating, within margin and gap, apart."""
    mjm = mujoco.MjModel.from_xml_string(ELLIPSOIDS)
    model = model_from_mujoco(mjm)
    rng = np.random.default_rng(7)
    q = np.vstack([mjm.qpos0, _random_states(mjm, 80, rng, lift=0.25)])
    ref = mujoco_contacts(mujoco, mjm, q)
    kinds = {tuple(sorted(int(mjm.geom_type[g]) for g in c["geom"])) for r in ref for c in r}
    assert kinds == {(0, 4)} and sum(len(r) for r in ref) > 60
    assert_same_contacts(rigidsim_contacts(model, q), ref, 1e-9, "ellipsoids")


CONVEX_SCENE = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="ellipsoid" size="0.1 0.15 0.08" margin="0.01"/></body>
    <body pos="0.1 0.05 0.55"><freejoint/><geom type="ellipsoid" size="0.12 0.06 0.1"/></body>
    <body pos="-0.15 0 0.5"><freejoint/><geom type="sphere" size="0.07" gap="0.005"/></body>
    <body pos="0.05 -0.2 0.45"><freejoint/><geom type="box" size="0.06 0.08 0.05"/></body>
    <body pos="0.2 0.2 0.4"><freejoint/><geom type="capsule" size="0.04 0.1"/></body>
    <body pos="-0.2 -0.2 0.6"><freejoint/><geom type="cylinder" size="0.06 0.08"/></body>
  </worldbody>
</mujoco>
"""


def test_ellipsoid_pile_contacts_match_mujoco():
    """Ellipsoids falling on each other and on a sphere, a box, a capsule and a cylinder (MuJoCo's own run):
    the convex pairs go through native GJK/EPA (one contact each, 1e-6), the rest through the analytic
    colliders (1e-9)."""
    mjm = mujoco.MjModel.from_xml_string(CONVEX_SCENE)
    model = model_from_mujoco(mjm)
    q = trajectory(mujoco, mjm, 120, every=4)
    ref = mujoco_contacts(mujoco, mjm, q)
    ours = rigidsim_contacts(model, q)
    def is_convex(c):  # an ellipsoid against anything but the floor: native GJK/EPA
        return mujoco.mjtGeom.mjGEOM_ELLIPSOID in mjm.geom_type[list(c["geom"])] and 0 not in c["geom"]

    assert len({c["geom"] for r in ref for c in r if is_convex(c)}) >= 3  # ellipsoids touch each other and more
    for want, tol in ((True, 1e-6), (False, 1e-9)):
        pick = lambda envs: [[c for c in e if is_convex(c) == want] for e in envs]  # noqa: E731
        assert_same_contacts(pick(ours), pick(ref), tol, f"ellipsoid pile, convex={want}")


CYLINDERS = """
<mujoco>
  <option><flag multiccd="disable"/></option>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="cylinder" size="0.1 0.08"/></body>
    <body pos="0.05 0.02 0.35" euler="70 10 0"><freejoint/><geom type="cylinder" size="0.06 0.1" margin="0.01"/></body>
    <body pos="-0.05 0.05 0.6" euler="20 80 0"><freejoint/><geom type="capsule" size="0.04 0.12"/></body>
    <body pos="0.0 -0.05 0.85" euler="10 20 30"><freejoint/><geom type="box" size="0.07 0.05 0.04"/></body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def cylinders():
    mjm = mujoco.MjModel.from_xml_string(CYLINDERS)
    q = trajectory(mujoco, mjm, 100, every=4)
    return mjm, mujoco_contacts(mujoco, mjm, q), rigidsim_contacts(model_from_mujoco(mjm), q)


def _capsule_cylinder(mjm, c):
    return sorted(int(t) for t in mjm.geom_type[list(c["geom"])]) == [int(mujoco.mjtGeom.mjGEOM_CAPSULE),
                                                                     int(mujoco.mjtGeom.mjGEOM_CYLINDER)]


def test_convex_pairs_without_multiccd_match_mujoco(cylinders):
    """With multiccd off (the scene's flag, enable_multi_contact=false) every convex pair gets one GJK/EPA
    contact: cylinders falling on each other and on a box (MuJoCo's own run) within 1e-6; the capsule-cylinder
    pairs are the next test."""
    mjm, ref, ours = cylinders
    cyl = int(mujoco.mjtGeom.mjGEOM_CYLINDER)
    kinds = {tuple(sorted(int(t) for t in mjm.geom_type[list(c["geom"])])) for r in ref for c in r}
    assert {(cyl, cyl), (cyl, int(mujoco.mjtGeom.mjGEOM_BOX))} <= kinds
    pick = lambda envs: [[c for c in e if not _capsule_cylinder(mjm, c)] for e in envs]  # noqa: E731
    assert_same_contacts(pick(ours), pick(ref), 1e-6, "cylinders, multiccd off")


def test_capsule_cylinder_without_multiccd_matches_mujoco(cylinders):
    """The capsule-cylinder pairs of the same run: long GJK runs (24-26 iterations) amplify a last-bit
    difference of the geom rotations, so they pass only with quat2mat's diagonal grouped as mujoco 4.0.0's
    compiled mju_quat2Mat groups it (engine/math.py)."""
    mjm, ref, ours = cylinders
    pick = lambda envs: [[c for c in e if _capsule_cylinder(mjm, c)] for e in envs]  # noqa: E731
    assert sum(len(e) for e in pick(ref)) > 5
    assert_same_contacts(pick(ours), pick(ref), 1e-6, "capsule-cylinder, multiccd off")
