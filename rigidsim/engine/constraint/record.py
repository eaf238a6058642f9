"""What a frame of a scene with constraints records after xquat (`layout.frame_layout`): ncon, nefc, the
solver's iterations and whether it converged, qfrc_constraint, and with `contacts` where the frame's contacts
start in the launch's contact pool, and in the pool every contact of the frame: its geoms, position, normal,
dist and force.

The force is MuJoCo's mj_contactForce turned into world coordinates: the contact's rows' efc_force decoded
into the contact frame (elliptic: as they are; pyramidal: the normal force is the sum of the 2 (dim - 1)
edge forces, tangential k the difference of edge pair k times friction[k]), then
f_world = f_normal * normal + f_t1 * t1 + f_t2 * t2: the force geom 1 exerts on geom 2. A contact without
rows (in the gap) has zero force."""

from rigidsim.engine import lang
from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    CNSTR_CONTACT_PYRAMIDAL, CON_DIST, CON_EFCADR, CON_FRAME, CON_GEOM1, CON_GEOM2, CON_POS, CREC_DIST, CREC_FORCE,
    CREC_GEOM, CREC_NORMAL, CREC_POS, EFC_DIM, EFC_FORCE, EFC_FRICTION, EFC_TYPE, EFCN_CONVERGED, EFCN_NEFC,
    EFCN_NITER, LAUNCH_POOL_N, NCREC, CREC_SPLIT, QFRC_CONSTRAINT, SZ_NCONMAX, SZ_NV,
)


@ti.func
def contact_force(d: ti.template(), b, c):
    """The contact's force and torque in its own frame (normal, t1, t2, then the torsional and rolling
    torques), mj_contactForce: 6 numbers, zero past its condim."""
    f = ti.Vector([0.0] * 6)
    adr = d.contact_i[b, c, CON_EFCADR]
    if adr >= 0:
        dim = d.efc_i[b, adr, EFC_DIM]
        if d.efc_i[b, adr, EFC_TYPE] == CNSTR_CONTACT_PYRAMIDAL:
            fn = 0.0
            for k in range(2 * (dim - 1)):
                fn += d.efc[b, adr + k, EFC_FORCE]
            f[0] = fn
            for k in ti.static(range(5)):
                if k < dim - 1:
                    f[k + 1] = (d.efc[b, adr + 2 * k, EFC_FORCE] - d.efc[b, adr + 2 * k + 1, EFC_FORCE]) * \
                        d.efc[b, adr + 2 * k, EFC_FRICTION]
        else:
            for k in ti.static(range(6)):
                if k < dim:
                    f[k] = d.efc[b, adr + k, EFC_FORCE]
    return f


@ti.func
def record_constraint(m: ti.template(), d: ti.template(), b, frames: ti.template(), crec: ti.template(),
                      launch: ti.template(), t, o, contacts):
    """Returns 0 when the pool `crec` has no room left for the frame's contacts (nothing of them written),
    else 1."""
    cap = m.opt_i[SZ_NCONMAX]
    ncon = ti.min(d.ncon[b], cap)
    frames[t, b, o] = ncon
    frames[t, b, o + 1] = d.efc_n[b, EFCN_NEFC]
    frames[t, b, o + 2] = d.efc_n[b, EFCN_NITER]
    frames[t, b, o + 3] = d.efc_n[b, EFCN_CONVERGED]
    nv = m.opt_i[SZ_NV]
    for i in range(nv):
        frames[t, b, o + 4 + i] = d.dof[b, i, QFRC_CONSTRAINT]
    ok = 1
    if contacts != 0:
        # the frame's ncon rows, at a start taken from the pool's counter: a frame writes what it has, not a
        # max_contacts capacity (27 boxes: 2,916 rows a frame, 0.3 GB at B = 1024; the Panda's 900 rows, of
        # which it used none, made a frame 88 KiB and a launch one step long)
        start = 0
        if ti.static(lang.LAUNCH_STEPS_MAX):
            # Vulkan: rows of their own for each frame of the launch (LAUNCH_STEPS_MAX + 1 at most) and env, cap
            # each. Mesa's software driver ran the counter's atomic add once a launch: a run's final frame took
            # no rows and showed the contacts of the frame before it
            start = (t * frames.shape[1] + b) * cap
        elif ncon > 0:
            start = ti.atomic_add(launch[LAUNCH_POOL_N], ncon)
        if start + ncon > crec.shape[0]:
            ok = 0
        else:
            frames[t, b, o + 4 + nv] = start // CREC_SPLIT
            frames[t, b, o + 5 + nv] = start % CREC_SPLIT
            for c in range(ncon):
                r = start + c
                frame = sm.getv(d.contact, b, c, CON_FRAME, 9)
                f = contact_force(d, b, c)
                crec[r, CREC_GEOM] = d.contact_i[b, c, CON_GEOM1]
                crec[r, CREC_GEOM + 1] = d.contact_i[b, c, CON_GEOM2]
                for k in ti.static(range(3)):
                    crec[r, CREC_POS + k] = d.contact[b, c, CON_POS + k]
                    crec[r, CREC_NORMAL + k] = frame[k]
                    crec[r, CREC_FORCE + k] = f[0] * frame[k] + f[1] * frame[3 + k] + f[2] * frame[6 + k]
                crec[r, CREC_DIST] = d.contact[b, c, CON_DIST]
    return ok
