"""Field-by-field comparison of our compiled Model with MuJoCo's compile of the same file.

Tolerances: ints exactly (the meshes' convex-hull graph included); positions, quaternions (up to sign) and other
geometry at 1e-9 absolute; masses, inertias and quantities derived from the
mass matrix (invweight0, M0, acc0, meaninertia) at rtol 1e-6; float32 fields (mesh vertices) at 1e-6, and so
the meshes' polygon normals: computed from the double vertices, they are as exact as those (1e-9 on real meshes),
but a sliver polygon (nearly collinear hull vertices) turns last-bit differences of its vertices into ~1e-8.
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
                tol = ATOL_POS
                err = np.minimum(np.abs(a2 - b2).max(1), np.abs(a2 + b2).max(1))
                ok = err <= tol
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
        if not np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=0):
            bad.append(f"opt.{f.name}: ours {a}, MuJoCo {b}")
    return bad
