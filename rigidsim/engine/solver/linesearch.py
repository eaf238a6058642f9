"""The primal solver's exact line search (MuJoCo's PrimalPrepare, PrimalEval, updateBracket, PrimalSearch).

Along the search direction v the cost is piecewise quadratic in the step alpha: the Gauss part
alpha^2 v'Mv/2 + alpha v'(Ma - qfrc_smooth), one quadratic per active row, Huber pieces for friction loss
and three zones per elliptic cone. `prepare` stores, per row, the quadratic
[D jar^2 / 2, D Jv jar, D Jv^2 / 2] in EFC_QUAD (an elliptic contact sums its rows there and keeps its cone
quantities U0, V0, UU | UV, VV, Dm in the EFC_QUAD slots of its second and third rows), and `evaluate`
returns the cost change from alpha = 0 with its first two derivatives. `search` then takes a Newton step
from 0, walks one-sidedly with Newton steps until the slope changes sign and narrows the bracket with the
midpoint and the Newton points of both ends, accepting a point whose slope is below
gtol = tol ls_tol |v| / scale.

`search` evaluates the cost at one place: it is written as a loop over evaluations whose `stage` says what
the point is for, so the row loop is compiled once.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import (
    CNSTR_CONTACT_ELLIPTIC, CNSTR_EQUALITY, CNSTR_FRICTION_DOF, CNSTR_FRICTION_TENDON, EFC_D, EFC_DIM,
    EFC_FRICTION, EFC_FRICTIONLOSS, EFC_JAREF, EFC_JV, EFC_MU, EFC_QUAD, EFC_R, EFC_TYPE, MINVAL,
    OPT_LS_ITERATIONS, OPT_LS_TOLERANCE, OPT_TOLERANCE, QFRC_SMOOTH, SV_MA, SV_MV, SV_SEARCH,
)
from rigidsim.engine.solver.linalg import dots, row_arrays, row_bases
from rigidsim.engine.solver.variant import ELLIPTIC

# what the point being evaluated is for
_P0, _P1, _ONESIDED, _P1NEXT, _MID, _UPD1, _UPD2 = 0, 1, 2, 3, 4, 5, 6
# the rows of search's point table
_S_P0, _S_P1, _S_P2, _S_P1NEXT, _S_P2NEXT, _S_MID = 0, 1, 2, 3, 4, 5


@ti.func
def prepare(d: ti.template(), b, nvi, nrow, variant: ti.template()):
    """The rows' quadratics for the direction v in solver_v[:, SV_SEARCH], from Jv in EFC_JV (the caller's)."""
    fa, ia, la, fs, js, ls = ti.static(*row_arrays(d))
    fb, ib, lb = row_bases(d, b)
    c = 0
    while c < nrow:
        r = la[lb + c * ls]
        fr = fb + r * fs  # the row's floats and ints, at flat offsets (the env strides loaded once)
        ir = ib + r * js
        jv = fa[fr + EFC_JV]
        jar = fa[fr + EFC_JAREF]
        dr = fa[fr + EFC_D]
        dj0 = dr * jar
        q0 = jar * dj0
        q1 = jv * dj0
        q2 = jv * dr * jv
        step = 1
        if ti.static(variant & ELLIPTIC):
            if ia[ir + EFC_TYPE] == CNSTR_CONTACT_ELLIPTIC:
                dim = ia[ir + EFC_DIM]
                step = dim
                mu = fa[fr + EFC_MU]
                for j in range(1, dim):
                    jj = fa[fr + j * fs + EFC_JAREF]
                    vj = fa[fr + j * fs + EFC_JV]
                    djj = fa[fr + j * fs + EFC_D] * jj
                    q0 += jj * djj
                    q1 += vj * djj
                    q2 += vj * fa[fr + j * fs + EFC_D] * vj
                uu = 0.0
                uv = 0.0
                vv = 0.0
                for j in range(1, dim):
                    frj = fa[fr + j * fs + EFC_FRICTION]
                    uj = fa[fr + j * fs + EFC_JAREF] * frj
                    vj = fa[fr + j * fs + EFC_JV] * frj
                    uu += uj * uj
                    uv += uj * vj
                    vv += vj * vj
                fa[fr + 1 * fs + EFC_QUAD] = jar * mu
                fa[fr + 1 * fs + EFC_QUAD + 1] = jv * mu
                fa[fr + 1 * fs + EFC_QUAD + 2] = uu
                fa[fr + 2 * fs + EFC_QUAD] = uv
                fa[fr + 2 * fs + EFC_QUAD + 1] = vv
                fa[fr + 2 * fs + EFC_QUAD + 2] = dr / ((mu * mu) * (1.0 + (mu * mu)))
        fa[fr + EFC_QUAD] = 0.5 * q0
        fa[fr + EFC_QUAD + 1] = q1
        fa[fr + EFC_QUAD + 2] = 0.5 * q2
        c += step


@ti.func
def _huber(x, f, rf, dd):
    """A friction-loss row's cost at jar = x: quadratic D x^2 / 2 inside |x| < R f, linear outside."""
    res = 0.0
    if -rf < x and x < rf:
        res = 0.5 * dd * x * x
    elif x <= -rf:
        res = f * (-0.5 * rf - x)
    else:
        res = f * (-0.5 * rf + x)
    return res


@ti.func
def _huber_change(start, x, f, rf, dd):
    """The friction-loss cost at x less that at start, without cancellation when both are in one zone."""
    s0 = 0
    if not (-rf < start and start < rf):
        s0 = -1 if start <= -rf else 1
    s1 = 0
    if not (-rf < x and x < rf):
        s1 = -1 if x <= -rf else 1
    res = 0.0
    if s0 == 0 and s1 == 0:
        res = 0.5 * dd * (x - start) * (x + start)
    elif s0 == -1 and s1 == -1:
        res = f * (start - x)
    elif s0 == 1 and s1 == 1:
        res = f * (x - start)
    else:
        res = _huber(x, f, rf, dd) - _huber(start, f, rf, dd)
    return res


@ti.func
def _cone_zone(n, tsqr, mu):
    """The zone of an elliptic contact at normal N and tangent T^2: 1 above the cone (satisfied), 2 below
    the dual cone (quadratic), 3 between (cone); returns (zone, T)."""
    zone = 0
    t = 0.0
    if tsqr <= 0.0:
        zone = 2 if n < 0.0 else 1
    else:
        t = ti.sqrt(tsqr)
        if n >= mu * t:
            zone = 1
        elif mu * n + t <= 0.0:
            zone = 2
        else:
            zone = 3
    return zone, t


@ti.func
def _cone_change(q0, q1, q2, u0, v0, uu, uv, vv, dm, alpha, mu):
    """An elliptic contact's cost at alpha less that at 0, per pair of zones (the middle-to-middle case in
    a form that avoids cancellation)."""
    z0, t0 = _cone_zone(u0, uu, mu)
    n = u0 + alpha * v0
    za, t = _cone_zone(n, uu + alpha * (2.0 * uv + alpha * vv), mu)
    res = 0.0
    if z0 == 2 and za == 2:
        res = alpha * alpha * q2 + alpha * q1
    elif z0 == 3 and za == 3:
        tsqr_delta = alpha * (2.0 * uv + alpha * vv)
        t_delta = tsqr_delta / (t + t0)
        r_delta = alpha * v0 - mu * t_delta
        r0 = u0 - mu * t0
        res = 0.5 * dm * r_delta * (2.0 * r0 + r_delta)
    elif z0 == 3 and za == 2:
        boundary0 = mu * u0 + t0
        res = alpha * (alpha * q2 + q1) + 0.5 * dm * boundary0 * boundary0
    elif z0 == 2 and za == 3:
        boundary = mu * n + t
        res = alpha * (alpha * q2 + q1) - 0.5 * dm * boundary * boundary
    elif z0 == 1 and za == 2:
        res = alpha * alpha * q2 + alpha * q1 + q0
    elif z0 == 1 and za == 3:
        rr = n - mu * t
        res = 0.5 * dm * rr * rr
    elif z0 == 3 and za == 1:
        r0 = u0 - mu * t0
        res = -0.5 * dm * r0 * r0
    elif z0 == 2 and za == 1:
        res = -q0
    return res


@ti.func
def evaluate(d: ti.template(), b, nrow, alpha, g1, g2, variant: ti.template()):
    """The cost change from alpha = 0 to alpha along the prepared direction and its first two derivatives:
    (alpha, cost, slope, curvature); a curvature that is not positive is replaced by mjMINVAL."""
    fa, ia, la, fs, js, ls = ti.static(*row_arrays(d))
    fb, ib, lb = row_bases(d, b)
    cost = 0.0
    d0 = 0.0
    d1 = 0.0
    t0 = 0.0
    t1 = g1
    t2 = g2
    c = 0
    while c < nrow:
        r = la[lb + c * ls]
        fr = fb + r * fs  # the row's floats and ints, at flat offsets (the env strides loaded once)
        ir = ib + r * js
        typ = ia[ir + EFC_TYPE]
        step = 1
        if typ == CNSTR_EQUALITY:
            t1 += fa[fr + EFC_QUAD + 1]
            t2 += fa[fr + EFC_QUAD + 2]
        elif typ == CNSTR_FRICTION_DOF or typ == CNSTR_FRICTION_TENDON:
            start = fa[fr + EFC_JAREF]
            dirn = fa[fr + EFC_JV]
            x = start + alpha * dirn
            f = fa[fr + EFC_FRICTIONLOSS]
            dd = fa[fr + EFC_D]
            rf = fa[fr + EFC_R] * f
            cost += _huber_change(start, x, f, rf, dd)
            if -rf < x and x < rf:
                d0 += dd * x * dirn
                d1 += dd * dirn * dirn
            elif x <= -rf:
                d0 += -f * dirn
            else:
                d0 += f * dirn
        elif typ != CNSTR_CONTACT_ELLIPTIC:
            start = fa[fr + EFC_JAREF]
            x = start + alpha * fa[fr + EFC_JV]
            cost0 = 0.0
            if start < 0.0:
                cost0 = fa[fr + EFC_QUAD]
            if x < 0.0:
                t0 += fa[fr + EFC_QUAD] - cost0
                t1 += fa[fr + EFC_QUAD + 1]
                t2 += fa[fr + EFC_QUAD + 2]
            else:
                cost -= cost0
        elif ti.static(variant & ELLIPTIC):  # elliptic rows exist only when the variant compiles them
            step = ia[ir + EFC_DIM]
            mu = fa[fr + EFC_MU]
            q0 = fa[fr + EFC_QUAD]
            q1 = fa[fr + EFC_QUAD + 1]
            q2 = fa[fr + EFC_QUAD + 2]
            u0 = fa[fr + 1 * fs + EFC_QUAD]
            v0 = fa[fr + 1 * fs + EFC_QUAD + 1]
            uu = fa[fr + 1 * fs + EFC_QUAD + 2]
            uv = fa[fr + 2 * fs + EFC_QUAD]
            vv = fa[fr + 2 * fs + EFC_QUAD + 1]
            dm = fa[fr + 2 * fs + EFC_QUAD + 2]
            cost += _cone_change(q0, q1, q2, u0, v0, uu, uv, vv, dm, alpha, mu)
            n = u0 + alpha * v0
            tsqr = uu + alpha * (2.0 * uv + alpha * vv)
            if tsqr <= 0.0:
                if n < 0.0:
                    d0 += 2.0 * alpha * q2 + q1
                    d1 += 2.0 * q2
            else:
                t = ti.sqrt(tsqr)
                if not (n >= mu * t):  # above the cone: no cost
                    if mu * n + t <= 0.0:
                        d0 += 2.0 * alpha * q2 + q1
                        d1 += 2.0 * q2
                    else:
                        n1 = v0
                        tt1 = (uv + alpha * vv) / t
                        tt2 = vv / t - (uv + alpha * vv) * tt1 / (t * t)
                        d0 += dm * (n - mu * t) * (n1 - mu * tt1)
                        d1 += dm * ((n1 - mu * tt1) * (n1 - mu * tt1) + (n - mu * t) * (-mu * tt2))
        c += step
    cost += alpha * alpha * t2 + alpha * t1 + t0
    d0 += 2.0 * alpha * t2 + t1
    d1 += 2.0 * t2
    if d1 <= 0.0:
        d1 = MINVAL
    return ti.Vector([alpha, cost, d0, d1])


@ti.func
def _copy(pts: ti.template(), dst, src):
    """Row src of the local point table copied into row dst, in place (runtime rows: one small copy)."""
    for e in ti.static(range(4)):
        pts[dst, e] = pts[src, e]


@ti.func
def search(m: ti.template(), d: ti.template(), b, nvi, nrow, scale, variant: ti.template()):
    """The step along solver_v[:, SV_SEARCH] that minimizes the cost (within the gradient tolerance);
    returns (alpha, improvement = cost(0) - cost(alpha)). alpha = 0 when the direction is below mjMINVAL
    or no point improved. The caller gives Mv and Jv of the direction in SV_MV and EFC_JV (primal computes
    them with its own M and J products: one compiled copy of each)."""
    tol = m.opt_f[OPT_TOLERANCE] * m.opt_f[OPT_LS_TOLERANCE]
    lsmax = m.opt_i[OPT_LS_ITERATIONS]
    # |v|^2 and the Gauss quadratic's coefficients (v'Ma - qfrc_smooth'v, v'Mv / 2) in one pass
    sums = dots(d, b, nvi, (
        (d.solver_v, SV_SEARCH, d.solver_v, SV_SEARCH), (d.solver_v, SV_SEARCH, d.solver_v, SV_MA),
        (d.dof, QFRC_SMOOTH, d.solver_v, SV_SEARCH), (d.solver_v, SV_SEARCH, d.solver_v, SV_MV)))
    snorm = ti.sqrt(sums[0])
    alpha = 0.0
    improvement = 0.0
    if snorm >= MINVAL:
        gtol = tol * snorm / scale
        g1 = sums[1] - sums[2]
        g2 = 0.5 * sums[3]
        prepare(d, b, nvi, nrow, variant)
        # the points (alpha, cost, slope, curvature), one row each: p0, p1, p2, p1next, p2next, pmid (rows
        # indexed at run time: each copy and Newton step is compiled once, not once per named point)
        pts = ti.Matrix.zero(float, 6, 4)
        b2 = 0
        direction = 1.0
        lsiter = 0
        stage = _P0
        slot = _S_P0  # the row the next evaluation goes to
        at = 0.0
        done = False
        while not done:
            pt = evaluate(d, b, nrow, at, g1, g2, variant)
            lsiter += 1
            for e in ti.static(range(4)):
                pts[slot, e] = pt[e]
            walk = False  # p1 is new and did not converge: one more one-sided step, or start the bracket
            bracket = False  # go to the head of the bracketing loop
            take = -1  # the row of the accepted point
            frm = -1  # the row whose Newton point is evaluated next (-1 with stage _MID: the midpoint)
            if stage == _P0:
                stage = _P1
                slot = _S_P1
                frm = _S_P0
            elif stage == _P1:
                if ti.abs(pts[_S_P1, 2]) < gtol and (pts[_S_P1, 0] == 0.0 or pts[_S_P1, 1] < 0.0):
                    take = _S_P1
                else:
                    direction = 1.0 if pts[_S_P1, 2] < 0.0 else -1.0
                    _copy(pts, _S_P2, _S_P0)
                    walk = True
            elif stage == _ONESIDED:
                if ti.abs(pts[_S_P1, 2]) < gtol and pts[_S_P1, 1] < 0.0:
                    take = _S_P1
                else:
                    walk = True
            elif stage == _MID:
                # the first of p1next, p2next, pmid whose slope is within gtol, or a later one that costs less
                bestcost = 0.0
                for cand in range(_S_P1NEXT, _S_MID + 1):
                    if ti.abs(pts[cand, 2]) < gtol and (take == -1 or pts[cand, 1] < bestcost):
                        bestcost = pts[cand, 1]
                        take = cand
                if take < 0:
                    # updateBracket of p1, then of p2, with the candidates p1next, p2next, pmid in turn: a
                    # candidate replaces the end when both slopes have one sign and its is nearer zero
                    b1 = 0
                    for end in range(_S_P1, _S_P2 + 1):
                        flag = 0
                        for cand in range(_S_P1NEXT, _S_MID + 1):
                            qs = pts[end, 2]
                            cs = pts[cand, 2]
                            fl = 0
                            if qs < 0.0 and cs < 0.0 and qs < cs:
                                fl = 1
                            elif qs > 0.0 and cs > 0.0 and qs > cs:
                                fl = 2
                            if fl != 0:
                                _copy(pts, end, cand)
                                flag = fl
                        if end == _S_P1:
                            b1 = flag
                        else:
                            b2 = flag
                    if b1 == 0 and b2 == 0:
                        # no bracket can shrink: numerical accuracy reached, take the midpoint
                        take = _S_MID
                    elif b1 != 0:
                        stage = _UPD1
                        slot = _S_P1NEXT
                        frm = _S_P1
                    else:
                        stage = _UPD2
                        slot = _S_P2NEXT
                        frm = _S_P2
            elif stage == _UPD1 and b2 != 0:
                stage = _UPD2
                slot = _S_P2NEXT
                frm = _S_P2
            else:  # _P1NEXT, _UPD1 without a p2 update, _UPD2
                bracket = True
            if walk:
                if pts[_S_P1, 2] * direction <= -gtol and lsiter < lsmax:
                    _copy(pts, _S_P2, _S_P1)
                    stage = _ONESIDED
                    slot = _S_P1
                    frm = _S_P1
                elif lsiter >= lsmax:
                    take = _S_P1  # could not bracket
                else:
                    _copy(pts, _S_P2NEXT, _S_P1)
                    stage = _P1NEXT
                    slot = _S_P1NEXT
                    frm = _S_P1
            if bracket:
                if lsiter < lsmax:
                    stage = _MID
                    slot = _S_MID
                else:
                    # out of evaluations: the better bracket end if it improves, else no step
                    if pts[_S_P1, 1] <= pts[_S_P2, 1] and pts[_S_P1, 1] < 0.0:
                        take = _S_P1
                    elif pts[_S_P2, 1] <= pts[_S_P1, 1] and pts[_S_P2, 1] < 0.0:
                        take = _S_P2
                    done = True
            if take >= 0:
                alpha = pts[take, 0]
                improvement = -pts[take, 1]
                done = True
            elif not done:
                if frm >= 0:
                    at = pts[frm, 0] - pts[frm, 2] / pts[frm, 3]
                else:
                    at = 0.5 * (pts[_S_P1, 0] + pts[_S_P2, 0])
    return alpha, improvement
