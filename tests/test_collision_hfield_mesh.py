"""The height-field collider against a mesh ('hfield_mesh': `hfield.gjk_pair` with the mesh support, one
GJK/EPA run per prism) against MuJoCo 4.0.0's mj_collision (mjc_ConvexHField with a mesh geom).

The collider runs on MuJoCo's own geom poses (geom_xpos, geom_xmat after mj_forward: our kinematics differ
in the last bits), on an irregular, rotated and shifted field, for meshes searched exhaustively (fewer
than 10 vertices) and by hill climbing (more): random orientations over the field's interior and near
(and past) its edges, at heights that make the mesh penetrate deeply or slightly, touch, lie within the
margin or just beyond it, or reach the base from below; then the whole pipeline on a mesh dropped on the
field (MuJoCo's states, resting contacts). Counts exact; dist, pos and frame within 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.collision_util import assert_same_contacts, mujoco_contacts, rand_quat, read_contacts, rigidsim_contacts
from tests.mjref import model_from_mujoco, mujoco
from tests.test_collision_hfield import _elevation, _field_frame, _field_xml, _fmt
from tests.test_collision_mesh_convex import MESHES, mismatches
from rigidsim.engine import data as D
from rigidsim.engine import layout as L
from rigidsim.engine.lang import ti
from rigidsim.engine.groups import _Flat, _Group
from rigidsim.engine.layout import NDCON
from rigidsim.engine.collision import hfield, support
from rigidsim.engine.collision.params import BUILT, collider_of
from rigidsim import model as M

ND = ti.types.ndarray()
CAP = 50
NPOSE = 42
MARGINS = [(0.0, 0.0), (0.012, 0.003)]
KINDS = ("box", "tet", "prism", "ball")  # 8 and 4 vertices (exhaustive search), 32 and a hull (hill climbing)
_SCALE = 1.3  # the meshes a little larger than the field's cells


@ti.kernel
def _hfield_mesh_kernel(geo: ND, gi: ND, margin: ND, out: ND, count: ND, ccd_f: ND, ccd_i: ND, gcol_i: ND,
                        hfield_i: ND, hfield_f: ND, hfield_data: ND, mesh_vert: ND, mesh_graph: ND,
                        mesh_extrema: ND, cap: ti.i32, nf: ti.i32, ni: ti.i32, tol: ti.f64, iters: ti.i32):
    for b in range(geo.shape[0]):
        pos1 = ti.Vector([geo[b, k] for k in ti.static(range(3))])
        mat1 = ti.Vector([geo[b, 3 + k] for k in ti.static(range(9))])
        pos2 = ti.Vector([geo[b, 12 + k] for k in ti.static(range(3))])
        mat2 = ti.Vector([geo[b, 15 + k] for k in ti.static(range(9))])
        size2 = ti.Vector([geo[b, 24 + k] for k in ti.static(range(3))])
        count[b] = hfield.gjk_pair(
            _Group(gcol_i=_Flat(gcol_i, L.NGCOL_I), hfield_i=_Flat(hfield_i, L.NHFIELD_I),
                   hfield_f=_Flat(hfield_f, L.NHFIELD_F), hfield_data=_Flat(hfield_data, 1),
                   mesh_vert=_Flat(mesh_vert, 3), mesh_graph=_Flat(mesh_graph, 1),
                   mesh_extrema=_Flat(mesh_extrema, 27)),
            _Group(contact=_Flat(out, cap * NDCON, NDCON), ccd_f=_Flat(ccd_f, nf), ccd_i=_Flat(ccd_i, ni)),
            b, 0, cap, 1, gi[b, 0], gi[b, 2], pos1, mat1, size2, gi[b, 1], gi[b, 3], pos2, mat2, size2, geo[b, 27],
            margin[b], tol, iters, 0, False, True, True)


def _scene(kind, margin, gap, seed, gravity="0 0 0"):
    asset, field = _field_xml(_elevation(np.random.default_rng(seed)), margin=margin, gap=gap)
    return mujoco.MjModel.from_xml_string(f"""<mujoco><option gravity="{gravity}"/>
      <asset>{asset}<mesh name="m" vertex="{_fmt(np.ravel(MESHES[kind] * _SCALE))}"/></asset>
      <worldbody>{field}
      <body pos="0 0 1"><freejoint/><geom name="g" type="mesh" mesh="m" margin="{margin}" gap="{gap}"
        pos=".01 -.02 .015" euler="10 20 30"/></body>
    </worldbody></mujoco>""")


def _mesh_extent(mjm, rot, u):
    """max over the mesh geom's vertices v of u . (rot v): its extent along u, turned by rot."""
    k = mjm.geom_dataid[1]
    v = np.asarray(mjm.mesh_vert[mjm.mesh_vertadr[k]:mjm.mesh_vertadr[k] + mjm.mesh_vertnum[k]], np.float64)
    return float((v @ rot.T @ u).max())


def _poses(mjm, npose, rng):
    """qpos rows near contact (as test_collision_hfield's `_poses`, for the mesh geom): the free body placed
    so that its geom has the chosen world pose."""
    pos, mat, (sx, sy, sz, sb), data = _field_frame(mjm)
    nrow, ncol = data.shape
    rb = float(mjm.geom_rbound[1])
    summargin = float(mjm.geom_margin.sum() + mjm.geom_gap.sum())
    xs, ys = np.linspace(-sx, sx, ncol), np.linspace(-sy, sy, nrow)
    gq = np.zeros(4)
    mujoco.mju_negQuat(gq, mjm.geom_quat[1])
    gpos = np.asarray(mjm.geom_pos[1], float)
    rows = []
    for i in range(npose):
        qg = rand_quat(rng)  # the geom's world orientation
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, qg)
        rot = mat.T @ rot.reshape(3, 3)
        if i % 3 == 2:
            e = rng.integers(4)
            x = rng.uniform(-sx, sx) if e < 2 else rng.choice([-1, 1]) * (sx + rng.uniform(-rb, rb))
            y = rng.uniform(-sy, sy) if e >= 2 else rng.choice([-1, 1]) * (sy + rng.uniform(-rb, rb))
        else:
            x, y = rng.uniform(-0.9 * sx, 0.9 * sx), rng.uniform(-0.9 * sy, 0.9 * sy)
        near = (np.abs(xs - x)[None, :] <= rb + 1e-9) | (np.abs(xs - x)[None, :] == np.abs(xs - x).min())
        near = near & ((np.abs(ys - y)[:, None] <= rb + 1e-9) | (np.abs(ys - y)[:, None] == np.abs(ys - y).min()))
        top = float(data[near].max()) * sz
        down = _mesh_extent(mjm, rot, np.array([0.0, 0.0, -1.0]))
        c = i % 7
        off = [-rng.uniform(0.1, 0.5) * rb, -rng.uniform(0.0, 0.05) * rb, rng.uniform(-1e-7, 1e-7),
               rng.uniform(0.0, 1.0) * summargin if summargin > 0 else -rng.uniform(0, 1e-3) * rb,
               summargin + rng.uniform(0.0, 0.02) * rb, rng.uniform(-0.6, 0.3) * rb,
               rng.uniform(-0.2, 0.2) * rb][c]
        if c == 6:  # at the base, from below
            top = -sb - 2 * _mesh_extent(mjm, rot, np.array([0.0, 0.0, 1.0]))
        wpos = pos + mat @ np.array([x, y, top + down + off])
        wquat = np.zeros(4)
        mujoco.mju_mat2Quat(wquat, (mat @ rot).ravel())
        bquat = np.zeros(4)
        mujoco.mju_mulQuat(bquat, wquat, gq)  # body = geom * inverse(geom in body)
        bmat = np.zeros(9)
        mujoco.mju_quat2Mat(bmat, bquat)
        rows.append(np.concatenate([wpos - bmat.reshape(3, 3) @ gpos, bquat]))
    return np.array(rows)


def collide_on_mujoco_poses(mjm, qpos_rows):
    """The field-mesh pair (geoms 0, 1) at each qpos row through our collider on MuJoCo's geom poses:
    (cases, ours) as test_collision_mesh_convex's `collide_on_mujoco_poses`."""
    model = model_from_mujoco(mjm)
    mp = D.put_model(model, np.float64)
    d = mujoco.MjData(mjm)
    margin = float(mjm.geom_margin[:2].sum() + mjm.geom_gap[:2].sum())
    rows = {"geo": [], "gi": [], "margin": []}
    cases = []
    for q in np.atleast_2d(qpos_rows):
        d.qpos[:] = q
        mujoco.mj_forward(mjm, d)
        mine = [c for c in d.contact[:d.ncon] if {int(c.geom[0]), int(c.geom[1])} == {0, 1}]
        assert all(tuple(c.geom) == (0, 1) for c in mine)
        cases.append(dict(geom=(0, 1), mj=[(float(c.dist), np.array(c.pos), np.array(c.frame).reshape(3, 3))
                                           for c in mine], qpos=q))
        rows["geo"].append(np.concatenate([d.geom_xpos[0], d.geom_xmat[0], d.geom_xpos[1], d.geom_xmat[1],
                                           mjm.geom_size[1], [mjm.geom_rbound[1]]]))
        rows["gi"].append([0, 1, mjm.geom_type[0], mjm.geom_type[1]])
        rows["margin"].append(margin)
    n = len(cases)
    nf, ni = support.scratch_size(int(mjm.opt.ccd_iterations))
    out = np.zeros(n * CAP * NDCON)
    count = np.zeros(n, np.int32)
    flat = lambda k, t=np.float64: np.ascontiguousarray(mp[k], t).reshape(-1)  # noqa: E731
    _hfield_mesh_kernel(np.ascontiguousarray(rows["geo"], np.float64), np.ascontiguousarray(rows["gi"], np.int32),
                        np.ascontiguousarray(rows["margin"], np.float64), out, count, np.zeros(n * nf),
                        np.zeros(n * ni, np.int32), flat("gcol_i", np.int32), flat("hfield_i", np.int32),
                        flat("hfield_f"), flat("hfield_data"), flat("mesh_vert"), flat("mesh_graph", np.int32),
                        flat("mesh_extrema", np.int32), CAP, nf, ni, float(mjm.opt.ccd_tolerance),
                        int(mjm.opt.ccd_iterations))
    return cases, read_contacts(out, count, CAP)


def test_collider_choice():
    assert collider_of(M.GEOM_HFIELD, M.GEOM_MESH) == "hfield_mesh" and "hfield_mesh" in BUILT
    assert collider_of(M.GEOM_MESH, M.GEOM_HFIELD) == "hfield_mesh"


@pytest.mark.parametrize("margin,gap", MARGINS)
@pytest.mark.parametrize("kind", KINDS)
def test_hfield_mesh_poses(kind, margin, gap):
    mjm = _scene(kind, margin, gap, seed=KINDS.index(kind))
    assert (mjm.mesh_vertnum[0] < 10) == (kind in ("box", "tet"))
    rows = _poses(mjm, NPOSE, np.random.default_rng(200 + KINDS.index(kind)))
    cases, ours = collide_on_mujoco_poses(mjm, rows)
    bad, worst = mismatches(cases, ours)
    assert not bad, f"{kind} margin={margin}: {len(bad)} of {len(cases)} differ, e.g. {bad[:3]}"
    ncon = sum(len(c["mj"]) for c in cases)
    assert ncon >= NPOSE // 2 and max(len(c["mj"]) for c in cases) > 1  # contacts, several per pair at times
    print(f"{kind} margin={margin}: {ncon} contacts, worst {worst:.2e}")


@pytest.mark.parametrize("kind", ["tet", "ball"])
def test_hfield_mesh_pipeline_drop(kind):
    """The whole pipeline (driver, pair table) on MuJoCo's states of the mesh dropped on the field."""
    mjm = _scene(kind, 0.005, 0.0, seed=7, gravity="0 0 -9.81")
    d = mujoco.MjData(mjm)
    d.qpos[:3] = [0.05, -0.03, 0.5]
    d.qpos[3:7] = rand_quat(np.random.default_rng(5))
    rows = []
    for k in range(600):
        mujoco.mj_step(mjm, d)
        if k % 60 == 59:
            rows.append(d.qpos.copy())
    rows = np.array(rows)
    ours = rigidsim_contacts(model_from_mujoco(mjm), rows)
    theirs = mujoco_contacts(mujoco, mjm, rows)
    assert_same_contacts(ours, theirs, tol=1e-6, what=f"drop {kind}")
    assert sum(map(len, theirs)) >= len(rows)
