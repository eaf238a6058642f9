"""A test kernel that runs the constraint solver (rigidsim.engine.solver) on every env.

The argument lists between the ``generated`` markers follow rigidsim/engine/layout.py; tests/solver_util.py
checks them with `kernel_args.render` before importing this module, so a new array in the layout fails the
solver tests (naming the command that renders this file) instead of leaving it stale.
"""

from rigidsim.engine.lang import kernel, ti
from rigidsim.engine.kernels import ND, _data, _model
from rigidsim.engine.layout import EFCN_CONVERGED, EFCN_NITER, MINVAL, QLD, QLDIAGINV, QM, SV_LTJ, SV_UPD, SZ_NV
from rigidsim.engine.smooth import factor_m
from rigidsim.engine.solver import fwd_constraint, solve
from rigidsim.engine.solver.linalg import chol_factor, chol_update


@ti.func
def _run(m: ti.template(), d: ti.template(), b, mode, variant: ti.template()):
    """The constraint stage compiled for `variant`: `fwd_constraint` (with noslip when the model asks), or
    with mode bit 0 `solve` alone; with mode bit 1, qM is factored into qLD first (else the caller wrote the
    factor). Mode bit 2 instead tests the dense factor (tests/test_solver_linalg.py): `chol_factor` of
    solver_H's first nv rows (SVI_FIRST holding the caller's bound on each row's first nonzero), then with
    bit 3 `chol_update` by the vector in solver_v[:, SV_LTJ] (copied to SV_UPD, which the factor uses as
    scratch; bit 4: a downdate); the ranks go to efc_n's EFCN_NITER and EFCN_CONVERGED."""
    if (mode & 4) != 0:
        n = m.opt_i[SZ_NV]
        d.efc_n[b, EFCN_NITER] = chol_factor(d, d.solver_H, b, n, MINVAL)
        if (mode & 8) != 0:
            for i in range(n):
                d.solver_v[b, i, SV_UPD] = d.solver_v[b, i, SV_LTJ]
            d.efc_n[b, EFCN_CONVERGED] = chol_update(d, d.solver_H, b, n, SV_UPD, 1 if (mode & 16) == 0 else 0)
    else:
        if (mode & 2) != 0:
            factor_m(m, d, b, QM, QLD, QLDIAGINV, False)
        if (mode & 1) == 0:
            fwd_constraint(m, d, b, variant)
        else:
            solve(m, d, b, variant)


@kernel
def solver_kernel(
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
    mode: ti.i32, variant: ti.template(),
):
    for b in range(time.shape[0]):
        _run(
            # >>> generated: groups
            _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f, act_i,
                   qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i, bvh_f,
                   pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                   mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
            _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom, site,
                  actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit, ccd_f,
                  ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi, solver_efc_i,
                  solver_H, solver_Hcone, solver_n),
            # <<< generated
            b, mode, variant)
