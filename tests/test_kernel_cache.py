"""The kernel cache folder is keyed on the engine's sources: fastcache keys a kernel on its functions' text,
not on the module-level constants it reads, so a changed constant must start a new folder."""

import re
import shutil

from rigidsim.engine import lang, runtime


def _copy_package(tmp_path):
    src = runtime._ENGINE.parent  # the rigidsim package
    dst = tmp_path / "rigidsim"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_changed_layout_constant_changes_the_cache_folder(tmp_path):
    pkg = _copy_package(tmp_path)
    before = runtime.source_key(pkg / "engine")
    assert before == runtime.source_key(runtime._ENGINE)  # a faithful copy hashes the same
    layout = pkg / "engine" / "layout.py"
    text = layout.read_text()
    changed, n = re.subn(r"^NDDOF = (\d+)$", lambda m: f"NDDOF = {int(m.group(1)) + 1}", text, flags=re.M)
    assert n == 1
    layout.write_text(changed)
    assert runtime.source_key(pkg / "engine") != before


def test_changed_model_enum_changes_the_cache_folder(tmp_path):
    pkg = _copy_package(tmp_path)
    before = runtime.source_key(pkg / "engine")
    model = pkg / "model.py"
    model.write_text(model.read_text() + "\n# a change\n")
    assert runtime.source_key(pkg / "engine") != before


def test_cache_folder_names_language_version_and_sources(monkeypatch, tmp_path):
    monkeypatch.setenv("RIGIDSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RIGIDSIM_CPU_THREADS", "3")
    path = runtime.kernel_cache_path()
    assert path.parent == tmp_path
    assert path.name == f"{lang.DIST}-{lang.VERSION}-{runtime.source_key()}-t3"
    assert runtime.kernel_cache_path("gpu").name == f"{lang.DIST}-{lang.VERSION}-{runtime.source_key()}"


def test_prune_keeps_the_most_recent_folders(tmp_path):
    import os
    import time

    folders = []
    for k in range(runtime.KEEP_FOLDERS + 3):
        f = tmp_path / f"quadrants-1.0.0-{k:020d}"
        f.mkdir()
        t = time.time() - 1000 + k
        os.utime(f, (t, t))
        folders.append(f)
    in_use = folders[0]  # the oldest, but in use now
    runtime._prune(tmp_path, in_use)
    left = sorted(p.name for p in tmp_path.iterdir())
    expected = sorted([in_use.name] + [f.name for f in folders[-(runtime.KEEP_FOLDERS - 1):]])
    assert left == expected
