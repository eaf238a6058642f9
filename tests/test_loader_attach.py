"""<model> assets and <attach>: prefixes, the attached model's defaults, referencing elements, keyframes."""

from __future__ import annotations

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco

CHILD = """<mujoco model="child">{compiler}
  <option timestep="0.01" iterations="7"/>
  <default><joint damping="2"/><geom size="0.2" rgba="1 0 0 1"/>
    <default class="big"><geom size="0.5"/></default></default>
  <worldbody>
    <body name="base" pos="0 0 1" euler="0 0 17">
      <joint name="h" axis="1 0 0" range="-10 10"/><geom name="g1"/><site name="s"/>
      <body name="arm" pos="0.5 0 0"><joint name="k" range="0 30"/><geom class="big"/><site name="s2"/></body>
    </body>
    <body name="other"><geom/></body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="h" coef="1"/><joint joint="k" coef="2"/></fixed>
    <spatial name="sp"><site site="s"/><site site="s2"/></spatial></tendon>
  <equality><joint joint1="h" joint2="k"/></equality>
  <actuator><motor joint="h" name="mh"/><position joint="k" kp="3"/><motor tendon="t"/></actuator>
  <sensor><jointpos joint="k" name="sk"/><tendonpos tendon="sp"/></sensor>
  <keyframe><key name="up" qpos="0.5 0.7" ctrl="1 2 3" qvel="3 4"/><key qpos="0.1 0.2"/></keyframe>
</mujoco>"""

PARENTS = {
    "body_and_frame": """<mujoco>
      <default><geom size="0.05"/><joint damping="7"/></default>
      <asset><model name="c" file="child.xml"/></asset>
      <worldbody>
        <body name="p" pos="0 0 2"><joint name="pj"/><geom/><attach model="c" body="base" prefix="x_"/></body>
        <frame pos="1 2 3" euler="0 0 30"><attach model="c" body="arm" prefix="y_"/></frame>
      </worldbody>
      <actuator><motor joint="pj" name="mp"/></actuator>
      <keyframe><key name="pk" qpos="9 8 7 6"/></keyframe></mujoco>""",
    "replicated": """<mujoco><option timestep="0.004"/>
      <asset><model name="c" file="child.xml"/></asset>
      <worldbody><body name="p"><freejoint/><geom size=".1"/></body>
        <replicate count="2" offset="1 0 0"><replicate count="3" euler="0 0 20" sep="-">
          <frame pos="0 -4 0"><attach model="c" body="base" prefix="x_"/></frame>
        </replicate></replicate></worldbody></mujoco>""",
}


def _files(tmp_path, parent, compiler=""):
    (tmp_path / "child.xml").write_text(CHILD.format(compiler=compiler))
    p = tmp_path / "parent.xml"
    p.write_text(parent)
    return p


@pytest.mark.parametrize("case", sorted(PARENTS))
def test_attach_matches(tmp_path, case):
    p = _files(tmp_path, PARENTS[case])
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref) == []
    if case == "replicated":
        assert ours.names["key"] == ["x_up", "x_"]
        assert ours.names["body"][2:4] == ["x_base-00", "x_arm-00"]


def test_attach_refuses_other_compiler(tmp_path):
    p = _files(tmp_path, PARENTS["body_and_frame"], compiler='<compiler angle="radian"/>')
    with pytest.raises(InputError, match="compiler settings differ"):
        load_mjcf(p)


def test_attach_unknown_body(tmp_path):
    p = _files(tmp_path, PARENTS["body_and_frame"].replace('body="arm"', 'body="nope"'))
    with pytest.raises(InputError, match="could not find body 'nope'"):
        load_mjcf(p)


@pytest.mark.parametrize("attach_as, ok", [("child", True), ("kid", False)])
def test_unnamed_model_asset_takes_the_files_model_name(tmp_path, attach_as, ok):
    """An unnamed <model> asset is named after its file's <mujoco model=...> (MuJoCo 4.0), not after the file."""
    (tmp_path / "kid.xml").write_text(CHILD.format(compiler=""))
    p = tmp_path / "parent.xml"
    p.write_text(f"""<mujoco><asset><model file="kid.xml"/></asset>
      <worldbody><attach model="{attach_as}" body="base" prefix="x_"/></worldbody></mujoco>""")
    if ok:
        assert compare_models(load_mjcf(p), model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))) == []
    else:
        with pytest.raises(ValueError, match="could not find model 'kid'"):
            mujoco.MjModel.from_xml_path(str(p))
        with pytest.raises(InputError, match="could not find model 'kid'"):
            load_mjcf(p)
