"""MuJoCo as the reference: helpers the parity tests share.

`model_from_mujoco` copies a compiled ``mujoco.MjModel`` into our numpy
`Model` field by field (same names), so engine stages can be tested on
MuJoCo's own compile independently of our loaders, and loader tests can
compare our compile with this one.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim import model as M

mujoco = pytest.importorskip("mujoco")

_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY, "jnt": mujoco.mjtObj.mjOBJ_JOINT, "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "site": mujoco.mjtObj.mjOBJ_SITE, "mesh": mujoco.mjtObj.mjOBJ_MESH, "hfield": mujoco.mjtObj.mjOBJ_HFIELD,
    "eq": mujoco.mjtObj.mjOBJ_EQUALITY, "tendon": mujoco.mjtObj.mjOBJ_TENDON,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR, "sensor": mujoco.mjtObj.mjOBJ_SENSOR, "key": mujoco.mjtObj.mjOBJ_KEY,
}
_COUNT = {"body": "nbody", "jnt": "njnt", "geom": "ngeom", "site": "nsite", "mesh": "nmesh", "hfield": "nhfield",
          "eq": "neq", "tendon": "ntendon", "actuator": "nu", "sensor": "nsensor", "key": "nkey"}


def model_from_mujoco(mjm) -> M.Model:
    sizes = {s: int(getattr(mjm, s)) for s in M.SIZES}
    m = M.Model.empty(**sizes)
    for name, (_, dtype) in M.FIELDS.items():
        src = np.asarray(getattr(mjm, name))
        m.arrays[name] = src.reshape(m.shape_of(name)).astype(dtype, copy=True)
    for kind, obj in _OBJ.items():
        m.names[kind] = [mujoco.mj_id2name(mjm, obj, i) or "" for i in range(sizes[_COUNT[kind]])]
    o = mjm.opt
    m.opt = M.ModelOption(
        timestep=float(o.timestep), gravity=tuple(o.gravity), wind=tuple(o.wind), magnetic=tuple(o.magnetic),
        density=float(o.density), viscosity=float(o.viscosity), impratio=float(o.impratio),
        o_margin=float(o.o_margin), o_solref=tuple(o.o_solref), o_solimp=tuple(o.o_solimp),
        o_friction=tuple(o.o_friction), tolerance=float(o.tolerance), ls_tolerance=float(o.ls_tolerance),
        noslip_tolerance=float(o.noslip_tolerance), ccd_tolerance=float(o.ccd_tolerance),
        integrator=int(o.integrator), cone=int(o.cone), jacobian=int(o.jacobian), solver=int(o.solver),
        iterations=int(o.iterations), ls_iterations=int(o.ls_iterations),
        noslip_iterations=int(o.noslip_iterations), ccd_iterations=int(o.ccd_iterations),
        disableflags=int(o.disableflags), enableflags=int(o.enableflags),
    )
    s = mjm.stat
    m.stat = M.ModelStatistic(meaninertia=float(s.meaninertia), meanmass=float(s.meanmass),
                              meansize=float(s.meansize), extent=float(s.extent), center=tuple(s.center))
    m.validate()
    return m


# MuJoCo's analytic colliders (params.COLLIDERS' names)
ANALYTIC_COLLIDERS = ("plane_sphere", "plane_capsule", "plane_cylinder", "plane_box", "sphere_sphere", "sphere_capsule",
                      "sphere_cylinder", "sphere_box", "capsule_capsule", "capsule_box", "box_box", "plane_ellipsoid")


def test_stage():
    """The constraint-stage parts the parity tests compile into every Simulator beyond the scene's own:
    every kind of row, every solver part, the analytic colliders and the midphase box test. Scenes whose
    colliders are among those share one compiled kernel (each distinct mask is a cold compile of 10-40 s on a
    2-core machine)."""
    from rigidsim.engine.collision.params import COLLIDER_ID, MIDPHASE_BIT, kinds_of
    from rigidsim.engine.constraint.stage import wide_stage

    analytic = [COLLIDER_ID[k] for k in ANALYTIC_COLLIDERS]
    return wide_stage(kinds_of(analytic) | MIDPHASE_BIT)


test_stage.__test__ = False  # a helper, not a test


def compat_sim(mjm, n_envs: int = 1, model=None):
    """Our Simulator of a MuJoCo model (or of `model`, our copy of it) under MuJoCo's options, compiled with
    `test_stage()` so that the parity tests share kernels."""
    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator

    model = model_from_mujoco(mjm) if model is None else model
    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True})
    return Simulator(model, n_envs, kinematics_only=True, pair_options=r, stage=test_stage())
