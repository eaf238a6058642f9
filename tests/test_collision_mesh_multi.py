"""Mesh geoms against boxes, capsules, cylinders and meshes with multiccd on (MuJoCo 4.0.0's default): the
driver's 'mesh_multi' collider (GJK/EPA with the mesh support, then `collision.multicontact`'s extra contacts
from the touching polygons and edges) against mj_collision: the same count, dist, pos and frame within 1e-6
(in practice bit for bit).

The collider: `hfield.gjk_pair` with the multi-contact and the mesh support compiled in, the code the
collision driver runs for a 'mesh_multi' pair, fed MuJoCo's own geom poses (geom_xpos, geom_xmat after
mj_forward), sizes, the pair's margin plus gap and MuJoCo's ccd settings: face-on-face rests move their
contacts with last-bit changes of the poses, so both sides get the same poses.

Meshes, given inline by their vertices: a box (8 vertices: the exhaustive support search), a wedge (a
triangular prism, 6 vertices), a hexagonal prism (12 vertices: hill climbing on the hull graph), an irregular
convex hull of 40 random points (hill climbing, triangles) and a 24-sided disc (caps of 24 points: clipped by
a cylinder's 16-point cap or a 20-sided prism's cap, more points than the convex pairs ever clip). Against a
box, a capsule, a cylinder and another mesh (a squashed irregular hull; a box mesh against the irregular hull;
a 20-sided prism against the disc). Poses: random orientations at a random distance, and rests: a random
polygon of the mesh turned to face +z, the other geom above it turned by a multiple of 90 degrees (or, a mesh,
a random polygon of it turned to face -z), both then tilted by up to 0.05 or 0.12 rad (across the 0.996 face
and 0.0888 edge tolerances) and spun, shifted sideways, then moved along the direction until MuJoCo's
mj_geomDistance reaches a target between 2 cm of penetration and 1 cm of separation beyond 1.5 times the
pair's margin. Without margin, with a margin, with margin and gap.

Then the pipeline (our loader and `Simulator`) on a pile of these meshes and the other geoms falling in
MuJoCo, against mj_collision on our geom poses; and the Franka Panda's collision meshes (../shared/models,
when present) with multiccd on: the collider on MuJoCo's poses at states of a MuJoCo run where the arm folds
onto itself and the fingers close on each other, and the whole scene through the pipeline.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.collision_util import mujoco_pair_cases, rand_quat, read_contacts
from tests.collision_util import mismatches as _mismatches
from tests.mjref import model_from_mujoco, mujoco
from rigidsim import model as M
from rigidsim.engine import data as D
from rigidsim.engine import layout as L
from rigidsim.engine.collision import support
from rigidsim.engine.collision.hfield import gjk_pair
from rigidsim.engine.collision.params import BUILT, collider_of
from rigidsim.engine.groups import _Flat, _Group
from rigidsim.engine.lang import ti
from rigidsim.engine.layout import NDCON

ND = ti.types.ndarray()
TOL = 1e-6
CAP = 4


@ti.kernel
def _multi_kernel(geo: ND, gi: ND, margin: ND, out: ND, count: ND, ccd_f: ND, ccd_i: ND, gcol_i: ND,
                  mesh_vert: ND, mesh_graph: ND, mesh_vert_i: ND, mesh_poly_f: ND, mesh_poly_i: ND,
                  mesh_polyvert: ND, mesh_polymap: ND, mesh_extrema: ND, hfield_f: ND, hfield_i: ND,
                  hfield_data: ND, cap: ti.i32, nf: ti.i32, ni: ti.i32, tol: ti.f64, iters: ti.i32):
    for b in range(geo.shape[0]):
        pos1 = ti.Vector([geo[b, k] for k in ti.static(range(3))])
        mat1 = ti.Vector([geo[b, 3 + k] for k in ti.static(range(9))])
        size1 = ti.Vector([geo[b, 12 + k] for k in ti.static(range(3))])
        pos2 = ti.Vector([geo[b, 15 + k] for k in ti.static(range(3))])
        mat2 = ti.Vector([geo[b, 18 + k] for k in ti.static(range(9))])
        size2 = ti.Vector([geo[b, 27 + k] for k in ti.static(range(3))])
        count[b] = gjk_pair(
            _Group(gcol_i=_Flat(gcol_i, L.NGCOL_I), mesh_vert=_Flat(mesh_vert, 3), mesh_graph=_Flat(mesh_graph, 1),
                   mesh_vert_i=_Flat(mesh_vert_i, L.NMVERT_I), mesh_poly_f=_Flat(mesh_poly_f, L.NMPOLY_F),
                   mesh_poly_i=_Flat(mesh_poly_i, L.NMPOLY_I), mesh_polyvert=_Flat(mesh_polyvert, 1),
                   mesh_polymap=_Flat(mesh_polymap, 1), mesh_extrema=_Flat(mesh_extrema, 27),
                   hfield_f=_Flat(hfield_f, L.NHFIELD_F), hfield_i=_Flat(hfield_i, L.NHFIELD_I),
                   hfield_data=_Flat(hfield_data, 1)),
            _Group(contact=_Flat(out, cap * NDCON, NDCON), ccd_f=_Flat(ccd_f, nf), ccd_i=_Flat(ccd_i, ni)),
            b, 0, cap, 0, gi[b, 0], gi[b, 2], pos1, mat1, size1, gi[b, 1], gi[b, 3], pos2, mat2, size2, 0.0,
            margin[b], tol, iters, 1, True, True, False)


def collide_on_mujoco_poses(mjm, qpos_rows):
    """The candidate pairs of `mjm` whose collider is 'mesh_multi' (our pair table, in MuJoCo's geom order),
    at each qpos row, through our collider on MuJoCo's geom poses: (cases, ours). cases: per (row, pair) a dict
    with the pair's geoms and MuJoCo's contacts for it (dist, pos, frame); ours: per case our contacts (dist,
    pos, normal, tangent)."""
    model = model_from_mujoco(mjm)
    cases, rows = mujoco_pair_cases(mujoco, mjm, model, qpos_rows, "mesh_multi")
    mp = D.put_model(model, np.float64)
    n = len(cases)
    if n == 0:
        return cases, []
    nf, ni = support.scratch_size(int(mjm.opt.ccd_iterations), int(np.max(mjm.mesh_polyvertnum, initial=0)))
    out = np.zeros(n * CAP * NDCON)
    count = np.zeros(n, np.int32)
    flat = {k: np.ascontiguousarray(mp[k]).reshape(-1) for k in (
        "gcol_i", "mesh_vert", "mesh_graph", "mesh_vert_i", "mesh_poly_f", "mesh_poly_i", "mesh_polyvert",
        "mesh_polymap", "mesh_extrema", "hfield_f", "hfield_i", "hfield_data")}
    _multi_kernel(np.ascontiguousarray(rows["geo"], np.float64), np.ascontiguousarray(rows["gi"], np.int32),
                  np.ascontiguousarray(rows["margin"], np.float64), out, count, np.zeros(n * nf),
                  np.zeros(n * ni, np.int32), flat["gcol_i"], flat["mesh_vert"], flat["mesh_graph"],
                  flat["mesh_vert_i"], flat["mesh_poly_f"], flat["mesh_poly_i"], flat["mesh_polyvert"],
                  flat["mesh_polymap"], flat["mesh_extrema"], flat["hfield_f"], flat["hfield_i"],
                  flat["hfield_data"], CAP, nf, ni, float(mjm.opt.ccd_tolerance), int(mjm.opt.ccd_iterations))
    return cases, read_contacts(out, count, CAP)


def mismatches(cases, ours):
    """[(case index, why)] for the cases whose contacts differ from MuJoCo's, and the largest error seen."""
    return _mismatches(cases, ours, TOL)


# ------------------------------------------------------------------------------------------ scenes


def _fmt(a):
    return " ".join(f"{x:.7g}" for x in np.ravel(a))


def _prism(n, r, h, phase=0.5):
    a = (np.arange(n) + phase) * 2 * np.pi / n
    return np.array([(r * np.cos(t), r * np.sin(t), z) for z in (-h, h) for t in a])


_rng = np.random.default_rng(7)
MESHES = {  # name: vertices (the mesh frame before MuJoCo moves them to the centre of mass)
    "box": np.array([(x, y, z) for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)]) * [0.1, 0.08, 0.06],
    "wedge": np.array([(-0.08, -0.06, -0.05), (0.09, -0.06, -0.05), (-0.08, 0.07, -0.05),
                       (-0.08, -0.06, 0.05), (0.09, -0.06, 0.05), (-0.08, 0.07, 0.05)]),
    "hexprism": _prism(6, 0.08, 0.05, 0.0),
    "hull": _rng.normal(size=(40, 3)) * [0.08, 0.06, 0.05],
    "disc": _prism(24, 0.09, 0.03),
}
SECOND = {"hull": _rng.normal(size=(30, 3)) * [0.07, 0.07, 0.03], "box": MESHES["box"] * [0.8, 1.2, 1.0],
          "disc": _prism(20, 0.07, 0.04, 0.25)}
OTHERS = {  # the other geom's MJCF attributes
    "box": 'type="box" size=".07 .05 .04"',
    "capsule": 'type="capsule" size=".03 .07"',
    "cylinder": 'type="cylinder" size=".07 .04"',
    "mesh": 'type="mesh" mesh="other"',
}
MARGINS = [(0.0, 0.0), (0.01, 0.0), (0.02, 0.005)]


def _pair_scene(mesh, other, margin, gap):
    """Two free bodies: the mesh under test and the other geom (a mesh: the squashed hull, a box mesh against
    the irregular hull, a 20-sided prism against the disc)."""
    second = SECOND[{"hull": "box", "disc": "disc"}.get(mesh, "hull")]
    return mujoco.MjModel.from_xml_string(f"""<mujoco>
      <asset><mesh name="m" vertex="{_fmt(MESHES[mesh])}"/><mesh name="other" vertex="{_fmt(second)}"/></asset>
      <default><geom margin="{margin}" gap="{gap}"/></default>
      <worldbody>
        <body><freejoint/><geom type="mesh" mesh="m"/></body>
        <body pos="0 0 1"><freejoint/><geom {OTHERS[other]}/></body>
      </worldbody></mujoco>""")


def _quat2mat(q):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q, float))
    return m.reshape(3, 3)


def _qmul(a, b):
    res = np.zeros(4)
    mujoco.mju_mulQuat(res, np.asarray(a, float), np.asarray(b, float))
    return res


def _axis_quat(axis, ang):
    axis = np.asarray(axis, float)
    return np.concatenate(([np.cos(ang / 2)], np.sin(ang / 2) * axis / np.linalg.norm(axis)))


def _turn_to(a, b):
    """A quaternion turning unit vector a onto unit vector b."""
    c = np.cross(a, b)
    s, cos = np.linalg.norm(c), float(np.dot(a, b))
    if s < 1e-12:
        if cos > 0:
            return np.array([1.0, 0, 0, 0])
        perp = np.cross(a, [1.0, 0, 0] if abs(a[0]) < 0.9 else [0, 1.0, 0])
        return _axis_quat(perp, np.pi)
    return _axis_quat(c, np.arctan2(s, cos))


_SQUARE = [_axis_quat([1, 0, 0], 0), _axis_quat([1, 0, 0], np.pi / 2), _axis_quat([0, 1, 0], np.pi / 2),
           _axis_quat([1, 0, 0], np.pi)]


def _extent(mjm, g, mat, u):
    """max over the geom's points x of u . (x - its centre), the geom turned by mat (MuJoCo sizes)."""
    if mjm.geom_type[g] == M.GEOM_MESH:
        k = mjm.geom_dataid[g]
        v = np.asarray(mjm.mesh_vert[mjm.mesh_vertadr[k]:mjm.mesh_vertadr[k] + mjm.mesh_vertnum[k]], np.float64)
        return float((v @ mat.T @ u).max())
    from tests.collision_util import extent

    kind = {M.GEOM_CAPSULE: "capsule", M.GEOM_CYLINDER: "cylinder", M.GEOM_BOX: "box"}[int(mjm.geom_type[g])]
    return extent(kind, mjm.geom_size[g], mat, u)


def _face_up(mjm, g, rng, up):
    """A geom-frame orientation resting geom g on a face towards `up` (+1: its face looks up, -1: down): a
    random polygon of a mesh (chosen in proportion to its points), else a multiple of 90 degrees; then spun
    about z."""
    if mjm.geom_type[g] == M.GEOM_MESH:
        k = mjm.geom_dataid[g]
        adr, num = mjm.mesh_polyadr[k], mjm.mesh_polynum[k]
        w = np.asarray(mjm.mesh_polyvertnum[adr:adr + num], float)
        p = adr + rng.choice(num, p=w / w.sum())  # by point count: large polygons more often
        q = _turn_to(np.asarray(mjm.mesh_polynormal[p], float), np.array([0, 0, up], float))
    else:
        q = _SQUARE[rng.integers(4)]
    return _qmul(_axis_quat([0, 0, 1], rng.uniform(0, 2 * np.pi)), q)


def _poses(mjm, n, rng):
    """n qpos rows (module docstring): a quarter random, the rest resting on faces with tilts 0, 0.05, 0.12."""
    d = mujoco.MjData(mjm)
    fromto = np.zeros(6)
    summargin = float(mjm.geom_margin.sum() + mjm.geom_gap.sum())
    rows = []
    for i in range(n):
        mode = i % 4
        if mode == 0:
            gq = [rand_quat(rng), rand_quat(rng)]
            u = rng.normal(size=3)
            lat = np.zeros(3)
        else:
            tilt = (0.0, 0.05, 0.12)[mode - 1]
            gq = [_qmul(_axis_quat(rng.normal(size=3), rng.uniform(0, tilt)), _face_up(mjm, g, rng, up))
                  for g, up in ((0, 1), (1, -1))]
            u = np.array([0, 0, 1.0]) + (0.3 * rng.normal(size=3) if rng.uniform() < 0.3 else 0.0)
            lat = np.append(rng.uniform(-.06, .06, size=2), 0.0)
        u = u / np.linalg.norm(u)
        q = mjm.qpos0.copy()
        for j in range(2):  # body quaternion giving the geom frame gq[j]
            inv = np.zeros(4)
            mujoco.mju_negQuat(inv, mjm.geom_quat[j])
            q[7 * j + 3:7 * j + 7] = _qmul(gq[j], inv)
            q[7 * j:7 * j + 3] = 0.0
        d.qpos[:] = q
        mujoco.mj_kinematics(mjm, d)
        off = [d.geom_xpos[j].copy() for j in range(2)]  # geom centres of bodies at the origin
        e = _extent(mjm, 0, _quat2mat(gq[0]), u) + _extent(mjm, 1, _quat2mat(gq[1]), -u)
        q[0:3] = -off[0]
        q[7:10] = u * e + lat - off[1]
        target = rng.uniform(-0.02, 0.01 + 1.5 * summargin)
        for _ in range(6):
            d.qpos[:] = q
            mujoco.mj_kinematics(mjm, d)
            q[7:10] += u * (target - mujoco.mj_geomDistance(mjm, d, 0, 1, 10.0, fromto))
        rows.append(q)
    return np.array(rows)


# ------------------------------------------------------------------------------------------ tests


def test_collider_choice():
    """A mesh against a capsule, cylinder, box or mesh with multiccd on is 'mesh_multi', now built; with
    multiccd off, or against a sphere or an ellipsoid, it is 'mesh' (one contact)."""
    for t in (M.GEOM_CAPSULE, M.GEOM_CYLINDER, M.GEOM_BOX, M.GEOM_MESH):
        assert collider_of(t, M.GEOM_MESH) == "mesh_multi"
        assert collider_of(t, M.GEOM_MESH, False) == "mesh"
    assert "mesh_multi" in BUILT


@pytest.mark.parametrize("margin", range(len(MARGINS)), ids=["nomargin", "margin", "margin_gap"])
@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("mesh", list(MESHES))
def test_collider_matches_mujoco(mesh, other, margin):
    """The collider on MuJoCo's poses (module docstring): 160 poses per scene; several contacts in many."""
    mjm = _pair_scene(mesh, other, *MARGINS[margin])
    rng = np.random.default_rng(100 * list(MESHES).index(mesh) + 10 * list(OTHERS).index(other) + margin)
    cases, ours = collide_on_mujoco_poses(mjm, _poses(mjm, 160, rng))
    assert len(cases) == 160
    counts = [len(c["mj"]) for c in cases]
    assert 0 in counts and 1 in counts and 2 in counts, sorted(set(counts))  # apart, one point, an edge
    if other != "capsule":
        assert max(counts) >= 3, sorted(set(counts))  # faces clipped
    if margin:
        assert any(m[0] > 0 for c in cases for m in c["mj"])  # contacts inside the margin, not touching
    bad, worst = mismatches(cases, ours)
    assert not bad, f"{len(bad)} of {len(cases)} poses differ: {bad[:5]}"
    assert worst < TOL


# ------------------------------------------------------------------------------------------ the pipeline


def _pile_scene():
    """The meshes, a capsule, a cylinder and a box (with margins) and a floor, free bodies in a pile."""
    bodies = []
    for k, name in enumerate(MESHES):
        bodies.append(f'<body pos="{0.1 * (k % 3) - 0.1} {0.1 * (k // 3)} {0.1 + 0.06 * k}" euler="{7 * k} 5 0">'
                      f'<freejoint/><geom type="mesh" mesh="{name}"/></body>')
    for k, other in enumerate(["capsule", "cylinder", "box"]):
        bodies.append(f'<body pos="{0.1 * k - 0.08} {0.05 + 0.03 * k} {0.45 + 0.07 * k}" euler="{20 * k} 10 0">'
                      f'<freejoint/><geom {OTHERS[other]} margin=".004" gap=".001"/></body>')
    assets = "".join(f'<mesh name="{n}" vertex="{_fmt(MESHES[n])}"/>' for n in MESHES)
    return f"""<mujoco><asset>{assets}</asset><worldbody>
      <geom type="plane" size="1 1 .1"/>{"".join(bodies)}</worldbody></mujoco>"""


def test_pipeline_matches_mujoco(tmp_path):
    """The pile falling in MuJoCo, at 40 states of its run: our loader, kinematics and driver against
    mj_collision on the same geom poses, every contact (mesh_multi, plane-mesh, the primitives) with its
    parameters; several mesh pairs touch with more than one contact."""
    from rigidsim.loaders import load_scene
    from tests.collision_util import trajectory
    from tests.test_collision_mesh_convex import _assert_pipeline, pipeline_vs_mujoco

    xml = _pile_scene()
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    model = load_scene(path)
    mjm = mujoco.MjModel.from_xml_string(xml)
    q = trajectory(mujoco, mjm, 40, every=10)
    ours, theirs = pipeline_vs_mujoco(model, mjm, q)
    multi = [c for e in theirs for c in e if collider_of(*(int(mjm.geom_type[g]) for g in c["geom"])) == "mesh_multi"]
    assert len(multi) > 40, len(multi)
    assert any(sum(1 for c in e if c["geom"] == g) >= 3 for e in theirs for g in {c["geom"] for c in e}
               if collider_of(*(int(mjm.geom_type[x]) for x in g)) == "mesh_multi")
    _assert_pipeline(ours, theirs, "mesh pile")


# ------------------------------------------------------------------------------------------ the Panda


def _panda():
    from tests.cli_util import MODELS

    path = MODELS / "menagerie/franka_emika_panda/scene.xml"
    if not path.exists():
        pytest.skip("../shared/models is absent")
    return path, mujoco.MjModel.from_xml_path(str(path))


def test_panda_collider_matches_mujoco():
    """The Panda's mesh pairs with multiccd on (its links' meshes, the finger meshes against each other and
    against the finger pads' boxes): the collider on MuJoCo's poses at 120 states of a run where the arm
    folds and the fingers close; the touching pairs give 2 or 4 contacts."""
    from tests.test_collision_mesh_convex import _panda_states

    _, mjm = _panda()
    cases, ours = collide_on_mujoco_poses(mjm, _panda_states(mjm, 60, 200, 1))
    counts = [len(c["mj"]) for c in cases]
    assert sum(1 for n in counts if n) > 500 and max(counts) == 4
    bad, worst = mismatches(cases, ours)
    assert not bad, f"{len(bad)} of {len(cases)} pair states differ: {bad[:5]}"


def test_panda_pipeline_matches_mujoco():
    """The Panda scene through our loader and `Simulator` (multiccd on), against mj_collision on our geom
    poses: every contact."""
    from rigidsim.loaders import load_scene
    from tests.test_collision_mesh_convex import _assert_pipeline, _panda_states, pipeline_vs_mujoco

    path, mjm = _panda()
    ours, theirs = pipeline_vs_mujoco(load_scene(path), mjm, _panda_states(mjm, 60, 200, 2))
    multi = [c for e in theirs for c in e if collider_of(*(int(mjm.geom_type[g]) for g in c["geom"])) == "mesh_multi"]
    assert len(multi) > 500, len(multi)
    _assert_pipeline(ours, theirs, "panda")
