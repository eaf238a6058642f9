"""Contacts of every third-party model in ../shared/models whose colliders are all built, against MuJoCo's
mj_collision, at states of MuJoCo's own runs (random controls, so bodies fall, touch and slide): same geom
pairs and counts, dist/pos/frame within 1e-9, parameters exact. The models that need a collider not built
yet are listed, so the list must shrink as colliders land (a test fails when it is out of date)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import MODELS
from tests.collision_util import assert_same_contacts, mujoco_contacts, rigidsim_contacts
from tests.mjref import mujoco

pytestmark = pytest.mark.skipif(not MODELS.exists(), reason="../shared/models is absent")

# the collider kinds each of these still needs (convex GJK/EPA, height fields, meshes)
NOT_BUILT = {
    "dm_control/dog.xml", "dm_control/finger.xml", "dm_control/finger_kick.xml",
    "dm_control/quadruped.xml", "menagerie/franka_emika_panda/hand.xml", "menagerie/franka_emika_panda/panda.xml",
    "menagerie/franka_emika_panda/panda_free_base.xml", "menagerie/franka_emika_panda/panda_no_tendon.xml",
    "menagerie/franka_emika_panda/panda_nohand.xml", "menagerie/franka_emika_panda/panda_non_overlap.xml",
    "menagerie/franka_emika_panda/scene.xml", "menagerie/franka_emika_panda/scene_no_tendon.xml",
    "mujoco_warp/test_data/primitives.xml",
}


def _colliding_models():
    if not MODELS.exists():
        return []
    out = []
    for p in sorted(MODELS.rglob("*.xml")):
        rel = str(p.relative_to(MODELS))
        if "common/" in rel or rel in NOT_BUILT:
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


@pytest.mark.parametrize("rel", _colliding_models())
def test_model_contacts_match_mujoco(rel):
    path = MODELS / rel
    model, _ = _resolve(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    q = np.vstack([mjm.qpos0, _states(mjm)])
    ref = mujoco_contacts(mujoco, mjm, q)
    assert_same_contacts(rigidsim_contacts(model, q), ref, 1e-9, rel)
