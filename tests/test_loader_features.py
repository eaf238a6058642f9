"""Inline MJCF, one feature at a time, compiled by us and by MuJoCo and compared field by field."""

from __future__ import annotations

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco


def _write(tmp_path, xml, name="scene.xml"):
    p = tmp_path / name
    p.write_text(xml)
    return p


def _check(tmp_path, body, extra="", compiler=""):
    xml = f"<mujoco>{compiler}<worldbody>{body}</worldbody>{extra}</mujoco>"
    p = _write(tmp_path, xml)
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref) == []
    return ours


CASES = {
    "defaults": ("""<body pos="0 0 1" childclass="a"><joint name="j0"/><geom size=".1 .2" type="capsule"/>
                    <body pos="0 .3 0"><joint class="b" name="j1"/><geom class="b" size=".1"/></body></body>""",
                 """<default><default class="a"><joint damping="2" axis="0 1 0" range="-30 40"/>
                    <geom density="500" friction=".5"/><default class="b"><joint stiffness="3"/>
                    <geom type="box" size=".1 .2 .3" solimp=".8 .9"/></default></default></default>"""),
    "euler": ('<body euler="10 20 30"><joint/><geom size=".1 .2 .3" type="box" euler="5 -7 90"/></body>', ""),
    "eulerseq": ('<body euler="10 20 30"><joint/><geom size=".1 .2 .3" type="box" euler="5 -7 90"/></body>',
                 "", '<compiler eulerseq="ZYX"/>'),
    "axisangle": ('<body axisangle="1 1 0 45"><joint/><geom size=".1 .2 .3" type="box" axisangle="0 0 2 30"/>'
                  '</body>', ""),
    "xyaxes": ('<body xyaxes="0 1 0 -1 0 .2"><joint/><geom size=".1 .2 .3" type="box" xyaxes="1 1 0 0 1 1"/>'
               '</body>', ""),
    "zaxis": ('<body zaxis="0 1 1"><joint/><geom size=".1 .2" type="cylinder" zaxis="0 0 -1"/></body>', ""),
    "radian": ('<body euler="1 .2 .3"><joint range="-1 1"/><geom size=".1 .2 .3" type="box"/></body>', "",
               '<compiler angle="radian"/>'),
    "fromto": ("""<body><joint/><geom type="capsule" fromto="0 0 0 .3 .1 .2" size=".05"/>
                  <geom type="box" fromto="0 0 0 0 0 -.4" size=".05"/>
                  <geom type="cylinder" fromto="0 0 0 .1 -.2 0" size=".03"/>
                  <site type="box" fromto="0 0 0 .1 .1 .1" size=".01"/></body>""", ""),
    "fullinertia": ('<body><joint type="ball"/><inertial pos=".1 0 0" mass="2" '
                    'fullinertia="0.3 0.4 0.5 0.01 0.02 0.03"/></body>', ""),
    "diaginertia": ('<body><freejoint/><inertial pos=".1 .2 0" quat="1 1 0 0" mass="2" '
                    'diaginertia=".1 .2 .25"/></body>', ""),
    "multi_geom_inertia": ("""<body><joint type="slide" axis="1 1 0"/><geom type="sphere" size=".1" pos=".2 0 0"/>
                    <geom type="ellipsoid" size=".1 .2 .15" pos="0 .1 0" euler="10 20 30"/>
                    <geom type="box" size=".1 .1 .1" mass="3"/></body>""", ""),
    "shellinertia": ('<body><joint/><geom type="box" size=".1 .2 .3" shellinertia="true"/>'
                     '<geom type="sphere" size=".1" shellinertia="true" pos="0 0 1"/></body>', ""),
    "frame": ('<frame pos="1 0 0" euler="0 0 90"><body pos="0 1 0"><joint/><geom size=".1"/>'
              '<frame pos="0 0 1"><geom size=".1 .1 .1" type="box" pos="0 .1 0"/><site/></frame></body></frame>', ""),
    "actuators": ("""<body><joint name="h" range="-1 1"/><geom size=".1"/><body pos="0 0 .5"><joint name="s"
                  type="slide"/><geom size=".1"/></body></body>""",
                  """<actuator><motor joint="h" gear="2" ctrlrange="-1 1"/><position joint="h" kp="10" kv="1"/>
                  <position joint="s" kp="5" dampratio="1" ctrlrange="0 1"/><velocity joint="s" kv="3"/>
                  <intvelocity joint="h" kp="2" actrange="-1 1"/><damper joint="s" kv="4" ctrlrange="0 1"/>
                  <general joint="h" gainprm="3 1" biasprm="0 -3 -1" biastype="affine" dyntype="filter"
                  dynprm=".1"/><position joint="h" kp="4" inheritrange="1"/></actuator>"""),
    "tendon_eq": ("""<body><joint name="a"/><geom size=".1"/><site name="s1"/><body pos="0 0 1"><joint name="b"/>
                  <geom size=".1"/><site name="s2" pos=".1 0 0"/></body></body>""",
                  """<tendon><fixed name="t"><joint joint="a" coef="1"/><joint joint="b" coef="-.5"/></fixed>
                  <spatial name="sp" range="0 2"><site site="s1"/><site site="s2"/></spatial></tendon>
                  <equality><joint joint1="a" joint2="b" polycoef="0 2"/><tendon tendon1="t"/></equality>
                  <actuator><motor tendon="sp"/></actuator>"""),
    "keyframe": ('<body><freejoint/><geom size=".1"/></body><body mocap="true" pos="1 0 0"><geom size=".1"/></body>',
                 '<keyframe><key qpos="0 0 1 1 1 0 0"/><key time="1" mpos="1 2 3"/></keyframe>'),
    # springdamper: stiffness and damping from the dofs' inverse weight at qpos0, overriding given values
    "springdamper": ("""<body pos="0 0 1"><joint type="hinge" axis="0 1 0" springdamper=".5 .8"/>
                     <geom size=".1 .3" type="capsule" pos="0 0 -.3"/><body pos="0 0 -.6">
                     <joint type="ball" springdamper=".3 1.2"/><geom size=".1 .1 .1" type="box" pos=".1 0 0"/>
                     </body></body><body pos="1 0 1"><freejoint/><geom size=".1 .2 .3" type="box"/>
                     <body pos="0 0 .5" childclass="sd"><joint type="slide" stiffness="7" damping="3"/>
                     <geom size=".1"/><body><joint springdamper="0 0" stiffness="2"/><geom size=".05"/></body>
                     </body></body><body pos="2 0 0"><joint type="free" springdamper=".4 1"/><geom size=".1"/></body>""",
                     '<default><default class="sd"><joint springdamper=".2 2"/></default></default>'),
    # <size nkey>: missing keyframes are added with MuJoCo's defaults (qpos0, mocap body poses)
    "size_nkey": ('<body><freejoint/><geom size=".1"/></body><body mocap="true" pos="1 0 0" euler="0 0 30">'
                  '<geom size=".1"/></body>',
                  '<size nkey="3"/><keyframe><key name="k" qpos="0 0 1 1 1 0 0"/></keyframe>'),
    "options": ('<body><joint/><geom size=".1"/></body>',
                '<option timestep=".01" integrator="implicitfast" cone="elliptic" o_solimp=".8 .9">'
                '<flag contact="disable" energy="enable"/></option>'),
}


@pytest.mark.parametrize("case", list(CASES))
def test_feature_matches_mujoco(tmp_path, case):
    c = CASES[case]
    _check(tmp_path, c[0], c[1], c[2] if len(c) > 2 else "")


def test_eig3_matches_mju_eig3_bit_for_bit():
    """Principal axes: our eig3 against MuJoCo's own mju_eig3 on random symmetric matrices."""
    import numpy as np

    from rigidsim.loaders.spatial import eig3
    rng = np.random.default_rng(7)
    for k in range(400):
        a = rng.normal(size=(3, 3))
        a = a @ a.T if k % 2 else a + a.T
        if k % 5 == 0:
            a = np.round(a, 2)  # repeated / structured entries
        if k % 7 == 0:
            a = np.diag(np.round(rng.uniform(0, 1, 3), 1))  # already diagonal, ties
        mat = [float(x) for x in a.flatten()]
        val, vec, quat = np.zeros(3), np.zeros(9), np.zeros(4)
        mujoco.mju_eig3(val, vec, quat, np.array(mat))
        ours_val, ours_quat = eig3(mat)
        assert ours_val == list(val) and ours_quat == list(quat), mat


def test_explicit_options(tmp_path):
    body, extra = CASES["options"]
    m = _check(tmp_path, body, extra)
    assert {"timestep", "integrator", "cone", "o_solimp", "contact", "energy"} <= m.opt.explicit


def test_include_relative_to_including_file(tmp_path):
    (tmp_path / "sub").mkdir()
    _write(tmp_path, '<mujoco><include file="inner.xml"/></mujoco>', "sub/outer.xml")
    _write(tmp_path, '<mujoco><worldbody><body><joint/><geom size=".2"/></body></worldbody></mujoco>',
           "sub/inner.xml")
    p = _write(tmp_path, '<mujoco><include file="sub/outer.xml"/></mujoco>')
    m = load_mjcf(p)  # inner.xml is found next to sub/outer.xml
    assert m.nbody == 2


def _err(tmp_path, xml):
    p = _write(tmp_path, xml)
    with pytest.raises(InputError) as e:
        load_mjcf(p)
    return str(e.value)


def test_unknown_attribute(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody><geom size=".1" sise="2"/></worldbody></mujoco>')
    assert "unknown attribute 'sise'" in msg and "scene.xml:1" in msg


def test_unknown_element(tmp_path):
    msg = _err(tmp_path, '<mujoco>\n<worldbody><bodyy/></worldbody></mujoco>')
    assert "bodyy" in msg and "scene.xml:2" in msg


def test_unsupported_element(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody><flexcomp name="f"/></worldbody></mujoco>')
    assert "<flexcomp>" in msg and "not supported" in msg


def test_unsupported_attribute_value(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody><body><joint/><geom size=".1" fluidshape="ellipsoid"/></body>'
                         '</worldbody></mujoco>')
    assert "fluidshape" in msg and "not supported" in msg
    _check(tmp_path, '<body><joint/><geom size=".1" fluidshape="none"/></body>')  # default value: accepted


def test_missing_mesh_file(tmp_path):
    msg = _err(tmp_path, '<mujoco><asset><mesh file="nope.stl"/></asset></mujoco>')
    assert "mesh" in msg


def test_malformed_xml(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody></mujoco>')
    assert "malformed XML" in msg


def test_missing_include(tmp_path):
    msg = _err(tmp_path, '<mujoco><include file="gone.xml"/></mujoco>')
    assert "gone.xml" in msg


def test_include_cycle_bounded(tmp_path):
    msg = _err(tmp_path, '<mujoco><include file="scene.xml"/></mujoco>')
    assert "nested deeper" in msg


def test_autolimits_false_requires_limited(tmp_path):
    msg = _err(tmp_path, '<mujoco><compiler autolimits="false"/><worldbody><body><joint range="0 1"/>'
                         '<geom size=".1"/></body></worldbody></mujoco>')
    assert "limited" in msg


def test_springdamper_must_be_positive(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody><body><joint springdamper="1 0"/><geom size=".1"/></body>'
                         '</worldbody></mujoco>')
    assert "springdamper values must be positive" in msg


def test_bad_number(tmp_path):
    msg = _err(tmp_path, '<mujoco><worldbody><geom size="abc"/></worldbody></mujoco>')
    assert "invalid value" in msg
