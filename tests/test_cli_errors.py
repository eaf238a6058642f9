"""Bad input through the real command line: exit 2, a clear message, no traceback, no output file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cli_util import assert_clean_error, rigidsim

PENDULUM_XML = """<mujoco model="p">
  <worldbody>
    <body name="b" pos="0 0 1">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.1" pos="0 0 -0.5" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="h"/></actuator>
  <keyframe><key name="up" qpos="3.0"/></keyframe>
</mujoco>
"""


@pytest.fixture()
def scene(tmp_path) -> Path:
    p = tmp_path / "p.xml"
    p.write_text(PENDULUM_XML)
    return p


def test_misspelt_option_in_file(tmp_path, scene):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("iteratons: 10\n")
    out = tmp_path / "o.h5"
    text = assert_clean_error(rigidsim("run", scene, "--options", cfg, "--out", out, "--steps", "1"))
    assert "iteratons" in text and "did you mean 'iterations'" in text.lower()
    assert str(cfg) in text
    assert not out.exists()


def test_misspelt_option_in_set(tmp_path, scene):
    text = assert_clean_error(rigidsim("run", scene, "--set", "integrater=euler", "--out", tmp_path / "o.h5"))
    assert "integrater" in text and "integrator" in text


@pytest.mark.parametrize("kv, expect", [("iterations=3.5", "integer"), ("dt=-1", "greater than 0"),
                                         ("friction_cone=round", "pyramidal"), ("gravity=[0,1]", "3 finite")])
def test_wrong_type_or_range(tmp_path, scene, kv, expect):
    text = assert_clean_error(rigidsim("run", scene, "--set", kv, "--out", tmp_path / "o.h5"))
    assert expect in text and kv.split("=")[0] in text
    assert not (tmp_path / "o.h5").exists()


def test_options_command_validates_a_file(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("iterations: 20\nfriction_cone: elliptic\n")
    p = rigidsim("options", cfg)
    assert p.returncode == 0, p.stderr
    assert "elliptic" in p.stdout
    cfg.write_text("iterations: [1]\n")
    assert "integer" in assert_clean_error(rigidsim("options", cfg))
    cfg.write_text("iterations: 1\n  bad: : indent\n")
    text = assert_clean_error(rigidsim("options", cfg))
    assert "YAML" in text and f"{cfg}:" in text


def test_malformed_xml_names_file_and_line(tmp_path):
    p = tmp_path / "bad.xml"
    p.write_text("<mujoco>\n  <worldbody>\n    <body>\n  </worldbody>\n</mujoco>\n")
    text = assert_clean_error(rigidsim("run", p, "--out", tmp_path / "o.h5"))
    assert f"{p}:4" in text and "malformed XML" in text
    assert not (tmp_path / "o.h5").exists()


def test_missing_scene_file(tmp_path):
    text = assert_clean_error(rigidsim("run", tmp_path / "nothere.xml", "--out", tmp_path / "o.h5"))
    assert "nothere.xml" in text and "not found" in text


def test_external_entity_is_refused_and_nothing_leaks(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    p = tmp_path / "xxe.xml"
    p.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE mujoco [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
                 f'<mujoco model="&xxe;"><worldbody/></mujoco>\n')
    out = tmp_path / "o.h5"
    text = assert_clean_error(rigidsim("run", p, "--out", out, "--steps", "0"))
    assert "TOP-SECRET" not in text
    assert "entit" in text.lower()
    assert not out.exists()


def test_unknown_keyframe_and_record_field(tmp_path, scene):
    text = assert_clean_error(rigidsim("run", scene, "--keyframe", "upp", "--out", tmp_path / "o.h5"))
    assert "upp" in text and "'up'" in text
    text = assert_clean_error(rigidsim("run", scene, "--record", "qpos,xquatt", "--out", tmp_path / "o.h5"))
    assert "xquatt" in text and "xquat" in text


def test_bad_ctrl_shape(tmp_path, scene):
    c = tmp_path / "c.npy"
    np.save(c, np.zeros((5, 3)))
    text = assert_clean_error(rigidsim("run", scene, "--ctrl", c, "--steps", "5", "--out", tmp_path / "o.h5"))
    assert "nu=1" in text


def test_existing_output_survives_a_bad_run(tmp_path, scene):
    out = tmp_path / "o.h5"
    out.write_bytes(b"previous results")
    assert_clean_error(rigidsim("run", scene, "--set", "iterations=-1", "--out", out))
    assert out.read_bytes() == b"previous results"


def test_feature_not_built_is_refused(tmp_path):
    """The implicit integrator (not built yet) is refused by name, before any output exists."""
    xml = tmp_path / "implicit.xml"
    xml.write_text('<mujoco><option integrator="implicit"/><worldbody><body><joint axis="0 1 0"/><geom size=".1"/>'
                   '</body></worldbody></mujoco>')
    text = assert_clean_error(rigidsim("run", xml, "--out", tmp_path / "o.h5", "--steps", "1"))
    assert "not supported yet" in text and "implicit integrator" in text
    assert not (tmp_path / "o.h5").exists()


def test_too_few_ctrl_rows(tmp_path, scene):
    c = tmp_path / "c.npy"
    np.save(c, np.zeros((3, 1)))
    text = assert_clean_error(rigidsim("run", scene, "--ctrl", c, "--steps", "5", "--out", tmp_path / "o.h5"))
    assert "3 rows" in text and "--steps 5" in text
    np.save(c, np.full((5, 1), np.nan))
    assert "NaN" in assert_clean_error(rigidsim("run", scene, "--ctrl", c, "--steps", "5", "--out", tmp_path / "o.h5"))
