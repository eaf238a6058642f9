"""The compiled-model cache: `load_scene` keeps each compiled `Model` on disk and reuses it while nothing
that shaped it has changed (MuJoCo keeps MJB files for the same reason: a scene of many meshes takes
seconds to compile, its hull graphs most of them).

An entry is one ``.npz`` file (numpy arrays and a JSON header, read with ``allow_pickle=False``) under
``<cache root>/models`` (`rigidsim.cache_paths`), named after a hash of

* the scene file's resolved path and the environment the loaders read (`inputs.ENVIRONMENT`:
  ``RIGIDSIM_PACKAGE_PATH``);
* `code_key`: rigidsim's version, a hash of the loaders' and the Model's source files, and the versions
  of numpy, lxml and scipy (whose qhull builds the hull graphs).

Its header lists every file the compile read with the SHA-256 of its bytes and every path it looked for
with whether it was a file (`rigidsim.loaders.inputs`): the entry is used only while each file still has
those bytes and each path gives the same answer, else the scene is compiled again and the entry
rewritten. Entries are written to a temporary file and renamed over the old one, so a reader or a second
writer never sees half a file; an entry that cannot be read is treated as absent. The folder is pruned
to `MAX_ENTRIES` files and `MAX_BYTES`, least recently used first. ``RIGIDSIM_MODEL_CACHE=0`` turns the
cache off. A compile that fails raises as before and leaves nothing behind.

Inside such a compile the convex-hull graphs are kept too (`hull`, under ``<cache root>/models/hulls``),
keyed on the mesh's vertices, ``maxhullvert`` and `code_key`: after an edit of the XML the scene compiles
again, but a mesh whose hull took seconds of qhull runs (`mesh._edges_from_ridges`) is not rebuilt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Tuple

import numpy as np

from rigidsim import model as M
from rigidsim.cache_paths import model_cache_dir
from rigidsim.loaders import inputs as _inputs
from rigidsim.loaders.inputs import ENVIRONMENT, Inputs, unchanged
from rigidsim.version import __version__

ENV = "RIGIDSIM_MODEL_CACHE"  # 0 / off / false / no: neither read nor write entries
FORMAT = 1  # the entry layout below
MAX_ENTRIES = 400
MAX_BYTES = 200 * 2 ** 20
HULL_MAX_ENTRIES = 4000
HULL_MAX_BYTES = 50 * 2 ** 20
STALE_TEMP_S = 3600.0  # a temporary file this old was left by a writer that died

_PKG = Path(__file__).resolve().parents[1]  # rigidsim/


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no")


@functools.lru_cache(maxsize=None)
def code_key() -> str:
    """A hash of what turns the same input files into a Model: the loaders' and the Model's source,
    rigidsim's version, and the libraries that compute parts of it."""
    h = hashlib.sha256()
    files = sorted((_PKG / "loaders").rglob("*.py")) + [_PKG / n for n in (
        "model.py", "errors.py", "version.py", "cache_paths.py")]
    for f in files:
        h.update(str(f.relative_to(_PKG)).encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    from lxml import etree

    h.update(repr((FORMAT, __version__, np.__version__, etree.LXML_VERSION, sys.version_info[:2])).encode())
    h.update(_scipy_stamp())
    return h.hexdigest()


def _scipy_stamp() -> bytes:
    """scipy's version file (found without importing scipy, which a cache hit never needs)."""
    try:
        spec = importlib.util.find_spec("scipy")
        origin = spec.origin if spec is not None else None
        return (Path(origin).parent / "version.py").read_bytes() if origin else b"no scipy"
    except (ImportError, OSError, ValueError):
        return b"scipy version unknown"


def _entry(path: Path):
    """(entry file, the key text its header must repeat) of the scene file `path`."""
    key = json.dumps({"code": code_key(), "scene": str(path.resolve()),
                      "env": {k: os.environ.get(k) for k in ENVIRONMENT}}, sort_keys=True)
    return model_cache_dir() / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".npz"), key


# ----------------------------------------------------------------------------- reading

def load(path: Path, source: str) -> Optional[M.Model]:
    """The cached Model of the scene file `path` (its ``source`` set to `source`), or None: no entry, an
    entry for other inputs, or one that cannot be read."""
    if not enabled():
        return None
    try:
        entry, key = _entry(path)
        with np.load(entry, allow_pickle=False) as z:
            head = json.loads(z["head"].tobytes().decode())
            if head.get("format") != FORMAT or head.get("key") != key:
                return None
            if not unchanged(head["files"], head["probes"]):
                return None
            arrays = {name: z["a." + name] for name in head["arrays"]}
        model = M.Model(sizes={k: int(v) for k, v in head["sizes"].items()}, arrays=arrays,
                        names={k: [str(s) for s in v] for k, v in head["names"].items()},
                        opt=M.ModelOption(**{k: _decode(v) for k, v in head["opt"].items()}),
                        stat=M.ModelStatistic(**{k: _decode(v) for k, v in head["stat"].items()}),
                        source=source)
        model.validate()
        with contextlib.suppress(OSError):
            os.utime(entry)  # recently used: pruned last
        return model
    except Exception:  # noqa: BLE001 - a missing, unreadable, truncated or foreign entry is a miss
        return None


# ----------------------------------------------------------------------------- writing

class _Uncacheable(Exception):
    pass


def store(path: Path, model: M.Model, inputs: Inputs) -> None:
    """Keep `model`, compiled from the scene file `path` out of `inputs`; never raises."""
    if not enabled():
        return
    try:
        entry, key = _entry(path)
        head, arrays = _parts(model)
        head.update(format=FORMAT, key=key, files=inputs.files, probes=inputs.probes)
        blob = np.frombuffer(json.dumps(head, allow_nan=True).encode(), dtype=np.uint8)
        _write(entry, head=blob, **{"a." + k: v for k, v in arrays.items()})
        prune(entry.parent, keep=entry)
    except Exception:  # noqa: BLE001 - a full disk, a read-only home, an odd Model: compile next time
        return


def _write(entry: Path, **arrays) -> None:
    """np.savez to a temporary file beside `entry`, renamed over it: readers see the old file or the new."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, entry)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _parts(model: M.Model):
    """(JSON header, arrays) of a Model; _Uncacheable when it holds anything the header cannot give back
    exactly."""
    if set(vars(model)) != {f.name for f in dataclasses.fields(M.Model)}:
        raise _Uncacheable("the Model carries attributes beyond its fields")
    if any(type(v) is not int for v in model.sizes.values()):
        raise _Uncacheable("a size that is not an int")
    if any(type(s) is not str for v in model.names.values() for s in v):
        raise _Uncacheable("a name that is not a str")
    arrays = {}
    for k, a in model.arrays.items():
        if type(a) is not np.ndarray or a.dtype.hasobject:
            raise _Uncacheable(f"array {k}")
        arrays[k] = a
    head = {"sizes": dict(model.sizes), "names": {k: list(v) for k, v in model.names.items()},
            "arrays": list(arrays),
            "opt": {f.name: _encode(getattr(model.opt, f.name)) for f in dataclasses.fields(model.opt)},
            "stat": {f.name: _encode(getattr(model.stat, f.name)) for f in dataclasses.fields(model.stat)}}
    return head, arrays


def _encode(v: Any) -> Any:
    """A JSON value that `_decode` turns back into `v`, of the same type (tuples, frozensets and numpy
    scalars tagged)."""
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is tuple:
        return {"tuple": [_encode(x) for x in v]}
    if type(v) is list:
        return {"list": [_encode(x) for x in v]}
    if type(v) is frozenset:
        return {"frozenset": sorted((_encode(x) for x in v), key=repr)}
    if isinstance(v, np.generic) and not v.dtype.hasobject:
        return {"numpy": v.dtype.str, "value": v.item()}
    raise _Uncacheable(f"a value of type {type(v).__name__}")


def _decode(v: Any) -> Any:
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(_decode(x) for x in v["tuple"])
        if "list" in v:
            return [_decode(x) for x in v["list"]]
        if "frozenset" in v:
            return frozenset(_decode(x) for x in v["frozenset"])
        return np.dtype(v["numpy"]).type(v["value"])
    return v


def prune(folder: Path, keep: Optional[Path] = None, max_entries: Optional[int] = None,
          max_bytes: Optional[int] = None) -> None:
    """Remove the least recently used entries beyond `max_entries` or `max_bytes` (MAX_ENTRIES, MAX_BYTES;
    never `keep`), and the temporary files of writers that died."""
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    now = time.time()
    entries = []
    for p in folder.iterdir():
        try:
            st = p.stat()
        except OSError:
            continue
        if p.name.startswith(".tmp-"):
            if now - st.st_mtime > STALE_TEMP_S:
                with contextlib.suppress(OSError):
                    p.unlink()
        elif p.suffix == ".npz":
            entries.append((p != keep, -st.st_mtime, st.st_size, p))
    entries.sort(key=lambda e: e[:2])  # `keep` first, then the most recently used
    total = 0
    for i, (_, _, size, p) in enumerate(entries):
        total += size
        if p != keep and (i >= max_entries or total > max_bytes):
            with contextlib.suppress(OSError):
                p.unlink()


# ----------------------------------------------------------------------------- hull graphs

def hull(v: np.ndarray, maxhullvert: int, compute: Callable[[], Tuple[np.ndarray, np.ndarray]]):
    """`compute()`, `mesh.convex_hull`'s (graph, faces) of the vertices `v` with `maxhullvert`: from the
    cache inside a cached compile (`inputs.active`), else computed (and then kept). Outside `load_scene`
    (`load_mjcf`, the tests against MuJoCo) it is always computed."""
    if not (_inputs.active() and enabled()):
        return compute()
    try:
        v = np.ascontiguousarray(v)
        h = hashlib.sha256(f"{code_key()} {maxhullvert} {v.dtype.str} {v.shape}".encode())
        h.update(v.tobytes())
        key = h.hexdigest()
        entry = model_cache_dir() / "hulls" / (key[:32] + ".npz")
    except Exception:  # noqa: BLE001
        return compute()
    got = _read_hull(entry, key)
    if got is not None:
        return got
    graph, faces = compute()
    try:
        _write(entry, key=np.frombuffer(key.encode(), dtype=np.uint8), graph=graph, faces=faces)
        prune(entry.parent, keep=entry, max_entries=HULL_MAX_ENTRIES, max_bytes=HULL_MAX_BYTES)
    except Exception:  # noqa: BLE001 - as for a Model: never an error
        pass
    return graph, faces


def _read_hull(entry: Path, key: str):
    try:
        with np.load(entry, allow_pickle=False) as z:
            if z["key"].tobytes().decode() != key:
                return None
            graph, faces = z["graph"], z["faces"]
        nv, nf = int(graph[0]), int(graph[1])
        if (graph.dtype != np.int32 or faces.dtype != np.int32 or graph.shape != (2 + 3 * nv + 6 * nf,)
                or faces.shape != (nf, 3) or not np.array_equal(graph[2 + 3 * nv + 3 * nf:], faces.ravel())):
            return None
        with contextlib.suppress(OSError):
            os.utime(entry)
        return graph, faces
    except Exception:  # noqa: BLE001 - as for a Model: a miss
        return None
