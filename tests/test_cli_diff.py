"""`rigidsim diff A.h5 B.h5` through the real command line.

Most files are written here with TrajectoryWriter (the bundled pendulum's model, synthetic frames and
contacts; no kernel compile), then a copy is changed at a known place and the report must name exactly
that field, frame, env and value. Three real runs (`rigidsim run pendulum`, one with `--set dt=0.001`)
check the command on files the engine wrote.
"""

from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest
import yaml

from tests.cli_util import assert_clean_error, rigidsim

T, B, DT = 6, 2, 0.002


@pytest.fixture(scope="module")
def model():
    from rigidsim.loaders import load_scene

    return load_scene("pendulum")


@pytest.fixture(scope="module")
def options_yaml(model):
    from rigidsim import options as opts

    return opts.to_yaml(opts.resolve(model))


def synth(model, T=T, B=B, seed=0):
    """Frames of T x B envs with values in [-1, 1], and 3 contacts per (frame, env): two of geom pair (0, 1)
    at distinct points and one of pair (1, 2)."""
    rng = np.random.default_rng(seed)
    u = lambda *s: rng.uniform(-1.0, 1.0, s)  # noqa: E731
    n = T * B * 3
    geom = np.tile([[0, 1], [0, 1], [1, 2]], (T * B, 1)).astype(np.int32)
    return {"time": np.arange(T) * DT, "qpos": u(T, B, model.nq), "qvel": u(T, B, model.nv),
            "qacc": u(T, B, model.nv), "xpos": u(T, B, model.nbody, 3), "xquat": u(T, B, model.nbody, 4),
            "contacts": {"count": np.full((T, B), 3), "geom": geom, "body": geom.copy(), "position": u(n, 3),
                         "normal": u(n, 3), "penetration": u(n), "force": u(n, 3)}}


def write(path, model, options_yaml, data, *, record=("qpos", "qvel", "xpos", "xquat", "contacts"),
          complete=True, n_steps=None, float_dtype=np.float64, frames=None):
    """Write `data` (the first `frames` frames of it) with the project's writer."""
    from rigidsim.loaders import resolve_scene
    from rigidsim.trajectory import TrajectoryWriter

    Tn, Bn = data["qpos"].shape[:2]
    frames = Tn if frames is None else frames
    w = TrajectoryWriter(path, model, scene="pendulum", scene_path=resolve_scene("pendulum"),
                         options_yaml=options_yaml, dt=DT, n_envs=Bn, n_steps=Tn - 1 if n_steps is None else n_steps,
                         every=1, record=record, float_dtype=float_dtype,
                         extra_attrs={"seed": np.int64(0), "precision": np.int64(64), "backend": "cpu"})
    c = data["contacts"]
    rows = int(c["count"][:frames].sum())
    contacts = {k: (v[:frames] if k == "count" else v[:rows]) for k, v in c.items()}
    w.add_block(data["time"][:frames], {k: data[k][:frames] for k in record if k != "contacts"}, contacts)
    w.close(complete)
    return path


@pytest.fixture()
def data(model):
    return synth(model)


@pytest.fixture()
def base(tmp_path, model, options_yaml, data):
    return write(tmp_path / "a.h5", model, options_yaml, data)


def copy(src, dst):
    shutil.copy(src, dst)
    return dst


def diff_json(a, b, *args):
    """Run `rigidsim diff A B --json -`: (exit code, the report)."""
    p = rigidsim("diff", a, b, *args, "--json", "-")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    rep = json.loads(p.stdout)
    assert rep["schema"] == "rigidsim-diff" and rep["schema_version"] == 1
    assert rep["exit_code"] == p.returncode and rep["verdict"] == ("equal" if p.returncode == 0 else "differ")
    return p.returncode, rep


def by_name(rep):
    return {f["name"]: f for f in rep["fields"]}


# ---------------------------------------------------------------------------------------------- equal
def test_a_file_with_itself_is_equal(base):
    p = rigidsim("diff", base, base)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "EQUAL within tolerance" in p.stdout
    # piped: plain text, no table drawing
    assert not set("┃│━─") & set(p.stdout)
    code, rep = diff_json(base, base)
    assert code == 0 and rep["reasons"] == [] and rep["first_frame"] is None
    assert set(by_name(rep)) == {"time", "qpos", "qvel", "xpos", "xquat", "model"}
    assert all(f["status"] == "equal" and f["max_abs"] == 0 and f["n_beyond"] == 0 for f in rep["fields"])
    c = rep["contacts"]
    assert c["status"] == "equal" and c["matched"] == T * B * 3 and c["unmatched_a"] == c["unmatched_b"] == 0


# ---------------------------------------------------------------------------------------------- one value
@pytest.mark.parametrize("name,index", [("qpos", (3, 1, 0)), ("xpos", (2, 0, 1, 2)), ("time", (4,))])
def test_one_changed_value_is_named_at_its_frame_and_env(tmp_path, base, name, index):
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        old = float(f[name][index])
        f[name][index] = old + 1e-3
        new = float(f[name][index])
    code, rep = diff_json(base, b)
    assert code == 1
    fields = by_name(rep)
    r = fields[name]
    assert r["status"] == "differ" and r["n_beyond"] == 1
    assert r["first"]["frame"] == index[0]
    assert r["first"]["env"] == (index[1] if len(index) > 1 else None)
    assert r["first"]["index"] == list(index[2:])
    assert r["first"]["a"] == old and r["first"]["b"] == new
    assert r["first"]["time"] == index[0] * DT  # A's time of that frame
    assert r["max_abs"] == abs(new - old)
    assert r["max_rel"] == abs(new - old) / abs(new)
    assert rep["first_frame"] == index[0]
    assert all(f["status"] == "equal" for n, f in fields.items() if n != name)
    assert rep["contacts"]["status"] == "equal"


def test_tolerances_default_and_per_field(tmp_path, base):
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        old = float(f["qpos"][3, 1, 0])
        f["qpos"][3, 1, 0] = old + 1e-3
        new = float(f["qpos"][3, 1, 0])
    d = abs(new - old)
    assert diff_json(base, b, "--atol", f"qpos={d * 1.01!r}")[0] == 0
    assert diff_json(base, b, "--atol", repr(d * 1.01))[0] == 0
    assert diff_json(base, b, "--atol", f"qpos={d * 0.99!r}")[0] == 1
    code, rep = diff_json(base, b, "--atol", f"qvel={d * 1.01!r}")  # another field's tolerance does not help
    assert code == 1 and by_name(rep)["qpos"]["atol"] == 0 and by_name(rep)["qvel"]["atol"] == d * 1.01
    rel = d / abs(new)  # |a - b| > atol + rtol*|b|, b being B's value
    assert diff_json(base, b, "--rtol", f"qpos={rel * 1.01!r}")[0] == 0
    code, rep = diff_json(base, b, "--rtol", f"qpos={rel * 0.99!r}")
    assert code == 1 and rep["tolerance"]["fields"]["qpos"]["rtol"] == rel * 0.99


# ---------------------------------------------------------------------------------------------- attributes
def test_a_changed_option_is_named(tmp_path, base, options_yaml):
    b = copy(base, tmp_path / "b.h5")
    opts = yaml.safe_load(options_yaml)
    assert opts["dt"] == DT
    opts["dt"] = 0.001
    with h5py.File(b, "r+") as f:
        f.attrs["options_yaml"] = yaml.safe_dump(opts, sort_keys=False)
        f.attrs["dt"] = 0.001
    code, rep = diff_json(base, b)
    assert code == 1
    assert rep["options"] == [{"name": "dt", "a": DT, "b": 0.001}]
    assert {a["name"]: a["affects_verdict"] for a in rep["attributes"]} == {"options_yaml": True, "dt": True}
    assert "option dt: 0.002 vs 0.001" in rep["reasons"]
    assert all(f["status"] == "equal" for f in rep["fields"]) and rep["first_frame"] is None
    p = rigidsim("diff", base, b)
    assert p.returncode == 1 and "dt: 0.002 | 0.001" in p.stdout and "DIFFER" in p.stdout


def test_the_same_options_written_otherwise_are_equal(tmp_path, base, options_yaml):
    """options_yaml is compared option by option, not as text."""
    b = copy(base, tmp_path / "b.h5")
    opts = yaml.safe_load(options_yaml)
    with h5py.File(b, "r+") as f:
        f.attrs["options_yaml"] = yaml.safe_dump(dict(reversed(list(opts.items()))), default_flow_style=False)
    assert diff_json(base, b)[0] == 0


def test_rigidsim_version_alone_is_a_note(tmp_path, base):
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        f.attrs["rigidsim_version"] = "9.9.9"
    code, rep = diff_json(base, b)
    assert code == 0
    from rigidsim import __version__

    assert rep["attributes"] == [{"name": "rigidsim_version", "a": __version__, "b": "9.9.9", "affects_verdict": False}]
    assert any("rigidsim_version" in n for n in rep["notes"])


def test_a_scene_hash_alone_makes_a_difference(tmp_path, base):
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        f.attrs["scene_sha256"] = "0" * 64
    code, rep = diff_json(base, b)
    assert code == 1 and [a["name"] for a in rep["attributes"]] == ["scene_sha256"]


def test_a_changed_model_array(tmp_path, base):
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        old = float(f["model/body_mass"][1])
        f["model/body_mass"][1] = 2 * old
    code, rep = diff_json(base, b)
    m = by_name(rep)["model"]
    assert code == 1 and m["status"] == "differ"
    assert [a["name"] for a in m["arrays"]] == ["body_mass"]
    assert m["first"] == {"array": "body_mass", "index": [1], "a": old, "b": 2 * old}
    assert diff_json(base, b, "--fields", "qpos,contacts")[0] == 0  # --fields leaves the model out


# ---------------------------------------------------------------------------------------------- shapes
def test_different_frame_counts_and_an_incomplete_file(tmp_path, model, options_yaml, data, base):
    """B stopped after 4 of 6 frames (complete = false): reported as incomplete, the 4 common frames compared."""
    b = write(tmp_path / "b.h5", model, options_yaml, data, complete=False, frames=4)
    code, rep = diff_json(base, b)
    assert code == 1
    assert rep["a"]["truncated"] is False and rep["a"]["complete"] is True and rep["a"]["n_frames"] == T
    assert rep["b"] == {**rep["b"], "truncated": True, "complete": False, "n_frames": 4, "expected_frames": T}
    assert "B is incomplete and the other file is complete" in rep["reasons"]
    for name in ("time", "qpos", "qvel", "xpos", "xquat"):
        f = by_name(rep)[name]
        assert f["status"] == "differ" and f["frames_compared"] == 4 and f["n_beyond"] == 0 and f["first"] is None
        assert f"frames differ: A has {T}, B has 4" in f["notes"][0]
    c = rep["contacts"]
    assert c["status"] == "differ" and c["frames_compared"] == 4 and c["matched"] == 4 * B * 3
    assert rep["first_frame"] is None  # the common frames agree
    p = rigidsim("diff", base, b)
    assert p.returncode == 1 and "INCOMPLETE (4 of 6 frames)" in p.stdout
    # an incomplete file against itself: equal, and still reported as incomplete
    code, rep = diff_json(b, b)
    assert code == 0 and rep["a"]["truncated"] is True
    assert any("incomplete" in n for n in rep["notes"])


def test_different_envs(tmp_path, model, options_yaml, data, base):
    wide = synth(model, B=3)
    for k in ("qpos", "qvel", "xpos", "xquat"):
        wide[k][:, :B] = data[k]
    b = write(tmp_path / "b.h5", model, options_yaml, {**wide, "contacts": synth(model, B=3)["contacts"]},
              record=("qpos", "qvel", "xpos", "xquat"))
    code, rep = diff_json(base, b, "--fields", "qpos,qvel,xpos,xquat")
    assert code == 1
    assert {a["name"] for a in rep["attributes"]} == {"n_envs"}
    for name in ("qpos", "qvel", "xpos", "xquat"):
        f = by_name(rep)[name]
        assert f["envs_compared"] == B and f["n_beyond"] == 0 and f["shape_a"][1] == B and f["shape_b"][1] == 3


def test_a_field_only_one_file_holds(tmp_path, model, options_yaml, data, base):
    b = write(tmp_path / "b.h5", model, options_yaml, data,
              record=("qpos", "qvel", "qacc", "xpos", "xquat", "contacts"))
    code, rep = diff_json(base, b)
    assert code == 1 and by_name(rep)["qacc"]["status"] == "only_b" and "qacc: only in B" in rep["reasons"]
    assert diff_json(base, b, "--fields", "qpos,xpos")[0] == 0


def test_float32_against_float64(tmp_path, model, options_yaml, data, base):
    b = write(tmp_path / "b.h5", model, options_yaml, data, float_dtype=np.float32)
    code, rep = diff_json(base, b, "--fields", "qpos")
    q = by_name(rep)["qpos"]
    assert code == 1 and q["dtype_a"] == "float64" and q["dtype_b"] == "float32"
    assert q["max_abs"] == float(np.abs(data["qpos"] - data["qpos"].astype(np.float32)).max())
    # float32 keeps 24 bits: values in [-1, 1] are within 2**-24 of the float64 ones
    assert diff_json(base, b, "--atol", repr(2.0 ** -24))[0] == 0


# ---------------------------------------------------------------------------------------------- contacts
def _rows_of(t, e, B=B):
    s = (t * B + e) * 3
    return s, s + 3


def test_a_changed_contact_force(tmp_path, base):
    b = copy(base, tmp_path / "b.h5")
    r0, _ = _rows_of(4, 1)
    with h5py.File(b, "r+") as f:
        old = f["contacts/force"][r0 + 2].copy()
        f["contacts/force"][r0 + 2, 1] = old[1] + 0.5
        new = f["contacts/force"][r0 + 2].copy()
        geom = f["contacts/geom"][r0 + 2].tolist()
    code, rep = diff_json(base, b)
    assert code == 1 and rep["first_frame"] == 4
    c = rep["contacts"]
    q = c["quantities"]
    assert q["force"]["n_beyond"] == 1 and q["force"]["max_abs"] == abs(new[1] - old[1])
    names = ["rod", "bob", ""]  # the pendulum's geoms; the synthetic pair (1, 2) names a geom it lacks
    assert q["force"]["first"] == {"frame": 4, "env": 1, "time": 4 * DT, "geom": geom,
                                   "geom_names": [names[g] for g in geom], "a": old.tolist(), "b": new.tolist()}
    assert all(q[k]["n_beyond"] == 0 and q[k]["max_abs"] == 0 for k in ("position", "normal", "penetration"))
    assert c["count_mismatches"] == 0 and c["unmatched_a"] == c["unmatched_b"] == 0
    assert all(f["status"] == "equal" for f in rep["fields"])
    assert diff_json(base, b, "--atol", "contacts.force=0.6")[0] == 0
    assert diff_json(base, b, "--atol", "contacts=0.6")[0] == 0
    assert diff_json(base, b, "--atol", "contacts.position=0.6")[0] == 1


def test_a_missing_contact(tmp_path, model, options_yaml, data, base):
    c = data["contacts"]
    count = c["count"].copy()
    count[2, 1] -= 1
    gone = _rows_of(2, 1)[0] + 2  # the (1, 2) contact of frame 2, env 1
    keep = np.arange(len(c["geom"])) != gone
    fewer = {**data, "contacts": {"count": count, **{k: v[keep] for k, v in c.items() if k != "count"}}}
    b = write(tmp_path / "b.h5", model, options_yaml, fewer)
    code, rep = diff_json(base, b)
    assert code == 1 and rep["first_frame"] == 2
    r = rep["contacts"]
    assert r["count_mismatches"] == 1
    assert r["first_count_difference"] == {"frame": 2, "env": 1, "time": 2 * DT, "a": 3, "b": 2}
    assert r["unmatched_a"] == 1 and r["unmatched_b"] == 0 and r["matched"] == T * B * 3 - 1
    assert r["first_unmatched"] == {"frame": 2, "env": 1, "time": 2 * DT, "geom": [1, 2], "geom_names": ["bob", ""],
                                    "file": "a"}
    assert all(q["n_beyond"] == 0 for q in r["quantities"].values())  # the other contacts still match exactly


def test_contacts_of_one_pair_are_matched_by_position_not_order(tmp_path, model, options_yaml, data, base):
    """Frame 3, env 0 holds two contacts of pair (0, 1); in B they are swapped: the same contacts."""
    c = {k: v.copy() for k, v in data["contacts"].items()}
    r0, _ = _rows_of(3, 0)
    for k in ("position", "normal", "penetration", "force"):
        c[k][[r0, r0 + 1]] = c[k][[r0 + 1, r0]]
    b = write(tmp_path / "b.h5", model, options_yaml, {**data, "contacts": c})
    code, rep = diff_json(base, b)
    assert code == 0 and rep["contacts"]["matched"] == T * B * 3
    # a contact moved closer to its sibling's place is still matched with the nearer one
    c2 = {k: v.copy() for k, v in data["contacts"].items()}
    pa, pb = data["contacts"]["position"][r0], data["contacts"]["position"][r0 + 1]
    c2["position"][r0] = pa + 0.1 * (pb - pa)
    b2 = write(tmp_path / "b2.h5", model, options_yaml, {**data, "contacts": c2})
    code, rep = diff_json(base, b2)
    pos = rep["contacts"]["quantities"]["position"]
    assert code == 1 and pos["n_beyond"] == 1
    assert pos["max_abs"] == float(np.abs(c2["position"][r0] - pa).max())
    assert pos["first"]["frame"] == 3 and pos["first"]["env"] == 0


def test_reading_in_blocks_gives_the_same_report(tmp_path, base, monkeypatch):
    """Big files are read a block of frames at a time: one frame per block finds the same differences."""
    from rigidsim import diff
    from rigidsim.diff import values

    b = copy(base, tmp_path / "b.h5")
    r0, _ = _rows_of(4, 1)
    with h5py.File(b, "r+") as f:
        f["qpos"][4, 1, 0] += 1e-3
        f["qvel"][5, 0, 0] += 1e-3
        f["contacts/force"][r0 + 1, 0] += 1e-3
    whole = diff.diff_files(str(base), str(b)).to_dict()
    monkeypatch.setattr(values, "BLOCK_BYTES", 8)
    monkeypatch.setattr(values, "CONTACT_ROWS", 1)
    blocks = diff.diff_files(str(base), str(b)).to_dict()
    assert blocks == whole
    assert whole["first_frame"] == 4 and by_name(whole)["qvel"]["first"]["frame"] == 5
    assert whole["contacts"]["quantities"]["force"]["first"]["frame"] == 4


# ---------------------------------------------------------------------------------------------- bad input
def test_bad_input_exits_2_naming_the_file(tmp_path, base):
    text = tmp_path / "notes.txt"
    text.write_text("not hdf5\n")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.zeros(3)
    newer = copy(base, tmp_path / "newer.h5")
    with h5py.File(newer, "r+") as f:
        f.attrs["format_version"] = np.int64(99)
    cut = tmp_path / "cut.h5"
    cut.write_bytes(base.read_bytes()[: base.stat().st_size // 2])
    cases = [(tmp_path / "missing.h5", "no such file"), (text, "not an HDF5 file"),
             (other, "not a rigidsim trajectory"), (newer, "format_version 99"), (cut, "truncated")]
    for i, (path, expect) in enumerate(cases):
        for args in ((base, path), (path, base)) if i == len(cases) - 1 else ((base, path),):
            out = assert_clean_error(rigidsim("diff", *args), 2)
            assert str(path) in out and expect in out, out
            assert len(out.strip().splitlines()) == 1, out


@pytest.mark.parametrize("args,expect", [(("--atol", "qpso=1e-9"), "did you mean 'qpos'"),
                                         (("--rtol", "contacts.forse=1"), "did you mean 'contacts.force'"),
                                         (("--fields", "qpos,xqat"), "did you mean 'xquat'"),
                                         (("--fields", "qacc"), "neither file holds qacc"),
                                         (("--atol", "-1"), "non-negative"),
                                         (("--rtol", "qpos=abc"), "non-negative")])
def test_bad_arguments_exit_2(base, args, expect):
    out = assert_clean_error(rigidsim("diff", base, base, *args), 2)
    assert expect in out


def test_rich_tables_on_a_terminal(tmp_path, base):
    """FORCE_COLOR makes rich treat stdout as a terminal: the report is drawn as tables, same verdict."""
    b = copy(base, tmp_path / "b.h5")
    with h5py.File(b, "r+") as f:
        f["qvel"][2, 0, 0] += 1.0
    p = rigidsim("diff", base, b, env={"FORCE_COLOR": "1"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "┃" in p.stdout and "DIFFER (exit 1)" in p.stdout and "first difference at frame 2" in p.stdout


def test_help():
    p = rigidsim("diff", "--help")
    assert p.returncode == 0 and "--atol" in p.stdout and "--json" in p.stdout


# ---------------------------------------------------------------------------------------------- real runs
@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """Three real runs of the swinging pendulum: twice the same command, once with dt halved."""
    d = tmp_path_factory.mktemp("diff_runs")
    cmd = ("run", "pendulum", "--steps", "20", "--envs", "2", "--keyframe", "horizontal", "--quiet")
    out = {}
    for name, extra in (("a", ()), ("b", ()), ("dt", ("--set", "dt=0.001"))):
        p = rigidsim(*cmd, *extra, "--out", d / f"{name}.h5")
        assert p.returncode == 0, p.stdout + p.stderr
        out[name] = d / f"{name}.h5"
    return out


def test_two_runs_of_one_command_are_equal(runs, tmp_path):
    p = rigidsim("diff", runs["a"], runs["b"], "--json", tmp_path / "r.json")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "EQUAL" in p.stdout
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["verdict"] == "equal" and rep["exit_code"] == 0 and rep["attributes"] == []


def test_a_run_with_another_dt_differs_from_frame_1(runs, tmp_path):
    """Frame 0 is the same initial state in both; one step later time is dt (0.002 vs 0.001) and the
    pendulum, released from horizontal, has moved by different amounts: frame 1 is the first to differ."""
    p = rigidsim("diff", runs["a"], runs["dt"], "--json", tmp_path / "r.json")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "dt: 0.002 | 0.001" in p.stdout and "first difference at frame 1" in p.stdout
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["verdict"] == "differ" and rep["first_frame"] == 1
    assert rep["options"] == [{"name": "dt", "a": 0.002, "b": 0.001}]
    f = by_name(rep)
    assert f["time"]["first"]["frame"] == 1 and f["time"]["first"]["a"] == 0.002 and f["time"]["first"]["b"] == 0.001
    with h5py.File(runs["a"]) as fa, h5py.File(runs["dt"]) as fb:
        for name in ("qpos", "qvel"):
            assert f[name]["first"]["frame"] == 1 and f[name]["first"]["env"] == 0
            assert f[name]["first"]["a"] == fa[name][1, 0, 0] and f[name]["first"]["b"] == fb[name][1, 0, 0]
            np.testing.assert_array_equal(fa[name][0], fb[name][0])
