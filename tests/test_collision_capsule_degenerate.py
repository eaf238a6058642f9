"""Capsule against capsule in the configurations where the nearest points of the two segments are not unique
or the segments meet: `primitive.capsule_capsule` against MuJoCo 4.0.0's ``mj_collision``, and a two-capsule
chain run through the engine against ``mj_step``.

MuJoCo 4.0.0 finds the segments' nearest points with mjc_segWeights (one pair for skew axes, two for axes
within sin^2 = 1e-8 of parallel), and where they coincide the normal is across the two axes. Each collider
case builds states of two free capsules, runs ``mj_forward`` per state and compares, state by state and in
MuJoCo's order, the number of contacts, dist, pos and all 9 entries of the contact frame within 1e-9.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from rigidsim.engine.collision import primitive as P
from tests.collision_util import make_frame, run_collider
from tests.mjref import mujoco

TOL = 1e-9
FORCE_RTOL = 1e-6
N = 60  # states per case
R1, H1, R2, H2 = 0.05, 0.2, 0.04, 0.15


def _model(margin):
    xml = f"""<mujoco><worldbody>
      <body><freejoint/><geom type="capsule" size="{R1} {H1}" margin="{margin}"/></body>
      <body><freejoint/><geom type="capsule" size="{R2} {H2}"/></body></worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def _unit(v):
    return v / np.linalg.norm(v)


def _quat(rng):
    return _unit(rng.normal(size=4))


def _mat(q):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, q)
    return m.reshape(3, 3)


def _turn(q, axis, angle):
    """q followed by a turn of `angle` about the world `axis`."""
    r = np.concatenate([[np.cos(angle / 2)], _unit(axis) * np.sin(angle / 2)])
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, r, q)
    return out


def _perp(rng, a):
    v = rng.normal(size=3)
    return _unit(v - a * (v @ a))


# ---------------------------------------------------------------------------------------- state generators
# Each returns (pos1, quat1, pos2, quat2) of one state; a1, a2 are the capsules' unit axes.


def _crossing(angle):
    """The two axes cross (the lines meet at a point inside both segments) at `angle`."""
    def gen(rng):
        p1, q1 = rng.uniform(-0.5, 0.5, 3), _quat(rng)
        a1 = _mat(q1)[:, 2]
        q2 = _turn(q1, _perp(rng, a1), angle)
        a2 = _mat(q2)[:, 2]
        return p1, q1, p1 + a1 * rng.uniform(-0.9 * H1, 0.9 * H1) - a2 * rng.uniform(-0.9 * H2, 0.9 * H2), q2
    return gen


def _same_centre(rng):
    p1 = rng.uniform(-0.5, 0.5, 3)
    return p1, _quat(rng), p1.copy(), _quat(rng)


def _coplanar(rng):
    """Axis 2 in the plane of axis 1 and a random direction, the lines meeting anywhere (often beyond an end)."""
    p1, q1 = rng.uniform(-0.5, 0.5, 3), _quat(rng)
    a1 = _mat(q1)[:, 2]
    q2 = _turn(q1, _perp(rng, a1), rng.uniform(0.05, np.pi - 0.05))
    a2 = _mat(q2)[:, 2]
    return p1, q1, p1 + a1 * rng.uniform(-1.6 * H1, 1.6 * H1) - a2 * rng.uniform(-1.6 * H2, 1.6 * H2), q2


def _parallel(offset, flip=False, tilt=0.0):
    """Axes parallel (antiparallel with `flip`, or turned by `tilt`), capsule 2 shifted along axis 1 so that
    the segments overlap or not, and sideways by `offset` (0: coaxial)."""
    def gen(rng):
        p1, q1 = rng.uniform(-0.5, 0.5, 3), _quat(rng)
        a1 = _mat(q1)[:, 2]
        q2 = q1.copy()
        if flip:
            q2 = _turn(q1, _perp(rng, a1), np.pi)
        if tilt:
            q2 = _turn(q1, _perp(rng, a1), tilt * 10 ** rng.uniform(-2, 0))
        shift = rng.uniform(-1.1 * (H1 + H2), 1.1 * (H1 + H2))
        return p1, q1, p1 + a1 * shift + _perp(rng, a1) * offset * rng.uniform(0, 1), q2
    return gen


def _end_to_end(gap=0.0, tilt=0.0):
    """Capsule 2 continuing capsule 1 along its axis: the segments' ends `gap` apart (0: they meet, the
    capsules overlapping by both radii), axis 2 turned by up to `tilt` about the meeting point."""
    def gen(rng):
        p1, q1 = rng.uniform(-0.5, 0.5, 3), _quat(rng)
        a1 = _mat(q1)[:, 2]
        q2 = _turn(q1, _perp(rng, a1), tilt * 10 ** rng.uniform(-3, 0)) if tilt else q1.copy()
        a2 = _mat(q2)[:, 2]
        side = rng.choice([-1.0, 1.0])
        end = p1 + side * a1 * (H1 + gap * rng.uniform(-1, 1))
        return p1, q1, end + side * a2 * H2, q2
    return gen


# touching end to end: the capsules' surfaces (not segments) within 1e-12 of each other
TOUCH = R1 + R2

CASES = {
    "crossing-90deg": (_crossing(np.pi / 2), 0.0, {1}),
    "crossing-45deg": (_crossing(np.pi / 4), 0.0, {1}),
    "crossing-0.1rad": (_crossing(0.1), 0.0, {1}),
    "crossing-1e-3rad": (_crossing(1e-3), 0.0, {1}),
    "crossing-1e-3rad-margin": (_crossing(1e-3), 0.02, {1}),
    "crossing-at-centres": (_same_centre, 0.0, {1}),
    "coplanar": (_coplanar, 0.0, None),
    "parallel-coaxial": (_parallel(0.0), 0.0, None),
    "antiparallel-coaxial": (_parallel(0.0, flip=True), 0.0, None),
    "parallel-offset": (_parallel(R1 + R2), 0.0, None),
    "parallel-offset-margin": (_parallel(R1 + R2 + 0.03), 0.02, None),
    "near-parallel-1e-4": (_parallel(R1 + R2, tilt=1e-4), 0.0, None),  # across sin^2 = 1e-8
    "near-parallel-1e-2": (_parallel(R1 + R2, tilt=1e-2), 0.0, None),
    "near-parallel-1e-7": (_parallel(R1 + R2, tilt=1e-7), 0.0, None),
    "end-to-end-segments-meet": (_end_to_end(), 0.0, {2}),
    "end-to-end-meet-tilted": (_end_to_end(tilt=1e-2), 0.0, {1, 2}),
    "end-to-end-overlapping": (_end_to_end(gap=0.5 * H2), 0.0, {2}),
    "end-to-end-touching": (_end_to_end(gap=TOUCH + 1e-12), 0.0, None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_collider_matches_mujoco(name):
    gen, margin, expect = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    m = _model(margin)
    d = mujoco.MjData(m)
    xpos, xmat, ref = [], [], []
    for _ in range(N):
        p1, q1, p2, q2 = gen(rng)
        d.qpos[:] = np.concatenate([p1, q1, p2, q2])
        mujoco.mj_forward(m, d)
        xpos.append(d.geom_xpos.copy())
        xmat.append(d.geom_xmat.copy())
        ref.append([(float(c.dist), c.pos.copy(), c.frame.reshape(3, 3).copy()) for c in d.contact[:d.ncon]])
    xpos, xmat = np.array(xpos), np.array(xmat)
    ours = run_collider(P.capsule_capsule, xpos[:, 0], xmat[:, 0], m.geom_size[0], xpos[:, 1], xmat[:, 1],
                        m.geom_size[1], float(m.geom_margin.sum()))
    for i, (theirs, mine) in enumerate(zip(ref, ours)):
        assert len(mine) == len(theirs), (name, i, len(mine), len(theirs))
        for (dist, pos, frame), (d2, p2, n2, t2) in zip(theirs, mine):  # in MuJoCo's order
            assert abs(d2 - dist) <= TOL, (name, i, d2, dist)
            np.testing.assert_allclose(p2, pos, rtol=0, atol=TOL, err_msg=f"{name} #{i} pos")
            np.testing.assert_allclose(make_frame(n2, t2), frame, rtol=0, atol=TOL, err_msg=f"{name} #{i} frame")
    counts = {len(r) for r in ref}
    if expect is not None:  # the states reach the configuration the case is about
        assert counts == expect, counts


# ------------------------------------------------------------------------------ a chain through the engine
# The parent welded to the world (a body without joint), the child on a ball joint, the child's capsule
# starting inside the parent's. END: the child continues the parent (segments meeting end to end; after one
# step the axes are 5e-4 rad apart and MuJoCo's normal is across them). CROSS: the child's axis crosses the
# parent's inside both segments, at the child capsule's centre, 0.04 from the joint (a contact at the joint
# centre would have no moment arm: a near-singular row and forces of 1e17).
CHAIN = """<mujoco><option gravity="0 0 -9.81"/>
  <default><joint damping="{damping}" armature="{armature}"/><geom friction="1 0.005 0.0001" density="500"/></default>
  <worldbody><body name="parent" pos="0.1 -0.05 0.3" euler="{euler}">
    <geom type="capsule" size="0.02" fromto="0 0 0 0.12 0 0"/>
    <body name="child" pos="{child}"><joint type="ball"/>
      <geom type="capsule" size="0.025" fromto="{fromto}"/></body></body></worldbody></mujoco>"""
CHAINS = {
    "end": dict(euler="0.7 0.6 0.5", child="0.12 0 0", fromto="0 0 0 0.1 0 0", damping=0.01, armature=0),
    "cross": dict(euler="0.3 -0.4 0.2", child="0.02 0 0", fromto="-0.01 -0.03 0.01 0.09 0.03 -0.01",
                  damping=0.01, armature=0),
}
NSTEP = 20


@pytest.mark.parametrize("name", list(CHAINS))
def test_chain_contact_force_matches_mujoco(name):
    """20 steps from qpos0: per frame the same contacts (count, geoms) and each contact's force by geom 0 on
    geom 1 in world coordinates (MuJoCo: the contact frame's transpose times mj_contactForce) within 1e-6
    of the largest, and qpos within 1e-9."""
    from tests.mjref import compat_sim

    mjm = mujoco.MjModel.from_xml_string(CHAIN.format(**CHAINS[name]))
    d = mujoco.MjData(mjm)
    ref = []
    for _ in range(NSTEP + 1):
        mujoco.mj_forward(mjm, d)
        forces = []
        for i, c in enumerate(d.contact[:d.ncon]):
            f = np.zeros(6)
            mujoco.mj_contactForce(mjm, d, i, f)
            forces.append((tuple(int(g) for g in c.geom), c.frame.reshape(3, 3).T @ f[:3]))
        ref.append((d.qpos.copy(), forces))
        mujoco.mj_step(mjm, d)
    assert all(len(f) > 0 for _, f in ref), "the chain's capsules must touch throughout"

    sim = compat_sim(mjm, 1)
    sim.reset(qpos=mjm.qpos0.copy())
    got = []
    for _, block in sim.rollout_blocks(NSTEP, contacts=True):
        f = sim.fields(block)
        rows = sim.contact_rows(f)
        k = 0
        for t in range(block.shape[0]):
            n = int(rows["count"][t, 0])
            got.append((f["qpos"][t, 0].copy(), rows["geom"][k:k + n], rows["force"][k:k + n]))
            k += n
    assert len(got) == NSTEP + 1
    scale = max(np.linalg.norm(fw) for _, fs in ref for _, fw in fs)
    for t, ((qpos, forces), (qpos2, geoms, force2)) in enumerate(zip(ref, got)):
        np.testing.assert_allclose(qpos2, qpos, rtol=0, atol=1e-9, err_msg=f"{name} frame {t} qpos")
        assert len(geoms) == len(forces), (name, t, len(geoms), len(forces))
        for (g, fw), g2, f2 in zip(forces, geoms, force2):
            assert tuple(int(x) for x in g2) == g, (name, t)
            np.testing.assert_allclose(f2, fw, rtol=0, atol=FORCE_RTOL * scale, err_msg=f"{name} frame {t} force")
