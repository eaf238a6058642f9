"""The box colliders (`engine.collision.box`) against MuJoCo's `mj_collision`.

Each configuration samples states of a two-body scene (free joints), lets MuJoCo collide them, and runs our
collider on MuJoCo's own geom poses and sizes with the pair's margin + gap: the contacts must agree
order-free, count for count, with dist and pos within 1e-9 and the frame (our normal and tangent through
mju_makeFrame) within 1e-9. MuJoCo orders a pair by geom type, so geom 0 (sphere, capsule, or the first box)
is geom 1 of every contact.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.collision_util import contact_mismatch, run_collider  # initialises the runtime (cpu, f64)
from tests.mjref import mujoco

from rigidsim.engine.collision import box as B

TOL = 1e-9
SPHERE, CAPSULE, BOX = 2, 3, 6
BOX2 = np.array([0.4, 0.5, 0.6])  # the second geom of every scene
I4 = np.array([1.0, 0.0, 0.0, 0.0])


# ----------------------------------------------------------------------------- states


def _q(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def _qmul(a, b):
    r = np.zeros(4)
    mujoco.mju_mulQuat(r, a, b)
    return r


def _rq(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _rv(rng, lo, hi):
    return rng.uniform(lo, hi, 3)


def _face_point(rng, size, face, inset=0.9):
    """A random point on box face `face` (0..5: -x, +x, -y, +y, -z, +z) and the face's outward normal."""
    k, s = face // 2, (1.0 if face % 2 else -1.0)
    p = rng.uniform(-inset, inset, 3) * size
    p[k] = s * size[k]
    n = np.zeros(3)
    n[k] = s
    return p, n


def _rot(q):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, q)
    return m.reshape(3, 3)


def _sphere_states(kind, rng, n, r):
    """(pos1, quat1, pos2, quat2) of a sphere (radius r) near a box of half-sizes BOX2."""
    out = []
    for _ in range(n):
        q2 = _rq(rng)
        R = _rot(q2)
        if kind == "random":
            local = _rv(rng, -1.0, 1.0) * (BOX2 + r + 0.05)
        elif kind == "inside":
            local = _rv(rng, -1.0, 1.0) * BOX2
        elif kind == "face":  # touching, penetrating or within margin of a face
            p, nrm = _face_point(rng, BOX2, rng.integers(6))
            local = p + nrm * (r + rng.choice([0.0, rng.uniform(-0.05, 0.05), rng.uniform(0.0, 0.03)]))
        elif kind == "edge_corner":  # outside near an edge or a corner
            c = rng.choice([-1.0, 1.0], 3) * BOX2
            if rng.random() < 0.5:
                c[rng.integers(3)] *= rng.uniform(-0.9, 0.9)
            d = rng.normal(size=3)
            d = np.abs(d) * np.sign(c)
            local = c + d / np.linalg.norm(d) * (r + rng.uniform(-0.05, 0.04))
        elif kind == "centre":  # exactly at the centre: ties between faces (a cube) or not
            local = np.zeros(3)
            q2 = I4 if rng.random() < 0.5 else q2
            R = _rot(q2)
        else:
            raise KeyError(kind)
        out.append((R @ local, I4, np.zeros(3), q2))
    return out


def _capsule_states(kind, rng, n, r, h):
    """States of a capsule (radius r, half-length h; its axis is its local z) near a box BOX2 at the origin."""
    out = []
    z = np.array([0.0, 0.0, 1.0])
    for _ in range(n):
        q2 = _rq(rng) if rng.random() < 0.5 else I4
        R = _rot(q2)
        if kind == "random":
            out.append((R @ (_rv(rng, -1.0, 1.0) * (BOX2 + r + h)), _rq(rng), np.zeros(3), q2))
            continue
        if kind == "flat":  # lying on a face, axis exactly along a box axis or slightly off
            face = rng.integers(6)
            k = face // 2
            p, nrm = _face_point(rng, BOX2, face, 0.6)
            along = [a for a in range(3) if a != k][rng.integers(2)]
            axis = np.zeros(3)
            axis[along] = rng.choice([-1.0, 1.0])
            if rng.random() < 0.5:
                axis = axis + rng.normal(size=3) * 0.05
            local = p + nrm * (r + rng.uniform(-0.04, 0.03)) + rng.uniform(-0.3, 0.3) * axis
        elif kind == "perpendicular":  # pointing at a face (T with the face)
            p, nrm = _face_point(rng, BOX2, rng.integers(6), 0.8)
            axis = nrm * rng.choice([-1.0, 1.0]) + (rng.normal(size=3) * 0.1 if rng.random() < 0.5 else 0.0)
            local = p + nrm * (r + h + rng.uniform(-0.05, 0.03))
        elif kind == "edge":  # across (X) or along (T) a box edge
            c = rng.choice([-1.0, 1.0], 3) * BOX2
            k = rng.integers(3)
            c[k] *= rng.uniform(-0.6, 0.6)
            out_dir = np.sign(c)
            out_dir[k] = 0.0
            out_dir /= np.linalg.norm(out_dir)
            axis = rng.normal(size=3)
            if rng.random() < 0.3:
                axis = np.zeros(3)
                axis[k] = 1.0  # along the edge
            local = c + out_dir * (r + rng.uniform(-0.04, 0.03))
        elif kind == "corner":
            c = rng.choice([-1.0, 1.0], 3) * BOX2
            d = np.abs(rng.normal(size=3)) * np.sign(c)
            axis = rng.normal(size=3)
            if rng.random() < 0.3:
                axis = np.zeros(3)
                axis[rng.integers(3)] = 1.0
            end = c + d / np.linalg.norm(d) * (r + rng.uniform(-0.04, 0.03))
            axis /= np.linalg.norm(axis)
            local = end + axis * h * rng.choice([-1.0, 1.0]) * rng.uniform(0.0, 1.0)
        elif kind == "deep":  # segment through the box, ends inside or outside
            local = _rv(rng, -1.0, 1.0) * BOX2 * 0.8
            axis = rng.normal(size=3)
            if rng.random() < 0.3:
                axis = np.zeros(3)
                axis[rng.integers(3)] = 1.0
        else:
            raise KeyError(kind)
        axis = axis / np.linalg.norm(axis)
        # the capsule's quaternion: rotate z onto axis (box frame), then into the world
        c = np.cross(z, axis)
        s = np.linalg.norm(c)
        ql = I4 if s < 1e-12 and axis[2] > 0 else (_q([1, 0, 0], np.pi) if s < 1e-12 else _q(c, np.arctan2(s, axis[2])))
        out.append((R @ local, _qmul(q2, ql), np.zeros(3), q2))
    return out


def _reach(a, b, angle):
    """Half-height of a box section with half-sides (a, b), turned by `angle` about the third axis."""
    return abs(np.sin(angle)) * a + abs(np.cos(angle)) * b


def _box_states(kind, rng, n, s1):
    """States of box 1 (half-sizes s1) near box 2 (BOX2)."""
    out = []
    for _ in range(n):
        above = s1[2] + BOX2[2] + rng.choice([0.0, rng.uniform(-0.03, 0.05)])
        xy = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), 0.0])
        up = np.array([0.0, 0.0, 1.0])
        if kind == "random":
            out.append((_rv(rng, -1.3, 1.3), _rq(rng), np.zeros(3), _rq(rng)))
        elif kind == "aligned":  # resting flat, axes exactly aligned
            out.append((xy + up * above, I4, np.zeros(3), I4))
        elif kind == "coincident":
            out.append((np.zeros(3), I4, np.zeros(3), I4 if rng.random() < 0.5 else _rq(rng)))
        elif kind == "yaw":  # resting flat, turned about the normal
            out.append((xy + up * above, _q(up, rng.uniform(0, 2 * np.pi)), np.zeros(3), I4))
        elif kind == "antiparallel":  # resting flat upside down, box 2 turned about the normal too
            flip = _qmul(_q([1, 0, 0], np.pi), _q(up, rng.choice([0.0, np.pi / 2, np.pi, rng.uniform(0, 6)])))
            out.append((xy + up * above, flip, np.zeros(3), _q(up, rng.choice([0.0, np.pi / 2]))))
        elif kind == "rot90":  # axis permutations (quarter turns), anywhere around
            qs = [_q([1, 0, 0], np.pi / 2), _q([0, 1, 0], np.pi / 2), _q(up, np.pi / 2), _q([1, 0, 0], np.pi), I4]
            out.append((_rv(rng, -1.0, 1.0), _qmul(qs[rng.integers(5)], qs[rng.integers(5)]), np.zeros(3), I4))
        elif kind == "tilt":  # resting, slightly tilted: face or edge axes nearly tie
            out.append((xy + up * above, _q(rng.normal(size=3), rng.uniform(-0.2, 0.2)), np.zeros(3),
                        _q(up, rng.uniform(0, 2 * np.pi))))
        elif kind == "edge_edge":  # two edges crossing
            a1, a2 = np.pi / 4 + rng.uniform(-0.3, 0.3, 2)
            q1, q2 = _q([1, 0, 0], a1), _q([0, 1, 0], a2)
            h = _reach(s1[1], s1[2], a1) + _reach(BOX2[0], BOX2[2], a2)
            out.append((np.array([rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), h + rng.uniform(-0.05, 0.05)]),
                        q1, np.zeros(3), q2))
        elif kind == "edge_exact":  # edges crossing at right angles, exactly above each other
            q1 = _q([1, 0, 0], np.pi / 4)
            q2 = _q([0, 1, 0], np.pi / 4)
            h = _reach(s1[1], s1[2], np.pi / 4) + _reach(BOX2[0], BOX2[2], np.pi / 4)
            out.append((np.array([0.0, 0.0, h + rng.choice([0.0, -0.01, 0.01])]), q1, np.zeros(3), q2))
        elif kind == "corner_on_edge":  # resting, turned, a bottom corner of box 1 on a top edge of box 2
            yaw = rng.uniform(0.1, 1.4)
            c = _rot(_q(up, yaw)) @ (np.array([s1[0], s1[1], 0.0]) * rng.choice([-1.0, 1.0], 3))
            edge = np.array([BOX2[0] * rng.choice([-1.0, 1.0]), rng.uniform(-0.3, 0.3), 0.0])
            if rng.random() < 0.5:
                edge = np.array([rng.uniform(-0.3, 0.3), BOX2[1] * rng.choice([-1.0, 1.0]), 0.0])
            out.append((edge - c + up * (s1[2] + BOX2[2] - rng.uniform(0.0, 0.02)), _q(up, yaw), np.zeros(3), I4))
        elif kind == "vertex_face":  # a corner down on a face
            q1 = _qmul(_q([1, 0, 0], np.arctan(np.sqrt(0.5)) + rng.uniform(-0.05, 0.05)), _q(up, np.pi / 4))
            q1 = _qmul(q1, _q(rng.normal(size=3), rng.uniform(0, 0.1)))
            out.append((np.array([rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2),
                                  np.linalg.norm(s1) + BOX2[2] + rng.uniform(-0.05, 0.05)]), q1, np.zeros(3), I4))
        else:
            raise KeyError(kind)
    return out


# ----------------------------------------------------------------------------- MuJoCo


def _scene(type1, size1, size2=BOX2, margins=(0.01, 0.015), gaps=(0.0, 0.005)):
    xml = f"""<mujoco><worldbody>
      <body><freejoint/><geom type="{type1}" size="{' '.join(map(str, size1))}"
        margin="{margins[0]}" gap="{gaps[0]}"/></body>
      <body><freejoint/><geom type="box" size="{' '.join(map(str, size2))}"
        margin="{margins[1]}" gap="{gaps[1]}"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def _mujoco(m, d, states):
    """Per state: MuJoCo's contacts, and geom 0's and geom 1's poses."""
    cons, geo = [], []
    for p1, q1, p2, q2 in states:
        d.qpos[:] = np.concatenate([p1, q1, p2, q2])
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
        cs = []
        for c in d.contact[: d.ncon]:
            assert tuple(c.geom) == (0, 1)
            cs.append((float(c.dist), c.pos.copy(), c.frame.reshape(3, 3).copy()))
        cons.append(cs)
        geo.append((d.geom_xpos[0].copy(), d.geom_xmat[0].copy(), d.geom_xpos[1].copy(), d.geom_xmat[1].copy()))
    return cons, geo


def _compare(func, m, d, states):
    """Run `func` on the states; assert the contacts equal MuJoCo's. Returns MuJoCo's contact counts."""
    assert (int(m.geom_type[0]), int(m.geom_type[1])) in ((SPHERE, BOX), (CAPSULE, BOX), (BOX, BOX))
    cons, geo = _mujoco(m, d, states)
    margin = float(m.geom_margin.sum() + m.geom_gap.sum())
    pos1, mat1, pos2, mat2 = (np.array([g[k] for g in geo]) for k in range(4))
    ours = run_collider(func, pos1, mat1, m.geom_size[0], pos2, mat2, m.geom_size[1], margin)
    bad = []
    for s, (mj, us) in enumerate(zip(cons, ours)):
        err = _mismatch(mj, us)
        if err:
            bad.append(f"state {s} {states[s]}: {err}")
    assert not bad, f"{len(bad)} of {len(states)} states differ; first: {bad[:3]}"
    return np.array([len(c) for c in cons])


def _mismatch(mj, ours):
    return contact_mismatch(mj, ours, TOL)


# ----------------------------------------------------------------------------- tests

N = 200


@pytest.fixture(scope="module")
def scenes():
    return {
        "sphere": _scene("sphere", [0.3]),
        "cube_sphere": _scene("sphere", [0.3], size2=[0.5, 0.5, 0.5], margins=(0.0, 0.0), gaps=(0.0, 0.0)),
        "capsule": _scene("capsule", [0.2, 0.5]),
        "box": _scene("box", [0.3, 0.4, 0.5]),
        "equal": _scene("box", list(BOX2), margins=(0.0, 0.0), gaps=(0.0, 0.0)),
    }


@pytest.mark.parametrize("kind", ["random", "inside", "face", "edge_corner", "centre"])
def test_sphere_box(scenes, kind):
    m, d = scenes["sphere"]
    counts = _compare(B.sphere_box, m, d, _sphere_states(kind, np.random.default_rng(1), N, 0.3))
    assert counts.max() == 1 and counts.sum() >= (N if kind in ("inside", "centre") else N // 4)


def test_sphere_box_cube_centre(scenes):
    """A sphere at the centre of a cube, so that faces tie, and near it."""
    m, d = scenes["cube_sphere"]
    rng = np.random.default_rng(2)
    states = [(np.zeros(3), I4, np.zeros(3), I4)] + [(rng.choice([-1e-3, 0.0, 1e-3], 3), I4, np.zeros(3), I4)
                                                     for _ in range(30)]
    counts = _compare(B.sphere_box, m, d, states)
    assert (counts == 1).all()


@pytest.mark.parametrize("kind", ["random", "flat", "perpendicular", "edge", "corner", "deep"])
def test_capsule_box(scenes, kind):
    m, d = scenes["capsule"]
    counts = _compare(B.capsule_box, m, d, _capsule_states(kind, np.random.default_rng(3), N, 0.2, 0.5))
    assert counts.max() <= 2 and counts.sum() >= N // 4
    if kind in ("flat", "edge", "deep"):
        assert (counts == 2).any()


@pytest.mark.parametrize("kind", ["random", "aligned", "coincident", "yaw", "antiparallel", "rot90", "tilt",
                                  "edge_edge", "edge_exact", "corner_on_edge", "vertex_face"])
@pytest.mark.parametrize("size", ["box", "equal"])
def test_box_box(scenes, kind, size):
    """size "box": box 1 (0.3, 0.4, 0.5) on box 2 with margins and gaps; "equal": two equal boxes, no margin."""
    m, d = scenes[size]
    s1 = m.geom_size[0].copy()
    counts = _compare(B.box_box, m, d, _box_states(kind, np.random.default_rng(4), N, s1))
    assert counts.max() <= 8 and counts.sum() >= N // 10
    if kind in ("aligned", "coincident", "yaw", "antiparallel"):
        assert (counts >= 4).any()
    if kind in ("edge_edge", "edge_exact"):
        assert (counts == 1).any()


def test_box_box_stack(scenes):
    """A box dropped onto a fixed box, through impact to rest (MuJoCo's own trajectory)."""
    xml = f"""<mujoco><option timestep="0.004"/><worldbody>
      <geom type="box" size="{' '.join(map(str, BOX2))}"/>
      <body pos="0.1 -0.05 1.4" euler="3 2 1"><freejoint/><geom type="box" size="0.3 0.2 0.1"/></body>
    </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    poses, cons = [], []
    for step in range(1200):
        mujoco.mj_step(m, d)
        if step % 4 == 0 and d.ncon:
            g = [(c.geom[0], c.geom[1]) for c in d.contact[: d.ncon]]
            assert all(x == (0, 1) for x in g)
            poses.append((d.geom_xpos[0].copy(), d.geom_xmat[0].copy(), d.geom_xpos[1].copy(), d.geom_xmat[1].copy()))
            cons.append([(float(c.dist), c.pos.copy(), c.frame.reshape(3, 3).copy()) for c in d.contact[: d.ncon]])
    assert len(cons) > 100 and len(cons[-1]) >= 4  # at rest: flat, its face clipped to the edge of box 2
    pos1, mat1, pos2, mat2 = (np.array([p[k] for p in poses]) for k in range(4))
    ours = run_collider(B.box_box, pos1, mat1, m.geom_size[0], pos2, mat2, m.geom_size[1], 0.0)
    bad = [(s, e) for s, e in enumerate(_mismatch(mj, us) for mj, us in zip(cons, ours)) if e]
    assert not bad, bad[:3]
