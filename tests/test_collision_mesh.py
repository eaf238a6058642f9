"""Plane-mesh contacts (rigidsim.engine.collision.mesh) against MuJoCo 4.0.0's mj_collision at the same
states: order-free, same geom pairs and counts, dist, pos and frame within 1e-9, parameters exact. Scenes are
compiled by MuJoCo (tests/mjref.model_from_mujoco). Meshes: a box, a tetrahedron, prisms with 5 and 16 sides
(the 16-gon caps are pruned to quadrilaterals; 10 and more vertices climb the hull graph), a 9-vertex house
(exhaustive support with a graph), an irregular point cloud and an irregular heptagonal prism; on a floor
and on a tilted plane. The Panda's finely tessellated collision meshes on its floor (../shared/models; skipped
when absent): random arm poses and MuJoCo's own runs, plane-mesh pairs only."""

from __future__ import annotations

import numpy as np
import pytest

from tests.collision_util import assert_same_contacts, mujoco_contacts, rigidsim_contacts, trajectory
from tests.mjref import model_from_mujoco, mujoco


def _prism(n, r, h, rx=None, half=0.0):
    a = (np.arange(n) + half) * 2 * np.pi / n
    rx = r if rx is None else rx
    return " ".join(f"{rx * np.cos(t):.9g} {r * np.sin(t):.9g} {z:.9g}" for z in (-h, h) for t in a)


_rng = np.random.default_rng(3)
_CLOUD = " ".join(f"{v:.6f}" for v in (_rng.normal(size=(40, 3)) * [0.08, 0.05, 0.04]).ravel())
_ang = np.sort(np.random.default_rng(11).uniform(0, 2 * np.pi, 7))
_HEPT = " ".join(f"{0.08 * np.cos(t):.6f} {0.06 * np.sin(t):.6f} {z}" for z in (-0.03, 0.03) for t in _ang)

MESHES = f"""
<mujoco>
  <asset>
    <mesh name="box" vertex="-1 -1 -1  1 -1 -1  1 1 -1  -1 1 -1  -1 -1 1  1 -1 1  1 1 1  -1 1 1" scale=".1 .08 .05"/>
    <mesh name="tet" vertex="0 0 0  .12 0 0  0 .1 0  0 0 .08"/>
    <mesh name="prism" vertex="{_prism(16, 0.07, 0.05, half=0.5)}"/>
    <mesh name="cloud" vertex="{_CLOUD}"/>
    <mesh name="pent" vertex="{_prism(5, 0.07, 0.05)}"/>
    <mesh name="house" vertex="-1 -1 -1  1 -1 -1  1 1 -1  -1 1 -1  -1 -1 1  1 -1 1  1 1 1  -1 1 1  0 0 1.8"
          scale=".1 .08 .05"/>
    <mesh name="hept" vertex="{_HEPT}"/>
  </asset>
  <default><geom contype="2" conaffinity="1"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" contype="1" conaffinity="2"/>
    <geom name="ramp" type="plane" size="1 1 .1" pos="3 0 0.5" euler="0 25 0" margin="0.002" contype="1"
          conaffinity="2"/>
    <body pos="0 0 0.2"><freejoint/><geom name="box" type="mesh" mesh="box" margin="0.01"/></body>
    <body pos="0.5 0 0.2"><freejoint/><geom name="tet" type="mesh" mesh="tet"/></body>
    <body pos="1 0 0.2"><freejoint/><geom name="prism" type="mesh" mesh="prism" gap="0.005" margin="0.01"/></body>
    <body pos="1.5 0 0.2"><freejoint/><geom name="cloud" type="mesh" mesh="cloud"/></body>
    <body pos="0 1 0.2"><freejoint/><geom name="pent" type="mesh" mesh="pent"/></body>
    <body pos="0.5 1 0.2"><freejoint/><geom name="house" type="mesh" mesh="house" margin="0.005"/></body>
    <body pos="1 1 0.2"><freejoint/><geom name="hept" type="mesh" mesh="hept" margin="0.02"/></body>
  </worldbody>
</mujoco>
"""
NMESH = 7


@pytest.fixture(scope="module")
def meshes():
    mjm = mujoco.MjModel.from_xml_string(MESHES)
    return mjm, model_from_mujoco(mjm)


def _quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _random_states(mjm, n, rng, lift=0.2, ramp=False):
    """qpos rows: every body moved by up to `lift` and turned at random; with `ramp`, moved under the ramp."""
    q = np.tile(mjm.qpos0, (n, 1))
    for j in range(mjm.njnt):
        a = mjm.jnt_qposadr[j]
        if ramp:
            q[:, a:a + 3] = [3.0, 0.0, 0.55]
        q[:, a:a + 3] += rng.uniform(-lift, lift, (n, 3))
        quat = rng.normal(size=(n, 4))
        q[:, a + 3:a + 7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q


class _Row(dict):
    """A contact dict compared by identity (assert_same_contacts removes matched rows from a list, and two
    rows with equal distances would otherwise compare their position arrays)."""
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _ours(model, q, keep=lambda c: True):
    return [[_Row(c) for c in e if keep(c)] for e in rigidsim_contacts(model, q)]


def _kinds(mjm, ref):
    return {tuple(sorted(int(mjm.geom_type[g]) for g in c["geom"])) for r in ref for c in r}


@pytest.mark.parametrize("ramp", [False, True])
def test_random_poses_match_mujoco(meshes, ramp):
    """Each mesh at 120 random poses around the floor (or the tilted ramp): penetrating, deeply (all its
    vertices under the plane: only those below the mesh centre give contacts), within margin and gap,
    apart."""
    mjm, model = meshes
    q = _random_states(mjm, 120, np.random.default_rng(1 + ramp), ramp=ramp)
    ref = mujoco_contacts(mujoco, mjm, q)
    assert _kinds(mjm, ref) <= {(0, 7)}
    counts = [sum(1 for r in ref for c in r if c["geom"][1] == g) for g in range(2, 2 + NMESH)]
    assert min(counts) > 60, counts
    assert max(len([c for c in r if c["geom"] == (int(ramp), 4)]) for r in ref) == 4  # pruned 16-gons
    assert_same_contacts(_ours(model, q), ref, 1e-9, f"random ramp={ramp}")


def _resting(mjm, base_quats, spins, plane, drop=0.0):
    """qpos rows: every mesh turned by base * (spin about the plane normal), then moved along the plane
    normal so that its lowest vertex lies `drop` under the plane (negative: above)."""
    d = mujoco.MjData(mjm)
    g_plane = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, plane)
    rows = []
    for base in base_quats:
        for spin in spins:
            q = mjm.qpos0.copy()
            mujoco.mj_kinematics(mjm, d)
            nrm = d.geom_xmat[g_plane].reshape(3, 3)[:, 2].copy()
            ppos = d.geom_xpos[g_plane].copy()
            pq = np.zeros(4)
            mujoco.mju_mat2Quat(pq, d.geom_xmat[g_plane])
            for j in range(mjm.njnt):
                a = mjm.jnt_qposadr[j]
                g = j + 2
                gq = mjm.geom_quat[g] * [1, -1, -1, -1]
                spin_q = np.array([np.cos(spin / 2), 0, 0, np.sin(spin / 2)])
                bq = _quat_mul(_quat_mul(pq, _quat_mul(spin_q, base)), gq)
                q[a + 3:a + 7] = bq / np.linalg.norm(bq)
                q[a:a + 3] = ppos + [0.4 * (j % 4) - 0.6, 0.4 * (j // 4) - 0.2, 0] @ d.geom_xmat[g_plane].reshape(3, 3).T
            d.qpos[:] = q
            mujoco.mj_kinematics(mjm, d)
            for j in range(mjm.njnt):
                a = mjm.jnt_qposadr[j]
                g = j + 2
                k = mjm.geom_dataid[g]
                v = mjm.mesh_vert[mjm.mesh_vertadr[k]:mjm.mesh_vertadr[k] + mjm.mesh_vertnum[k]].astype(float)
                low = ((v @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g] - ppos) @ nrm).min()
                q[a:a + 3] += nrm * (-low - drop)
            rows.append(q)
    return np.array(rows)


_FLAT = [np.array([1.0, 0, 0, 0]), np.array([0.0, 1, 0, 0]), np.array([np.sqrt(0.5), np.sqrt(0.5), 0, 0]),
         np.array([np.sqrt(0.5), 0, np.sqrt(0.5), 0])]
_EDGE = [np.array([np.cos(np.pi / 8), np.sin(np.pi / 8), 0, 0]), np.array([np.cos(0.3), 0, np.sin(0.3), 0])]
_CORNER = [np.array([0.88, 0.28, 0.36, 0.1]) / np.linalg.norm([0.88, 0.28, 0.36, 0.1])]


@pytest.mark.parametrize("plane", ["floor", "ramp"])
@pytest.mark.parametrize("how", ["flat", "edge", "corner"])
@pytest.mark.parametrize("drop", [1e-6, 0.003, -0.004, -0.03])
def test_resting_poses_match_mujoco(meshes, plane, how, drop):
    """Meshes resting on a face (many vertices tie for the support: the hull climb's and the exhaustive
    search's tie-breaking decide the first contact), on an edge, on a corner, spun about the plane normal:
    sunk by 1 um and by 3 mm, 4 mm above (within some margins), apart. Exact touching is left out: with a
    zero margin the support vertex's distance is zero up to rounding, and our geom poses differ from
    MuJoCo's in the last bits."""
    mjm, model = meshes
    quats = {"flat": _FLAT, "edge": _EDGE, "corner": _CORNER}[how]
    q = _resting(mjm, quats, np.linspace(0, 1.3, 6), plane, drop)
    g_plane = int(plane == "ramp")
    ref = mujoco_contacts(mujoco, mjm, q)
    tie = _support_ties(mjm, q, ref)
    keep = lambda b, c: c["geom"][0] == g_plane and (b, c["geom"]) not in tie  # noqa: E731
    ref = [[c for c in r if keep(b, c)] for b, r in enumerate(ref)]
    assert _kinds(mjm, ref) <= {(0, 7)}
    n = sum(len(r) for r in ref)
    assert (n == 0) if drop < -0.02 else (n > (3 * len(q) if drop > 0 else 0))
    ours = [[_Row(c) for c in e if keep(b, c)] for b, e in enumerate(rigidsim_contacts(model, q))]
    assert_same_contacts(ours, ref, 1e-9, f"resting {plane} {how} {drop}")
    if how == "corner" and drop >= 0:  # a unique support vertex: the first contact is MuJoCo's, not just the set
        for mine, theirs in zip(ours, ref):
            for g in {c["geom"] for c in theirs}:
                a = next(c for c in mine if c["geom"] == g)
                b = next(c for c in theirs if c["geom"] == g)
                np.testing.assert_allclose(a["pos"], b["pos"], rtol=0, atol=1e-9)


def _support_ties(mjm, q, ref, tol=1e-6):
    """{(env, geom pair)}: plane-mesh pairs resting on a polygon of more than 4 corners whose lowest vertices
    tie within `tol`: the pruned quadrilateral starts at the support vertex, and which of the tied vertices
    that is is decided by rounding (our geom poses differ from MuJoCo's in the last bits)."""
    d = mujoco.MjData(mjm)
    out = set()
    for b, r in enumerate(ref):
        d.qpos[:] = q[b]
        mujoco.mj_kinematics(mjm, d)
        for g1, g2 in {c["geom"] for c in r}:
            c = next(c for c in r if c["geom"] == (g1, g2))
            k = mjm.geom_dataid[g2]
            va = mjm.mesh_vertadr[k]
            v = mjm.mesh_vert[va:va + mjm.mesh_vertnum[k]].astype(float) @ d.geom_xmat[g2].reshape(3, 3).T
            nrm = d.geom_xmat[g1].reshape(3, 3)[:, 2]
            s = int(np.argmin(np.linalg.norm(v + d.geom_xpos[g2] - (c["pos"] + 0.5 * c["dist"] * nrm), axis=1)))
            polys = mjm.mesh_polymap[mjm.mesh_polymapadr[va + s]:mjm.mesh_polymapadr[va + s] + mjm.mesh_polymapnum[va + s]]
            h = np.sort(v @ -nrm)
            nmax = max(mjm.mesh_polyvertnum[mjm.mesh_polyadr[k] + p] for p in polys)
            if h[-1] - h[-2] < tol and nmax > 4:
                out.add((b, (g1, g2)))
    return out


def test_falling_meshes_match_mujoco():
    """MuJoCo's own run of the meshes dropped on the floor and on the ramp (not on each other): impacts,
    rocking, sliding, rest."""
    spec = mujoco.MjSpec.from_string(MESHES)
    for k, b in enumerate(spec.worldbody.bodies):
        b.pos = [0.35 * (k % 4) + (2.7 if k >= 4 else 0.0), 0.3 * (k // 4) - 0.15, 0.3 + 0.05 * k + (0.6 if k >= 4 else 0)]
        b.quat = [1.0, 0.3 * k, 0.2, 0.1 * k]
    mjm = spec.compile()
    q = trajectory(mujoco, mjm, 150, every=4)
    ref = mujoco_contacts(mujoco, mjm, q)
    ours = _ours(model_from_mujoco(mjm), q)
    assert sum(len(r) for r in ref) > 400
    assert_same_contacts(ours, ref, 1e-9, "falling meshes")


def test_symmetric_polygon_tie():
    """The 16-sided prism flat on the floor, square to the ramp's infinite plane, which cuts it deep: the
    two side faces at the support vertex are equally aligned with the ramp's normal up to rounding; the
    engine takes MuJoCo's polygon normals in its polygon-map order, so it picks MuJoCo's polygon."""
    mjm = mujoco.MjModel.from_xml_string(MESHES.replace(_prism(16, 0.07, 0.05, half=0.5), _prism(16, 0.07, 0.05)))
    model = model_from_mujoco(mjm)
    q = _resting(mjm, _FLAT[:1], [0.0], "floor", -0.03)
    pick = lambda c: c["geom"] == (1, 4)  # noqa: E731
    ref = [[c for c in r if pick(c)] for r in mujoco_contacts(mujoco, mjm, q)]
    assert len(ref[0]) == 4
    assert_same_contacts(_ours(model, q, pick), ref, 1e-9, "polygon tie")


PANDA = "menagerie/franka_emika_panda/scene.xml"


@pytest.fixture(scope="module")
def panda():
    from tests.cli_util import shared_model

    path = str(shared_model(PANDA))
    mjm = mujoco.MjModel.from_xml_path(path)
    return mjm, model_from_mujoco(mjm), path


def _panda_floor(mjm, model, q, what):
    """MuJoCo's and our floor contacts of the Panda's collision meshes at the qpos rows that have some: only
    plane-mesh pairs are compared (self-collision off on our side, which only drops the other pairs)."""
    pick = lambda c: tuple(int(mjm.geom_type[g]) for g in c["geom"]) == (0, 7)  # noqa: E731
    ref = mujoco_contacts(mujoco, mjm, q)
    rows = [b for b, r in enumerate(ref) if any(pick(c) for c in r)]
    ref = [[c for c in ref[b] if pick(c)] for b in rows]
    ours = rigidsim_contacts(model, q[rows], {"enable_self_collision": False})
    ours = [[_Row(c) for c in e if pick(c)] for e in ours]
    assert_same_contacts(ours, ref, 1e-9, what)
    return len(rows), sum(len(r) for r in ref), {c["geom"][1] for r in ref for c in r}


def test_panda_random_poses_on_floor(panda):
    """The Panda at random joint positions within its ranges; the ~10 % that bring links (down to the floor
    or through it) are compared. Its collision meshes are finely tessellated: MuJoCo's polygons merge nearly
    coplanar hull triangles (normal angles rounded to 0.01 rad), which a hull walk by exact planes misses."""
    mjm, model, _ = panda
    rng = np.random.default_rng(5)
    q = rng.uniform(mjm.jnt_range[:, 0], mjm.jnt_range[:, 1], (2500, mjm.nq))
    nrow, ncon, geoms = _panda_floor(mjm, model, q, "panda random")
    assert nrow > 150 and ncon > 2000 and len(geoms) >= 6, (nrow, ncon, geoms)


def test_panda_falls_on_floor(panda):
    """MuJoCo's own runs of the Panda, actuators off, collapsing under gravity from random poses onto the
    floor: impacts, links sliding and lying on it."""
    mjm, model, path = panda
    run = mujoco.MjModel.from_xml_path(path)
    run.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION
    d = mujoco.MjData(run)
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(8):
        mujoco.mj_resetData(run, d)
        d.qpos[:] = rng.uniform(run.jnt_range[:, 0], run.jnt_range[:, 1])
        for t in range(1500):
            mujoco.mj_step(run, d)
            if t % 25 == 0:
                rows.append(d.qpos.copy())
    nrow, ncon, geoms = _panda_floor(mjm, model, np.array(rows), "panda falls")
    assert nrow > 300 and ncon > 800, (nrow, ncon, geoms)
