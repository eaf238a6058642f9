"""The candidate pair table (`engine.collision_pairs`) against the geom pairs MuJoCo's `mj_collision` reports.

Every geom gets a margin far larger than the scene, so MuJoCo reports a contact for every geom pair that passes
its static filters; the set of (geom1, geom2) it reports must equal our table exactly. Each scene exercises one
filter, and asserts by name that the filter did remove (or keep) the pairs it is about.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim import options as opts
from rigidsim.engine.collision_pairs import collision_pairs
from rigidsim.loaders import load_scene
from tests.cli_util import shared_model
from tests.mjref import mujoco

BIG = 100.0


def _mj_pairs(mjm) -> set:
    mjm.geom_margin[:] = BIG
    mjm.body_margin[:] = BIG  # the broadphase reads the compiled per-body margin
    if mjm.npair:
        mjm.pair_margin[:] = BIG
    d = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, d)
    return {(min(c.geom), max(c.geom)) for c in d.contact[: d.ncon]} if d.ncon else set()


def _ours(model, **options):
    r = opts.resolve(model, {"enable_neutral_collision": True, **options})
    table, explicit = collision_pairs(model, r)
    assert table.dtype == np.int32 and table.shape[1] == 2 and explicit.shape == (len(table),)
    assert (table[:, 0] < table[:, 1]).all() and [tuple(p) for p in table.tolist()] == sorted(map(tuple, table.tolist()))
    return {tuple(p) for p in table.tolist()}, {tuple(p) for p in table[explicit].tolist()}


def _both(tmp_path, xml, **options):
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    model = load_scene(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    names = [mujoco.mj_id2name(mjm, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(mjm.ngeom)]
    ours, explicit = _ours(model, **options)
    named = lambda pairs: {tuple(sorted((names[a], names[b]))) for a, b in pairs}  # noqa: E731
    return named(ours), named(_mj_pairs(mjm)), named(explicit), model


def P(a, b):
    return tuple(sorted((a, b)))


SPHERE = 'type="sphere" size="0.05"'


def test_contype_conaffinity(tmp_path):
    xml = f"""<mujoco><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="a" pos="0 0 1"><freejoint/><geom name="a" {SPHERE} contype="1" conaffinity="0"/></body>
      <body name="b" pos="0.5 0 1"><freejoint/><geom name="b" {SPHERE} contype="1" conaffinity="0"/></body>
      <body name="c" pos="1 0 1"><freejoint/><geom name="c" {SPHERE} contype="2" conaffinity="1"/></body>
      <body name="d" pos="1.5 0 1"><freejoint/><geom name="d" {SPHERE} contype="4" conaffinity="4"/></body>
      <body name="e" pos="2 0 1"><freejoint/><geom name="e" {SPHERE} contype="0" conaffinity="0"/></body>
    </worldbody></mujoco>"""
    ours, mj, _, _ = _both(tmp_path, xml)
    assert ours == mj
    assert P("a", "c") in ours and P("a", "b") not in ours and P("d", "a") not in ours
    assert not any("e" in p for p in ours) and P("floor", "d") not in ours and P("floor", "c") in ours


def _chain(flags=""):
    return f"""<mujoco><option>{flags}</option><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="b1" pos="0 0 1"><joint type="hinge"/><geom name="g1" type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"/>
        <body name="b2" pos="0.3 0 0"><joint type="hinge"/><geom name="g2" type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"/>
          <body name="b3" pos="0.3 0 0"><geom name="g3" type="box" size="0.05 0.05 0.05" pos="0.1 0 0"/>
            <body name="b4" pos="0.3 0 0"><joint type="slide"/><geom name="g4" {SPHERE}/></body>
          </body>
        </body>
      </body>
    </worldbody></mujoco>"""


def test_parent_child_filter_and_weld_bodies(tmp_path):
    ours, mj, _, _ = _both(tmp_path, _chain())
    assert ours == mj
    assert P("g1", "g2") not in ours and P("g2", "g3") not in ours  # parent-child; the same weld body
    assert P("g1", "g3") not in ours  # b3 is welded to b2, a child of b1
    assert P("g3", "g4") not in ours  # b4's parent's weld body is b2, which holds g3
    assert P("g1", "g4") in ours and P("floor", "g1") in ours and P("g2", "g4") not in ours


def test_filterparent_flag_and_enable_adjacent_collision(tmp_path):
    ours_flag, mj_flag, _, _ = _both(tmp_path, _chain('<flag filterparent="disable"/>'))
    assert ours_flag == mj_flag and P("g1", "g2") in mj_flag and P("g3", "g4") in mj_flag
    ours_opt, mj_default, _, _ = _both(tmp_path, _chain(), enable_adjacent_collision=True)
    assert P("g1", "g2") not in mj_default
    assert ours_opt == mj_flag  # the option gives what MuJoCo gives with filterparent disabled
    assert P("floor", "g1") in ours_opt and P("g2", "g3") not in ours_opt  # the same weld body stays filtered


def test_bodies_welded_to_the_world(tmp_path):
    xml = f"""<mujoco><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <geom name="w" {SPHERE} pos="0 0 2"/>
      <body name="static" pos="1 0 0"><geom name="s" {SPHERE}/>
        <body name="static2" pos="0 1 0"><geom name="s2" {SPHERE}/>
          <body name="moving" pos="0 0 1"><joint type="hinge"/><geom name="m" {SPHERE}/></body>
        </body>
      </body>
    </worldbody></mujoco>"""
    ours, mj, _, _ = _both(tmp_path, xml, enable_mujoco_compatibility=True)
    assert ours == mj
    assert not ({P("floor", "w"), P("floor", "s"), P("s", "s2"), P("w", "s2")} & ours)
    # without compatibility (Genesis's filter) the moving body's fixed base - its static ancestors and the
    # world's geoms other than the floor - is its parent link: not collided
    genesis, _, _, _ = _both(tmp_path, xml)
    assert genesis == mj - {P("m", "s"), P("m", "s2"), P("m", "w")} and P("floor", "m") in genesis
    assert {P("m", "floor"), P("m", "w"), P("m", "s"), P("m", "s2")} <= ours  # the world is no parent to filter


def test_exclude_and_explicit_pairs(tmp_path):
    xml = f"""<mujoco><worldbody>
      <geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="a" pos="0 0 1"><freejoint/><geom name="a1" {SPHERE}/><geom name="a2" {SPHERE} pos="0.1 0 0"/>
        <body name="ach" pos="0.3 0 0"><joint type="hinge"/><geom name="ach" {SPHERE} contype="0" conaffinity="0"/></body>
      </body>
      <body name="b" pos="1 0 1"><freejoint/><geom name="b1" {SPHERE}/><geom name="b2" {SPHERE} pos="0.1 0 0"/></body>
      <body name="c" pos="2 0 1"><freejoint/><geom name="c1" {SPHERE} contype="0" conaffinity="0"/></body>
    </worldbody>
    <contact>
      <exclude body1="a" body2="b"/>
      <pair geom1="b1" geom2="a1"/>
      <pair geom1="c1" geom2="floor"/>
      <pair geom1="a1" geom2="ach"/>
      <pair geom1="b2" geom2="floor"/>
    </contact></mujoco>"""
    ours, mj, explicit, model = _both(tmp_path, xml)
    assert ours == mj
    assert explicit == {P("a1", "b1"), P("c1", "floor"), P("a1", "ach"), P("b2", "floor")}
    assert P("a2", "b2") not in ours and P("a1", "b2") not in ours  # excluded bodies, but for their explicit pair
    assert P("b1", "floor") in ours  # a default pair of b with the floor, beside b2's explicit one
    assert len(ours) == len(collision_pairs(model, opts.resolve(model, {"enable_neutral_collision": True}))[0])


TREE = f"""<mujoco><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="torso" pos="0 0 1"><freejoint/><geom name="torso" type="box" size="0.1 0.1 0.1"/>
    <body name="l1" pos="0.2 0 0"><joint type="hinge"/><geom name="l1" type="capsule" size="0.04" fromto="0 0 0 0.2 0 0"/>
      <body name="l2" pos="0.25 0 0"><joint type="hinge"/><geom name="l2" {SPHERE}/></body>
    </body>
    <body name="r1" pos="-0.2 0 0"><joint type="hinge"/><geom name="r1" type="capsule" size="0.04" fromto="0 0 0 -0.2 0 0"/></body>
  </body>
  <body name="other" pos="2 0 1"><freejoint/><geom name="other" {SPHERE}/></body>
</worldbody></mujoco>"""


def test_free_floating_tree_and_enable_self_collision(tmp_path):
    ours, mj, _, model = _both(tmp_path, TREE)
    assert ours == mj
    self_pairs = {P("torso", "l2"), P("l1", "r1"), P("l2", "r1")}
    assert self_pairs <= ours
    names = model.names["geom"]
    no_self = {P(names[a], names[b]) for a, b in _ours(model, enable_self_collision=False)[0]}
    assert no_self == ours - self_pairs
    assert P("other", "l2") in no_self and P("floor", "torso") in no_self


def test_enable_neutral_collision_drops_self_pairs_touching_at_qpos0(tmp_path):
    """Spheres only: their bounding spheres are the shapes, so 'touching' is exact; MuJoCo with zero margin reports
    the self pairs that touch at qpos0, which are exactly the ones enable_neutral_collision=false drops."""
    xml = """<mujoco><worldbody>
      <body name="root" pos="0 0 1"><freejoint/><geom name="r" type="sphere" size="0.1"/>
        <body name="c1" pos="0.15 0 0"><joint type="hinge"/><geom name="c1" type="sphere" size="0.1"/>
          <body name="c2" pos="0.02 0.1 0"><joint type="hinge"/><geom name="c2" type="sphere" size="0.1"/></body>
        </body>
        <body name="c3" pos="0 0.3 0"><joint type="hinge"/><geom name="c3" type="sphere" size="0.1"/>
          <body name="c5" pos="0.1 -0.12 0"><joint type="hinge"/><geom name="c5" type="sphere" size="0.1"/></body>
        </body>
        <body name="c4" pos="0 -0.19 0"><joint type="hinge"/><geom name="c4" type="sphere" size="0.1"/></body>
      </body>
      <body name="free" pos="0.1 0 1"><freejoint/><geom name="f" type="sphere" size="0.1"/></body>
    </worldbody></mujoco>"""
    path = tmp_path / "neutral.xml"
    path.write_text(xml)
    model = load_scene(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, d)
    root = mjm.body_rootid
    touching_self = {(min(c.geom), max(c.geom)) for c in d.contact[: d.ncon]
                     if root[mjm.geom_bodyid[c.geom[0]]] == root[mjm.geom_bodyid[c.geom[1]]]}
    keep, _ = _ours(model, enable_neutral_collision=True)
    drop, _ = _ours(model, enable_neutral_collision=False)
    # r-c2, c1-c5, c2-c5 touch (r-c1, r-c4 and c3-c5 touch too, but are parent and child: never candidates)
    assert len(touching_self) == 3
    assert keep - drop == touching_self and drop <= keep
    g = {n: i for i, n in enumerate(model.names["geom"])}
    assert (g["r"], g["f"]) in drop  # touching, but not one tree: kept


@pytest.mark.parametrize("rel", ["dm_control/humanoid.xml", "dm_control/quadruped.xml", "dm_control/ball_in_cup.xml"])
def test_shared_models(rel):
    path = shared_model(rel)
    model = load_scene(path)
    ours, _ = _ours(model)
    mj = _mj_pairs(mujoco.MjModel.from_xml_path(str(path)))
    assert len(mj) > 0 and ours == mj


def test_inspect_shows_the_candidate_pairs(tmp_path):
    """`rigidsim inspect` prints the table's size and how many came from <pair>, as MuJoCo counts them."""
    import re

    from tests.cli_util import rigidsim

    path = tmp_path / "tree.xml"
    path.write_text(TREE.replace("</worldbody>", "</worldbody><contact><pair geom1='l1' geom2='torso'/></contact>"))
    mj = _mj_pairs(mujoco.MjModel.from_xml_path(str(path)))
    p = rigidsim("inspect", path, "--set", "enable_neutral_collision=true")
    assert p.returncode == 0, p.stderr
    found = re.search(r"candidate collision pairs\W+(\d+) \((\d+) explicit <pair>\)", p.stdout)
    assert found, p.stdout
    assert (int(found[1]), int(found[2])) == (len(mj), 1)
    p = rigidsim("inspect", path, "--set", "enable_collision=false")
    assert re.search(r"candidate collision pairs\W+0 \(0 explicit <pair>\)", p.stdout), p.stdout
