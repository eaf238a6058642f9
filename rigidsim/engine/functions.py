"""Stages of a step compiled as functions of their own instead of inlined into the kernel.

A kernel inlines every ti.func it calls, so a whole step (the smooth dynamics, collision, the rows, the solve)
becomes one LLVM function, and a cold compile (the kernel language's own passes, LLVM's optimization and
code generation) costs more than linearly in a function's size. `compiled` calls a stage as a real function
(``ti.func(is_real_function=True)``): compiled once per stage and static arguments, kept out of line by LLVM
when it is large, so the step is several functions of moderate size. The computation is the same, operation
for operation. The price is paid per call: the arguments are packed, and the function reloads an array's
address through them after each store (README: the instruction counts per step); so a stage goes out of line
only where its compile time is worth it (the constraint stage's parts; the smooth stages, tried, cost the
smooth engine 4 % per step for 2 s of cold start, and stay inline).

A real function takes its arrays as arguments: `arrays` lists the kernel's arrays behind the groups m and d
(in the order of `layout.MODEL_ARGS` and `layout.DATA_ARGS`), and `compiled` rebuilds the groups from its
own arguments. A stage is a ti.func ``stage(m, d, b, n, mask)``: env b, an integer n and a compile-time
value; the call is ``part(m, d, b, n, stage, mask)``.

Only the LLVM backends (CPU, CUDA) have real functions: on Vulkan a call of one compiles and does nothing
(issue 30: the cheetah's constraint stage left qacc at 0 and it never moved), so there `part` inlines the
stage (`lang.REAL_FUNCTIONS`).
"""

from rigidsim.engine import lang
from rigidsim.engine.lang import ti

from rigidsim.engine import layout as L
from rigidsim.engine.groups import ND, _data, _model


def arrays(m, d):
    """The arrays behind the groups m and d (called while compiling): `compiled`'s array arguments."""
    return [getattr(a, "arr", a) for a in [getattr(m, name) for name in L.MODEL_ARGS]
            + [getattr(d, name) for name in L.DATA_ARGS]]


@ti.func
def part(m: ti.template(), d: ti.template(), b, n, stage: ti.template(), mask: ti.template()):
    """``stage(m, d, b, n, mask)``: a real function's call where the backend has them, else inlined."""
    if ti.static(lang.REAL_FUNCTIONS):
        compiled(b, n, stage, mask, *arrays(m, d))
    else:
        stage(m, d, b, n, mask)


@ti.func(is_real_function=True)
def compiled(
    b: ti.i32, n: ti.i32, stage: ti.template(), mask: ti.template(),
    # >>> generated: signature
    # Model:
    body_f: ND, body_i: ND, jnt_f: ND, jnt_i: ND, dof_f: ND, dof_i: ND, m_i: ND, geom_f: ND, geom_i: ND, site_f: ND,
    site_i: ND, act_f: ND, act_i: ND, qpos_f: ND, ten_f: ND, ten_i: ND, eq_f: ND, eq_i: ND, wrap_f: ND, wrap_i: ND,
    gcol_f: ND, gcol_i: ND, pair_f: ND, pair_i: ND, bvh_f: ND, pair_bvh: ND, mesh_vert: ND, mesh_graph: ND,
    mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND, mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND,
    hfield_f: ND, hfield_i: ND, hfield_data: ND, sens_f: ND, sens_i: ND, opt_f: ND, opt_i: ND,
    # Data:
    qpos: ND, qvel: ND, act: ND, ctrl: ND, qacc: ND, time: ND, mocap_pos: ND, mocap_quat: ND, body: ND, jnt: ND,
    dof: ND, M: ND, geom: ND, site: ND, actu: ND, act_dot: ND, rk: ND, ten: ND, ten_J: ND, contact: ND,
    contact_i: ND, ncon: ND, nbroad: ND, sap_f: ND, sap_i: ND, pair_hit: ND, ccd_f: ND, ccd_i: ND, efc_J: ND,
    efc: ND, efc_i: ND, efc_n: ND, eq_active: ND, history: ND, sens_con: ND, solver_v: ND, solver_vi: ND,
    solver_efc_i: ND, solver_H: ND, solver_Hcone: ND, solver_n: ND,
    # <<< generated
):
    """``stage(m, d, b, n, mask)`` as a function of its own, with the groups rebuilt from the arguments."""
    stage(
        # >>> generated: groups
        _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f, act_i,
               qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i, bvh_f, pair_bvh,
               mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert, mesh_polymap,
               mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
        _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom, site, actu,
              act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit, ccd_f, ccd_i,
              efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi, solver_efc_i, solver_H,
              solver_Hcone, solver_n),
        # <<< generated
        b, n, mask)
