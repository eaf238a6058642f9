"""`rigidsim compare`: the user's scene run by rigidsim and by MuJoCo, compared stage by stage, through the real
command line. Exit 0 when every stage is within its tolerance, 1 when one is not, 2 for bad input (with one
paragraph, no traceback).

Engine runs are few: cartpole and pendulum (no contacts), dm_control's hopper (contacts with the floor in its
first 100 steps) and sphere_bin under Genesis's contact conventions, which must fail at the model stage.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.cli_util import ROOT, assert_clean_error, rigidsim, shared_model

pytest.importorskip("mujoco")

STAGES = ["model", "kinematics", "contacts", "constraint forces", "one step", "free run"]


def _stage_lines(text: str):
    """The report's stage rows (plain text when piped): 'N name | ... | pass|FAIL ...'."""
    return [ln.strip() for ln in text.splitlines() if ln.strip()[:2] in {f"{i} " for i in range(1, 7)}]


def _assert_stages(text: str, results):
    rows = _stage_lines(text)
    assert [r.split(" | ")[0] for r in rows] == [f"{i + 1} {s}" for i, s in enumerate(STAGES)], text
    for r, want in zip(rows, results):
        assert r.split(" | ")[4] == want, r


def test_help():
    p = rigidsim("compare", "--help")
    assert p.returncode == 0, p.stderr
    for flag in ("--steps", "--envs", "--keyframe", "--options", "--set", "--json"):
        assert flag in p.stdout
    assert "rigidsim[mujoco]" in p.stdout


def test_missing_scene():
    text = assert_clean_error(rigidsim("compare", "no_such_scene.xml"), 2)
    assert "no_such_scene.xml" in text


@pytest.mark.parametrize("flag,value", [("--steps", "0"), ("--envs", "0")])
def test_bad_counts(flag, value):
    text = assert_clean_error(rigidsim("compare", "pendulum", flag, value), 2)
    assert flag in text


def test_bad_keyframe():
    text = assert_clean_error(rigidsim("compare", "pendulum", "--keyframe", "nope"), 2)
    assert "no keyframe 'nope'" in text


def test_without_mujoco(tmp_path):
    """With mujoco not importable: exit 2 and how to install it."""
    (tmp_path / "mujoco.py").write_text("raise ImportError('No module named mujoco')\n")
    p = rigidsim("compare", "pendulum", env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"})
    text = assert_clean_error(p, 2)
    assert "rigidsim compare needs the mujoco package: pip install 'rigidsim[mujoco]'" in text


def test_cartpole():
    p = rigidsim("compare", "cartpole", "--steps", "50")
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_stages(p.stdout, ["pass"] * 6)
    assert "50 steps from keyframe 0 'tilted'" in p.stdout
    assert "enable_mujoco_compatibility: true (set by compare" in p.stdout
    assert p.stdout.strip().splitlines()[-1] == "rigidsim matches MuJoCo on cartpole (6 stages)"


def test_pendulum_envs_json(tmp_path):
    """Two envs of the free run agree bit for bit; the JSON report holds the same stages."""
    out = tmp_path / "report.json"
    p = rigidsim("compare", "pendulum", "--envs", "2", "--steps", "40", "--json", out)
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_stages(p.stdout, ["pass"] * 6)
    r = json.loads(out.read_text())
    assert r["passed"] is True and r["steps"] == 40 and r["envs"] == 2
    assert [s["name"] for s in r["stages"]] == STAGES
    assert all(s["passed"] and s["max_error"] <= s["tolerance"] for s in r["stages"])
    assert "2 envs bit-identical" in r["stages"][5]["compared"]
    assert r["verdict"] == "rigidsim matches MuJoCo on pendulum (6 stages)"


def test_shared_model_with_contacts(tmp_path):
    """dm_control's hopper falls onto the floor within 100 steps: the contact stage compares real contacts."""
    path = shared_model("dm_control/hopper.xml")
    out = tmp_path / "report.json"
    p = rigidsim("compare", path, "--json", out)
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_stages(p.stdout, ["pass"] * 6)
    r = json.loads(out.read_text())
    contacts = r["stages"][2]["compared"]
    n = int(contacts.split("(")[1].split(" MuJoCo contacts")[0])
    assert n > 0, contacts


def _rotating(name, full, default):
    """`full` under RIGIDSIM_SWEEP=1; else `default` and one rotating slice of the rest (tests/sweep_slice.py)."""
    from tests.sweep_slice import selection

    return [pytest.param(x, id=tid) for x, tid in selection(name, full, default, 1)]


@pytest.mark.parametrize("scene", _rotating("compare_bundled", ["arm", "boxes27", "chain", "falling_objects",
                                                                "sphere_bin"], ["boxes27"]))
def test_other_bundled_scenes(scene):
    """The bundled scenes not covered above (a URDF arm, contact scenes with boxes, meshes and spheres, a chain)
    match MuJoCo at every stage over their first 10 steps (each compiles its own kernels: kept short). The
    default run checks boxes27 and one of the others, a different one per commit; RIGIDSIM_SWEEP=1 all."""
    p = rigidsim("compare", scene, "--steps", "10")
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_stages(p.stdout, ["pass"] * 6)
    assert p.stdout.strip().splitlines()[-1] == f"rigidsim matches MuJoCo on {scene} (6 stages)"


@pytest.mark.parametrize("rel", _rotating("compare_shared", ["dm_control/cheetah.xml", "dm_control/walker.xml"], []))
def test_more_shared_models(rel):
    """More models of ../shared/models, touching the floor: one of the two per commit, both under
    RIGIDSIM_SWEEP=1 (with the hopper above)."""
    p = rigidsim("compare", shared_model(rel), "--steps", "20")
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_stages(p.stdout, ["pass"] * 6)


def test_an_error_inside_mujoco_is_a_failed_simulation(tmp_path):
    """MuJoCo's arena sized too small for sphere_bin's contacts (<size memory>): mj_step stops with an error at
    the first step; compare exits 1 naming it, no traceback."""
    text = (ROOT / "scenes" / "sphere_bin.xml").read_text().replace('<mujoco model="sphere_bin">',
                                                                   '<mujoco model="sphere_bin"><size memory="45K"/>')
    scene = tmp_path / "small_arena.xml"
    scene.write_text(text)
    p = rigidsim("compare", scene, "--steps", "5")
    out = assert_clean_error(p, 1)
    assert "MuJoCo stopped with an error at step 0: mj_stackAlloc: out of memory" in out


def test_differs_under_genesis_conventions(tmp_path):
    """Without MuJoCo compatibility our geoms take Genesis's constraint_timeconst (0.01 s) where MuJoCo keeps its
    default solref (0.02 s): the model stage fails and names geom_solref, the contact forces then differ, and
    the verdict names stage 1."""
    out = tmp_path / "report.json"
    p = rigidsim("compare", ROOT / "scenes" / "sphere_bin.xml", "--steps", "50", "--set",
                 "enable_mujoco_compatibility=false", "--set", "max_collision_pairs=1000", "--json", out)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    rows = _stage_lines(p.stdout)
    assert rows[0].split(" | ")[4] == "FAIL" and "geom_solref" in rows[0], rows[0]
    assert rows[3].split(" | ")[4] == "FAIL", rows[3]  # the contact forces of a 0.01 s vs 0.02 s time constant
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("rigidsim differs from MuJoCo at stage 1 (model): "), last
    assert "enable_mujoco_compatibility is false" in last
    r = json.loads(out.read_text())
    assert r["passed"] is False and r["enable_mujoco_compatibility"] is False
    assert "ours 0.01, MuJoCo 0.02" in r["stages"][0]["detail"]
