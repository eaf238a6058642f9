"""MuJoCo's compile as our `Model`, our options as MuJoCo's, and the field-by-field comparison of two Models.

`model_from_mujoco` copies a compiled ``mujoco.MjModel`` into our numpy `Model` field by field (the same
names), so a Model compiled by our loaders can be compared with MuJoCo's compile of the same file
(`compare_models`), and engine stages can be run on MuJoCo's own compile. `set_mujoco_options` writes our
resolved `ModelOption` into an ``MjModel``'s ``opt``, so that both engines run under the same options.

`compare_models`' tolerances: ints exactly (the meshes' convex-hull graph included); positions, quaternions
(up to sign) and other geometry at 1e-9 absolute; masses, inertias and quantities derived from the mass matrix
(invweight0, M0, acc0, meaninertia) at rtol 1e-6; float32 fields (mesh vertices) at 1e-6, and so the meshes'
polygon normals: computed from the double vertices, they are as exact as those (1e-9 on real meshes), but a
sliver polygon (nearly collinear hull vertices) turns last-bit differences of its vertices into ~1e-8.
"""

from __future__ import annotations

import dataclasses
from typing import List

import numpy as np

from rigidsim import model as M

# fields derived from masses / inertias / the mass matrix: relative tolerance
_REL = ("body_mass", "body_subtreemass", "body_inertia", "body_invweight0", "dof_invweight0", "dof_M0",
        "tendon_invweight0", "actuator_acc0", "actuator_biasprm")
RTOL_MASS = 1e-6
ATOL_POS = 1e-9

# our name-list kind -> (mjtObj member, the MjModel size that counts them)
_OBJ = {"body": ("mjOBJ_BODY", "nbody"), "jnt": ("mjOBJ_JOINT", "njnt"), "geom": ("mjOBJ_GEOM", "ngeom"),
        "site": ("mjOBJ_SITE", "nsite"), "mesh": ("mjOBJ_MESH", "nmesh"), "hfield": ("mjOBJ_HFIELD", "nhfield"),
        "eq": ("mjOBJ_EQUALITY", "neq"), "tendon": ("mjOBJ_TENDON", "ntendon"),
        "actuator": ("mjOBJ_ACTUATOR", "nu"), "sensor": ("mjOBJ_SENSOR", "nsensor"), "key": ("mjOBJ_KEY", "nkey")}

# ModelOption fields that are tuples (vectors) in MuJoCo's opt
_OPT_VECTORS = ("gravity", "wind", "magnetic", "o_solref", "o_solimp", "o_friction")


def model_from_mujoco(mjm) -> M.Model:
    """Our `Model` holding a copy of MuJoCo's compiled arrays, names, options and statistics."""
    import mujoco

    sizes = {s: int(getattr(mjm, s)) for s in M.SIZES}
    m = M.Model.empty(**sizes)
    for name, (_, dtype) in M.FIELDS.items():
        src = np.asarray(getattr(mjm, name))
        m.arrays[name] = src.reshape(m.shape_of(name)).astype(dtype, copy=True)
    for kind, (obj, count) in _OBJ.items():
        o = getattr(mujoco.mjtObj, obj)
        m.names[kind] = [mujoco.mj_id2name(mjm, o, i) or "" for i in range(sizes[count])]
    kw = {}
    for f in dataclasses.fields(M.ModelOption):
        if f.name == "explicit":
            continue
        v = getattr(mjm.opt, f.name)
        kw[f.name] = tuple(float(x) for x in v) if f.name in _OPT_VECTORS else type(f.default)(v)  # int or float
    m.opt = M.ModelOption(**kw)
    s = mjm.stat
    m.stat = M.ModelStatistic(meaninertia=float(s.meaninertia), meanmass=float(s.meanmass),
                              meansize=float(s.meansize), extent=float(s.extent), center=tuple(s.center))
    m.validate()
    return m


def set_mujoco_options(mjm, opt: M.ModelOption) -> List[str]:
    """Write every field of our `opt` (resolved options applied, `rigidsim.options.apply`) into ``mjm.opt``.

    A value MuJoCo does not have (Genesis's approximate_implicitfast integrator) becomes its nearest MuJoCo
    value (implicitfast); the returned notes say so, and `compare_models` then reports the field."""
    notes = []
    for f in dataclasses.fields(M.ModelOption):
        if f.name == "explicit":
            continue
        v = getattr(opt, f.name)
        if f.name == "integrator" and v == M.INT_APPROX_IMPLICITFAST:
            v = M.INT_IMPLICITFAST
            notes.append("MuJoCo has no approximate_implicitfast integrator: it runs implicitfast")
        if f.name in _OPT_VECTORS:
            getattr(mjm.opt, f.name)[:] = np.asarray(v, float)
        else:
            setattr(mjm.opt, f.name, v)
    return notes


def compare_models(ours: M.Model, ref: M.Model, skip=()) -> List[str]:
    """Return a list of human-readable mismatches (empty when the models agree).

    ``skip`` names fields left out, for a caller that checks them on their own (a known difference).
    """
    bad: List[str] = []
    for s in M.SIZES:
        if ours.sizes[s] != ref.sizes[s]:
            bad.append(f"size {s}: ours {ours.sizes[s]}, MuJoCo {ref.sizes[s]}")
    if bad:
        return bad
    for name, (_, dt) in M.FIELDS.items():
        if name in skip:
            continue
        a, b = ours.arrays[name], ref.arrays[name]
        if a.size == 0:
            continue
        if np.issubdtype(dt, np.floating):
            if name.endswith("quat"):
                a2, b2 = a.reshape(-1, 4).astype(float), b.reshape(-1, 4).astype(float)
                err = np.minimum(np.abs(a2 - b2).max(1), np.abs(a2 + b2).max(1))
                ok = err <= ATOL_POS
            elif name in _REL:
                ok = np.isclose(a, b, rtol=RTOL_MASS, atol=1e-12)
            elif dt == np.float32 or name == "mesh_polynormal":
                ok = np.isclose(a, b, rtol=1e-6, atol=1e-6)
            else:
                ok = np.isclose(a, b, rtol=1e-9, atol=ATOL_POS)
            if not np.all(ok):
                idx = [tuple(int(x) for x in i) for i in np.argwhere(~np.asarray(ok))[:3]]
                shape = np.shape(ok) + ((4,) if name.endswith("quat") else ())
                bad.append(f"{name}: {int(np.size(ok) - np.count_nonzero(ok))} mismatches, first at {idx}: "
                           f"ours {a.reshape(shape)[idx[0]]}, MuJoCo {b.reshape(shape)[idx[0]]}")
        elif not np.array_equal(a, b):
            idx = [tuple(int(x) for x in i) for i in np.argwhere(a != b)[:3]]
            bad.append(f"{name}: mismatches at {idx}: ours {[a[i] for i in idx]}, MuJoCo {[b[i] for i in idx]}")
    for k in M.NAME_LISTS:
        if ours.names[k] != ref.names[k]:
            bad.append(f"names[{k}] differ")
    for f in ("meaninertia", "meanmass", "meansize", "extent"):
        if not np.isclose(getattr(ours.stat, f), getattr(ref.stat, f), rtol=RTOL_MASS):
            bad.append(f"stat.{f}: ours {getattr(ours.stat, f)}, MuJoCo {getattr(ref.stat, f)}")
    if not np.allclose(ours.stat.center, ref.stat.center, atol=ATOL_POS):
        bad.append(f"stat.center: ours {ours.stat.center}, MuJoCo {ref.stat.center}")
    for f in dataclasses.fields(M.ModelOption):
        if f.name == "explicit":
            continue
        a, b = getattr(ours.opt, f.name), getattr(ref.opt, f.name)
        if any(isinstance(x, str) for x in np.ravel(np.asarray(a, object))):  # numpy would parse text silently
            bad.append(f"opt.{f.name}: ours {a!r} (text, not a number), MuJoCo {b}")
        elif not np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=0):
            bad.append(f"opt.{f.name}: ours {a}, MuJoCo {b}")
    return bad
