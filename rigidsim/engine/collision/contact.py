"""The contact rows: what a collider writes, and MuJoCo's completion of the contact frame.

Env ``b``'s contacts are rows of ``d.contact[b, k, :]`` (floats: dist, pos, frame; columns in `layout`)
and ``d.contact_i[b, k, :]`` (ints: geom1, geom2, the candidate pair's row); ``d.ncon[b]`` counts them.
A collider writes dist, pos, the normal (frame row 0, from geom 1 to geom 2) and optionally a first
tangent (frame row 1; zero when it has none), as MuJoCo's mjPreContact; the driver completes the frame.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import CON_DIST, CON_FRAME, CON_POS


@ti.func
def put(d: ti.template(), b, slot, cap, dist, pos, normal, tangent):
    """Contact row `slot` of env `b` := (dist, pos, normal, tangent); nothing is written at or past `cap`
    (the caller counts the rows and reports an overflow)."""
    if slot < cap:
        d.contact[b, slot, CON_DIST] = dist
        for k in ti.static(range(3)):
            d.contact[b, slot, CON_POS + k] = pos[k]
            d.contact[b, slot, CON_FRAME + k] = normal[k]
            d.contact[b, slot, CON_FRAME + 3 + k] = tangent[k]


@ti.func
def make_frame(normal, tangent):
    """mju_makeFrame: the normal normalized, the tangent made orthogonal to it ((0, 1, 0), or (0, 0, 1)
    when the normal is near y, if none was given), and their cross product: the 9-vector frame."""
    x, _ = sm.normalize3(normal)
    y = tangent
    if y[0] * y[0] + y[1] * y[1] + y[2] * y[2] < 0.25:
        y = ti.Vector([0.0, 1.0, 0.0]) if (x[1] < 0.5 and x[1] > -0.5) else ti.Vector([0.0, 0.0, 1.0])
    dxy = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    y = ti.Vector([y[0] - x[0] * dxy, y[1] - x[1] * dxy, y[2] - x[2] * dxy])
    y, _ = sm.normalize3(y)
    z = sm.cross3(x, y)
    return ti.Vector([x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]])
