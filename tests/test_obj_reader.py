"""The numpy OBJ reader (`mesh_io._obj_fast`) against the line-by-line one (`mesh_io._obj`, the reference it
falls back to): bit-equal vertices and faces on every OBJ under ../shared/models, and on made-up files it
either gives `_obj`'s arrays or declines (None), never a different answer and never a file `_obj` refuses."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rigidsim.loaders import mesh_io
from tests.cli_util import MODELS

OBJ_FILES = sorted(MODELS.rglob("*.obj")) if MODELS.exists() else []


def _reference(data: bytes, righthand: bool):
    try:
        return mesh_io._obj(data.decode("utf-8", errors="replace"), righthand)
    except (ValueError, OverflowError) as e:  # MeshFileError is a ValueError
        return type(e)


def _same(a, b) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b))


@pytest.mark.skipif(not OBJ_FILES, reason="../shared/models is absent")
@pytest.mark.parametrize("path", OBJ_FILES, ids=lambda p: p.name)
def test_shared_obj_files_bit_equal(path):
    data = path.read_bytes()
    for righthand in (True, False):
        fast = mesh_io._obj_fast(data, righthand)
        assert fast is not None, "a plain exported OBJ is read by the numpy reader"
        assert _same(fast, _reference(data, righthand))
        assert _same(mesh_io.decode_mesh(".obj", data, righthand)[:2], fast)


NUMBERS = ["1", "-0", "0.5", "-0.04967900", "+1.25", ".5", "-.5", "1.", "12345678901234", "0.123456789012345",
           "1234567890123456789", "0.1000000000000000055511151231257827021181583404541015625", "1e5", "-2.5E-3",
           "1e400", "1e-400", "nan", "inf", "-Infinity", "1_0", "1.2.3", "--1", "+-1", "1-", "1e", ".", "-", "e5",
           "3.4028235e38", "4.9e-324", "0x10", "1,5", "\u0661", "2\x00", "7"]
PLAIN_NUMBERS = NUMBERS[:10] + ["1e5", "-2.5E-3", "1234567890123456789"]
INDICES = ["1", "2", "3", "4", "-1", "-2", "+2", "0", "-0", "007", "1/1", "2//2", "3/3/3", "1/", "/1", "1_0",
           "99999999999", "4294967297", "-4", "12a", "+", "-", "5"]
EXTRA = ["# comment", "vn 0 0 1", "vt 0.5 0.5", "o obj", "g grp", "o", "g", "s off", "usemtl m", "mtllib a.mtl",
         "", "  v 1 2 3", "\tf 1 2 3", "vv 1 2 3", "ff 1 2 3", "v", "f", "f 1 2", "f 1 2 3 4 5", "og", "l 1 2",
         "v 1 2", "# caf\u00e9", "# \u00a0nbsp", "# \u2028", "v\t1\t2\t3", "f\t1\t2\t3"]
ENDINGS = ["\n", "\n", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\u0085", " \n", "\t\n"]


def _random_obj(rng: random.Random) -> bytes:
    odd = rng.random() < 0.4  # else only what an exporter writes: the numpy reader must read it
    lines = []
    nv = rng.randint(0, 8)
    for _ in range(rng.randint(1, 30)):
        r = rng.random()
        if r < 0.4:
            k = rng.choice([3, 3, 3, 3, 4, 6] + ([2] if odd else []))
            nums = [rng.choice(NUMBERS if odd and rng.random() < 0.2 else PLAIN_NUMBERS) for _ in range(k)]
            lines.append("v " + rng.choice([" ", "  ", "\t"]).join(nums))
            nv += 1
        elif r < 0.75:
            k = rng.choice([3, 3, 3, 4, 4] + ([2, 5] if odd else []))
            idx = [rng.choice(INDICES) if odd and rng.random() < 0.2 else
                   rng.choice(["%d", "%d/%d", "%d//%d", "%d/%d/%d", "-%d"]).replace("%d", str(rng.randint(1, 4)))
                   for _ in range(k)]
            lines.append("f " + " ".join(idx))
        else:
            lines.append(rng.choice(EXTRA if odd else EXTRA[:14]))
    ending = rng.choice(ENDINGS) if odd else rng.choice(["\n", "\r\n"])
    text = ending.join(lines) + (ending if rng.random() < 0.8 else "")
    data = text.encode("utf-8")
    if odd and rng.random() < 0.1:
        data += b"\xff\xfe v 1 2 3\n"  # invalid UTF-8
    return data


def test_made_up_files_match_or_decline():
    rng = random.Random(20240611)
    read = 0
    for _ in range(3000):
        data = _random_obj(rng)
        righthand = rng.random() < 0.7
        ref = _reference(data, righthand)
        fast = mesh_io._obj_fast(data, righthand)
        if fast is None:
            continue
        read += 1
        assert not isinstance(ref, type), f"_obj refuses {data!r} ({ref.__name__}), the numpy reader read it"
        assert _same(fast, ref), data
    assert read > 1500  # the exporter-like ones at least


@pytest.mark.parametrize("token", NUMBERS + ["%.17g" % x for x in np.random.default_rng(3).normal(size=50) * 1e3]
                         + ["%.*f" % (d, x) for d, x in zip(range(16), np.random.default_rng(4).random(16))])
def test_coordinates_parse_as_float(token):
    data = f"v {token} 1 2\nv 0 0 0\nv 1 0 0\nf 1 2 3\n".encode()
    fast = mesh_io._obj_fast(data, True)
    ref = _reference(data, True)
    if fast is not None:
        assert _same(fast, ref)


def test_quads_negative_indices_and_first_object_only():
    text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf -4/1 -3//2 -1/3/3\no second\nf 1 2 3\nv 2 2 2\n"
    for righthand in (True, False):
        fast = mesh_io._obj_fast(text.encode(), righthand)
        assert fast is not None and _same(fast, _reference(text.encode(), righthand))
        assert fast[0].shape == (5, 3) and fast[1].shape == (3, 3)
