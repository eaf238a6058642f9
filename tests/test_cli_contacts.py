"""Frame 0's contacts through the command line (`rigidsim run SCENE --steps 0`): the trajectory file's
/contacts rows equal MuJoCo's mj_collision at the same state (our loader's compile) and their forces
mj_contactForce's after mj_forward, turned into the world frame; an overflowing contact buffer stops with exit 1 naming the step, the env and the option; a pair
whose collider is not built yet is refused by kind and geom names."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from tests.cli_util import ROOT, assert_clean_error, rigidsim

mujoco = pytest.importorskip("mujoco")
COMPAT = ROOT / "configs" / "mujoco_compatible.yaml"

SCENE = """
<mujoco>
  <default><geom contype="2" conaffinity="1"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" contype="1" conaffinity="2"/>
    <body name="a" pos="0 0 0.08"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body name="b" pos="0.5 0 0.15"><freejoint/><geom type="sphere" size="0.1" margin="0.1"/></body>
    <body name="c" pos="1 0 0.5"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
  <keyframe><key name="low" qpos="0 0 0.05 1 0 0 0  0.5 0 0.12 1 0 0 0  1 0 0.09 0.6 0.8 0 0"/></keyframe>
</mujoco>
"""


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    p = tmp_path_factory.mktemp("contacts") / "spheres.xml"
    p.write_text(SCENE)
    return p


def test_frame0_contacts_match_mujoco(scene, tmp_path):
    out = tmp_path / "o.h5"
    p = rigidsim("run", scene, "--steps", 0, "--envs", 2, "--keyframe", "low", "--record", "qpos,contacts",
                 "--options", COMPAT, "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    mjm = mujoco.MjModel.from_xml_string(SCENE)
    d = mujoco.MjData(mjm)
    mujoco.mj_resetDataKeyframe(mjm, d, 0)
    mujoco.mj_forward(mjm, d)
    order = sorted(range(d.ncon), key=lambda i: tuple(d.contact[i].geom))
    ref = [d.contact[i] for i in order]
    forces = []
    for i in order:
        f6 = np.zeros(6)
        mujoco.mj_contactForce(mjm, d, i, f6)
        forces.append(d.contact[i].frame.reshape(3, 3).T @ f6[:3])  # by geom 1 on geom 2, world frame
    assert len(ref) == 3 and max(np.abs(f).max() for f in forces) > 1.0
    with h5py.File(out, "r") as f:
        c = f["contacts"]
        n = len(ref)
        np.testing.assert_array_equal(c["offsets"][:], [0, n, 2 * n])
        for e in range(2):
            rows = sorted(range(e * n, (e + 1) * n), key=lambda k: tuple(c["geom"][k]))
            for k, rc, fr in zip(rows, ref, forces):
                np.testing.assert_array_equal(c["geom"][k], rc.geom)
                np.testing.assert_array_equal(c["body"][k], mjm.geom_bodyid[rc.geom])
                np.testing.assert_allclose(c["position"][k], rc.pos, rtol=0, atol=1e-9)
                np.testing.assert_allclose(c["normal"][k], rc.frame[:3], rtol=0, atol=1e-9)
                assert abs(c["penetration"][k] + rc.dist) <= 1e-9
                np.testing.assert_allclose(c["force"][k], fr, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(fr).max()))


def test_contact_overflow_names_step_env_and_option(scene, tmp_path):
    out = tmp_path / "o.h5"
    p = rigidsim("run", scene, "--steps", 0, "--keyframe", "low", "--record", "qpos,contacts", "--options", COMPAT,
                 "--set", "max_contacts=2", "--out", out, "--quiet")
    text = assert_clean_error(p, 1)
    assert "step 0" in text and "env 0" in text and "max_contacts" in text
    # no frame was finished: the file it names holds the model alone, 0 frames, complete=false
    assert str(out) in text and "complete=false" in text
    with h5py.File(out, "r") as f:
        assert not f.attrs["complete"] and f.attrs["n_frames"] == 0 and f["qpos"].shape[0] == 0


@pytest.mark.parametrize("name", ["boxes27", "sphere_bin", "falling_objects"])
def test_bundled_contact_scenes_run_by_name(name, tmp_path):
    """The bundled contact scenes load through our MJCF loader and record frame 0's contacts by name, as many
    per env as MuJoCo's mj_forward finds."""
    out = tmp_path / "o.h5"
    p = rigidsim("run", name, "--steps", 0, "--envs", 2, "--options", COMPAT, "--out", out, "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    mjm = mujoco.MjModel.from_xml_path(str(ROOT / "scenes" / f"{name}.xml"))
    d = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, d)
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["contacts/offsets"][:], [0, d.ncon, 2 * d.ncon])
