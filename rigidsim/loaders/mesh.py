"""Mesh and height-field assets.

Height fields: inline ``elevation`` (row-major, nrow x ncol) or a blank
``nrow`` x ``ncol`` field, normalized to [0, 1] as MuJoCo does; PNG and
custom binary files are refused. Meshes are refused for now (see
`compile_mesh`).
"""

from __future__ import annotations

import numpy as np

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf_defaults import where
from rigidsim.loaders.mjcf import Rec

EPS = 1e-14


def compile_mesh(rec, scene, compiler):
    raise InputError(f"<mesh> '{rec.name}': mesh assets are not supported by rigidsim yet "
                     f"(the mesh compiler has not landed)", where=where(rec.el, scene.filename))


def compile_hfield(rec, scene, compiler):
    w = where(rec.el, scene.filename)
    if rec.size is None or any(s <= 0 for s in rec.size):
        raise InputError(f"<hfield> '{rec.name}': size needs 4 positive numbers "
                         f"(radius_x radius_y elevation_z base_z)", where=w)
    if rec.file is not None:
        if rec.nrow or rec.ncol or rec.elevation is not None:
            raise InputError(f"<hfield> '{rec.name}' is specified from a file and manually", where=w)
        raise InputError(f"<hfield> '{rec.name}': height fields read from files ({rec.file}) are not "
                         f"supported by rigidsim; give nrow, ncol and elevation inline", where=w)
    nrow, ncol = int(rec.nrow or 0), int(rec.ncol or 0)
    if nrow < 1 or ncol < 1:
        raise InputError(f"<hfield> '{rec.name}': nrow and ncol must be positive", where=w)
    if rec.elevation is not None:
        if len(rec.elevation) != nrow * ncol:
            raise InputError(f"<hfield> '{rec.name}': elevation has {len(rec.elevation)} values, expected "
                             f"nrow*ncol = {nrow * ncol}", where=w)
        data = np.asarray(rec.elevation, dtype=np.float32)
    else:
        data = np.zeros(nrow * ncol, dtype=np.float32)
    emin, emax = data.min(), data.max()
    data = data - emin
    if emax - emin > EPS:
        data = data / (emax - emin)
    return Rec(size=list(rec.size), nrow=nrow, ncol=ncol, data=data.astype(np.float32))
