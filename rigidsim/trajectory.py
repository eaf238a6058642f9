"""The trajectory file of SPEC.md (HDF5, format_version 1): a streaming writer.

Frames are buffered in small blocks and appended to chunked, compressed
datasets as the run goes, so memory does not grow with the number of steps.
The file is written under a temporary name beside the target and renamed
when closed; an interrupted or failed run still leaves a readable file with
``complete = false`` and every finished frame.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import h5py
import numpy as np

from rigidsim import __version__
from rigidsim.model import Model

FORMAT = "rigidsim-trajectory"
FORMAT_VERSION = 1

RECORDABLE = ("qpos", "qvel", "qacc", "xpos", "xquat", "ctrl", "contacts")
DEFAULT_RECORD = ("qpos", "qvel", "xpos", "xquat", "contacts")

# /model arrays of SPEC.md, under MuJoCo's names
MODEL_ARRAYS = (
    "qpos0", "body_parentid", "body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia",
    "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_axis", "jnt_pos", "jnt_range", "jnt_limited",
    "dof_armature", "dof_damping", "dof_frictionloss", "geom_type", "geom_bodyid", "geom_size", "geom_pos",
    "geom_quat", "geom_friction", "geom_contype", "geom_conaffinity", "geom_condim", "geom_solref",
    "geom_solimp", "actuator_gear", "actuator_gainprm", "actuator_biasprm", "actuator_ctrlrange", "eq_type",
    "eq_obj1id", "eq_obj2id", "eq_data",
)
MODEL_SIZES = ("nq", "nv", "nu", "nbody", "njnt", "ngeom", "neq")
MODEL_NAMES = {"body_names": "body", "joint_names": "jnt", "geom_names": "geom", "actuator_names": "actuator"}

_COMPRESS = dict(compression="gzip", compression_opts=4, shuffle=True)
_BLOCK_BYTES = 4 << 20  # flush buffered frames at about this size


def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _chunk_rows(row_bytes: int) -> int:
    return int(max(1, min(1024, (256 << 10) // max(1, row_bytes))))


class TrajectoryWriter:
    """Write one run. Use as a context manager; call `add_frame` per frame, `finish()` on success."""

    def __init__(self, out: str | Path, model: Model, *, scene: str, scene_path: str | Path, options_yaml: str, dt: float,
                 n_envs: int, n_steps: int, every: int, record: Sequence[str], float_dtype=np.float64,
                 extra_attrs: Optional[Mapping[str, object]] = None):
        self.out = Path(out)
        self.tmp = self.out.with_name(f".{self.out.name}.tmp-{os.getpid()}")
        self.record = tuple(record)
        self.B = int(n_envs)
        self.fdt = np.dtype(float_dtype)
        self.frames = 0
        self.n_contacts = 0
        self._buf: Dict[str, List[np.ndarray]] = {}
        self._buf_bytes = 0
        self._closed = False
        self.f = h5py.File(self.tmp, "w", libver="earliest", track_order=False)
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
                  "xpos": (B, model.nbody, 3), "xquat": (B, model.nbody, 4)}
        self._mk("time", (), np.float64)
        for name in self.record:
            if name in shapes:
                self._mk(name, shapes[name], fd)
        if "contacts" in self.record:
            g = self.f.create_group("contacts")
            off = g.create_dataset("offsets", shape=(1,), maxshape=(None,), dtype=np.int64,
                                   chunks=(max(1024, B),), **_COMPRESS)
            off[0] = 0
            for name, shape, dt_ in (("geom", (2,), np.int32), ("body", (2,), np.int32), ("position", (3,), fd),
                                     ("normal", (3,), fd), ("penetration", (), fd), ("force", (3,), fd)):
                g.create_dataset(name, shape=(0,) + shape, maxshape=(None,) + shape, dtype=dt_,
                                 chunks=(4096,) + shape, **_COMPRESS)

    # -- setup -------------------------------------------------------------
    def _mk(self, name: str, row_shape, dtype):
        row_bytes = int(np.prod(row_shape, dtype=np.int64)) * np.dtype(dtype).itemsize if row_shape else 8
        self.f.create_dataset(name, shape=(0,) + tuple(row_shape), maxshape=(None,) + tuple(row_shape),
                              dtype=dtype, chunks=(_chunk_rows(row_bytes),) + tuple(max(1, s) for s in row_shape),
                              **_COMPRESS)

    def _write_model(self, model: Model) -> None:
        g = self.f.create_group("model")
        for s in MODEL_SIZES:
            g.attrs[s] = np.int64(getattr(model, s))
        str_dt = h5py.string_dtype("utf-8")
        for ds, kind in MODEL_NAMES.items():
            g.create_dataset(ds, data=np.array(list(model.names.get(kind, [])), dtype=object), dtype=str_dt)
        for name in MODEL_ARRAYS:
            g.create_dataset(name, data=np.asarray(model.arrays[name]))

    # -- frames ------------------------------------------------------------
    def add_frame(self, frame: Mapping[str, np.ndarray]) -> None:
        """Buffer one frame: 'time' [B] (env 0's is stored), the recorded fields [B, ...], and
        optionally 'contacts': a dict of per-env lists / CSR arrays (see `contacts_csr`)."""
        self._push("time", np.asarray(frame["time"], dtype=np.float64).reshape(-1)[:1])
        for name in self.record:
            if name == "contacts":
                continue
            arr = np.asarray(frame[name], dtype=self.fdt)[None]
            self._push(name, arr)
        if "contacts" in self.record:
            c = frame.get("contacts")
            counts = np.zeros(self.B, np.int64) if c is None else np.asarray(c["count"], np.int64)
            self._push("contacts/counts", counts)
            if c is not None and counts.sum() > 0:
                for k in ("geom", "body", "position", "normal", "penetration", "force"):
                    self._push(f"contacts/{k}", np.asarray(c[k]))
        self.frames += 1
        if self._buf_bytes >= _BLOCK_BYTES:
            self.flush()

    def _push(self, key: str, arr: np.ndarray) -> None:
        self._buf.setdefault(key, []).append(arr)
        self._buf_bytes += arr.nbytes

    def flush(self) -> None:
        if not self._buf:
            return
        for key, parts in self._buf.items():
            if key == "contacts/counts":
                counts = np.concatenate(parts)
                ds = self.f["contacts/offsets"]
                n0 = ds.shape[0]
                ds.resize((n0 + counts.size,))
                ds[n0:] = self.n_contacts + np.cumsum(counts)
                self.n_contacts += int(counts.sum())
                continue
            data = np.concatenate(parts, axis=0)
            ds = self.f[key]
            n0 = ds.shape[0]
            ds.resize((n0 + data.shape[0],) + ds.shape[1:])
            ds[n0:] = data
        self._buf.clear()
        self._buf_bytes = 0
        self.f.flush()

    # -- closing -----------------------------------------------------------
    def close(self, complete: bool) -> Path:
        """Flush, set `complete`, close and rename to the final path. Safe to call twice."""
        if self._closed:
            return self.out
        try:
            self.flush()
            self.f.attrs["complete"] = bool(complete)
            self.f.attrs["n_frames"] = np.int64(self.frames)
        finally:
            self.f.close()
            self._closed = True
        os.replace(self.tmp, self.out)
        return self.out

    def abandon(self) -> None:
        """Remove the temporary file (a run that never produced a frame)."""
        if not self._closed:
            self.f.close()
            self._closed = True
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass
