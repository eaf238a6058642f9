"""The trajectory file of SPEC.md (HDF5, format_version 1): a streaming writer.

The engine hands over blocks of frames ([n, B, ...] per field); each block is
appended with one dataset write per field to chunked datasets (uncompressed
by default; lzf or gzip on request), as the run goes, so memory does not
grow with the number of steps and no Python runs per frame.
The file is written under a temporary name beside the target and renamed
when closed; an interrupted or failed run still leaves a readable file with
``complete = false`` and every finished frame.

Crash safety: the file is written in HDF5's single-writer/multiple-reader
(SWMR) mode and flushed every `flush_frames` frames (about FLUSH_BYTES of
frame data), `n_frames` being updated after each flush, so a run killed hard (kill -9, the OOM killer) leaves a temporary
file that HDF5 can read up to its last flush; `recover_leftovers` turns such
a file of a dead process into a readable `complete = false` file. A write
that fails (a full disk) shrinks the file back to its last flush and closes
it, with a small reserve file freed first to give HDF5 room to close.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Mapping, Optional, Sequence

import h5py
import numpy as np

from rigidsim.version import __version__
from rigidsim.errors import InputError, SimulationError
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
    # the sensors (MuJoCo's mjtSensor, mjtObj, mjtDataType and mjtStage codes), so that a reader can slice
    # sensordata [.., nsensordata] by name: sensor i fills sensor_adr[i] : sensor_adr[i] + sensor_dim[i]
    "sensor_type", "sensor_intprm", "sensor_datatype", "sensor_needstage", "sensor_objtype", "sensor_objid", "sensor_reftype",
    "sensor_refid", "sensor_dim", "sensor_adr", "sensor_cutoff", "sensor_noise", "sensor_history", "sensor_delay",
    "sensor_interval",
)
MODEL_SIZES = ("nq", "nv", "nu", "nbody", "njnt", "ngeom", "neq", "nmesh", "nmeshvert", "nmeshface", "nhfield",
               "nhfielddata", "nmat", "nsensor", "nsensordata")
MODEL_NAMES = {"body_names": "body", "joint_names": "jnt", "geom_names": "geom", "actuator_names": "actuator",
               "sensor_names": "sensor"}

# --compression: HDF5 filters per dataset. "none" (the default) keeps up with the engine; gzip costs about
# 40 MB/s of float64 state per core on data that does not repeat (see benchmarks/bench_record.py)
COMPRESSIONS = {"none": {}, "lzf": dict(compression="lzf", shuffle=True),
                "gzip": dict(compression="gzip", compression_opts=4, shuffle=True)}
DEFAULT_COMPRESSION = "none"
_CHUNK_BYTES = 128 << 10  # target chunk size (measured best of 64 KiB - 1 MiB for none, lzf and gzip)
_CACHE_BYTES = 4 << 20  # per-dataset chunk cache: holds the partly written chunk between two blocks
# HDF5 file format bounds: 1.10's, the oldest that has SWMR (files read by HDF5 >= 1.10, h5py >= 2.7)
LIBVER = ("v110", "v110")
# a flush every FLUSH_BYTES of frame data (rows of the recorded fields, contacts not counted), at frames fixed
# by the command alone: HDF5 lays a file out differently with flushes at other frames, and the same command
# and seed must give a byte-identical file, so the interval cannot be a time. 2 MiB is about 0.1 s of writing
# at the rate of the humanoid run; a hard kill loses at most the frames since the last flush
FLUSH_BYTES = 2 << 20
_RESERVE_BYTES = 1 << 20  # freed when the disk is full, so that HDF5 can write what closing the file needs


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

    def __init__(self, out: str | Path, model: Model, *, scene: str, scene_path: Optional[str | Path],
                 options_yaml: str, dt: float, n_envs: int, n_steps: int, every: int, record: Sequence[str], float_dtype=np.float64,
                 extra_attrs: Optional[Mapping[str, object]] = None, compression: str = DEFAULT_COMPRESSION,
                 scene_sha256: Optional[str] = None):
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
        self._swmr = False
        self.flushed = 0  # frames on disk as of the last flush (what a hard kill or a full disk leaves)
        self._flushed_contacts = 0
        self.failure: Optional[BaseException] = None  # the write error that stopped the run (a full disk)
        self._ds = {}
        self.frames_tried = 0  # frames fully written when a write failed
        self.salvaged = True  # after a failure: the frames of the last flush are in `out`
        self.bytes_written = 0  # frame data handed to HDF5 (bytes per frame, for a full disk's message)
        self.notes = recover_leftovers(self.out)  # what a run killed before left beside --out
        self.reserve = self.out.with_name(f".{self.out.name}.reserve-{os.getpid()}")
        _reserve(self.reserve)
        try:
            self.f = h5py.File(self.tmp, "w", libver=LIBVER, track_order=False, rdcc_nbytes=_CACHE_BYTES)
        except OSError as e:
            _unlink(self.reserve)
            raise InputError(f"cannot write {self.out}: cannot create {self.tmp} ({e})", where="--out") from None
        a = self.f.attrs
        a["format"] = FORMAT
        a["format_version"] = np.int64(FORMAT_VERSION)
        a["rigidsim_version"] = __version__
        a["scene"] = str(scene)
        a["scene_sha256"] = scene_sha256 or sha256_of(scene_path)
        a["options_yaml"] = options_yaml
        a["dt"] = np.float64(dt)
        a["n_envs"] = np.int64(n_envs)
        a["n_steps"] = np.int64(n_steps)
        a["record_every"] = np.int64(every)
        a["complete"] = False
        a["n_frames"] = np.int64(0)  # made now: SWMR mode can update an attribute but not add one
        for k, v in (extra_attrs or {}).items():
            a[k] = v
        self._write_model(model)
        B, fd = self.B, self.fdt
        shapes = {"qpos": (B, model.nq), "qvel": (B, model.nv), "qacc": (B, model.nv), "ctrl": (B, model.nu),
                  "xpos": (B, model.nbody, 3), "xquat": (B, model.nbody, 4), "qfrc_constraint": (B, model.nv),
                  "sensordata": (B, model.nsensordata)}
        counts = {"ncon": np.int32, "nefc": np.int32, "solver_niter": np.int32, "solver_converged": np.uint8}
        self._mk("time", (), np.float64)
        for name in self.record:
            if name in shapes:
                self._mk(name, shapes[name], fd)
            elif name in counts:
                self._mk(name, (B,), counts[name])
        frame_bytes = sum(int(np.prod(ds.shape[1:], dtype=np.int64)) * ds.dtype.itemsize
                          for ds in self.f.values() if isinstance(ds, h5py.Dataset))
        self.flush_frames = max(1, FLUSH_BYTES // max(1, frame_bytes))  # frames between two flushes
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
        self.start()

    def start(self) -> None:
        """Every group, dataset and attribute exists: switch to SWMR mode (from now on the file on disk is
        consistent after every flush) and flush the model and /init."""
        if not self._swmr:
            self._guarded(self._start)

    def _start(self) -> None:
        self.f.swmr_mode = True
        self._swmr = True
        self._flush()

    # -- frames ------------------------------------------------------------
    def _append(self, key: str, data: np.ndarray) -> None:
        """One dataset write: resize, then write the rows (none for a zero-size row)."""
        ds = self._ds.get(key)
        if ds is None:  # one handle per dataset for the whole run: its chunk cache lives as long as the file
            ds = self._ds[key] = self.f[key]
        n0 = ds.shape[0]
        ds.resize((n0 + data.shape[0],) + ds.shape[1:])
        if data.size:
            ds[n0:] = data
            self.bytes_written += data.nbytes

    def add_block(self, time: np.ndarray, fields: Mapping[str, np.ndarray],
                  contacts: Optional[Mapping[str, np.ndarray]] = None) -> None:
        """Append n frames at once: `time` [n] (env 0's), each recorded field [n, B, ...] (views are fine:
        they are written before this returns), `contacts` None (no contacts) or a dict with 'count' [n, B]
        and the rows of every contact of the block, in frame then env order."""
        time = np.asarray(time, dtype=np.float64).reshape(-1)
        if time.shape[0] == 0:
            return
        self.start()
        n, i = time.shape[0], 0
        counts = None if contacts is None else np.asarray(contacts["count"], np.int64).reshape(n, self.B)
        while i < n:  # split at the flush points: frames flush_frames, 2 flush_frames, ...
            j = min(n, i + self.flush_frames - (self.frames - self.flushed))
            seg_c = None
            if contacts is not None:
                r0, r1 = int(counts[:i].sum()), int(counts[:j].sum())
                seg_c = {k: (counts[i:j] if k == "count" else contacts[k][r0:r1]) for k in contacts}
            self._guarded(self._add_block, time[i:j], {k: v[i:j] for k, v in fields.items()}, seg_c)
            if self.frames - self.flushed >= self.flush_frames:
                self.flush()
            i = j

    def flush(self) -> None:
        """Put every frame written so far on disk, then `n_frames` (a hard kill keeps them)."""
        self._guarded(self._flush)

    def _flush(self) -> None:
        self.f.flush()  # the frames first: n_frames never counts a frame that is not on disk
        self.f.attrs["n_frames"] = np.int64(self.frames)
        self.f.flush()
        self.flushed, self._flushed_contacts = self.frames, self.n_contacts

    def _guarded(self, fn, *args) -> None:
        """Run one step of writing; a failed write (a full disk, an I/O error) is kept in `failure` and raised
        as a TrajectoryWriteError, and nothing more is written but what closing needs."""
        if self.failure is not None:
            raise TrajectoryWriteError(self.failure)
        lost = []  # h5py reports a write that fails while it closes a handle only to sys.unraisablehook
        hook, sys.unraisablehook = sys.unraisablehook, lambda u: lost.append(u.exc_value)
        try:
            fn(*args)
            if lost:
                raise lost[0]
        except (OSError, RuntimeError, ValueError) as e:
            self.failure, self.frames_tried = e, self.frames
            raise TrajectoryWriteError(e) from None
        finally:
            sys.unraisablehook = hook

    def _add_block(self, time: np.ndarray, fields, contacts) -> None:
        n = time.shape[0]
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
        """Set `complete` and `n_frames`, close and rename to the final path. Safe to call twice. After a failed
        write the file is cut back to its last flush first (`salvaged` says whether that file could be closed;
        when not, the temporary file is left for `recover_leftovers`)."""
        if self._closed:
            return self.out
        if self.failure is None:
            try:
                self.start()
                self._guarded(self.f.flush)
            except TrajectoryWriteError:
                pass
        if self.failure is not None:
            self.salvaged = self._salvage()
            _unlink(self.reserve)
            if self.salvaged:
                os.replace(self.tmp, self.out)
            return self.out
        try:
            self.f.attrs["complete"] = bool(complete)
            self.f.attrs["n_frames"] = np.int64(self.frames)
        finally:
            self._ds = {}
            self.f.close()
            self._closed = True
            _unlink(self.reserve)
        os.replace(self.tmp, self.out)
        return self.out

    def _salvage(self) -> bool:
        """After a failed write: free the reserve, cut every dataset back to the frames of the last flush (so
        closing rewrites no chunk past it), mark the file incomplete and close it. False when even that fails;
        h5py's complaints about the dead file are kept off stderr."""
        _unlink(self.reserve)
        hook, sys.unraisablehook = sys.unraisablehook, lambda *_: None
        try:
            self._truncate(self.f, self.flushed, self._flushed_contacts)
            self.f.attrs["complete"] = False
            self.f.attrs["n_frames"] = np.int64(self.flushed)
            self._ds = {}
            self.f.close()
            ok = True
        except Exception:
            self._ds = {}
            try:
                self.f.close()
            except Exception:
                pass
            ok = False
        finally:
            self._closed = True
            sys.unraisablehook = hook
        self.frames, self.n_contacts = self.flushed, self._flushed_contacts
        return ok

    @staticmethod
    def _truncate(f, frames: int, n_contacts: int) -> None:
        """Resize every frame dataset of `f` to `frames` frames (the contacts to their first `n_contacts` rows)."""
        B = int(f.attrs["n_envs"])
        for name, ds in f.items():
            if isinstance(ds, h5py.Dataset) and ds.maxshape and ds.maxshape[0] is None and ds.shape[0] > frames:
                ds.resize((frames,) + ds.shape[1:])
        if "contacts" in f:
            off = f["contacts/offsets"]
            if off.shape[0] > frames * B + 1:
                off.resize((frames * B + 1,))
            for name, ds in f["contacts"].items():
                if name != "offsets" and ds.shape[0] > n_contacts:
                    ds.resize((n_contacts,) + ds.shape[1:])


class TrajectoryWriteError(Exception):
    """A write to the trajectory file failed (`cause`: h5py's error); `disk_full` for ENOSPC and EDQUOT."""

    def __init__(self, cause: BaseException):
        self.cause = cause
        text = str(cause)
        self.disk_full = (getattr(cause, "errno", None) in (errno.ENOSPC, errno.EDQUOT)
                          or "No space left on device" in text or "Disk quota exceeded" in text
                          or "errno = 28," in text or "errno = 122," in text)
        m = re.search(r"error message = '([^']*)'", text)
        self.reason = m.group(1) if m else (getattr(cause, "strerror", None) or text.splitlines()[0] if text else "")
        super().__init__(self.reason)


def _reserve(path: Path) -> None:
    """Set `_RESERVE_BYTES` of disk aside (allocated, not written, where the file system allows)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return
    try:
        os.posix_fallocate(fd, 0, _RESERVE_BYTES)
    except (OSError, AttributeError):
        try:
            os.write(fd, b"\0" * _RESERVE_BYTES)
        except OSError:
            pass
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recovered_name(out: Path, pid: int) -> Path:
    """Where the frames of a killed run's leftover go: OUT's stem + '.recovered-PID' + OUT's suffix."""
    return out.with_name(f"{out.stem}.recovered-{pid}{out.suffix}")


def recover_leftovers(out: str | Path) -> list:
    """Find what runs to `out` killed before they closed their file left (`.OUT.tmp-PID` of a dead process,
    their reserve `.OUT.reserve-PID`): turn each readable temporary file into `recovered_name(out, PID)` with
    the frames of its last flush and `complete = false`, delete the reserves; one note per file, for the user."""
    out = Path(out)
    notes = []
    try:
        names = os.listdir(out.parent)
    except OSError:
        return notes
    for name in sorted(names):
        m = re.fullmatch(re.escape(f".{out.name}.") + r"(tmp|reserve)-(\d+)", name)
        if not m or int(m.group(2)) == os.getpid() or _pid_alive(int(m.group(2))):
            continue
        path = out.parent / name
        if m.group(1) == "reserve":
            _unlink(path)
            continue
        pid = int(m.group(2))
        dest = recovered_name(out, pid)
        try:
            frames = recover(path, dest)
        except Exception as e:  # an unreadable leftover (killed before its first flush): named, left alone
            notes.append(f"{path} was left by a run (pid {pid}) that was killed before it closed its file, and it "
                         f"cannot be read ({str(e).splitlines()[0] if str(e) else type(e).__name__}); delete it")
            continue
        _unlink(path)
        notes.append(f"a run to {out} (pid {pid}) was killed before it closed its file: recovered the {frames} "
                     f"frames of its last flush from {path.name} into {dest} (complete=false)")
    return notes


def recover(tmp: str | Path, dest: str | Path) -> int:
    """Copy the temporary file `tmp` of a killed run (open for SWMR reading: its writer never closed it) into
    an ordinary trajectory file `dest`, cut to the `n_frames` of its last flush, `complete = false`. Returns
    that frame count."""
    tmp, dest = Path(tmp), Path(dest)
    part = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    with h5py.File(tmp, "r", swmr=True) as src:
        frames = int(src.attrs["n_frames"])
        B = int(src.attrs["n_envs"])
        n_contacts = int(src["contacts/offsets"][frames * B]) if "contacts" in src else 0
        try:
            with h5py.File(part, "w", libver=LIBVER, track_order=False) as dst:
                for k, v in src.attrs.items():
                    dst.attrs[k] = v
                for name in src:
                    src.copy(src[name], dst, name=name)
                TrajectoryWriter._truncate(dst, frames, n_contacts)
                dst.attrs["complete"] = False
                dst.attrs["n_frames"] = np.int64(frames)
        except BaseException:
            _unlink(part)
            raise
    os.replace(part, dest)
    return frames


def read_sensor(path: str | Path, name: str) -> np.ndarray:
    """Sensor `name`'s values [T, B, dim] from a trajectory file's /sensordata, found by its name under /model
    (sensor_names, sensor_adr, sensor_dim). InputError when the file has no such sensor or no sensordata."""
    with h5py.File(path, "r") as f:
        m = f["model"]
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in m["sensor_names"][()]] \
            if "sensor_names" in m else []
        if name not in names:
            raise InputError(f"{path} has no sensor named '{name}' (its sensors: {', '.join(names[:6]) or 'none'}"
                             f"{'...' if len(names) > 6 else ''})", where=str(path))
        if "sensordata" not in f:
            raise InputError(f"{path} does not hold sensordata (record it with --record ...,sensordata)",
                             where=str(path))
        i = names.index(name)
        a, n = int(m["sensor_adr"][i]), int(m["sensor_dim"][i])
        return np.asarray(f["sensordata"][:, :, a:a + n])
