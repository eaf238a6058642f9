"""Fluid forces of one env: MuJoCo's inertia-box model (mj_inertiaBoxFluidModel).

Each body with mass is replaced by the box with its mass and inertia; with
``opt.viscosity`` it feels Stokes drag on the equivalent sphere, with
``opt.density`` quadratic drag on the box faces, both against its velocity
relative to ``opt.wind``, in the body's inertial frame. The wrench acts at
the body's centre of mass and goes into qfrc_fluid (then qfrc_passive).
The ellipsoid model (geom fluidshape) is refused at load.
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.support import apply_ft
from rigidsim.engine.layout import (
    BODY_INERTIA, BODY_MASS, BODY_ROOTID, CVEL, MINVAL, OPT_DENSITY, OPT_VISCOSITY, OPT_WIND, QFRC_FLUID,
    SUBTREE_COM, SZ_NBODY, XIMAT, XIPOS,
)

PI = 3.14159265358979323846


@ti.func
def fluid(m: ti.template(), d: ti.template(), b):
    """qfrc_fluid (zeroed by the caller) from the inertia-box model; returns whether the fluid is on (density
    or viscosity > 0)."""
    density = m.opt_f[OPT_DENSITY]
    viscosity = m.opt_f[OPT_VISCOSITY]
    on = 1 if (density > 0.0 or viscosity > 0.0) else 0
    if on:
        wind = ti.Vector([m.opt_f[OPT_WIND], m.opt_f[OPT_WIND + 1], m.opt_f[OPT_WIND + 2]])
        for i in range(1, m.opt_i[SZ_NBODY]):
            mass = m.body_f[i, BODY_MASS]
            if mass >= MINVAL:
                inertia = sm.getm(m.body_f, i, BODY_INERTIA, 3)
                box = ti.Vector([ti.sqrt(ti.max(MINVAL, inertia[1] + inertia[2] - inertia[0]) / mass * 6.0),
                                 ti.sqrt(ti.max(MINVAL, inertia[0] + inertia[2] - inertia[1]) / mass * 6.0),
                                 ti.sqrt(ti.max(MINVAL, inertia[0] + inertia[1] - inertia[2]) / mass * 6.0)])
                # the body's velocity at its com, in its inertial frame (mj_objectVelocity, local)
                xipos = sm.getv(d.body, b, i, XIPOS, 3)
                ximat = sm.getv(d.body, b, i, XIMAT, 9)
                cvel = sm.getv(d.body, b, i, CVEL, 6)
                ang = ti.Vector([cvel[0], cvel[1], cvel[2]])
                dif = xipos - sm.getv(d.body, b, m.body_i[i, BODY_ROOTID], SUBTREE_COM, 3)
                c = sm.cross3(dif, ang)
                lin = ti.Vector([cvel[3] - c[0], cvel[4] - c[1], cvel[5] - c[2]])
                lang = sm.rot_vec_mat_t(ang, ximat)
                llin = sm.rot_vec_mat_t(lin, ximat) - sm.rot_vec_mat_t(wind, ximat)
                lfrc_t = sm.zero3()
                lfrc_f = sm.zero3()
                if viscosity > 0.0:
                    diam = (box[0] + box[1] + box[2]) / 3.0
                    lfrc_t = lang * (-PI * diam * diam * diam * viscosity)
                    lfrc_f = llin * (-3.0 * PI * diam * viscosity)
                if density > 0.0:
                    lfrc_f[0] = lfrc_f[0] - (0.5 * density * box[1] * box[2] * ti.abs(llin[0]) * llin[0])
                    lfrc_f[1] = lfrc_f[1] - (0.5 * density * box[0] * box[2] * ti.abs(llin[1]) * llin[1])
                    lfrc_f[2] = lfrc_f[2] - (0.5 * density * box[0] * box[1] * ti.abs(llin[2]) * llin[2])
                    b4 = ti.Vector([box[0] * box[0] * box[0] * box[0], box[1] * box[1] * box[1] * box[1],
                                    box[2] * box[2] * box[2] * box[2]])
                    lfrc_t[0] = lfrc_t[0] - (density * box[0] * (b4[1] + b4[2]) * ti.abs(lang[0]) * lang[0] / 64.0)
                    lfrc_t[1] = lfrc_t[1] - (density * box[1] * (b4[0] + b4[2]) * ti.abs(lang[1]) * lang[1] / 64.0)
                    lfrc_t[2] = lfrc_t[2] - (density * box[2] * (b4[0] + b4[1]) * ti.abs(lang[2]) * lang[2] / 64.0)
                apply_ft(m, d, b, i, xipos, sm.rot_vec_mat(lfrc_f, ximat), sm.rot_vec_mat(lfrc_t, ximat), QFRC_FLUID,
                         True)
    return on
