"""Slider-crank transmissions: ids, crank length, gear, and length0 / acc0 from the moment at qpos0."""

from __future__ import annotations

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco

CRANK = """<mujoco><compiler angle="degree"/><worldbody>
  <body name="base" pos=".1 .2 .3" euler="10 20 30"><joint axis="1 1 0"/><geom size=".1"/>
    <site name="slider" pos=".05 0 0" euler="{slider_euler}"/>
    <body pos="1 0 0" euler="0 0 15"><joint type="hinge" axis="0 0 1"/>
      <geom type="cylinder" size=".2 .01" mass="2"/><site name="crank" pos="0 .2 .05"/></body>
  </body></worldbody>
  <actuator><motor cranklength="{rod}" cranksite="crank" slidersite="slider" gear="{gear}"/>
            <position cranklength=".3" cranksite="crank" slidersite="slider" kp="5"/></actuator>
</mujoco>"""


@pytest.mark.parametrize("slider_euler,rod,gear", [("0 90 0", "1.1", "1"), ("30 70 -10", "1.3", "-2.5"),
                                                   ("0 90 0", "0.1", "3")])  # the last: the rod cannot reach
def test_slidercrank_matches(tmp_path, slider_euler, rod, gear):
    p = tmp_path / "crank.xml"
    p.write_text(CRANK.format(slider_euler=slider_euler, rod=rod, gear=gear))
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref) == []
    assert list(ours.arrays["actuator_trnid"][0]) == [1, 0]


def test_slidercrank_needs_positive_length(tmp_path):
    p = tmp_path / "crank.xml"
    p.write_text(CRANK.format(slider_euler="0 90 0", rod="0", gear="1"))
    with pytest.raises(InputError, match="crank length"):
        load_mjcf(p)
