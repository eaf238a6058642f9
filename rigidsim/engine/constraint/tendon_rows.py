"""A tendon's constraint rows: MuJoCo's mj_instantiateFriction and mj_instantiateLimit for tendons, with the
dense tendon Jacobian of `tendon.py` (d.ten_J row t: d length / d qvel).

- friction loss of tendon t (tendon_frictionloss > 0), after the dofs': J = ten_J[t], pos = margin = 0,
  K = 0, solref_fri / solimp_fri.
- a limited tendon's limit, per side s = -1 (lower), +1 (upper) within the margin
  (dist = s (range[s] - length) < margin), after the joints': J = -s ten_J[t], pos = dist, solref_lim /
  solimp_lim.

Both take diagA = tendon_invweight0[t]. A row whose Jacobian is all zeros (a tendon that no dof moves) is
dropped, as MuJoCo's mj_addConstraint drops it.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.constraint.rows import place_span, soft_row
from rigidsim.engine.layout import (
    CNSTR_FRICTION_TENDON, CNSTR_LIMIT_TENDON, SZ_NTENDON, SZ_NV, TEN_FRICTIONLOSS, TEN_INVWEIGHT0, TEN_LENGTH,
    TEN_LIMITED, TEN_MARGIN, TEN_RANGE, TEN_SOLIMP_FRI, TEN_SOLIMP_LIM, TEN_SOLREF_FRI, TEN_SOLREF_LIM, EFC_JADR,
)


@ti.func
def _copy_tendon_row(m: ti.template(), d: ti.template(), b, r, t, scale):
    """efc_J row r = scale * ten_J row t; whether any entry is nonzero."""
    nonzero = False
    place_span(m, d, b, r, 1, ti.Vector([0, 0, 0, 0]), False)  # a whole row, every entry written below
    adr = d.efc_i[b, r, EFC_JADR]
    for c in range(m.opt_i[SZ_NV]):
        v = d.ten_J[b, t, c] * scale
        d.efc_J[b, adr + c] = v
        if v != 0.0:
            nonzero = True
    return nonzero


@ti.func
def tendon_friction_rows(m: ti.template(), d: ti.template(), b, r0):
    """mj_instantiateFriction for tendons; returns the next row."""
    r = r0
    for t in range(m.opt_i[SZ_NTENDON]):
        fl = m.ten_f[t, TEN_FRICTIONLOSS]
        if fl > 0.0:
            if _copy_tendon_row(m, d, b, r, t, 1.0):
                soft_row(m, d, b, r, CNSTR_FRICTION_TENDON, t, 0.0, 0.0, fl, m.ten_f[t, TEN_INVWEIGHT0],
                         sm.getm(m.ten_f, t, TEN_SOLREF_FRI, 2), sm.getm(m.ten_f, t, TEN_SOLIMP_FRI, 5), True)
                r += 1
    return r


@ti.func
def tendon_limit_rows(m: ti.template(), d: ti.template(), b, r0):
    """mj_instantiateLimit for tendons; returns the next row."""
    r = r0
    for t in range(m.opt_i[SZ_NTENDON]):
        if m.ten_i[t, TEN_LIMITED] != 0:
            value = d.ten[b, t, TEN_LENGTH]
            margin = m.ten_f[t, TEN_MARGIN]
            for s in range(2):  # a loop, not unrolled: one copy of the row code
                side = 2.0 * s - 1.0
                dist = side * (m.ten_f[t, TEN_RANGE + s] - value)
                if dist < margin:
                    if _copy_tendon_row(m, d, b, r, t, -side):
                        soft_row(m, d, b, r, CNSTR_LIMIT_TENDON, t, dist, margin, 0.0, m.ten_f[t, TEN_INVWEIGHT0],
                                 sm.getm(m.ten_f, t, TEN_SOLREF_LIM, 2), sm.getm(m.ten_f, t, TEN_SOLIMP_LIM, 5),
                                 False)
                        r += 1
    return r
