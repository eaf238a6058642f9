"""Mesh geoms against convex geoms and meshes through our GJK/EPA (the driver's 'mesh' collider: one contact
per pair), against MuJoCo 4.0.0's mj_collision.

The collider: `gjk.convex` with the mesh support compiled in (`mesh.with_meshes`, `support.begin_mesh`), the
code the collision driver runs for a 'mesh' pair, fed MuJoCo's own geom poses (geom_xpos, geom_xmat after
mj_forward) and sizes, the pair's margin plus gap and MuJoCo's ccd tolerance and iterations. It must give
MuJoCo's contacts: the same count (0 or 1), dist, pos and frame within 1e-6 (they agree to ~1e-15).

Meshes, given inline by their vertices: a box (8 vertices: the exhaustive support search), a tetrahedron
off its centre (MuJoCo moves the vertices to the mesh's centre of mass and the geom frame with them), a
16-sided prism (32 vertices, flat faces), a point cloud and a 300-point ellipsoid-like cloud (hill climbing
on the hull graph from the extreme-vertex seeds). With multiccd on (MuJoCo 4.0.0's default) a mesh against a
sphere or an ellipsoid gives one contact; with ``<flag multiccd="disable"/>`` every mesh pair does: against a
capsule, a cylinder, a box and another mesh too. Poses: random orientations with the other geom at a random
distance (deep, shallow, apart); and poses placed along a direction at the distance where the two support
planes meet, then shifted to penetrate, touch (within 1e-7), lie within the margin or just beyond it, half of
them unrotated with the direction along a coordinate axis (faces at rest on faces). Without and with margins.

The pipeline: scenes through `Simulator` (our loader, our kinematics, the driver's colliders, the pair
parameters), against mj_collision run on our geom poses (the contacts of face-on-face rests move along the
faces with last-bit changes of the poses, so both sides get the same poses): multiccd on, the MJCF flag
off, and ``enable_multi_contact=false`` (``--set``). Also the collider choice (`params.collider_of`), and the
Franka Panda's collision meshes (../shared/models, when present) with multiccd disabled, on states of a
MuJoCo run: the collider on MuJoCo's poses and the pipeline.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.collision_util import mujoco_pair_cases, rand_quat, read_contacts, rigidsim_contacts
from tests.collision_util import mismatches as _mismatches
from tests.mjref import model_from_mujoco, mujoco, mujoco_states
from rigidsim import model as M
from rigidsim.engine import data as D
from rigidsim.engine import layout as L
from rigidsim.engine.lang import ti
from rigidsim.engine.groups import _Flat, _Group
from rigidsim.engine.layout import NDCON
from rigidsim.engine.collision import gjk, support
from rigidsim.engine.collision.mesh import with_meshes
from rigidsim.engine.collision.params import BUILT, collider_of

ND = ti.types.ndarray()
TOL = 1e-6
CAP = 2


@ti.kernel
def _mesh_kernel(geo: ND, gi: ND, margin: ND, out: ND, count: ND, ccd_f: ND, ccd_i: ND, gcol_i: ND,
                 mesh_vert: ND, mesh_graph: ND, mesh_extrema: ND, cap: ti.i32, nf: ti.i32, ni: ti.i32,
                 tol: ti.f64, iters: ti.i32):
    for b in range(geo.shape[0]):
        pos1 = ti.Vector([geo[b, k] for k in ti.static(range(3))])
        mat1 = ti.Vector([geo[b, 3 + k] for k in ti.static(range(9))])
        size1 = ti.Vector([geo[b, 12 + k] for k in ti.static(range(3))])
        pos2 = ti.Vector([geo[b, 15 + k] for k in ti.static(range(3))])
        mat2 = ti.Vector([geo[b, 18 + k] for k in ti.static(range(9))])
        size2 = ti.Vector([geo[b, 27 + k] for k in ti.static(range(3))])
        support.begin_mesh(_Group(ccd_i=_Flat(ccd_i, ni)), b, gi[b, 0], gi[b, 1])
        count[b] = gjk.convex(
            with_meshes(_Group(gcol_i=_Flat(gcol_i, L.NGCOL_I), mesh_vert=_Flat(mesh_vert, 3),
                               mesh_graph=_Flat(mesh_graph, 1), mesh_extrema=_Flat(mesh_extrema, 27)),
                        _Group(contact=_Flat(out, cap * NDCON, NDCON), ccd_f=_Flat(ccd_f, nf), ccd_i=_Flat(ccd_i, ni))),
            b, 0, cap, gi[b, 2], pos1, mat1, size1, gi[b, 3], pos2, mat2, size2, margin[b], tol, iters)


def collide_on_mujoco_poses(mjm, qpos_rows):
    """The candidate pairs of `mjm` whose collider is 'mesh' (our pair table, in MuJoCo's geom order: the
    lower type first), at each qpos row, through our collider on MuJoCo's geom poses: (cases, ours). cases:
    per (row, pair) a dict with the pair's geoms and MuJoCo's contacts for it (dist, pos, frame); ours: per
    case our contacts (dist, pos, normal, tangent)."""
    model = model_from_mujoco(mjm)
    cases, rows = mujoco_pair_cases(mujoco, mjm, model, qpos_rows, "mesh")
    mp = D.put_model(model, np.float64)
    n = len(cases)
    if n == 0:
        return cases, []
    nf, ni = support.scratch_size(int(mjm.opt.ccd_iterations))
    out = np.zeros(n * CAP * NDCON)
    count = np.zeros(n, np.int32)
    _mesh_kernel(np.ascontiguousarray(rows["geo"], np.float64), np.ascontiguousarray(rows["gi"], np.int32),
                 np.ascontiguousarray(rows["margin"], np.float64), out, count, np.zeros(n * nf),
                 np.zeros(n * ni, np.int32), np.ascontiguousarray(mp["gcol_i"]).reshape(-1),
                 np.ascontiguousarray(mp["mesh_vert"]).reshape(-1), np.ascontiguousarray(mp["mesh_graph"]).reshape(-1),
                 np.ascontiguousarray(mp["mesh_extrema"]).reshape(-1), CAP, nf, ni, float(mjm.opt.ccd_tolerance),
                 int(mjm.opt.ccd_iterations))
    return cases, read_contacts(out, count, CAP)


def mismatches(cases, ours):
    """[(case index, why)] for the cases whose contacts differ from MuJoCo's, and the largest error seen."""
    return _mismatches(cases, ours, TOL)


# ------------------------------------------------------------------------------------------ scenes


def _fmt(a):
    return " ".join(f"{x:.7g}" for x in np.ravel(a))


def _prism(n, r, h):
    a = (np.arange(n) + 0.5) * 2 * np.pi / n
    return np.array([(r * np.cos(t), r * np.sin(t), z) for z in (-h, h) for t in a])


_rng = np.random.default_rng(3)
_u = _rng.normal(size=(300, 3))
MESHES = {  # name: vertices (the mesh frame before MuJoCo moves them to the centre of mass)
    "box": np.array([(x, y, z) for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)]) * [0.1, 0.08, 0.06],
    "tet": np.array([(0.02, 0.01, 0.0), (0.14, 0.01, 0.0), (0.02, 0.11, 0.0), (0.02, 0.01, 0.09)]),
    "prism": _prism(16, 0.08, 0.05),
    "cloud": _rng.normal(size=(60, 3)) * [0.08, 0.05, 0.04],
    "ball": _u / np.linalg.norm(_u, axis=1, keepdims=True) * [0.09, 0.07, 0.05],
}
OTHERS = {  # the other geom: MJCF attributes, and whether its pair with a mesh needs multiccd off
    "sphere": ('type="sphere" size=".07"', False),
    "ellipsoid": ('type="ellipsoid" size=".08 .05 .09"', False),
    "capsule": ('type="capsule" size=".05 .07"', True),
    "cylinder": ('type="cylinder" size=".07 .06"', True),
    "box": ('type="box" size=".07 .05 .06"', True),
    "mesh": ('type="mesh" mesh="other"', True),
}
MARGINS = [(0.0, 0.0), (0.01, 0.002)]
MULTICCD_OFF = '<option><flag multiccd="disable"/></option>'


def _pair_scene(mesh, other, margin, gap):
    """Two free bodies: the mesh under test (its geom moved and turned in its body) and the other geom."""
    attrs, off = OTHERS[other]
    second = "ball" if mesh != "ball" else "cloud"
    return mujoco.MjModel.from_xml_string(f"""<mujoco>{MULTICCD_OFF if off else ""}
      <asset><mesh name="m" vertex="{_fmt(MESHES[mesh])}"/><mesh name="other" vertex="{_fmt(MESHES[second])}"/></asset>
      <default><geom margin="{margin}" gap="{gap}"/></default>
      <worldbody>
        <body><freejoint/><geom type="mesh" mesh="m" pos=".01 -.02 .03" euler="10 20 30"/></body>
        <body pos="0 0 1"><freejoint/><geom {attrs}/></body>
      </worldbody></mujoco>""")


def _extent(mjm, g, mat, u):
    """max over the geom's points x of u . (x - its centre), the geom turned by mat (MuJoCo sizes)."""
    if mjm.geom_type[g] == M.GEOM_MESH:
        k = mjm.geom_dataid[g]
        v = np.asarray(mjm.mesh_vert[mjm.mesh_vertadr[k]:mjm.mesh_vertadr[k] + mjm.mesh_vertnum[k]], np.float64)
        return float((v @ mat.T @ u).max())
    from tests.collision_util import extent

    kind = {M.GEOM_SPHERE: "sphere", M.GEOM_CAPSULE: "capsule", M.GEOM_ELLIPSOID: "ellipsoid",
            M.GEOM_CYLINDER: "cylinder", M.GEOM_BOX: "box"}[int(mjm.geom_type[g])]
    return extent(kind, mjm.geom_size[g], mat, u)


def _poses(mjm, n, rng):
    """qpos rows for the two-body scenes: n random ones and n placed ones (module docstring)."""
    d = mujoco.MjData(mjm)
    summargin = float(mjm.geom_margin.sum() + mjm.geom_gap.sum())
    scale = float(min(mjm.geom_rbound))
    rows = []
    for i in range(2 * n):
        placed = i >= n
        aligned = placed and i % 2 == 0
        q = mjm.qpos0.copy()
        quats = [np.array([1.0, 0, 0, 0])] * 2 if aligned else [rand_quat(rng), rand_quat(rng)]
        for j in range(2):
            q[7 * j:7 * j + 3] = 0.0
            q[7 * j + 3:7 * j + 7] = quats[j]
        if aligned:  # geom frames parallel to the world's: undo each geom's own turn in its body
            for j in range(2):
                gq = np.zeros(4)
                mujoco.mju_negQuat(gq, mjm.geom_quat[j])
                q[7 * j + 3:7 * j + 7] = gq
        d.qpos[:] = q
        mujoco.mj_kinematics(mjm, d)
        off0, off1 = d.geom_xpos[0].copy(), d.geom_xpos[1].copy()  # geom centres of bodies at the origin
        mat0, mat1 = d.geom_xmat[0].reshape(3, 3).copy(), d.geom_xmat[1].reshape(3, 3).copy()
        u = rng.normal(size=3)
        if aligned and i % 4 == 0:
            u = np.zeros(3)
            u[rng.integers(3)] = rng.choice([-1.0, 1.0])
        u /= np.linalg.norm(u)
        if not placed:
            dist = rng.uniform(0.2, 1.1) * float(mjm.geom_rbound.sum())
        else:
            h = _extent(mjm, 0, mat0, u) + _extent(mjm, 1, mat1, -u)
            c = i % 5
            shift = [-rng.uniform(0.0, 0.2) * scale, rng.uniform(-1e-7, 1e-7),
                     rng.uniform(0.0, 1.0) * summargin if summargin else -rng.uniform(0, 1e-3) * scale,
                     summargin + rng.uniform(0.0, 0.02) * scale, -rng.uniform(0.0, 0.02) * scale][c]
            dist = h + shift
        p0 = rng.uniform(-0.5, 0.5, 3)
        q[0:3] = p0 - off0
        q[7:10] = p0 + u * dist - off1
        rows.append(q)
    return np.array(rows)


# ------------------------------------------------------------------------------------------ tests


def test_collider_choice():
    """A mesh against a sphere or an ellipsoid, and every mesh pair with multiccd off, is the built 'mesh'
    collider (one contact); the other mesh pairs need multi-contact ('mesh_multi', test_collision_mesh_multi);
    a plane keeps its own collider."""
    S, C, E, Y, B, MESH, P = (M.GEOM_SPHERE, M.GEOM_CAPSULE, M.GEOM_ELLIPSOID, M.GEOM_CYLINDER, M.GEOM_BOX,
                              M.GEOM_MESH, M.GEOM_PLANE)
    for t in (S, E):
        assert collider_of(t, MESH) == collider_of(MESH, t) == collider_of(t, MESH, False) == "mesh"
    for t in (C, Y, B, MESH):
        assert collider_of(t, MESH) == "mesh_multi"
        assert collider_of(MESH, t, False) == "mesh"
    assert collider_of(P, MESH) == collider_of(P, MESH, False) == "plane_mesh"
    assert "mesh" in BUILT


def test_mujoco_multiccd_counts():
    """Why the split: in MuJoCo 4.0.0 a flat face of a mesh box on a box, a cylinder's cap or another mesh gives
    several contacts with multiccd on and one with it off; a sphere or an ellipsoid on a face gives one."""
    for other, many in (("box", True), ("cylinder", True), ("mesh", True), ("sphere", False), ("ellipsoid", False)):
        for off in (False, True):
            attrs = OTHERS[other][0]
            mjm = mujoco.MjModel.from_xml_string(f"""<mujoco>{MULTICCD_OFF if off else ""}
              <asset><mesh name="m" vertex="{_fmt(MESHES['box'])}"/>
                     <mesh name="other" vertex="{_fmt(MESHES['box'])}"/></asset>
              <worldbody><geom type="mesh" mesh="m"/>
                <body pos=".01 .02 .11"><freejoint/><geom {attrs}/></body></worldbody></mujoco>""")
            d = mujoco.MjData(mjm)
            mujoco.mj_forward(mjm, d)
            assert d.ncon >= 1
            assert (d.ncon > 1) == (many and not off), (other, off, d.ncon)


@pytest.mark.parametrize("margin", range(len(MARGINS)), ids=["nomargin", "margin"])
@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("mesh", list(MESHES))
def test_collider_matches_mujoco(mesh, other, margin):
    """The collider on MuJoCo's poses (module docstring): 96 random and 96 placed poses per scene."""
    mjm = _pair_scene(mesh, other, *MARGINS[margin])
    rng = np.random.default_rng(100 * list(MESHES).index(mesh) + 10 * list(OTHERS).index(other) + margin)
    cases, ours = collide_on_mujoco_poses(mjm, _poses(mjm, 96, rng))
    assert len(cases) == 192
    ncontact = sum(1 for c in cases if c["mj"])
    assert 0 < ncontact < len(cases), ncontact  # the poses exercise both outcomes
    bad, worst = mismatches(cases, ours)
    assert not bad, f"{len(bad)} of {len(cases)} poses differ: {bad[:5]}"


# ------------------------------------------------------------------------------------------ the pipeline


def _contact_dicts(mjm, d):
    return [{"geom": tuple(int(g) for g in c.geom), "dist": float(c.dist), "pos": np.array(c.pos),
             "frame": np.array(c.frame).reshape(3, 3), "dim": int(c.dim), "friction": np.array(c.friction),
             "solref": np.array(c.solref), "solreffriction": np.array(c.solreffriction),
             "solimp": np.array(c.solimp), "includemargin": float(c.includemargin)} for c in d.contact[:d.ncon]]


def pipeline_vs_mujoco(model, mjm, qpos_rows, options=None):
    """(ours, theirs): our contacts through `Simulator` at each qpos row (`collision_util.rigidsim_contacts`),
    and mj_collision's at the same rows with our geom poses put in MuJoCo's data."""
    from rigidsim import options as opts
    from rigidsim.engine.simulator import Simulator

    q = np.atleast_2d(np.asarray(qpos_rows, np.float64))
    ours = rigidsim_contacts(model, q, options)
    r = opts.resolve(model, {}, {"enable_mujoco_compatibility": True, **(options or {})})
    sim = Simulator(opts.apply(model, r), len(q), kinematics_only=True, pair_options=r)
    sim.reset(qpos=q)
    sim.kinematics()
    xpos, xmat = sim.get("geom_xpos"), sim.get("geom_xmat").reshape(len(q), -1, 9)
    d = mujoco.MjData(mjm)
    theirs = []
    for b, row in enumerate(q):
        d.qpos[:] = row
        mujoco.mj_kinematics(mjm, d)
        d.geom_xpos[:] = xpos[b]
        d.geom_xmat[:] = xmat[b]
        mujoco.mj_collision(mjm, d)
        theirs.append(_contact_dicts(mjm, d))
    return ours, theirs


def _assert_pipeline(ours, theirs, what):
    from tests.collision_util import assert_same_contacts

    class Row(dict):  # compared by identity (assert_same_contacts removes matched rows from a list)
        __eq__ = object.__eq__
        __hash__ = object.__hash__

    assert_same_contacts([[Row(c) for c in e] for e in ours], theirs, TOL, what)


def _many_scene(multiccd_flag):
    """Meshes (one with its geom moved in its body), the other convex geoms and a floor, free bodies in a pile.
    With multiccd on only the pairs with a sphere or an ellipsoid are mesh pairs (contype 2 / conaffinity 4 keep
    the meshes from the capsule, cylinder, box and each other), with it off every pair collides."""
    mask = (lambda mesh: 'contype="2" conaffinity="4"') if multiccd_flag is None else (lambda mesh: "")
    round_ = 'contype="4" conaffinity="2"' if multiccd_flag is None else ""
    bodies = []
    meshes = ["box", "tet", "prism", "cloud", "ball"]
    for k, name in enumerate(meshes):
        bodies.append(f'<body pos="{0.12 * (k % 3) - 0.12} {0.12 * (k // 3)} {0.1 + 0.05 * k}"><freejoint/>'
                      f'<geom type="mesh" mesh="{name}" pos=".01 0 .02" euler="5 10 15" {mask(name)}/></body>')
    for k, other in enumerate(["sphere", "ellipsoid", "capsule", "cylinder", "box"]):
        attrs = OTHERS[other][0]
        extra = round_ if other in ("sphere", "ellipsoid") else mask(other)
        bodies.append(f'<body pos="{0.12 * (k % 3) - 0.1} {0.12 * (k // 3) + 0.03} {0.4 + 0.06 * k}"><freejoint/>'
                      f'<geom {attrs} {extra} margin=".004" gap=".001"/></body>')
    assets = "".join(f'<mesh name="{n}" vertex="{_fmt(MESHES[n])}"/>' for n in meshes)
    flag = "" if multiccd_flag != "mjcf" else MULTICCD_OFF
    return f"""<mujoco>{flag}<asset>{assets}</asset><worldbody>
      <geom type="plane" size="1 1 .1" contype="7" conaffinity="7"/>{"".join(bodies)}</worldbody></mujoco>"""


@pytest.mark.parametrize("flag", [None, "mjcf", "set"], ids=["multiccd", "mjcf_disable", "set_disable"])
def test_pipeline_matches_mujoco(tmp_path, flag):
    """A pile of meshes and convex geoms falling in MuJoCo, at 40 states of its run: our loader, kinematics and
    driver against mj_collision on the same geom poses, every contact (the mesh pairs, plane-mesh, the
    primitives) with its parameters. flag: multiccd on; off by the MJCF flag; off by enable_multi_contact."""
    from rigidsim.loaders import load_scene
    from tests.collision_util import trajectory

    xml = _many_scene(flag)
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    model = load_scene(path)
    mjm = mujoco.MjModel.from_xml_string(xml)
    if flag == "set":
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)
    q = trajectory(mujoco, mjm, 40, every=10)
    ours, theirs = pipeline_vs_mujoco(model, mjm, q, {"enable_multi_contact": False} if flag == "set" else None)
    types = [{int(mjm.geom_type[g]) for g in c["geom"]} for e in theirs for c in e]
    mesh_pairs = sum(1 for t in types if M.GEOM_MESH in t and M.GEOM_PLANE not in t)
    assert mesh_pairs > 20, mesh_pairs
    _assert_pipeline(ours, theirs, f"pile {flag}")


# ------------------------------------------------------------------------------------------ the Panda


def _panda():
    from tests.cli_util import MODELS

    path = MODELS / "menagerie/franka_emika_panda/scene.xml"
    if not path.exists():
        pytest.skip("../shared/models is absent")
    mjm = mujoco.MjModel.from_xml_path(str(path))
    mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MULTICCD)
    return path, mjm


def _panda_states(mjm, n, hold, seed):
    """qpos of a MuJoCo run whose position servos chase random targets, each held for `hold` steps (the arm
    folds onto itself, the fingers close on each other): two states per target."""
    lo, hi = mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1]

    def ctrl(t, d, rng):
        if t % hold == 0:
            d.ctrl[:] = rng.uniform(lo, hi)

    return mujoco_states(mjm, n, hold, seed, ctrl=ctrl, at=(hold // 2, hold - 1))


def test_panda_collider_matches_mujoco():
    """The Panda's mesh pairs (mesh-mesh, finger pads (boxes) against meshes) with multiccd disabled: the
    collider on MuJoCo's poses."""
    _, mjm = _panda()
    cases, ours = collide_on_mujoco_poses(mjm, _panda_states(mjm, 60, 200, 1))
    assert sum(1 for c in cases if c["mj"]) > 500
    bad, worst = mismatches(cases, ours)
    assert not bad, f"{len(bad)} of {len(cases)} pair states differ: {bad[:5]}"


@pytest.mark.parametrize("how", ["mjcf", "set"])
def test_panda_pipeline_matches_mujoco(how):
    """The Panda scene through our loader and `Simulator` with multiccd disabled (MuJoCo's option on the loaded
    model, or enable_multi_contact=false), against mj_collision on our geom poses: every contact."""
    import dataclasses

    from rigidsim.loaders import load_scene

    path, mjm = _panda()
    model = load_scene(path)
    options = None
    if how == "mjcf":
        model.opt = dataclasses.replace(model.opt, disableflags=model.opt.disableflags | M.DSBL_MULTICCD)
    else:
        options = {"enable_multi_contact": False}
    ours, theirs = pipeline_vs_mujoco(model, mjm, _panda_states(mjm, 60, 200, 2), options)
    assert sum(map(len, theirs)) > 500
    _assert_pipeline(ours, theirs, f"panda {how}")
