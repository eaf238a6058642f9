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

import re
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
        got = _obj_fast(data, righthand)
        v, f = got if got is not None else _obj(data.decode("utf-8", errors="replace"), righthand)
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


# ----------------------------------------------------------------------------- OBJ on numpy
# `_obj` reads an OBJ line by line (a million str.split calls for the Panda's 59 files); `_obj_fast` gives the
# same arrays from whole-file numpy passes, for the files whose every relevant line is plain: ASCII
# whitespace, vertex coordinates of the characters 0-9 + - . e E, face indices of digits and a sign. On
# anything else (a parse error, nan, an index 0, a NUL, a line break or space outside ASCII, a lone carriage
# return, a 5-gon) it returns None and `_obj` reads the file, with its error messages. tests/test_obj_reader.py
# holds the two to each other on every OBJ under ../shared/models and on made-up ones.

_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 13, 32]] = True  # tab, newline, carriage return (only as part of CR LF), space
_ODD = np.zeros(256, dtype=bool)
_ODD[[0, 11, 12, 28, 29, 30, 31]] = True  # NUL; the other ASCII breaks of str.split / str.splitlines
# UTF-8 of the non-ASCII characters that str.split or str.splitlines treat as breaks
_UNICODE_BREAKS = re.compile(rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")
_FLOAT_CHARS = np.zeros(256, dtype=bool)
_FLOAT_CHARS[list(b"\x000123456789+-.eE")] = True  # NUL: past a token's end
_MAXTOK = 48  # longest coordinate or index token read here
_POW10 = 10.0 ** np.arange(23)  # exact in float64


def _parse_floats(buf, start, length):
    """float() of each token, or None where one does not parse. ``buf`` ends in _MAXTOK NULs. A plain
    decimal of at most 15 digits is m / 10**k with both exact in float64: one correctly rounded division, as
    float() rounds; the others (exponents, longer ones) go through numpy's string parser, which rounds as
    float() does."""
    m = len(start)
    width = int(length.max()) if m else 0
    if width > _MAXTOK:
        return None
    val = np.zeros(m)
    ndig = np.zeros(m, dtype=np.int64)
    frac = np.zeros(m, dtype=np.int64)
    dot = np.zeros(m, dtype=bool)
    plain = np.ones(m, dtype=bool)
    neg = buf[start] == 45
    for k in range(width):
        c = buf[start + k]
        c[length <= k] = 0
        if not _FLOAT_CHARS[c].all():
            return None
        d = c - np.uint8(48)
        isd = d < 10
        val = np.where(isd, val * 10.0 + d, val)  # exact: at most 15 digits
        ndig += isd
        frac += isd & dot
        isdot = c == 46
        plain &= ~(isdot & dot)  # a second dot
        dot |= isdot
        other = ~isd & ~isdot & (c != 0)
        if k == 0:
            other &= ~neg & (c != 43)
        plain &= ~other
    plain &= (ndig >= 1) & (ndig <= 15)
    out = val / _POW10[np.minimum(frac, 22)]
    out[neg] *= -1.0
    rest = np.flatnonzero(~plain)
    if len(rest):
        col = np.arange(width)
        chars = buf[start[rest, None] + col]
        chars[col >= length[rest, None]] = 0
        try:
            out[rest] = chars.view(f"S{width}").ravel().astype(np.float64)
        except ValueError:
            return None
    return out


def _parse_indices(buf, start, length):
    """int() of each token up to its first '/', or None where that is not an optional sign and 1-9 digits."""
    m = len(start)
    val = np.zeros(m, dtype=np.int64)
    ndig = np.zeros(m, dtype=np.int64)
    open_ = np.ones(m, dtype=bool)  # before the first '/'
    neg = buf[start] == 45
    signed = neg | (buf[start] == 43)
    for k in range(min(int(length.max()) if m else 0, 11)):
        c = buf[start + k]
        open_ &= (c != 47) & (length > k)
        d = c - np.uint8(48)
        isd = open_ & (d < 10)
        if np.any(open_ & ~isd & (~signed if k == 0 else True)):
            return None
        val = np.where(isd, val * 10 + d, val)
        ndig += isd
    if np.any(open_ & (length > 11)) or np.any((ndig == 0) | (ndig > 9)):
        return None
    return np.where(neg, -val, val)


def _obj_fast(data: bytes, righthand: bool):
    """`_obj`'s (vert, face) for the plain files, or None (see above)."""
    if not data or (not data.isascii() and _UNICODE_BREAKS.search(data)):
        return None
    if b"\r" in data and (data.count(b"\r") != data.count(b"\r\n")):
        return None  # a carriage return alone breaks a line for str.splitlines
    buf = np.frombuffer(data, dtype=np.uint8)
    n = len(buf)
    ws = np.empty(n + 2, dtype=bool)  # whitespace, with one before and after the text
    ws[0] = ws[-1] = True
    ctrl = buf < 32
    if np.count_nonzero(ctrl) != np.count_nonzero(ctrl & ((buf == 9) | (buf == 10) | (buf == 13))):
        if _ODD[buf].any():
            return None
        ws[1:-1] = _WS[buf]  # other control characters are text to str.split
    else:
        np.less_equal(buf, 32, out=ws[1:-1])
    nl = np.flatnonzero(buf == 10)
    line_start = np.concatenate(([0], nl + 1))
    line_end = np.concatenate((nl, [n]))
    buf = np.concatenate((buf, np.zeros(_MAXTOK + 2, dtype=np.uint8)))  # reads past the end find NULs
    c0 = buf[line_start]
    tagend = _WS[buf[line_start + 1]] | (line_start + 1 >= n)  # the line's first token is one character long
    vline = np.flatnonzero((c0 == 118) & tagend)  # v
    fline = np.flatnonzero((c0 == 102) & tagend)  # f
    if len(fline):  # the faces of the first object only: up to the first o/g line after the first face
        og = np.flatnonzero(((c0 == 111) | (c0 == 103)) & tagend)
        later = og[og > fline[0]]
        if len(later):
            fline = fline[fline < later[0]]
    # tokens: runs of non-whitespace
    edge = np.flatnonzero(ws[1:] != ws[:-1])
    tok_start, tok_len = edge[0::2], edge[1::2] - edge[0::2]
    # vertices: tokens 1-3 of each v line
    ft = np.searchsorted(tok_start, line_start[vline])
    if np.any(np.searchsorted(tok_start, line_end[vline]) - ft < 4):
        return None
    vt = (ft[:, None] + np.arange(1, 4)).ravel()
    vert = _parse_floats(buf, tok_start[vt], tok_len[vt])
    if vert is None:
        return None
    vert = vert.astype(np.float32).reshape(-1, 3)
    # faces: tokens 1-3 (and 4 of a quad) of each f line
    ft = np.searchsorted(tok_start, line_start[fline])
    count = np.searchsorted(tok_start, line_end[fline]) - ft
    if np.any((count < 4) | (count > 5)):
        return None
    quad = count == 5
    ftok = ft[:, None] + np.arange(1, 5)
    ftok[~quad, 3] = ftok[~quad, 2]  # a triangle's third index read twice, its copy unused
    ftok = ftok.ravel()
    val = _parse_indices(buf, tok_start[ftok], tok_len[ftok])
    if val is None or np.any(val == 0):
        return None
    nv = np.repeat(np.searchsorted(vline, fline), 4)  # v lines above each f line
    a, b, c, d = np.where(val < 0, nv + val, val - 1).reshape(-1, 4).T  # 9 digits: within int32
    row = np.arange(len(fline)) + (np.cumsum(quad) - quad)  # each line's first triangle
    face = np.empty((len(fline) + int(quad.sum()), 3), dtype=np.int32)
    face[row] = np.stack([a, b, c] if righthand else [a, c, b], 1)
    face[row[quad] + 1] = np.stack([a, c, d] if righthand else [a, d, c], 1)[quad]
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
