"""<replicate>: copies, poses, name suffixes, nesting, referencing elements and keyframes, against MuJoCo."""

from __future__ import annotations

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco


def _check(tmp_path, xml):
    p = tmp_path / "rep.xml"
    p.write_text(xml)
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref) == []
    return ours


CASES = {
    # in a rotated frame, radians and a custom euler sequence, world geoms and a trailing body
    "frame_euler": """<mujoco><compiler angle="radian" eulerseq="zyx"/><worldbody>
      <frame pos="1 0 0" euler="0.1 0.2 0.3">
        <replicate count="3" offset="0.1 0.2 0" euler="0.1 0 0.5" sep="_">
          <body name="b" pos="0 0 1"><joint name="j"/><geom name="g" size="0.1"/><site name="s"/></body>
          <geom name="wg" size="0.1" pos="0 0 .2"/>
        </replicate></frame>
      <body name="after"><freejoint/><geom size="0.1"/></body></worldbody>
      <actuator><motor joint="j" name="m"/></actuator><sensor><jointpos joint="j"/><framepos objtype="site"
        objname="s"/></sensor>
      <keyframe><key qpos="1 2 3 0 0 0 1 0 0 0"/></keyframe></mujoco>""",
    # nested, inside a moving body, childclass, 12 copies (two-digit suffixes)
    "nested": """<mujoco><default><default class="c"><geom size=".05 .04 .03" type="box" density="300"/>
        <joint damping="3"/></default></default><worldbody>
      <body name="base" pos="0 0 1"><freejoint/><geom size=".2"/>
        <replicate count="12" euler="0 0 30" offset="0.3 0 0" childclass="c">
          <replicate count="2" offset="0 0 .1" sep="-">
            <body name="leaf" pos=".1 0 0"><joint name="lj" axis="0 1 0"/><geom name="lg"/></body>
          </replicate></replicate></body></worldbody>
      <actuator><position joint="lj" kp="2"/></actuator></mujoco>""",
    # tendons, equalities, excludes and pairs that reference copies follow them; others stay in place
    "referencing": """<mujoco><worldbody>
      <body name="x"><joint name="jx"/><geom name="gx" size="0.1"/></body>
      <replicate count="2" offset="0.1 0.2 0">
        <body name="b" pos="0 0 1"><joint name="j"/><geom name="g" size="0.1"/>
          <body name="c"><joint name="k"/><geom size=".1"/></body></body></replicate>
      <replicate count="2" offset="0.1 0.2 0">
        <body name="d" pos="0 0 1"><joint name="dj"/><geom size="0.1"/></body></replicate></worldbody>
      <tendon><fixed name="t"><joint joint="j" coef="1"/><joint joint="k" coef="1"/></fixed>
        <fixed name="t2"><joint joint="j" coef="1"/><joint joint="jx" coef="1"/></fixed></tendon>
      <equality><joint joint1="j" joint2="k"/><joint joint1="jx" joint2="dj"/></equality>
      <actuator><motor joint="jx" name="a0"/><motor joint="j" name="m"/><motor joint="dj" name="md"/>
        <motor tendon="t" name="mt"/><motor joint="jx" name="a2"/></actuator>
      <sensor><actuatorfrc actuator="mt"/><tendonpos tendon="t2"/><jointpos joint="jx"/></sensor>
      <contact><exclude body1="b" body2="c"/><pair geom1="g" geom2="gx"/></contact></mujoco>""",
    # equalities and actuators reaching outside the copies are dropped; tendons, pairs, excludes, sensors follow
    "partial_equality": """<mujoco><worldbody>
  <body name="x"><joint name="jx"/><geom size="0.1"/><site name="sx"/></body>
  <replicate count="2" offset="0.1 0.2 0">
    <body name="d" pos="0 0 1"><joint name="dj"/><geom size="0.1"/><site name="sd"/></body></replicate></worldbody>
  <tendon><fixed name="tx"><joint joint="jx" coef="1"/></fixed><fixed name="td"><joint joint="dj" coef="1"/></fixed></tendon>
  <equality><joint name="e1" joint1="jx" joint2="dj"/><joint name="e2" joint1="dj" joint2="jx"/><joint name="e3" joint1="dj"/>
  <connect name="e4" body1="x" body2="d" anchor="0 0 0"/><connect name="e5" body1="d" body2="x" anchor="0 0 0"/>
  <weld name="e6" site1="sd" site2="sx"/><weld name="e7" site1="sx" site2="sd"/>
  <tendon name="e8" tendon1="tx" tendon2="td"/><tendon name="e9" tendon1="td" tendon2="tx"/></equality>
  <contact></contact>
</mujoco>""",
    "partial_refs": """<mujoco><worldbody>
  <body name="x"><joint name="jx"/><geom name="gx" size="0.1"/><site name="sx"/></body>
  <replicate count="2" offset="0.1 0.2 0">
    <body name="d" pos="0 0 1"><joint name="dj"/><geom name="gd" size="0.1"/><site name="sd"/></body></replicate></worldbody>
  <contact><pair name="p1" geom1="gx" geom2="gd"/><pair name="p2" geom1="gd" geom2="gx"/>
    <exclude name="x1" body1="x" body2="d"/><exclude name="x2" body1="d" body2="x"/></contact>
  <tendon><spatial name="sp1"><site site="sx"/><site site="sd"/></spatial><spatial name="sp2"><site site="sd"/><site site="sx"/></spatial></tendon>
  <actuator><motor name="a1" site="sd" refsite="sx"/><motor name="a2" site="sx" refsite="sd"/></actuator>
  <sensor><framepos name="s1" objtype="site" objname="sd" reftype="site" refname="sx"/><framepos name="s2" objtype="site" objname="sx" reftype="site" refname="sd"/></sensor>
</mujoco>""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_replicate_matches(tmp_path, case):
    _check(tmp_path, CASES[case])


def test_replicate_names(tmp_path):
    m = _check(tmp_path, CASES["nested"])
    assert m.names["body"][2:5] == ["leaf-000", "leaf-100", "leaf-001"]


def test_replicate_refuses_direct_joint(tmp_path):
    p = tmp_path / "rep.xml"
    p.write_text('<mujoco><worldbody><body><geom size=".1"/><replicate count="2"><joint/></replicate></body>'
                 '</worldbody></mujoco>')
    with pytest.raises(InputError, match="direct child of <replicate>"):
        load_mjcf(p)
