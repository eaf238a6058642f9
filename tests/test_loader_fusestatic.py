"""<compiler fusestatic="true">: static bodies fused into their parents, compared with MuJoCo field by field
(body/geom/site ids and names, frames, merged mass and inertia, tree arrays, qM layout, constants)."""

from __future__ import annotations

import pytest

from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco

# a moving arm carrying a chain of static bodies (explicit inertial, geom inertia, a frame, sites),
# a moving grandchild below the chain, a static body under the world carrying a hinged body, a free body
# with a static child,
# a massless static body, and a mocap body with a static child
TREE = """
<body name="a" pos="0 0 1" euler="5 10 15"><joint name="j" type="hinge" axis="0 1 0"/><geom name="ga" size=".1"/>
  <body name="s" pos=".2 0 .05" euler="0 0 30"><geom name="gs" size=".05 .1" type="capsule" pos=".1 0 0"
      euler="20 0 0" contype="2" margin=".01"/><site name="ss" pos="0 .1 0"/>
    <body name="s2" pos=".1 .1 0" quat="0.9 0.1 0.3 0.2">
      <inertial pos=".01 .02 .03" mass="0.7" fullinertia=".02 .025 .03 .001 -.002 .003"/>
      <site name="ss2" size=".02" type="box"/>
      <frame pos="0 0 .1" euler="0 90 0"><geom name="gf" type="box" size=".02 .03 .04"/></frame>
      <body name="c" pos=".3 0 0"><joint name="jc" type="slide" axis="1 0 0"/><geom name="gc" size=".05"/>
        <body name="s3" pos="0 0 .2"><geom name="gs3" type="ellipsoid" size=".03 .04 .05"/></body>
      </body>
    </body>
  </body>
  <body name="empty" pos="0 0 .4"/>
  <geom name="ga2" size=".1" pos="0 0 .3"/>
</body>
<body name="w" pos="1 0 0" euler="0 0 45"><geom name="gw" type="box" size=".1 .2 .3"/>
  <body name="h" pos="0 1 0"><joint name="jh" axis="1 0 0"/><geom name="gh" size=".1"/></body>
</body>
<body name="f" pos="0 1 0"><freejoint name="fj"/><geom name="gfree" size=".1"/>
  <body name="fs" pos=".1 0 0"><inertial pos="0 0 0" mass="2" diaginertia=".1 .2 .25"/></body></body>
<body name="m" mocap="true" pos="-1 0 0"><geom name="gm" size=".1"/>
  <body name="mc" pos="0 0 .5"><geom name="gmc" size=".05"/></body></body>
"""


def _check(tmp_path, body=TREE, extra="", compiler='<compiler fusestatic="true"/>'):
    p = tmp_path / "scene.xml"
    p.write_text(f"<mujoco>{compiler}<worldbody>{body}</worldbody>{extra}</mujoco>")
    ours = load_mjcf(p)
    mjm = mujoco.MjModel.from_xml_path(str(p))
    assert compare_models(ours, model_from_mujoco(mjm)) == []
    return ours, mjm


def test_fused_tree_matches(tmp_path):
    ours, mjm = _check(tmp_path)
    assert ours.names["body"] == ["world", "a", "c", "h", "f", "m"]
    assert ours.arrays["geom_bodyid"].tolist() == mjm.geom_bodyid.tolist()
    assert ours.names["geom"][:2] == ["gw", "ga"]  # the world keeps the fused geoms, in front


@pytest.mark.parametrize("extra", [
    '<sensor><framepos objtype="body" objname="s"/></sensor>',
    '<sensor><subtreecom body="s2"/></sensor>',
    '<sensor><framequat objtype="site" objname="ss" reftype="xbody" refname="w"/><framepos objtype="body" objname="fs"/></sensor>',
    '<contact><exclude body1="s3" body2="a"/></contact>',
    '<equality><connect body1="s2" body2="c" anchor="0 0 0"/></equality>',
    '<equality><weld body1="w" body2="f"/></equality>',
    '<equality><weld body1="mc" body2="f"/></equality>',
])
def test_referenced_bodies_are_kept(tmp_path, extra):
    ours, mjm = _check(tmp_path, extra=extra)
    assert mjm.nbody > 6


@pytest.mark.parametrize("extra", [
    '<sensor><jointpos joint="j"/><framepos objtype="site" objname="ss2"/></sensor>',
    '<actuator><motor joint="jc"/><motor site="ss" gear="0 0 0 0 0 1"/></actuator>',
    '<contact><pair geom1="gs" geom2="gc"/><exclude body1="a" body2="c"/></contact>',
    '<tendon><fixed><joint joint="j" coef="1"/><joint joint="jc" coef="-.5"/></fixed></tendon>',
    '<keyframe><key qpos=".1 .2 .3 1 2 3 1 0 0 0" mpos="0 0 1" mquat="1 0 0 0"/></keyframe>',
])
def test_other_references_do_not_stop_fusion(tmp_path, extra):
    ours, mjm = _check(tmp_path, extra=extra)
    assert mjm.nbody == 6


def test_fusestatic_off_keeps_bodies(tmp_path):
    ours, mjm = _check(tmp_path, compiler="")
    assert mjm.nbody == 13


def test_static_parent_without_mass(tmp_path):
    body = """<body name="a"><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
        <body name="z" pos="1 0 0"><geom size=".1" mass="0"/></body>
        <body name="y" pos="0 1 0"><geom size=".1" density="0"/><site name="q"/></body></body>"""
    _check(tmp_path, body=body)


def test_inertiafromgeom_and_settotalmass(tmp_path):
    _check(tmp_path, compiler='<compiler fusestatic="true" inertiafromgeom="true" settotalmass="7"/>')


# who wins when explicit inertials and geom inertia meet in a fusion, for each inertiafromgeom mode
_MIX = {
    "geom_parent_explicit_child": """<body name="p"><joint/><geom size=".1"/><body name="s" pos="1 0 0" euler="0 30 0">
        <inertial pos=".1 0 0" quat="1 .2 0 0" mass="2" diaginertia="1 .8 .7"/><geom size=".2 .1" type="capsule"/>
        </body></body>""",
    "explicit_parent_geom_child": """<body name="p"><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
        <body name="s" pos="1 0 0"><geom size=".2"/></body></body>""",
    "explicit_geom_parent_geom_child": """<body name="p"><joint/><inertial pos="0 0 .1" mass="1" diaginertia="1 1 1"/>
        <geom size=".1"/><body name="s" pos="1 0 0"><geom size=".2 .3 .1" type="box"/></body></body>""",
    "explicit_child_without_geoms": """<body name="p"><joint/><geom size=".1"/><body name="s" pos="1 0 0">
        <inertial pos="0 0 0" mass="3" diaginertia="1 1 1"/></body></body>""",
}


@pytest.mark.parametrize("ifg", ["auto", "true", "false"])
@pytest.mark.parametrize("case", sorted(_MIX))
def test_inertia_sources_in_fusion(tmp_path, ifg, case):
    _check(tmp_path, body=_MIX[case], compiler=f'<compiler fusestatic="true" inertiafromgeom="{ifg}"/>')


def test_force_sensor_site_keeps_its_body(tmp_path):
    ours, mjm = _check(tmp_path, extra='<sensor><force site="ss2"/><torque site="ss"/></sensor>')
    assert "s" in ours.names["body"] and "s2" in ours.names["body"]


def test_skin_with_fusestatic_refused(tmp_path):
    from rigidsim.errors import InputError

    p = tmp_path / "scene.xml"
    p.write_text('<mujoco><compiler fusestatic="true"/><asset><skin name="sk" file="s.skn"/></asset>'
                 '<worldbody><body><joint/><geom size=".1"/></body></worldbody></mujoco>')
    with pytest.raises(InputError, match="fusestatic"):
        load_mjcf(p)
