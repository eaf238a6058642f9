"""What the command line says (issue 28, items 8-10), through the real `rigidsim` command:
- `--ctrl` / `--init` given a file that is not a .npy array say what the file is and what it must be;
- `run --help` lists every recordable field and shows flags as flags;
- `rigidsim options` is readable at 80 columns;
- `rigidsim diff` names contacts by the geom names of /model;
- the bundled scenes' descriptions give no stale advice (the contact scenes run to rest with the defaults);
- the first run of a scene says it is compiling kernels and how long it took; a warm run does not.
"""

from __future__ import annotations

import json
import pickle
import re

import h5py
import numpy as np
import pytest

from tests.cli_util import assert_clean_error, rigidsim


# ------------------------------------------------------------------------------------- --ctrl and --init files
def _bad_files(tmp_path):
    """(file, what the message must say it is) for files that numpy.save did not write."""
    csv = tmp_path / "ctrl.csv"
    csv.write_text("0.1,0.2\n0.3,0.4\n")
    txt = tmp_path / "ctrl.txt"
    txt.write_text("0.1\n0.2\n")
    pkl = tmp_path / "ctrl.pkl"
    pkl.write_bytes(pickle.dumps([0.1, 0.2]))
    npz = tmp_path / "ctrl.npz"
    np.savez(npz, ctrl=np.zeros(1))
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cut = tmp_path / "cut.npy"
    np.save(cut, np.zeros(8))
    cut.write_bytes(cut.read_bytes()[:90])
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    return [(csv, "is text (a CSV"), (txt, "is text"), (pkl, "is a Python pickle"), (npz, "is a zip archive"),
            (obj, "holds an array of Python objects"), (cut, "is a damaged .npy file"), (empty, "is empty")]


def test_ctrl_and_init_files_that_are_not_npy_arrays_say_what_they_must_be(tmp_path):
    ctrl = ("--ctrl", "of shape [nu], [N, nu] or [N, B, nu] with nu=1")
    init = ("--init", "of shape [1, 1] or [1, 2]")
    for i, (path, kind) in enumerate(_bad_files(tmp_path)):
        for flag, shape in ((ctrl, init) if i < 2 else (ctrl,)):  # --init: the same reader, checked twice
            out = tmp_path / "o.h5"
            p = rigidsim("run", "pendulum", "--steps", "2", "--out", out, flag, path)
            text = assert_clean_error(p)
            assert "pickle" not in text.replace("is a Python pickle", ""), text  # not numpy's allow_pickle advice
            line = " ".join(p.stderr.split())
            assert f"{flag}: {path} {kind}" in line, line
            assert "it must be a NumPy .npy array of numbers saved with numpy.save" in line and shape in line, line
            assert len(p.stderr.strip().splitlines()) <= 3, p.stderr  # one paragraph (wrapped), not a report
            assert not out.exists()


# ------------------------------------------------------------------------------------------------- run --help
def test_run_help_lists_every_recordable_field_and_shows_flags_as_flags():
    from rigidsim.trajectory import DEFAULT_RECORD, RECORDABLE

    p = rigidsim("run", "--help")
    assert p.returncode == 0, p.stderr
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", p.stdout).split())
    for field in RECORDABLE:
        assert re.search(rf"\b{field}\b", text), field
    assert "default " + ",".join(DEFAULT_RECORD) in text
    assert "<bool>" not in p.stdout
    assert re.search(r"--quiet\s+-q\s+No progress bar", text), text


# ------------------------------------------------------------------------------------ rigidsim options, 80 cols
def test_options_is_readable_at_80_columns(tmp_path):
    from rigidsim.options import SPECS

    cfg = tmp_path / "c.yaml"
    cfg.write_text("iterations: 20\n")
    for args in (("options",), ("options", cfg)):
        p = rigidsim(*args, env={"COLUMNS": "80"})
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        assert all(len(line) <= 80 for line in lines), max(lines, key=len)
        words = set(p.stdout.split())
        for k, spec in SPECS.items():
            assert k in words, k  # every option name whole, on a line of its own
            # its meaning in lines of more than a dozen characters: its first five words on one line
            assert " ".join(spec.help.split()[:5]) in p.stdout, k
    assert re.search(r"^iterations\s+int; default 50; in the file: 20$", p.stdout, re.M), p.stdout


# ------------------------------------------------------------------------------------- diff names the geoms
def _write(path, name, model, force):
    """A one-frame, one-env file of bundled scene `name` with contacts between geoms (0, 1), of this force,
    and (0, 5)."""
    from rigidsim import options as opts
    from rigidsim.loaders import resolve_scene
    from rigidsim.trajectory import TrajectoryWriter

    w = TrajectoryWriter(path, model, scene=name, scene_path=resolve_scene(name),
                         options_yaml=opts.to_yaml(opts.resolve(model)), dt=0.002, n_envs=1, n_steps=0, every=1,
                         record=("qpos", "contacts"),
                         extra_attrs={"seed": np.int64(0), "precision": np.int64(64), "backend": "cpu"})
    geom = np.array([[0, 1], [0, 5]], np.int32)
    w.add_block(np.zeros(1), {"qpos": np.zeros((1, 1, model.nq))},
                {"count": np.array([[2]]), "geom": geom, "body": geom.copy(), "position": np.zeros((2, 3)),
                 "normal": np.tile([0.0, 0.0, 1.0], (2, 1)), "penetration": np.zeros(2),
                 "force": np.array([force, [0.0, 0.0, 2.0]])})
    w.close(True)
    return path


def test_diff_names_contacts_by_their_geom_names(tmp_path):
    """sphere_bin's geom 0 is 'floor', 1 'wall0', 5 an unnamed sphere: a changed force of the (0, 1) contact is
    reported as floor/wall0 with the indices; a missing (0, 5) contact as floor/#5."""
    from rigidsim.loaders import load_scene

    model = load_scene("sphere_bin")
    assert model.names["geom"][:2] == ["floor", "wall0"] and model.names["geom"][5] == ""
    a = _write(tmp_path / "a.h5", "sphere_bin", model, [0.0, 0.0, 1.0])
    b = _write(tmp_path / "b.h5", "sphere_bin", model, [0.0, 0.0, 1.5])
    p = rigidsim("diff", a, b)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "floor/wall0 (geoms 0, 1)" in p.stdout, p.stdout
    p = rigidsim("diff", a, b, "--json", "-")
    first = json.loads(p.stdout)["contacts"]["quantities"]["force"]["first"]
    assert first["geom"] == [0, 1] and first["geom_names"] == ["floor", "wall0"]
    with h5py.File(b, "r+") as f:  # B loses its (0, 5) contact: a count difference and an unmatched row of A
        f["contacts/offsets"][1] = 1
    p = rigidsim("diff", a, b)
    assert p.returncode == 1 and "floor/#5 (geoms 0, 5) in A" in p.stdout, p.stdout


# -------------------------------------------------------------------------------------- scene descriptions
def _advice(desc: str):
    """The KEY=VALUE option settings a description tells the user to run with."""
    from rigidsim.options import SPECS

    return re.findall(r"\b(" + "|".join(SPECS) + r")\s*=\s*(\S+)", desc)


def test_a_description_that_advises_an_option_names_a_scene_that_needs_it():
    """A description may only advise an option (`set KEY=VALUE`) for a scene that `inspect` says cannot run
    without it: advice for what runs with the defaults is stale."""
    p = rigidsim("scenes")
    assert p.returncode == 0, p.stderr
    from rigidsim.bundled import describe, scene_files

    for path in scene_files():
        name, desc = describe(path)
        assert desc and name in p.stdout, name
        if _advice(desc):
            q = rigidsim("inspect", name)
            assert q.returncode == 0 and "nothing: this scene runs" not in q.stdout, (name, desc)


@pytest.mark.parametrize("name, steps", [("falling_objects", 800), ("sphere_bin", 1500)])
def test_contact_scenes_run_to_rest_with_the_default_options(tmp_path, name, steps):
    """What the two contact scenes' descriptions say: with the default options (contacts on,
    max_collision_pairs 150) they complete and their bodies come to rest on the plane."""
    from rigidsim.bundled import describe, find_scene

    desc = describe(find_scene(name))[1]
    assert "to rest" in desc and not _advice(desc), desc
    out = tmp_path / "o.h5"
    p = rigidsim("run", name, "--steps", steps, "--every", 100, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    with h5py.File(out) as f:
        assert bool(f.attrs["complete"])
        assert np.abs(f["qvel"][-1]).max() < 1e-6  # at rest
        assert np.diff(f["contacts/offsets"][:])[-1] > 0  # on contacts
        assert (f["xpos"][-1, 0, 1:, 2] > 0.0).all()  # above the plane


# ------------------------------------------------------------------------------------- compiling kernels
def test_first_run_says_it_compiles_and_a_warm_run_does_not(tmp_path):
    """With an empty kernel cache the first run says it is compiling the scene's kernels (stderr is not a
    terminal: plain lines) and how long it took; the second run, from the cache, says nothing of it."""
    env = {"RIGIDSIM_CACHE_DIR": str(tmp_path / "cache")}
    args = ("run", "pendulum", "--steps", "3", "--out", tmp_path / "p.h5")
    p = rigidsim(*args, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert lines[0] == "rigidsim: compiling kernels for this scene (first use only)...", p.stderr
    m = re.fullmatch(r"rigidsim: compiled the kernels in (\d+\.\d) s \(cached for the next runs\)", lines[1])
    assert m, p.stderr
    build = float(re.search(r"engine build (\d+\.\d) s", p.stderr).group(1))
    assert 0.0 < float(m.group(1)) <= build + 0.05  # the compile is part of the build
    assert any((tmp_path / "cache").rglob("*")), "the kernels were cached"
    p = rigidsim(*args, env=env)
    assert p.returncode == 0, p.stderr
    assert "compiling" not in p.stderr and "compiled" not in p.stderr and p.stderr.startswith("wrote "), p.stderr
