"""The compiled-model cache (`rigidsim.loaders.model_cache`): a cached Model is field-equal to a fresh compile;
changing any file the compile read (the scene, an include, a mesh) or a path it looked for recompiles;
corrupt entries are ignored and replaced; RIGIDSIM_MODEL_CACHE=0 turns it off; concurrent writers leave one
whole entry. Every test uses its own cache folder (RIGIDSIM_CACHE_DIR)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rigidsim.loaders as L
from rigidsim.errors import InputError
from rigidsim.loaders import model_cache
from rigidsim.loaders.inputs import PACKAGE_PATH_ENV
from tests.cli_util import MODELS, ROOT

SCENES = sorted(str(p) for p in (ROOT / "scenes").iterdir() if p.suffix in (".xml", ".urdf"))
SCENES += [str(ROOT / "scenes" / "third_party" / "dm_control" / "humanoid.xml")]
PANDA = MODELS / "menagerie" / "franka_emika_panda" / "scene.xml"
URDF_PKG = ROOT / "tests" / "data" / "urdf"
COMPILE = L._load  # the compile itself, before `compiles` counts it


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("RIGIDSIM_CACHE_DIR", str(d))
    monkeypatch.delenv(model_cache.ENV, raising=False)
    return d / "models"


@pytest.fixture
def compiles(monkeypatch):
    """The number of compiles `load_scene` has run (a cache hit runs none)."""
    count = [0]
    real = L._load

    def counted(scene, path):
        count[0] += 1
        return real(scene, path)

    monkeypatch.setattr(L, "_load", counted)
    return count


def fresh(scene) -> "L.Model":
    """A compile that neither reads nor writes the cache."""
    with np.errstate(all="ignore"):
        return COMPILE(scene, L.resolve_scene(str(scene)))


def assert_field_equal(a, b):
    assert a.source == b.source
    assert a.sizes == b.sizes and all(type(v) is int for v in b.sizes.values())
    assert a.names == b.names
    assert sorted(a.arrays) == sorted(b.arrays)
    for k, x in a.arrays.items():
        y = b.arrays[k]
        assert (x.dtype, x.shape) == (y.dtype, y.shape), k
        assert x.tobytes() == y.tobytes(), k  # bit-equal: nan and -0.0 too
    for part in ("opt", "stat"):
        pa, pb = getattr(a, part), getattr(b, part)
        assert type(pa) is type(pb)
        for f in dataclasses.fields(pa):
            va, vb = getattr(pa, f.name), getattr(pb, f.name)
            assert repr(va) == repr(vb) and type(va) is type(vb), (part, f.name)
            if isinstance(va, tuple):
                assert [type(x) for x in va] == [type(x) for x in vb], (part, f.name)


@pytest.mark.parametrize("scene", SCENES + ([str(PANDA)] if PANDA.exists() else []), ids=lambda s: Path(s).name)
def test_cached_model_is_field_equal(scene, cache_dir, compiles):
    ref = fresh(scene)
    first = L.load_scene(scene)
    assert compiles[0] == 1 and len(list(cache_dir.glob("*.npz"))) == 1
    assert_field_equal(ref, first)
    again = L.load_scene(scene)
    assert compiles[0] == 1, "the second load is a cache hit"
    assert_field_equal(ref, again)
    again.arrays["body_mass"][:] = -1.0  # a caller changing its Model changes no later load
    assert_field_equal(ref, L.load_scene(scene))


def test_bundled_name_and_relative_path_share_the_entry(cache_dir, compiles, monkeypatch):
    L.load_scene("pendulum")
    monkeypatch.chdir(ROOT / "scenes")
    m = L.load_scene("pendulum.xml")
    assert compiles[0] == 1 and m.source == "pendulum.xml"
    assert len(list(cache_dir.glob("*.npz"))) == 1


def _scene_with_include_and_mesh(d: Path) -> Path:
    (d / "meshes").mkdir(parents=True)
    (d / "meshes" / "tet.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    (d / "parts.xml").write_text('<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint/>'
                                 '<geom type="mesh" mesh="tet"/></body></worldbody></mujoco>')
    scene = d / "scene.xml"
    scene.write_text('<mujoco><compiler meshdir="meshes"/><asset><mesh name="tet" file="tet.obj"/></asset>'
                     '<include file="parts.xml"/></mujoco>')
    return scene


@pytest.mark.parametrize("change", ["scene", "include", "mesh"])
def test_a_changed_input_file_recompiles(tmp_path, compiles, change):
    scene = _scene_with_include_and_mesh(tmp_path / "s")
    L.load_scene(scene)
    L.load_scene(scene)
    assert compiles[0] == 1
    target = {"scene": scene, "include": tmp_path / "s" / "parts.xml",
              "mesh": tmp_path / "s" / "meshes" / "tet.obj"}[change]
    old, new = {"scene": ("<compiler", '<option timestep="0.001"/><compiler'),
                "include": ('pos="0 0 1"', 'pos="0 0 2"'), "mesh": ("v 0 0 1", "v 0 0 2")}[change]
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new))
    m = L.load_scene(scene)
    assert compiles[0] == 2
    assert_field_equal(fresh(scene), m)
    L.load_scene(scene)
    assert compiles[0] == 2, "the rewritten entry is used"


def test_touching_a_file_keeps_the_entry(tmp_path, compiles):
    """The key is the files' bytes, not their times: a touched file is the same input."""
    scene = _scene_with_include_and_mesh(tmp_path / "s")
    L.load_scene(scene)
    for p in (scene, tmp_path / "s" / "meshes" / "tet.obj"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns + 10 ** 9, st.st_mtime_ns + 10 ** 9))
    L.load_scene(scene)
    assert compiles[0] == 1


def test_a_removed_input_file_fails_as_before(tmp_path, compiles):
    scene = _scene_with_include_and_mesh(tmp_path / "s")
    L.load_scene(scene)
    (tmp_path / "s" / "meshes" / "tet.obj").unlink()
    with pytest.raises(InputError, match="tet.obj"):
        L.load_scene(scene)


def test_a_path_that_appears_recompiles(tmp_path, compiles, monkeypatch):
    """A URDF package is searched along RIGIDSIM_PACKAGE_PATH: a mesh appearing in an earlier folder is
    another input, though no file the compile read has changed."""
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(URDF_PKG / "rigidsim_pkg", second / "rigidsim_pkg")
    urdf = tmp_path / "robot" / "r.urdf"
    urdf.parent.mkdir()
    urdf.write_text((URDF_PKG / "package_robot.urdf").read_text())
    monkeypatch.setenv(PACKAGE_PATH_ENV, os.pathsep.join([str(first), str(second)]))
    before = L.load_scene(urdf)
    wedge = second / "rigidsim_pkg" / "meshes" / "wedge.obj"
    (first / "rigidsim_pkg" / "meshes").mkdir(parents=True)
    lines = [" ".join(["v"] + [str(2 * float(x)) for x in ln.split()[1:]]) if ln.startswith("v ") else ln
             for ln in wedge.read_text().splitlines()]
    (first / "rigidsim_pkg" / "meshes" / "wedge.obj").write_text("\n".join(lines) + "\n")
    after = L.load_scene(urdf)
    assert compiles[0] == 2
    assert_field_equal(fresh(urdf), after)
    assert not np.array_equal(before.mesh_vert, after.mesh_vert)


def test_package_path_setting_is_part_of_the_key(tmp_path, compiles, monkeypatch):
    pkgs = tmp_path / "pkgs"
    shutil.copytree(URDF_PKG / "rigidsim_pkg", pkgs / "rigidsim_pkg")
    urdf = tmp_path / "robot" / "r.urdf"
    urdf.parent.mkdir()
    urdf.write_text((URDF_PKG / "package_robot.urdf").read_text())
    monkeypatch.setenv(PACKAGE_PATH_ENV, str(pkgs))
    L.load_scene(urdf)
    monkeypatch.setenv(PACKAGE_PATH_ENV, str(pkgs / "rigidsim_pkg"))
    L.load_scene(urdf)
    assert compiles[0] == 2


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other key"])
def test_a_corrupt_entry_is_ignored_and_replaced(cache_dir, compiles, damage):
    scene = SCENES[0]
    ref = L.load_scene(scene)
    (entry,) = cache_dir.glob("*.npz")
    data = entry.read_bytes()
    if damage == "other key":  # another scene's entry under this name
        L.load_scene(SCENES[1])
        (other,) = [p for p in cache_dir.glob("*.npz") if p != entry]
        data = other.read_bytes()
    entry.write_bytes({"garbage": b"not a zip file" * 100, "truncated": data[: len(data) // 2], "empty": b"",
                       "other key": data}[damage])
    n = compiles[0]
    assert_field_equal(ref, L.load_scene(scene))
    assert compiles[0] == n + 1
    assert_field_equal(ref, L.load_scene(scene))
    assert compiles[0] == n + 1, "the entry was rewritten whole"


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch, compiles):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("RIGIDSIM_CACHE_DIR", str(blocker))
    assert_field_equal(fresh(SCENES[0]), L.load_scene(SCENES[0]))
    L.load_scene(SCENES[0])
    assert compiles[0] == 2


def test_disabled_by_environment(cache_dir, compiles, monkeypatch):
    L.load_scene(SCENES[0])
    monkeypatch.setenv(model_cache.ENV, "0")
    L.load_scene(SCENES[0])
    L.load_scene(SCENES[1])
    assert compiles[0] == 3, "an existing entry is not read"
    assert len(list(cache_dir.glob("*.npz"))) == 1, "nor a new one written"


def test_errors_are_not_cached(tmp_path, cache_dir, compiles):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><geom type="sphere" size="-1" fromage="1"/></worldbody></mujoco>')
    for _ in range(2):
        with pytest.raises(InputError):
            L.load_scene(bad)
    assert compiles[0] == 2
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


def test_pruned_to_the_most_recently_used(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(model_cache, "MAX_ENTRIES", 2)
    for s in SCENES[:3]:
        L.load_scene(s)
    assert len(list(cache_dir.glob("*.npz"))) == 2
    stale = cache_dir / ".tmp-dead.npz"
    stale.write_bytes(b"left by a writer that died")
    os.utime(stale, (1, 1))
    monkeypatch.setattr(model_cache, "MAX_BYTES", 1)  # only the entry just written stays
    L.load_scene(SCENES[3])
    assert [p.name for p in cache_dir.iterdir()] == [model_cache._entry(Path(SCENES[3]))[0].name]


def test_source_changes_give_another_key(tmp_path, monkeypatch):
    pkg = tmp_path / "rigidsim"
    shutil.copytree(ROOT / "rigidsim" / "loaders", pkg / "loaders")
    for n in ("model.py", "errors.py", "version.py", "cache_paths.py"):
        shutil.copy(ROOT / "rigidsim" / n, pkg / n)
    monkeypatch.setattr(model_cache, "_PKG", pkg)
    model_cache.code_key.cache_clear()
    try:
        k1 = model_cache.code_key()
        model_cache.code_key.cache_clear()
        with open(pkg / "loaders" / "mesh.py", "a") as fh:
            fh.write("\n# a change\n")
        assert model_cache.code_key() != k1
    finally:
        model_cache.code_key.cache_clear()


def test_concurrent_writers_leave_one_whole_entry(tmp_path, cache_dir):
    """Two processes storing the same entry over and over (and reading it) while the other does: each
    write goes to a temporary file renamed over the entry, so every read finds a whole entry or none."""
    scene = SCENES[-1]  # the humanoid: an entry of some size
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from pathlib import Path
        import numpy as np
        import rigidsim.loaders as L
        from rigidsim.loaders import inputs, model_cache
        path = Path({scene!r})
        with inputs.recording() as read:
            m = L._load(str(path), path)
        bad = 0
        for _ in range(25):
            model_cache.store(path, m, read)
            got = model_cache.load(path, str(path))
            bad += got is None or any(got.arrays[k].tobytes() != a.tobytes() for k, a in m.arrays.items())
        sys.exit(1 if bad else 0)
    """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, str(script)], env=env) for _ in range(2)]
    assert [p.wait(timeout=600) for p in procs] == [0, 0]
    assert [p.name for p in cache_dir.iterdir()] == [model_cache._entry(Path(scene))[0].name]
    assert_field_equal(fresh(scene), model_cache.load(Path(scene), scene))


def test_the_cli_loads_through_the_cache():
    """`rigidsim run` (runner), the batch writer and the stage comparer load scenes with load_scene."""
    from rigidsim import batch, runner
    from rigidsim.compare import stages

    assert runner.load_scene is L.load_scene and batch.load_scene is L.load_scene
    assert stages.load_scene is L.load_scene


@pytest.fixture
def hulls(monkeypatch):
    """The number of convex hulls computed (a hull-cache hit computes none)."""
    from rigidsim.loaders import mesh

    count = [0]
    real = mesh.convex_hull

    def counted(*a, **k):
        count[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(mesh, "convex_hull", counted)
    return count


def test_hulls_are_kept_across_xml_edits(tmp_path, cache_dir, compiles, hulls):
    """An edit of the XML compiles the scene again, but the hull graphs of unchanged meshes come from the
    cache; a mesh that changed gets its hull computed."""
    scene = _scene_with_include_and_mesh(tmp_path / "s")
    L.load_scene(scene)
    assert hulls[0] == 1 and len(list((cache_dir / "hulls").glob("*.npz"))) == 1
    scene.write_text(scene.read_text().replace("<compiler", '<option timestep="0.001"/><compiler'))
    m = L.load_scene(scene)
    assert compiles[0] == 2 and hulls[0] == 1
    assert_field_equal(fresh(scene), m)
    (entry,) = (cache_dir / "hulls").glob("*.npz")
    entry.write_bytes(b"corrupt")
    scene.write_text(scene.read_text().replace('timestep="0.001"', 'timestep="0.003"'))
    assert_field_equal(fresh(scene), L.load_scene(scene))
    n = hulls[0]
    mesh_file = tmp_path / "s" / "meshes" / "tet.obj"
    mesh_file.write_text(mesh_file.read_text().replace("v 0 0 1", "v 0 0 3"))
    assert_field_equal(fresh(scene), L.load_scene(scene))
    assert hulls[0] == n + 2  # this load's compile, and the fresh one beside it


def test_hulls_outside_load_scene_are_computed(tmp_path, cache_dir, hulls):
    from rigidsim.loaders.mjcf import load_mjcf

    scene = _scene_with_include_and_mesh(tmp_path / "s")
    L.load_scene(scene)
    n = hulls[0]
    load_mjcf(scene)
    assert hulls[0] == n + 1


@pytest.mark.skipif(not PANDA.exists(), reason="../shared/models is absent")
def test_panda_hulls_from_the_cache_are_field_equal(cache_dir, hulls):
    """Panda's merged-facet hulls (its link5 collision meshes run `_edges_from_ridges`), read back."""
    L.load_scene(PANDA)
    n = hulls[0]
    assert n > 0
    for p in cache_dir.glob("*.npz"):
        p.unlink()  # the Model entry only: the hulls stay
    m = L.load_scene(PANDA)
    assert hulls[0] == n
    assert_field_equal(fresh(PANDA), m)
