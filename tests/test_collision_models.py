"""Contacts of every third-party model in ../shared/models whose colliders are all built, against MuJoCo's
mj_collision, at states of MuJoCo's own runs (random controls, so bodies fall, touch and slide): same geom
pairs and counts, dist/pos/frame within 1e-9 (1e-6 for the pairs that go through GJK/EPA), parameters
exact. The models that need a collider not built yet are listed, so the list must shrink as colliders land
(a test fails when it is out of date).

MuJoCo tests the geoms of two bodies that have several through their bounding-volume trees first (the
midphase: oriented-box tests at every level, mjDSBL_MIDPHASE off), which rigidsim does not have: it only
ever drops pairs whose geoms are apart, or exactly touching where its rounding says apart. The Panda's
finger pads (boxes) touch exactly at qpos0 (box-box distance -7e-18) and the midphase drops two of their
four pairs; for the models listed in MIDPHASE_TIES the reference is MuJoCo with the midphase off, and the
contacts its midphase drops must all be such ties (|dist| < 1e-12; the list must stay current)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import MODELS
from tests.collision_util import assert_same_contacts, mujoco_contacts, rigidsim_contacts
from tests.mjref import mujoco

pytestmark = pytest.mark.skipif(not MODELS.exists(), reason="../shared/models is absent")

# the models that still need a collider not built (none at present)
NOT_BUILT: set = set()
# models whose states have exactly touching geoms that MuJoCo's midphase drops (module docstring)
MIDPHASE_TIES = {f"menagerie/franka_emika_panda/{name}.xml" for name in (
    "panda", "panda_free_base", "panda_no_tendon", "scene", "scene_no_tendon")}


# the default suite checks these (together they use every collider the shared models use: primitives,
# meshes with multi-contact, height fields; the dog's ill-conditioned multi-contact states); RIGIDSIM_SWEEP=1
# checks every shared model (each compiles its own collision kernel)
SUBSET = {"mujoco_warp/test_data/primitives.xml", "menagerie/franka_emika_panda/scene.xml",
          "mujoco_warp/test_data/hfield/hfield.xml", "dm_control/humanoid.xml", "dm_control/dog.xml",
          "dm_control/finger.xml"}


def _colliding_models(sweep=None):
    import os

    if not MODELS.exists():
        return []
    sweep = bool(os.environ.get("RIGIDSIM_SWEEP")) if sweep is None else sweep
    out = []
    for p in sorted(MODELS.rglob("*.xml")):
        rel = str(p.relative_to(MODELS))
        if "common/" in rel or rel in NOT_BUILT or not (sweep or rel in SUBSET):
            continue
        out.append(rel)
    return out


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
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(mjm)
    out = []
    for t in range(n * every):
        if mjm.nu:
            lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]
            lim = mjm.actuator_ctrllimited.astype(bool)
            d.ctrl[:] = np.where(lim, rng.uniform(lo, hi), rng.uniform(-1, 1, mjm.nu))
        mujoco.mj_step(mjm, d)
        if t % every == every - 1:
            out.append(d.qpos.copy())
    return np.array(out)


def _without_midphase(mjm, q, ref):
    """MuJoCo's contacts at the qpos rows with its midphase off, checked against `ref` (the midphase on): the
    same but for some geom pairs the midphase dropped, each only with contacts at |dist| < 1e-12."""
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)
    full = mujoco_contacts(mujoco, mjm, q)
    dropped = 0
    for b, (with_mid, without) in enumerate(zip(ref, full)):
        count = lambda env, g: sum(1 for c in env if c["geom"] == g)  # noqa: E731
        for g in {c["geom"] for c in without} | {c["geom"] for c in with_mid}:
            if count(with_mid, g) != count(without, g):
                assert count(with_mid, g) == 0, f"state {b}: the midphase changed pair {g}"
                assert all(abs(c["dist"]) < 1e-12 for c in without if c["geom"] == g), f"state {b}, pair {g}"
                dropped += 1
    assert dropped, "MuJoCo's midphase drops nothing here: remove the model from MIDPHASE_TIES"
    return full


# colliders that run GJK/EPA (compared within 1e-6: their iterations amplify last-bit differences of the poses)
GJK_COLLIDERS = {"convex", "convex_multi", "hfield", "mesh", "mesh_multi", "hfield_mesh"}


@pytest.mark.parametrize("rel", _colliding_models())
def test_model_contacts_match_mujoco(rel):
    from rigidsim.engine.collision.params import collider_of

    path = MODELS / rel
    model, _ = _resolve(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    q = np.vstack([mjm.qpos0, _states(mjm)])
    ref = mujoco_contacts(mujoco, mjm, q)
    if rel in MIDPHASE_TIES:
        ref = _without_midphase(mjm, q, ref)
    ours = rigidsim_contacts(model, q)

    def gjk(c):
        return collider_of(*(int(mjm.geom_type[g]) for g in c["geom"])) in GJK_COLLIDERS

    for want, tol in ((True, 1e-6), (False, 1e-9)):
        pick = lambda envs: [[c for c in e if gjk(c) == want] for e in envs]  # noqa: E731
        assert_same_contacts(pick(ours), pick(ref), tol, f"{rel} (gjk={want})")
