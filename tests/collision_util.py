"""Run one collider ti.func on geometry given as numpy arrays, for the collider tests.

`run_collider(func, pos1, mat1, size1, pos2, mat2, size2, margin, cap=16)` runs ``func`` (a collider of
`rigidsim.engine.collision`, see its package docstring) once per row of the inputs (each [n, 3] / [n, 9]) and
returns, per row, a list of contacts ``(dist, pos[3], normal[3], tangent[3])`` as numpy, the order the
collider wrote them. The inputs are typically MuJoCo's geom_xpos / geom_xmat / geom_size for a geom pair of an
MjData, so the contacts can be compared with ``mj_collision``'s for the same pair.
"""

from __future__ import annotations

import numpy as np

from rigidsim.engine import runtime

runtime.init(64, "cpu")

from rigidsim.engine.lang import ti  # noqa: E402
from rigidsim.engine.kernels import _Flat, _Group  # noqa: E402
from rigidsim.engine.layout import NDCON, CON_DIST, CON_FRAME, CON_POS  # noqa: E402

ND = ti.types.ndarray()


@ti.kernel  # no fastcache: it cannot key a ti.func argument
def _collide(func: ti.template(), geo: ND, margin: ND, out: ND, count: ND, cap: ti.i32):
    for b in range(geo.shape[0]):
        pos1 = ti.Vector([geo[b, k] for k in ti.static(range(3))])
        mat1 = ti.Vector([geo[b, 3 + k] for k in ti.static(range(9))])
        size1 = ti.Vector([geo[b, 12 + k] for k in ti.static(range(3))])
        pos2 = ti.Vector([geo[b, 15 + k] for k in ti.static(range(3))])
        mat2 = ti.Vector([geo[b, 18 + k] for k in ti.static(range(9))])
        size2 = ti.Vector([geo[b, 27 + k] for k in ti.static(range(3))])
        count[b] = func(_Group(contact=_Flat(out, cap * NDCON, NDCON)), b, 0, cap, pos1, mat1, size1, pos2, mat2, size2, margin[b])


def run_collider(func, pos1, mat1, size1, pos2, mat2, size2, margin, cap: int = 16):
    rows = [np.atleast_2d(np.asarray(a, np.float64)) for a in (pos1, mat1, size1, pos2, mat2, size2)]
    n = max(r.shape[0] for r in rows)
    geo = np.ascontiguousarray(np.concatenate([np.broadcast_to(r, (n, r.shape[1])) for r in rows], axis=1))
    assert geo.shape[1] == 30, geo.shape
    marg = np.ascontiguousarray(np.broadcast_to(np.asarray(margin, np.float64), (n,)))
    out = np.zeros(n * cap * NDCON)
    count = np.zeros(n, np.int32)
    _collide(func, geo, marg, out, count, cap)
    out = out.reshape(n, cap, NDCON)
    res = []
    for b in range(n):
        res.append([(out[b, k, CON_DIST], out[b, k, CON_POS:CON_POS + 3].copy(),
                     out[b, k, CON_FRAME:CON_FRAME + 3].copy(), out[b, k, CON_FRAME + 3:CON_FRAME + 6].copy())
                    for k in range(min(int(count[b]), cap))])
    return res


def make_frame(normal, tangent) -> np.ndarray:
    """mju_makeFrame in numpy: the [3, 3] contact frame (rows: normal, tangent, their cross product) from a
    collider's normal and first tangent, as MuJoCo's data.contact.frame holds it (reshaped)."""
    x = np.asarray(normal, np.float64)
    x = x / np.sqrt(x @ x)
    y = np.asarray(tangent, np.float64)
    if y @ y < 0.25:
        y = np.array([0.0, 1.0, 0.0]) if -0.5 < x[1] < 0.5 else np.array([0.0, 0.0, 1.0])
    y = y - x * (x @ y)
    y = y / np.sqrt(y @ y)
    return np.stack([x, y, np.cross(x, y)])
