"""MuJoCo 4.0's sensor history buffers, as ti.funcs: reading a delayed or held value (mju_historyRead,
zero-order hold, linear or cubic) and making room for a new sample (mju_historyInsert); `sensor.history_advance`
adds the samples each step.
"""

from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    MINVAL, SENS_DELAY, SENS_DIM, SENS_HISTADR, SENS_INTERP, SENS_NSAMPLE, SENS_PERIOD,
)

# A history sensor's buffer in d.history[b, adr:]: its last compute time, the cursor (where the newest sample
# is: the n samples form a ring, logical index 0 the oldest, n - 1 the newest), the n sample times, the n values
# (dim numbers each). `history_advance` adds a sample each step (mj_advance); `sensors` reads a delayed or
# held value from it (mju_historyRead).


@ti.func
def _phys(cursor, n, logical):
    """The ring slot of logical index `logical` (0: the oldest) when the newest is at `cursor`."""
    return (cursor + 1 + logical) % n


@ti.func
def _find(d: ti.template(), b, base, n, cursor, tq):
    """The logical index i with times[i - 1] < tq <= times[i]: 0 at or before the oldest, n after the newest
    (a binary search over the ring)."""
    res = 0
    if tq > d.history[b, base + 2 + _phys(cursor, n, n - 1)]:
        res = n
    elif tq > d.history[b, base + 2 + _phys(cursor, n, 0)]:
        lo = 0
        hi = n - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if d.history[b, base + 2 + _phys(cursor, n, mid)] < tq:
                lo = mid
            else:
                hi = mid
        res = hi
    return res


@ti.func
def reads_history(m: ti.template(), d: ti.template(), b, s):
    """Whether sensor s reads its buffer now: it has one, and a delay, or an interval not yet elapsed since
    its last compute."""
    res = 0
    if m.sens_i[s, SENS_NSAMPLE] > 0:
        if m.sens_f[s, SENS_DELAY] > 0:
            res = 1
        elif m.sens_f[s, SENS_PERIOD] > 0:
            res = d.history[b, m.sens_i[s, SENS_HISTADR]] + m.sens_f[s, SENS_PERIOD] > d.time[b]
    return res


@ti.func
def history_read(m: ti.template(), d: ti.template(), b, s, out: ti.template(), t, adr):
    """out[t, b, adr:adr + dim] = sensor s's value `delay` seconds ago from its buffer: the oldest or newest
    sample outside their range, a sample at its time, else the samples around it held (zoh), or interpolated
    (linear, or cubic: Hermite with finite-difference slopes, 0 at the ends)."""
    n = m.sens_i[s, SENS_NSAMPLE]
    dim = m.sens_i[s, SENS_DIM]
    base = m.sens_i[s, SENS_HISTADR]
    interp = m.sens_i[s, SENS_INTERP]
    cursor = ti.cast(d.history[b, base + 1], ti.i32)
    times = base + 2
    vals = base + 2 + n
    tq = d.time[b] - m.sens_f[s, SENS_DELAY]
    lo = _phys(cursor, n, 0)
    hi = lo
    alpha = 0.0
    i = 0
    if tq <= d.history[b, times + lo] + MINVAL:
        hi = lo
    elif tq >= d.history[b, times + _phys(cursor, n, n - 1)] - MINVAL:
        lo = _phys(cursor, n, n - 1)
        hi = lo
    else:
        i = _find(d, b, base, n, cursor, tq)
        hi = _phys(cursor, n, i)
        lo = hi
        if ti.abs(tq - d.history[b, times + hi]) >= MINVAL:
            lo = _phys(cursor, n, i - 1)
            if interp == 0:
                hi = lo
            else:
                alpha = (tq - d.history[b, times + lo]) / (d.history[b, times + hi] - d.history[b, times + lo])
    h = d.history[b, times + hi] - d.history[b, times + lo]
    a2 = alpha * alpha
    a3 = a2 * alpha
    for k in range(dim):
        vlo = d.history[b, vals + lo * dim + k]
        vhi = d.history[b, vals + hi * dim + k]
        x = vlo
        if lo != hi:
            if interp == 1:
                x = vlo + alpha * (vhi - vlo)
            else:
                slope_lo = 0.0
                if i > 1:
                    p = _phys(cursor, n, i - 2)
                    slope_lo = (vhi - d.history[b, vals + p * dim + k]) / (d.history[b, times + hi]
                                                                           - d.history[b, times + p])
                slope_hi = 0.0
                if i < n - 1:
                    q = _phys(cursor, n, i + 1)
                    slope_hi = (d.history[b, vals + q * dim + k] - vlo) / (d.history[b, times + q]
                                                                           - d.history[b, times + lo])
                x = ((2 * a3 - 3 * a2 + 1) * vlo + (a3 - 2 * a2 + alpha) * h * slope_lo
                     + (-2 * a3 + 3 * a2) * vhi + (a3 - a2) * h * slope_hi)
        out[t, b, adr + k] = x


@ti.func
def history_insert(d: ti.template(), b, base, n, dim, tq):
    """Make room for a sample at time tq in the buffer at `base` (mju_historyInsert): the slot of a sample
    already at tq, else the oldest's (tq before it, or past the newest: the ring turns), else the samples
    before tq shift down a slot, dropping the oldest. Returns the address of the slot's values."""
    cursor = ti.cast(d.history[b, base + 1], ti.i32)
    times = base + 2
    vals = base + 2 + n
    i = _find(d, b, base, n, cursor, tq)
    slot = -1
    if i < n:
        if ti.abs(tq - d.history[b, times + _phys(cursor, n, i)]) < MINVAL:
            slot = _phys(cursor, n, i)
    if slot < 0:
        if i == 0:
            slot = _phys(cursor, n, 0)
        elif i == n:
            cursor = (cursor + 1) % n
            d.history[b, base + 1] = cursor
            slot = cursor
        else:
            for j in range(i - 1):
                src = _phys(cursor, n, j + 1)
                dst = _phys(cursor, n, j)
                d.history[b, times + dst] = d.history[b, times + src]
                for k in range(dim):
                    d.history[b, vals + dst * dim + k] = d.history[b, vals + src * dim + k]
            slot = _phys(cursor, n, i - 1)
        d.history[b, times + slot] = tq
    return vals + slot * dim
