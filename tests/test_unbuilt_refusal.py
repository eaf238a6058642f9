"""A scene needing a collider that is not built is refused by kind and geom names, with hints that run.

Every collider the loaders can reach is built today, so the tests take one out of `params.BUILT` (a height
field against a mesh) and check the runner's refusal path: `unsupported` names the kind and the geoms,
`check_supported` offers enable_collision=false first, then disable_constraint=true, and each suggestion
really leaves nothing unsupported; `check_colliders` (frame 0's contacts) says how to record without them."""

from __future__ import annotations

import pytest

from rigidsim import options as opts
from rigidsim.errors import InputError

XML = """<mujoco><asset><hfield name="h" nrow="3" ncol="3" size="1 1 .1 .1" elevation="0 0 0 0 1 0 0 0 0"/>
<mesh name="m" vertex="0 0 0 .1 0 0 0 .1 0 0 0 .1"/></asset>
<worldbody><geom name="ground" type="hfield" hfield="h"/><body pos="0 0 .3"><freejoint/><geom name="rock" type="mesh"
mesh="m"/></body><body pos=".5 0 .3"><joint type="hinge" range="-10 10"/><geom size=".05"/></body></worldbody>
</mujoco>"""


@pytest.fixture
def scene(tmp_path, monkeypatch):
    from rigidsim.engine.collision import params as CPRM
    from rigidsim.loaders import load_scene

    monkeypatch.setattr(CPRM, "BUILT", CPRM.BUILT - {"hfield_mesh"})
    p = tmp_path / "hm.xml"
    p.write_text(XML)
    model = load_scene(str(p))
    return model, opts.resolve(model, {}, {})


def test_unbuilt_collider_named_by_kind_and_geoms(scene):
    from rigidsim.runner import unsupported

    model, r = scene
    assert unsupported(model, r) == ["contacts between hfield and mesh geoms (ground/rock)"]


def test_hints_run(scene):
    from rigidsim.runner import check_supported, constraint_free_sets, unsupported

    model, r = scene
    with pytest.raises(InputError) as e:
        check_supported(model, r)
    text = str(e.value)
    assert "not supported yet: contacts between hfield and mesh geoms" in text
    assert "--set enable_collision=false (or --set disable_constraint=true)" in text
    sets = constraint_free_sets(model, r)
    assert sets == [{"enable_collision": False}, {"disable_constraint": True}]
    for c in sets:
        assert unsupported(model, {**r, **c}) == []


def test_frame0_contacts_say_how_to_record_without_them(scene):
    from rigidsim.runner import check_colliders

    model, r = scene
    with pytest.raises(InputError) as e:
        check_colliders(model, r)
    assert "hfield and mesh" in str(e.value) and "--record qpos,qvel,xpos,xquat" in str(e.value)
