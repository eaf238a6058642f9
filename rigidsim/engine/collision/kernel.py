"""The collision kernel: kinematics then collision detection in every env (the contacts of the current
state), compiled with the colliders the scene's pairs use. A module of its own so that a run without contacts
never imports the colliders (their ti.funcs cost import time) nor compiles or loads this kernel."""


from rigidsim.engine.lang import ti
from rigidsim.engine.lang import env_loop, env_of, kernel

from rigidsim.engine.collision.driver import collision
from rigidsim.engine.kernels import ND, _data, _model
from rigidsim.engine.smooth import kinematics


@ti.func
def _collide_env(m: ti.template(), d: ti.template(), b, cap, kinds: ti.template()):
    kinematics(m, d, b, True)
    collision(m, d, b, cap, kinds)


@kernel
def collision_kernel(
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
    cap: ti.i32, kinds: ti.template(),
):
    """mj_kinematics then mj_collision in every env: the contacts of the current state; `kinds` (a bit mask of
    collider ids) selects the colliders compiled in."""
    env_loop()
    for i in range(time.shape[0]):
        b = env_of(i, time.shape[0])
        _collide_env(
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
            b, cap, kinds)
