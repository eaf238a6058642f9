"""Run one collider ti.func on geometry given as numpy arrays, for the collider tests.

`run_collider(func, pos1, mat1, size1, pos2, mat2, size2, margin, cap=16)` runs ``func`` (a collider of
`rigidsim.engine.collision`, see its package docstring) once per row of the inputs (each [n, 3] / [n, 9]) and
returns, per row, a list of contacts ``(dist, pos[3], normal[3], tangent[3])`` as numpy, the order the
collider wrote them. The inputs are typically MuJoCo's geom_xpos / geom_xmat / geom_size for a geom pair of an
MjData, so the contacts can be compared with ``mj_collision``'s for the same pair.
"""

from __future__ import annotations

import numpy as np

from rigidsim.engine import runtime

runtime.init(64, "cpu")

from rigidsim.engine.lang import ti  # noqa: E402
from rigidsim.engine.groups import _Flat, _Group  # noqa: E402
from rigidsim.engine.layout import NDCON, CON_DIST, CON_FRAME, CON_POS  # noqa: E402

ND = ti.types.ndarray()


@ti.kernel  # no fastcache: it cannot key a ti.func argument
def _collide(func: ti.template(), geo: ND, margin: ND, out: ND, count: ND, cap: ti.i32):
    for b in range(geo.shape[0]):
        pos1 = ti.Vector([geo[b, k] for k in ti.static(range(3))])
        mat1 = ti.Vector([geo[b, 3 + k] for k in ti.static(range(9))])
        size1 = ti.Vector([geo[b, 12 + k] for k in ti.static(range(3))])
        pos2 = ti.Vector([geo[b, 15 + k] for k in ti.static(range(3))])
        mat2 = ti.Vector([geo[b, 18 + k] for k in ti.static(range(9))])
        size2 = ti.Vector([geo[b, 27 + k] for k in ti.static(range(3))])
        count[b] = func(_Group(contact=_Flat(out, cap * NDCON, NDCON)), b, 0, cap, pos1, mat1, size1, pos2, mat2, size2, margin[b])


def run_collider(func, pos1, mat1, size1, pos2, mat2, size2, margin, cap: int = 16):
    rows = [np.atleast_2d(np.asarray(a, np.float64)) for a in (pos1, mat1, size1, pos2, mat2, size2)]
    n = max(r.shape[0] for r in rows)
    geo = np.ascontiguousarray(np.concatenate([np.broadcast_to(r, (n, r.shape[1])) for r in rows], axis=1))
    assert geo.shape[1] == 30, geo.shape
    marg = np.ascontiguousarray(np.broadcast_to(np.asarray(margin, np.float64), (n,)))
    out = np.zeros(n * cap * NDCON)
    count = np.zeros(n, np.int32)
    _collide(func, geo, marg, out, count, cap)
    return read_contacts(out, count, cap)


def _normalize3(v):
    """mju_normalize3: v / |v|, and (1, 0, 0) when |v| is below mjMINVAL."""
    n = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return np.array([1.0, 0.0, 0.0]) if n < 1e-15 else v * (1.0 / n)


def make_frame(normal, tangent) -> np.ndarray:
    """mju_makeFrame in numpy: the [3, 3] contact frame (rows: normal, tangent, their cross product) from a
    collider's normal and first tangent, as MuJoCo's data.contact.frame holds it (reshaped); a tangent left
    parallel to the normal (a capsule standing on a plane) becomes (1, 0, 0), as in MuJoCo."""
    x = _normalize3(np.asarray(normal, np.float64))
    y = np.asarray(tangent, np.float64)
    if y[0] * y[0] + y[1] * y[1] + y[2] * y[2] < 0.25:
        y = np.array([0.0, 1.0, 0.0]) if -0.5 < x[1] < 0.5 else np.array([0.0, 0.0, 1.0])
    xy = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    y = _normalize3(y - x * xy)
    return np.stack([x, y, np.cross(x, y)])


def mujoco_contacts(mujoco, mjm, qpos_rows):
    """mj_forward's contacts (MuJoCo's mj_collision) at each qpos row: per row a list of dicts."""
    out = []
    d = mujoco.MjData(mjm)
    for q in np.atleast_2d(qpos_rows):
        d.qpos[:] = q
        d.qvel[:] = 0
        mujoco.mj_forward(mjm, d)
        out.append([{"geom": tuple(int(g) for g in c.geom), "dist": float(c.dist), "pos": np.array(c.pos),
                     "frame": np.array(c.frame).reshape(3, 3), "dim": int(c.dim),
                     "friction": np.array(c.friction), "solref": np.array(c.solref),
                     "solreffriction": np.array(c.solreffriction), "solimp": np.array(c.solimp),
                     "includemargin": float(c.includemargin)} for c in d.contact[:d.ncon]])
    return out


def shared_kinds(kinds: int) -> int:
    """The collider mask the contact tests compile a scene's collision kernel with: its own colliders with
    sweep-and-prune and the midphase box test compiled in (both chosen per scene at run time, from the options
    and the pair table), and, for a scene whose colliders are all analytic, every analytic collider. Scenes
    then share kernels: each distinct mask is a cold compile of 5-20 s on a 2-core machine. The colliders'
    code is the same in any mask; the production masks are the CLI tests' and the engine tests'."""
    from rigidsim.engine.collision.params import COLLIDER_ID, MIDPHASE_BIT, SAP_BIT, kinds_of
    from tests.mjref import ANALYTIC_COLLIDERS

    analytic = kinds_of([COLLIDER_ID[k] for k in ANALYTIC_COLLIDERS])
    kinds |= SAP_BIT | MIDPHASE_BIT
    if kinds & ~(analytic | SAP_BIT | MIDPHASE_BIT) == 0:
        kinds |= analytic
    return kinds


def rigidsim_contacts(model, qpos_rows, options=None):
    """Our contacts at each qpos row (one env per row), with the pair parameters they carry: per row a list
    of dicts like `mujoco_contacts`'. `options`: --set style overrides on top of MuJoCo compatibility. The
    collision kernel is compiled with `shared_kinds` (a model with the midphase disabled then runs the kernel
    compiled with it; the pair table decides at run time)."""
    from rigidsim import options as opts
    from rigidsim.engine import data as D
    from rigidsim.engine import layout as L
    from rigidsim.engine.simulator import Simulator

    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True, **(options or {})})
    model = opts.apply(model, r)
    rows = np.atleast_2d(np.asarray(qpos_rows, np.float64))
    sim = Simulator(model, rows.shape[0], kinematics_only=True, pair_options=r)
    sim._kinds = shared_kinds(sim._kinds)
    sim.reset(qpos=rows)
    sim.collide()
    c = sim.contacts()
    mp = D.put_model(model, np.float64, r)
    pf = mp["pair_f"].reshape(-1, L.NPAIR_F)
    pi = mp["pair_i"].reshape(-1, L.NPAIR_I)
    out, k = [], 0
    for b in range(rows.shape[0]):
        env = []
        for _ in range(int(c["count"][b])):
            p = int(c["pair"][k])
            env.append({"geom": tuple(int(g) for g in c["geom"][k]), "dist": float(c["dist"][k]),
                        "pos": c["pos"][k], "frame": c["frame"][k], "dim": int(pi[p, L.PAIR_DIM]),
                        "friction": pf[p, L.PAIR_FRICTION:L.PAIR_FRICTION + 5],
                        "solref": pf[p, L.PAIR_SOLREF:L.PAIR_SOLREF + 2],
                        "solreffriction": pf[p, L.PAIR_SOLREFFRICTION:L.PAIR_SOLREFFRICTION + 2],
                        "solimp": pf[p, L.PAIR_SOLIMP:L.PAIR_SOLIMP + 5], "includemargin": float(pf[p, L.PAIR_MARGIN])})
            k += 1
        out.append(env)
    return out


def assert_same_contacts(ours, theirs, tol=1e-9, what=""):
    """Order-free: per env the same number of contacts per geom pair; each of MuJoCo's matched to our nearest
    contact of that pair; dist, pos, frame within `tol`; the parameters exact."""
    assert len(ours) == len(theirs)
    for b, (mine, ref) in enumerate(zip(ours, theirs)):
        key = lambda c: c["geom"]  # noqa: E731
        assert sorted(map(key, mine)) == sorted(map(key, ref)), f"{what} env {b}: geom pairs differ"
        left = list(range(len(mine)))
        for c in ref:
            cands = [k for k in left if mine[k]["geom"] == c["geom"]]
            k = min(cands, key=lambda k: float(np.linalg.norm(mine[k]["pos"] - c["pos"])) + abs(mine[k]["dist"] - c["dist"]))
            left.remove(k)  # by index: two contacts may compare equal
            best = mine[k]
            where = f"{what} env {b} geoms {c['geom']}"
            assert abs(best["dist"] - c["dist"]) <= tol, (where, "dist", best["dist"], c["dist"])
            np.testing.assert_allclose(best["pos"], c["pos"], rtol=0, atol=tol, err_msg=where + " pos")
            np.testing.assert_allclose(best["frame"], c["frame"], rtol=0, atol=tol, err_msg=where + " frame")
            for k in ("dim", "includemargin"):
                assert best[k] == c[k], (where, k, best[k], c[k])
            for k in ("friction", "solref", "solreffriction", "solimp"):
                np.testing.assert_array_equal(best[k], c[k], err_msg=f"{where} {k}")


def trajectory(mujoco, mjm, n, every=5):
    """qpos of every `every`-th step of a MuJoCo run from qpos0 (impacts, sliding and rest): [n, nq]."""
    from tests.mjref import mujoco_states

    return mujoco_states(mjm, n, every, at=(0,))


def rand_quat(rng):
    """A uniformly random unit quaternion."""
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def extent(kind, size, mat, u):
    """max_x u.(x - centre) of a geom (MuJoCo size, world rotation mat) along unit u: its support value."""
    loc = mat.T @ u
    if kind == "sphere":
        return size[0]
    if kind == "capsule":
        return size[0] + size[1] * abs(loc[2])
    if kind == "ellipsoid":
        return float(np.linalg.norm(np.asarray(size[:3]) * loc))
    if kind == "cylinder":
        return size[0] * np.hypot(loc[0], loc[1]) + size[1] * abs(loc[2])
    return float(np.abs(loc) @ np.asarray(size[:3]))


# ---------------------------------------------------------------------------------------------- comparing
# Contacts as the collider tests hold them: MuJoCo's (dist, pos[3], frame[3, 3]); ours (dist, pos[3],
# normal[3], tangent[3]), the frame completed by `make_frame`.
def contact_mismatch(mj, ours, tol: float, ordered: bool = False) -> str:
    """'' when our contacts of one pair / state agree with MuJoCo's within `tol` (the same count; dist, pos
    and frame), else why not. `ordered`: contact k against contact k; else order-free, each of MuJoCo's
    matched to the nearest of ours left."""
    if len(mj) != len(ours):
        return (f"count {len(ours)} vs MuJoCo {len(mj)}: ours {[(float(o[0]), o[1]) for o in ours]}, "
                f"MuJoCo {[(float(c[0]), c[1]) for c in mj]}")
    left = [(dist, pos, make_frame(normal, tangent)) for dist, pos, normal, tangent in ours]
    for dist, pos, frame in mj:
        errs = [max(abs(dist - d2), np.abs(pos - p2).max(), np.abs(frame - f2).max()) for d2, p2, f2 in left]
        j = 0 if ordered else int(np.argmin(errs))
        if errs[j] > tol:
            d2, p2, f2 = left[j]
            return (f"dist {dist!r} vs {d2!r}, pos err {np.abs(pos - p2).max():.3g}, frame err "
                    f"{np.abs(frame - f2).max():.3g}")
        left.pop(j)
    return ""


def mismatches(cases, ours, tol: float):
    """[(case index, why)] for the cases (dicts with MuJoCo's contacts under "mj") whose contacts differ from
    ours in order, and the largest dist / pos / frame error seen over the cases of equal counts."""
    bad, worst = [], 0.0
    for i, (case, con) in enumerate(zip(cases, ours)):
        why = contact_mismatch(case["mj"], con, tol, ordered=True)
        if len(case["mj"]) == len(con):
            for (dm, pm, fm), (dist, pos, normal, tangent) in zip(case["mj"], con):
                worst = max(worst, abs(dist - dm), np.abs(pos - pm).max(), np.abs(make_frame(normal, tangent) - fm).max())
        if why:
            bad.append((i, why))
    return bad, worst


# ---------------------------------------------------------------------------------------------- pair cases
def read_contacts(out: np.ndarray, count: np.ndarray, cap: int):
    """A collider kernel's output buffer ([n * cap * NDCON]) and counts [n] as per-row lists of our contacts."""
    n = len(count)
    out = out.reshape(n, cap, NDCON)
    return [[(out[b, k, CON_DIST], out[b, k, CON_POS:CON_POS + 3].copy(), out[b, k, CON_FRAME:CON_FRAME + 3].copy(),
              out[b, k, CON_FRAME + 3:CON_FRAME + 6].copy()) for k in range(min(int(count[b]), cap))]
            for b in range(n)]


def mujoco_pair_cases(mujoco, mjm, model, qpos_rows, collider: str):
    """The candidate pairs of `model` (our copy of `mjm`) whose collider is `collider` (our pair table under
    MuJoCo's options, in MuJoCo's geom order: the lower type first), at each qpos row after mj_forward:
    (cases, rows). cases: per (row, pair) a dict with the pair's geoms, MuJoCo's contacts for it (dist, pos,
    frame) and the qpos; rows: per case "geo" (pos, mat, size of each geom), "gi" (geoms, types) and
    "margin" (the pair's margin + gap), for a collider kernel."""
    from rigidsim import options as opts
    from rigidsim.engine.collision.params import pair_table
    from rigidsim.engine.collision_pairs import collision_pairs

    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True})
    tab = pair_table(model, *collision_pairs(model, r))
    keep = [k for k, c in enumerate(tab["collider"]) if c == collider]
    d = mujoco.MjData(mjm)
    gtype = np.asarray(mjm.geom_type)
    rows = {k: [] for k in ("geo", "gi", "margin")}
    cases = []
    for q in np.atleast_2d(qpos_rows):
        d.qpos[:] = q
        mujoco.mj_forward(mjm, d)
        for k in keep:
            g1, g2 = (int(g) for g in tab["geom"][k])
            mine = [c for c in d.contact[:d.ncon] if {int(c.geom[0]), int(c.geom[1])} == {g1, g2}]
            assert all(tuple(c.geom) == (g1, g2) for c in mine)  # the pair table's order is MuJoCo's
            mj = [(float(c.dist), np.array(c.pos), np.array(c.frame).reshape(3, 3)) for c in mine]
            cases.append(dict(geom=(g1, g2), mj=mj, qpos=q))
            rows["geo"].append(np.concatenate([d.geom_xpos[g1], d.geom_xmat[g1], mjm.geom_size[g1], d.geom_xpos[g2],
                                               d.geom_xmat[g2], mjm.geom_size[g2]]))
            rows["gi"].append([g1, g2, gtype[g1], gtype[g2]])
            rows["margin"].append(tab["margin"][k] + tab["gap"][k])
    return cases, rows
