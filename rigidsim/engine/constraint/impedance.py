"""The soft-constraint parameters of one row: MuJoCo's getsolparam, getimpedance and mj_makeImpedance.

A row's solref (time constant and damping ratio, or the direct form -stiffness, -damping) and solimp
(d0, dwidth, width, midpoint, power) give its impedance imp in (0, 1) as a function of the violation
|pos - margin|: d0 at zero, dwidth from `width` on, between them a spline of the given power bent at the
midpoint. From imp and the row's approximate inverse inertia diagA:

    R = max(mjMINVAL, (1 - imp) / imp * diagA),   D = 1 / R,
    K = 1 / (dwidth^2 tc^2 dr^2)  or  k / dwidth^2  (direct),   B = 2 / (dwidth tc)  or  b / dwidth,

K is zero for friction-loss rows and the friction rows of an elliptic contact (which take solreffriction
when it is set). Contacts then regularize their friction rows (`contact_r`). Before use, solref is checked
as MuJoCo checks it: mixed signs fall back to the default (0.02, 1) (solreffriction to (0, 0)), a standard
time constant is raised to at least two time steps unless refsafe is disabled, and solimp is clamped
(d0, dwidth, midpoint to [1e-4, 0.9999], width >= 0, power >= 1).
"""

from rigidsim.engine.lang import ti

from rigidsim.engine.layout import DSBL_REFSAFE, MINVAL, OPT_DISABLEFLAGS, OPT_TIMESTEP

MINIMP, MAXIMP = 0.0001, 0.9999  # mjMINIMP, mjMAXIMP


@ti.func
def check_solref(m: ti.template(), ref, default0, default1):
    """solref as getsolparam uses it: mixed signs -> (default0, default1); refsafe on a standard time constant."""
    out = ref
    if (out[0] > 0.0) != (out[1] > 0.0):
        out = ti.Vector([default0, default1])
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_REFSAFE) == 0 and out[0] > 0.0:
        out[0] = ti.max(out[0], 2.0 * m.opt_f[OPT_TIMESTEP])
    return out


@ti.func
def check_solimp(imp):
    """solimp clamped to its valid ranges."""
    out = imp
    out[0] = ti.min(MAXIMP, ti.max(MINIMP, imp[0]))
    out[1] = ti.min(MAXIMP, ti.max(MINIMP, imp[1]))
    out[2] = ti.max(0.0, imp[2])
    out[3] = ti.min(MAXIMP, ti.max(MINIMP, imp[3]))
    out[4] = ti.max(1.0, imp[4])
    return out


@ti.func
def _power(a, p):
    """a**p, exact for the common powers 1 and 2."""
    out = a
    if p == 2.0:
        out = a * a
    elif p != 1.0:
        out = ti.pow(a, p)
    return out


@ti.func
def impedance(solimp, pos, margin):
    """getimpedance: (imp, d imp / d pos) at violation pos - margin."""
    imp = 0.5 * (solimp[0] + solimp[1])
    impP = 0.0
    if not (solimp[0] == solimp[1] or solimp[2] <= MINVAL):
        x = (pos - margin) / solimp[2]
        sgn = 1.0
        if x < 0.0:
            x = -x
            sgn = -1.0
        if x >= 1.0:
            imp = solimp[1]
        elif x <= 0.0:
            imp = solimp[0]
        else:
            y = x
            yP = 1.0
            p = solimp[4]
            if p != 1.0:
                if x <= solimp[3]:
                    a = 1.0 / _power(solimp[3], p - 1.0)
                    y = a * _power(x, p)
                    yP = p * a * _power(x, p - 1.0)
                else:
                    bb = 1.0 / _power(1.0 - solimp[3], p - 1.0)
                    y = 1.0 - bb * _power(1.0 - x, p)
                    yP = p * bb * _power(1.0 - x, p - 1.0)
            imp = solimp[0] + y * (solimp[1] - solimp[0])
            impP = yP * sgn * (solimp[1] - solimp[0]) / solimp[2]
    return imp, impP


@ti.func
def stiffness_damping(ref, dwidth, frictional):
    """(K, B) of a row from its checked solref and solimp[1] (K = 0 for frictional rows)."""
    k = 0.0
    if not frictional:
        if ref[0] > 0.0:
            k = 1.0 / ti.max(MINVAL, dwidth * dwidth * ref[0] * ref[0] * ref[1] * ref[1])
        else:
            k = -ref[0] / ti.max(MINVAL, dwidth * dwidth)
    bb = 0.0
    if ref[1] > 0.0:
        bb = 2.0 / ti.max(MINVAL, dwidth * ref[0])
    else:
        bb = -ref[1] / ti.max(MINVAL, dwidth)
    return k, bb


@ti.func
def regularizer(imp, diag_a):
    """R = max(mjMINVAL, (1 - imp) * diagA / imp)."""
    return ti.max(MINVAL, (1.0 - imp) * diag_a / imp)
