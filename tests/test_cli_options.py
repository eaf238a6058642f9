"""No validated option is silently ignored: through the real command line, an option the engine cannot honour
refuses the run naming it; an option that only matters with contacts is accepted while the scene has none."""

from __future__ import annotations

import h5py

from tests.cli_util import assert_clean_error, rigidsim


def test_option_the_engine_cannot_honour_refuses_the_run(tmp_path):
    out = tmp_path / "t.h5"
    p = rigidsim("run", "pendulum", "--steps", "5", "--out", out, "--set", "use_hibernation=true")
    text = assert_clean_error(p)
    assert "not supported yet: option use_hibernation=true" in text
    assert not out.exists()
    p = rigidsim("inspect", "pendulum", "--set", "use_hibernation=true")
    assert p.returncode == 0 and "option use_hibernation=true" in p.stdout


def test_contact_options_are_accepted_without_contacts_and_refused_with_them(tmp_path):
    out = tmp_path / "t.h5"
    sets = ["--set", "box_box_detection=true", "--set", "max_contacts=4", "--set", "use_gjk_collision=true"]
    p = rigidsim("run", "pendulum", "--steps", "3", "--out", out, "--quiet", *sets)
    assert p.returncode == 0, p.stderr
    with h5py.File(out) as f:
        assert bool(f.attrs["complete"]) and "box_box_detection: true" in f.attrs["options_yaml"]
    p = rigidsim("run", "falling_objects", "--steps", "3", "--out", tmp_path / "f.h5", *sets)
    text = assert_clean_error(p)
    assert "not supported yet: contacts (" in text
