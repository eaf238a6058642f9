"""A trajectory file opened for `rigidsim diff`: checked on opening, every read naming the file when it fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

import h5py
import numpy as np

from rigidsim.diff.report import FileInfo
from rigidsim.errors import InputError
from rigidsim.trajectory import FORMAT, FORMAT_VERSION, expected_frames

# groups compared as a whole (the contacts by geom pair, the model array by array), not as frame datasets
SPECIAL_GROUPS = ("contacts", "model")


def _py(v: Any) -> Any:
    """An attribute value as plain Python (str, int, float, bool, list)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [_py(x) for x in v.tolist()] if v.ndim else _py(v.item())
    if isinstance(v, np.generic):
        return v.item()
    return v


class _File:
    """One trajectory file, opened read-only and checked; every read names the file when it fails."""

    def __init__(self, path: str, label: str):
        self.path, self.label = str(path), label
        p = Path(path)
        if not p.exists():
            raise InputError("no such file; expected a trajectory file written by `rigidsim run`", where=self.path)
        if p.is_dir():
            raise InputError("is a directory; expected a trajectory file written by `rigidsim run`", where=self.path)
        try:
            hdf5 = h5py.is_hdf5(self.path)
        except OSError as e:
            raise InputError(f"cannot be read ({e.strerror or e})", where=self.path) from None
        if not hdf5:
            raise InputError("is not an HDF5 file; expected a trajectory file written by `rigidsim run`",
                             where=self.path)
        try:
            self.f = h5py.File(self.path, "r")
        except OSError as e:
            raise InputError(f"is an HDF5 file that cannot be read: it is truncated or damaged, or still being "
                             f"written (h5py: {e})",
                             where=self.path) from None
        try:
            self.attrs = {k: _py(v) for k, v in self.f.attrs.items()}
        except (OSError, RuntimeError, KeyError, ValueError) as e:
            self.close()
            raise InputError(f"its attributes cannot be read: the file is truncated or damaged (h5py: {e})",
                             where=self.path) from None
        if self.attrs.get("format") != FORMAT:
            self.close()
            raise InputError(f"is an HDF5 file but not a rigidsim trajectory (its root has no format = "
                             f"'{FORMAT}' attribute); expected a file written by `rigidsim run`", where=self.path)
        ver = self.attrs.get("format_version")
        if not isinstance(ver, int) or isinstance(ver, bool):
            self.close()
            raise InputError(f"is not a valid rigidsim trajectory: format_version is {ver!r}, expected an integer",
                             where=self.path)
        if ver > FORMAT_VERSION:
            self.close()
            raise InputError(f"has format_version {ver}, written by a newer rigidsim; this rigidsim reads "
                             f"format_version {FORMAT_VERSION} and older: upgrade rigidsim to compare it",
                             where=self.path)
        self.datasets = self._walk()
        self.B = self._int_attr("n_envs")
        self.T = self._frames()

    def _walk(self) -> Dict[str, h5py.Dataset]:
        """Every dataset outside /contacts and /model, by its path without the leading '/'."""
        out: Dict[str, h5py.Dataset] = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in SPECIAL_GROUPS:
                out[name] = obj

        try:
            self.f.visititems(visit)
        except (OSError, RuntimeError, KeyError) as e:
            raise self.damaged("its layout", e) from None
        return out

    def _int_attr(self, k: str) -> Optional[int]:
        v = self.attrs.get(k)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def _frames(self) -> int:
        if "time" in self.datasets and self.datasets["time"].ndim == 1:
            return int(self.datasets["time"].shape[0])
        return self._int_attr("n_frames") or 0

    def damaged(self, what: str, e: BaseException) -> InputError:
        return InputError(f"cannot read {what}: the file is truncated or damaged (h5py: {e})", where=self.path)

    def read(self, ds: h5py.Dataset, sel=()) -> np.ndarray:
        try:
            return np.asarray(ds[sel])
        except (OSError, RuntimeError, KeyError, ValueError) as e:
            raise self.damaged(ds.name, e) from None

    def geom_names(self) -> Optional[list]:
        """/model/geom_names as a list (an unnamed geom: ''), or None when the file has none or they cannot
        be read (the names only label the report)."""
        try:
            ds = self.f.get("model/geom_names")
            if not isinstance(ds, h5py.Dataset):
                return None
            return [_py(x) for x in ds.asstr()[()]] if ds.ndim == 1 else None
        except (OSError, RuntimeError, KeyError, ValueError, TypeError):
            return None

    def info(self) -> FileInfo:
        a = self.attrs
        n_steps, every = self._int_attr("n_steps"), self._int_attr("record_every")
        expect = expected_frames(n_steps, every) if n_steps is not None and every and every > 0 else None
        complete = bool(a.get("complete", False))
        truncated = (not complete) or (expect is not None and self.T < expect)
        return FileInfo(path=self.path, n_frames=self.T, expected_frames=expect, complete=complete,
                        truncated=truncated, n_envs=self.B, rigidsim_version=a.get("rigidsim_version"))

    def close(self) -> None:
        try:
            self.f.close()
        except Exception:
            pass
