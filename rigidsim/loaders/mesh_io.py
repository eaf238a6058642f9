"""Mesh file decoders: binary STL, Wavefront OBJ and MuJoCo's binary MSH.

Each returns ``(vert, face)`` as MuJoCo's decoders hand them to its mesh
compiler: vertices as float32 rows, faces as int32 index triples, with the
triangle winding flipped when the scale is left-handed. The decoders are
written here on numpy rather than taken from trimesh because the compiled
fields depend on the exact vertex list: MuJoCo keeps an OBJ's ``v`` records
in file order and only the first object's faces, merges an STL's repeated
corners in first-seen order, and refuses ASCII STL - trimesh merges, splits
or reorders vertices depending on the format and its options.

Malformed input raises `MeshFileError` with a short reason; the caller adds
the file and the MJCF line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Tuple

import numpy as np

from rigidsim.loaders import inputs


class MeshFileError(ValueError):
    pass


def read_mesh_file(path: Path, righthand: bool) -> Tuple[np.ndarray, np.ndarray, bool]:
    """(vert float32 (n,3), face int32 (m,3), merge_repeated) of an STL/OBJ/MSH file."""
    return decode_mesh(path.suffix, inputs.read_bytes(path), righthand)


def decode_mesh(suffix: str, data: bytes, righthand: bool) -> Tuple[np.ndarray, np.ndarray, bool]:
    """`read_mesh_file` of a file's bytes (``suffix``: the file's extension, which names its format)."""
    ext = suffix.lower()
    if ext == ".stl":
        v, f = _stl(data, righthand)
        return v, f, True
    if ext == ".obj":
        v, f = _obj(data.decode("utf-8", errors="replace"), righthand)
        return v, f, False
    if ext == ".msh":
        v, f = _msh(data, righthand)
        return v, f, False
    raise MeshFileError(f"unknown mesh file type '{suffix}' (MuJoCo reads .stl, .obj and .msh)")


def _stl(data: bytes, righthand: bool):
    if not data:
        raise MeshFileError("STL file is empty")
    if len(data) < 84:
        raise MeshFileError("invalid header in STL file")
    n = int(np.frombuffer(data, "<i4", 1, 80)[0])
    if n < 1 or n > 200000:
        raise MeshFileError("number of faces should be between 1 and 200000 in STL file; "
                            "perhaps this is an ASCII file? (MuJoCo reads binary STL only)")
    if n * 50 != len(data) - 84:
        raise MeshFileError("STL file has wrong size; perhaps this is an ASCII file? "
                            "(MuJoCo reads binary STL only)")
    rec = np.frombuffer(data, np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]), n, 84)
    vert = np.ascontiguousarray(rec["v"].reshape(-1, 3), dtype=np.float32)
    if np.any(np.abs(vert) > 2.0 ** 30):
        raise MeshFileError("vertex in STL file exceeds maximum bounds")
    face = np.arange(3 * n, dtype=np.int32).reshape(n, 3)
    if not righthand:
        face = face[:, [0, 2, 1]]
    return vert, np.ascontiguousarray(face)


def _obj_index(tok: str, nv: int) -> int:
    s = tok.split("/", 1)[0]
    i = int(s)
    if i < 0:
        return nv + i
    if i == 0:
        raise MeshFileError("vertex index 0 in OBJ face (indices start at 1)")
    return i - 1


def _obj(text: str, righthand: bool):
    verts = []
    faces = []
    nv = 0
    seen_faces = False
    done = False  # MuJoCo takes the faces of the first object only
    for ln, line in enumerate(text.splitlines(), 1):
        if not line or line[0] not in "vfog":
            continue
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        try:
            if tag == "v":
                if len(parts) < 4:
                    raise MeshFileError(f"OBJ line {ln}: vertex needs 3 coordinates")
                verts.append(parts[1:4])
                nv += 1
            elif tag == "f" and not done:
                idx = [_obj_index(t, nv) for t in parts[1:]]
                if len(idx) < 3 or len(idx) > 4:
                    raise MeshFileError(f"OBJ line {ln}: only tri or quad meshes are supported for OBJ")
                seen_faces = True
                a, b, c = idx[0], idx[1], idx[2]
                faces.append((a, b, c) if righthand else (a, c, b))
                if len(idx) == 4:
                    d = idx[3]
                    faces.append((a, c, d) if righthand else (a, d, c))
            elif tag in ("o", "g") and seen_faces:
                done = True
        except ValueError as e:
            if isinstance(e, MeshFileError):
                raise
            raise MeshFileError(f"OBJ line {ln}: cannot parse '{line.strip()}'") from None
    try:
        vert = np.array(verts, dtype=np.float64).astype(np.float32).reshape(-1, 3)
    except ValueError:
        raise MeshFileError("could not parse OBJ vertex coordinates") from None
    face = np.array(faces, dtype=np.int32).reshape(-1, 3)
    return vert, face


def _msh(data: bytes, righthand: bool):
    if not data:
        raise MeshFileError("MSH file is empty")
    if len(data) < 16:
        raise MeshFileError("missing header in MSH file")
    nv, nn, nt, nf = (int(x) for x in np.frombuffer(data, "<i4", 4, 0))
    if nv < 4 or nf < 0 or nn < 0 or nt < 0 or (nn > 0 and nn != nv) or (nt > 0 and nt != nv):
        raise MeshFileError("invalid sizes in MSH file")
    if len(data) != 16 + 12 * nv + 12 * nn + 8 * nt + 12 * nf:
        raise MeshFileError("unexpected file size in MSH file")
    vert = np.frombuffer(data, "<f4", 3 * nv, 16).reshape(nv, 3).astype(np.float32)
    off = 16 + 12 * nv + 12 * nn + 8 * nt
    face = np.frombuffer(data, "<i4", 3 * nf, off).reshape(nf, 3).astype(np.int32)
    if not righthand:
        face = face[:, [0, 2, 1]]
    return vert, np.ascontiguousarray(face)


def merge_repeated(vert: np.ndarray, face: np.ndarray):
    """Merge bit-equal vertices (0.0 == -0.0), keeping first-seen order, and remap the faces."""
    v = vert + np.float32(0.0)  # -0.0 -> 0.0, as float equality treats them
    _, first, inverse = np.unique(v.view(np.dtype((np.void, 12))).ravel(), return_index=True,
                                  return_inverse=True)
    if len(first) == len(v):
        return vert, face
    order = np.argsort(first, kind="stable")  # unique rows in first-seen order
    newid = np.empty(len(first), dtype=np.int32)
    newid[order] = np.arange(len(first), dtype=np.int32)
    remap = newid[inverse.ravel()]
    return vert[np.sort(first)], remap[face].astype(np.int32)
