"""The trajectory file of SPEC.md (HDF5, format_version 1): a streaming writer.

The engine hands over blocks of frames ([n, B, ...] per field); each block is
appended with one dataset write per field to chunked datasets (uncompressed
by default; lzf or gzip on request), as the run goes, so memory does not
grow with the number of steps and no Python runs per frame.
The file is written under a temporary name beside the target and renamed
when closed; an interrupted or failed run still leaves a readable file with
``complete = false`` and every finished frame.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Mapping, Optional, Sequence

import h5py
import numpy as np

from rigidsim.version import __version__
from rigidsim.errors import InputError
from rigidsim.model import Model
from rigidsim.recordable import DEFAULT_RECORD, RECORDABLE  # noqa: F401 (the writer's names too)

FORMAT = "rigidsim-trajectory"
FORMAT_VERSION = 1


# /model arrays of SPEC.md, under MuJoCo's names
MODEL_ARRAYS = (
    "qpos0", "body_parentid", "body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia",
    "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_axis", "jnt_pos", "jnt_range", "jnt_limited",
    "dof_armature", "dof_damping", "dof_frictionloss", "geom_type", "geom_bodyid", "geom_size", "geom_pos",
    "geom_quat", "geom_friction", "geom_contype", "geom_conaffinity", "geom_condim", "geom_solref",
    "geom_solimp", "actuator_gear", "actuator_gainprm", "actuator_biasprm", "actuator_ctrlrange", "eq_type",
    "eq_obj1id", "eq_obj2id", "eq_data",
    # what a viewer needs to draw the scene from the file alone (`rigidsim view`): colours (a geom's own, its
    # material and the material's colour), which mesh or
    # height field a geom uses, the meshes (vertices in the mesh frame; faces index the mesh's own vertices)
    # and the height fields (elevations in [0, 1], row-major, scaled by hfield_size)
    "geom_rgba", "geom_matid", "mat_rgba", "geom_dataid", "mesh_vertadr", "mesh_vertnum", "mesh_vert", "mesh_faceadr", "mesh_facenum",
    "mesh_face", "hfield_size", "hfield_nrow", "hfield_ncol", "hfield_adr", "hfield_data",
)
MODEL_SIZES = ("nq", "nv", "nu", "nbody", "njnt", "ngeom", "neq", "nmesh", "nmeshvert", "nmeshface", "nhfield",
               "nhfielddata", "nmat")
MODEL_NAMES = {"body_names": "body", "joint_names": "jnt", "geom_names": "geom", "actuator_names": "actuator"}

# --compression: HDF5 filters per dataset. "none" (the default) keeps up with the engine; gzip costs about
# 40 MB/s of float64 state per core on data that does not repeat (see benchmarks/bench_record.py)
COMPRESSIONS = {"none": {}, "lzf": dict(compression="lzf", shuffle=True),
                "gzip": dict(compression="gzip", compression_opts=4, shuffle=True)}
DEFAULT_COMPRESSION = "none"
_CHUNK_BYTES = 128 << 10  # target chunk size (measured best of 64 KiB - 1 MiB for none, lzf and gzip)
_CACHE_BYTES = 4 << 20  # per-dataset chunk cache: holds the partly written chunk between two blocks


def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _chunk_rows(row_bytes: int, max_rows: int) -> int:
    """Rows per chunk: about _CHUNK_BYTES, and the run's rows split evenly (HDF5 allocates whole chunks, so the
    last one of a complete run is not mostly empty)."""
    rows = int(max(1, min(max_rows, _CHUNK_BYTES // max(1, row_bytes))))
    n_chunks = -(-max(1, max_rows) // rows)
    return -(-max(1, max_rows) // n_chunks)


def expected_frames(n_steps: int, every: int) -> int:
    """T of SPEC.md: n_steps // every + 1, plus the final state when every does not divide n_steps."""
    return n_steps // every + 1 + (1 if n_steps % every else 0)


def check_out(out: str | Path, flag: str = "--out") -> None:
    """Refuse an output path that cannot be written (InputError naming `flag`: --out, --save), without
    touching an existing file: the folder must exist and take a new file (the writer's temporary file is
    made there and renamed), and an existing file must be writable."""
    out = Path(out)
    parent = out.parent
    if out.is_dir():
        raise InputError(f"{flag} {out} is a directory, expected a file path", where=flag)
    if not parent.exists():
        raise InputError(f"the folder of {flag} {out} does not exist", where=flag)
    if not parent.is_dir():
        raise InputError(f"cannot write {out}: {parent} is not a folder", where=flag)
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError(f"cannot write {out}: the file exists and is read-only; it was left untouched. "
                         f"Choose another path or make it writable.", where=flag)
    probe = parent / f".{out.name}.probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as e:
        raise InputError(f"cannot write {out}: cannot create a file in {parent} ({e.strerror}). "
                         f"Choose a writable path.", where=flag) from None
    os.close(fd)
    os.unlink(probe)


class TrajectoryWriter:
    """Write one run: `add_block` per block of frames, then `close(complete)`."""

    def __init__(self, out: str | Path, model: Model, *, scene: str, scene_path: str | Path, options_yaml: str, dt: float,
                 n_envs: int, n_steps: int, every: int, record: Sequence[str], float_dtype=np.float64,
                 extra_attrs: Optional[Mapping[str, object]] = None, compression: str = DEFAULT_COMPRESSION):
        self.out = Path(out)
        self.tmp = self.out.with_name(f".{self.out.name}.tmp-{os.getpid()}")
        self.record = tuple(record)
        self.B = int(n_envs)
        self.fdt = np.dtype(float_dtype)
        self.frames = 0
        self.n_contacts = 0
        self._filters = COMPRESSIONS[compression]
        self._max_rows = expected_frames(int(n_steps), int(every))
        self._closed = False
        try:
            self.f = h5py.File(self.tmp, "w", libver="earliest", track_order=False, rdcc_nbytes=_CACHE_BYTES)
        except OSError as e:
            raise InputError(f"cannot write {self.out}: cannot create {self.tmp} ({e})", where="--out") from None
        a = self.f.attrs
        a["format"] = FORMAT
        a["format_version"] = np.int64(FORMAT_VERSION)
        a["rigidsim_version"] = __version__
        a["scene"] = str(scene)
        a["scene_sha256"] = sha256_of(scene_path)
        a["options_yaml"] = options_yaml
        a["dt"] = np.float64(dt)
        a["n_envs"] = np.int64(n_envs)
        a["n_steps"] = np.int64(n_steps)
        a["record_every"] = np.int64(every)
        a["complete"] = False
        for k, v in (extra_attrs or {}).items():
            a[k] = v
        self._write_model(model)
        B, fd = self.B, self.fdt
        shapes = {"qpos": (B, model.nq), "qvel": (B, model.nv), "qacc": (B, model.nv), "ctrl": (B, model.nu),
                  "xpos": (B, model.nbody, 3), "xquat": (B, model.nbody, 4), "qfrc_constraint": (B, model.nv)}
        counts = {"ncon": np.int32, "nefc": np.int32, "solver_niter": np.int32, "solver_converged": np.uint8}
        self._mk("time", (), np.float64)
        for name in self.record:
            if name in shapes:
                self._mk(name, shapes[name], fd)
            elif name in counts:
                self._mk(name, (B,), counts[name])
        if "contacts" in self.record:
            g = self.f.create_group("contacts")
            # offsets: B rows per frame
            off = self._mk("contacts/offsets", (), np.int64, max_rows=self._max_rows * B + 1)
            off.resize((1,))
            off[0] = 0
            for name, shape, dt_ in (("geom", (2,), np.int32), ("body", (2,), np.int32), ("position", (3,), fd),
                                     ("normal", (3,), fd), ("penetration", (), fd), ("force", (3,), fd)):
                g.create_dataset(name, shape=(0,) + shape, maxshape=(None,) + shape, dtype=dt_,
                                 chunks=(4096,) + shape, **self._filters)

    # -- setup -------------------------------------------------------------
    def _mk(self, name: str, row_shape, dtype, max_rows: Optional[int] = None):
        """An extendable dataset [0, *row_shape], chunked by whole rows; a zero-size axis (a model with no
        dofs: qpos [T, B, 0]) is left unlimited, as HDF5 wants a chunk of at least 1 on every axis."""
        row_shape = tuple(int(x) for x in row_shape)
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        rows = _chunk_rows(row_bytes, max_rows or self._max_rows)
        return self.f.create_dataset(name, shape=(0,) + row_shape, maxshape=(None,) + tuple(x or None for x in row_shape),
                                     dtype=dtype, chunks=(rows,) + tuple(max(1, x) for x in row_shape),
                                     **self._filters)

    def _write_model(self, model: Model) -> None:
        g = self.f.create_group("model")
        for s in MODEL_SIZES:
            g.attrs[s] = np.int64(getattr(model, s))
        str_dt = h5py.string_dtype("utf-8")
        for ds, kind in MODEL_NAMES.items():
            g.create_dataset(ds, data=np.array(list(model.names.get(kind, [])), dtype=object), dtype=str_dt)
        for name in MODEL_ARRAYS:
            g.create_dataset(name, data=np.asarray(model.arrays[name]))

    def write_init(self, qpos: np.ndarray, qvel: np.ndarray, source: str) -> None:
        """/init: the state each env started from, qpos [B, nq] and qvel [B, nv] (before any frame is
        written, so an interrupted run has it too); `source` says what it was made from, and the reset
        noise options are in options_yaml."""
        g = self.f.create_group("init")
        g.attrs["source"] = source
        g.create_dataset("qpos", data=np.asarray(qpos, dtype=self.fdt).reshape(self.B, -1))
        g.create_dataset("qvel", data=np.asarray(qvel, dtype=self.fdt).reshape(self.B, -1))

    # -- frames ------------------------------------------------------------
    def _append(self, key: str, data: np.ndarray) -> None:
        """One dataset write: resize, then write the rows (none for a zero-size row)."""
        ds = self.f[key]
        n0 = ds.shape[0]
        ds.resize((n0 + data.shape[0],) + ds.shape[1:])
        if data.size:
            ds[n0:] = data

    def add_block(self, time: np.ndarray, fields: Mapping[str, np.ndarray],
                  contacts: Optional[Mapping[str, np.ndarray]] = None) -> None:
        """Append n frames at once: `time` [n] (env 0's), each recorded field [n, B, ...] (views are fine:
        they are written before this returns), `contacts` None (no contacts) or a dict with 'count' [n, B]
        and the rows of every contact of the block, in frame then env order."""
        time = np.asarray(time, dtype=np.float64).reshape(-1)
        n = time.shape[0]
        if n == 0:
            return
        self._append("time", time)
        for name in self.record:
            if name != "contacts":
                self._append(name, np.asarray(fields[name], dtype=self.fdt))
        if "contacts" in self.record:
            if contacts is None:
                offsets = np.full(n * self.B, self.n_contacts, np.int64)
            else:
                counts = np.asarray(contacts["count"], np.int64).reshape(-1)
                offsets = self.n_contacts + np.cumsum(counts)
                if counts.sum():
                    for k in ("geom", "body", "position", "normal", "penetration", "force"):
                        self._append(f"contacts/{k}", np.asarray(contacts[k], dtype=self.f[f"contacts/{k}"].dtype))
                self.n_contacts = int(offsets[-1])
            self._append("contacts/offsets", offsets)
        self.frames += n

    # -- closing -----------------------------------------------------------
    def close(self, complete: bool) -> Path:
        """Set `complete` and `n_frames`, close and rename to the final path. Safe to call twice."""
        if self._closed:
            return self.out
        try:
            self.f.attrs["complete"] = bool(complete)
            self.f.attrs["n_frames"] = np.int64(self.frames)
        finally:
            self.f.close()
            self._closed = True
        os.replace(self.tmp, self.out)
        return self.out
