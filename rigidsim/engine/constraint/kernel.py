"""Kernels of scenes with constraints: the forward pass and the rollout of `kernels.py` with the constraint
stage (`stage.constraint_stage`) compiled in, for the colliders of the mask `kinds`. A module of its own so
that scenes without constraints never import the collision and constraint code."""


from rigidsim.engine.lang import ti
from rigidsim.engine.lang import env_begin, env_end, env_loop, env_of, in_slice, kernel

from rigidsim.engine.constraint.record import record_constraint
from rigidsim.engine.constraint.stage import STAGED_PARTS, constraint_stage, no_stage
from rigidsim.engine.forward import forward
from rigidsim.engine.kernels import ND, _data, _model, _rollout_env, _staged, staged


@kernel
def constraint_forward_kernel(
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
    # In:
    integrator: ti.template(), kinds: ti.template(), reps: ti.i32,
):
    """mj_forward in every env: the smooth pass, contacts, constraint rows, the solve (reps times over: more
    than once only to time it, benchmarks/bench_stages.py)."""
    env_loop()
    for i in range(time.shape[0]):
        b = env_of(i, time.shape[0])
        for _ in range(reps):
            forward(
                # >>> generated: groups
                _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f,
                       act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i,
                       bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i, mesh_polyvert,
                       mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f, sens_i, opt_f, opt_i),
                _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                      site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i, pair_hit,
                      ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v, solver_vi,
                      solver_efc_i, solver_H, solver_Hcone, solver_n),
                # <<< generated
                b, integrator, constraint_stage, kinds)


@kernel
def constraint_rollout_kernel(
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
    # In:
    ctrl_seq: ND, launch: ND, nenv: ti.template(), integrator: ti.template(), kinds: ti.template(),
    sensing: ti.template(),
    # Out:
    frames: ND, crec: ND, status: ND,
):
    """`kernels.rollout_kernel` with the constraint stage in every forward pass; each frame also records the
    constraint fields (`layout.frame_layout`), with the contacts when launch[LAUNCH_CONTACTS] is 1."""
    if ti.static(staged(integrator)):
        for task in ti.static(range(3 + len(STAGED_PARTS))):
            for i in range(nenv):
                if in_slice(i, launch, nenv):
                    b = env_of(i, time.shape[0])
                    _staged(
                        # >>> generated: groups
                        _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i,
                               act_f, act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i,
                               pair_f, pair_i, bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f,
                               mesh_poly_i, mesh_polyvert, mesh_polymap, mesh_extrema, hfield_f, hfield_i,
                               hfield_data, sens_f, sens_i, opt_f, opt_i),
                        _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M,
                              geom, site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f,
                              sap_i, pair_hit, ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con,
                              solver_v, solver_vi, solver_efc_i, solver_H, solver_Hcone, solver_n),
                        # <<< generated
                        b, task, ctrl_seq, frames, crec, status, launch, integrator, no_stage, STAGED_PARTS, kinds,
                        record_constraint, sensing)
    else:
        env_loop()
        for i in range(env_begin(launch, nenv), env_end(launch, nenv)):
            if in_slice(i, launch, nenv):
                b = env_of(i, time.shape[0])
                _rollout_env(
                    # >>> generated: groups
                    _model(body_f, body_i, jnt_f, jnt_i, dof_f, dof_i, m_i, geom_f, geom_i, site_f, site_i, act_f,
                           act_i, qpos_f, ten_f, ten_i, eq_f, eq_i, wrap_f, wrap_i, gcol_f, gcol_i, pair_f, pair_i,
                           bvh_f, pair_bvh, mesh_vert, mesh_graph, mesh_vert_i, mesh_poly_f, mesh_poly_i,
                           mesh_polyvert, mesh_polymap, mesh_extrema, hfield_f, hfield_i, hfield_data, sens_f,
                           sens_i, opt_f, opt_i),
                    _data(opt_i, qpos, qvel, act, ctrl, qacc, time, mocap_pos, mocap_quat, body, jnt, dof, M, geom,
                          site, actu, act_dot, rk, ten, ten_J, contact, contact_i, ncon, nbroad, sap_f, sap_i,
                          pair_hit, ccd_f, ccd_i, efc_J, efc, efc_i, efc_n, eq_active, history, sens_con, solver_v,
                          solver_vi, solver_efc_i, solver_H, solver_Hcone, solver_n),
                    # <<< generated
                    b, ctrl_seq, frames, crec, status, launch, integrator, constraint_stage, kinds, record_constraint,
                    sensing)
