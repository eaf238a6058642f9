"""A numeric attribute left blank (`width=""`, `pos=" "`), as a hand edit or a template leaves it: MuJoCo 4.0
reads most as absent and refuses a few; rigidsim must do the same (found by the mutation sweep:
dm_control/stacker.xml's tendon width='' was refused here, compiled by MuJoCo)."""

from __future__ import annotations

import pytest

from rigidsim.compare.model import compare_models, model_from_mujoco
from rigidsim.errors import InputError
from rigidsim.loaders import load_scene

mujoco = pytest.importorskip("mujoco")

SCENE = """<mujoco>
  <default><geom friction="{df}"/></default>
  <worldbody>
    <body pos="{bpos}">
      <joint name="j" type="hinge" damping="{jd}" range="{jr}"/>
      <geom size="0.1" mass="{gm}" rgba="{rgba}" solref="{solref}"/>
      <site name="s1" size="{ss}"/>
      {inertial}
    </body>
    <body pos="0 0 1"><freejoint group="{fg}"/><geom size="0.1"/></body>
    <site name="s2" pos="1 0 0"/>
  </worldbody>
  <tendon><spatial width="{tw}" stiffness="{ts}"><site site="s1"/><site site="s2"/></spatial></tendon>
  <size njmax="{nj}"/>
</mujoco>"""

FILLED = dict(df="1 0.01 0.001", bpos="0 0 0.5", jd="0.1", jr="-1 1", gm="2", rgba="1 0 0 1", solref="0.02 1",
              ss="0.01", inertial="", fg="1", tw="0.01", ts="3", nj="100")
ABSENT_WHEN_BLANK = ("df", "bpos", "jd", "jr", "gm", "rgba", "solref", "ss", "tw", "ts")


def _both(tmp_path, **blank):
    text = SCENE.format(**{**FILLED, **blank})
    p = tmp_path / "blank.xml"
    p.write_text(text)
    try:
        theirs = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    except ValueError:
        theirs = None
    try:
        ours = load_scene(p)
    except InputError:
        ours = None
    return ours, theirs


@pytest.mark.parametrize("key", ABSENT_WHEN_BLANK)
@pytest.mark.parametrize("text", ["", "  "])
def test_blank_number_is_absent_as_in_mujoco(tmp_path, key, text):
    ours, theirs = _both(tmp_path, **{key: text})
    assert theirs is not None, "MuJoCo no longer reads this blank attribute as absent"
    assert ours is not None, f"rigidsim refuses a blank {key} that MuJoCo compiles"
    assert compare_models(ours, theirs) == []


@pytest.mark.parametrize("blank", [dict(fg=""), dict(nj=" "),
                                   dict(inertial='<inertial pos="" mass="1" diaginertia="1 1 1"/>')])
def test_blank_numbers_mujoco_refuses_are_refused(tmp_path, blank):
    ours, theirs = _both(tmp_path, **blank)
    assert theirs is None, "MuJoCo now compiles this blank attribute: update BLANK_REFUSED"
    assert ours is None
