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


def test_contact_options_are_accepted_with_and_without_contacts(tmp_path):
    """Genesis's collision options run on a scene without contacts and on one with them; a capacity too
    small for the contacts stops the run naming the option."""
    out = tmp_path / "t.h5"
    sets = ["--set", "box_box_detection=true", "--set", "use_gjk_collision=true"]
    p = rigidsim("run", "pendulum", "--steps", "3", "--out", out, "--quiet", *sets, "--set", "max_contacts=4")
    assert p.returncode == 0, p.stderr
    with h5py.File(out) as f:
        assert bool(f.attrs["complete"]) and "box_box_detection: true" in f.attrs["options_yaml"]
    p = rigidsim("run", "falling_objects", "--steps", "3", "--out", tmp_path / "f.h5", "--quiet", *sets)
    assert p.returncode == 0, p.stderr
    p = rigidsim("run", "falling_objects", "--steps", "300", "--out", tmp_path / "g.h5", *sets,
                 "--set", "max_contacts=1")
    text = assert_clean_error(p, 1)
    assert "max_contacts=1" in text and "env 0" in text
