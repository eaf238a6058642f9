"""MuJoCo 4.0.0's multi-contact for convex pairs among cylinders, boxes and capsules ('convex_multi',
collision.multicontact and collision.polygon_clip) against mj_collision: counts exact, dist, pos and frame
within 1e-6 (in practice bit for bit).

Poses: hand-made ones (a cylinder standing or lying on a box or a cylinder, a capsule lying on a cylinder
cap, within a margin) and sampled ones for capsule-cylinder, cylinder-cylinder and cylinder-box: random
orientations, and near-aligned ones (each geom turned by a multiple of 90 degrees, then tilted by up to 0.05
or 0.12 rad, across the 0.996 face and 0.0888 edge tolerances) shifted sideways, geom 2 moved along a
direction until MuJoCo's mj_geomDistance reaches a target between 3 cm of penetration and 1.5 cm of
separation; with and without margin and gap. Then cylinders, a capsule and a box falling on each other in
MuJoCo's own run (multiccd on, its default)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.mjref import model_from_mujoco, mujoco
from tests.collision_util import (assert_same_contacts, extent, mujoco_contacts, rand_quat, rigidsim_contacts,
                                  trajectory)

TOL = 1e-6
XML = """<mujoco><worldbody>
<body><freejoint/><geom type="{t1}" size="{s1}" margin="{m}" gap="{g}"/></body>
<body><freejoint/><geom type="{t2}" size="{s2}" margin="{m}" gap="{g}"/></body>
</worldbody></mujoco>"""
I = [1.0, 0.0, 0.0, 0.0]


def _model(t1, s1, t2, s2, margin=0.0, gap=0.0):
    return mujoco.MjModel.from_xml_string(XML.format(t1=t1, s1=s1, t2=t2, s2=s2, m=margin, g=gap))


def _compare(mjm, q, what):
    """Our contacts against MuJoCo's at the qpos rows; returns MuJoCo's."""
    ref = mujoco_contacts(mujoco, mjm, q)
    assert_same_contacts(rigidsim_contacts(model_from_mujoco(mjm), q), ref, TOL, what)
    return ref


def _check(t1, s1, t2, s2, rows, margin=0.0, gap=0.0):
    q = np.array([np.concatenate(r) for r in rows])
    ref = _compare(_model(t1, s1, t2, s2, margin, gap), q, f"{t1}-{t2}")
    assert any(len(r) > 1 for r in ref)
    return ref


def _on_side(a):
    return [np.cos(a / 2), 0.0, np.sin(a / 2), 0.0]


def test_cylinder_flat_on_cylinder():
    _check("cylinder", ".5 .2", "cylinder", ".3 .2", [([0, 0, 0], I, [x, y, .39], I) for x in (0, .1) for y in (0, .3)])


def test_cylinder_lying_on_box():
    """A cylinder lying on a box (its side line against the top face): 2 contacts."""
    _check("box", "1 1 .2", "cylinder", ".1 .2",
           [([0, 0, 0], I, [x, 0, .29 + dz], _on_side(np.pi / 2 + a)) for x in (0, .2) for a in (0, .02, .3)
            for dz in (0, -.01)])


def test_cylinder_flat_on_box():
    """A cylinder standing on a box: 4 of the 16 clipped cap points (the largest quadrilateral)."""
    ref = _check("box", "1 1 .2", "cylinder", ".3 .2", [([0, 0, 0], I, [x, y, .39], I) for x in (0, .1, .5, .9)
                                                        for y in (0, .3)])
    assert all(len(r) == 4 for r in ref)


def test_cylinder_flat_with_margin():
    """Within the margin (apart by 5 mm, margin 2 x 2 cm): the shallow path, contacts at positive distance."""
    ref = _check("box", "1 1 .2", "cylinder", ".3 .2", [([0, 0, 0], I, [0, 0, .405], I)], margin=0.02)
    assert all(c["dist"] > 0 for c in ref[0])


def test_capsule_lying_on_cylinder():
    """A capsule lying on a cylinder cap: its surface line clipped by the cap, 2 contacts."""
    _check("cylinder", ".5 .2", "capsule", ".1 .2",
           [([0, 0, 0], I, [x, 0, .29 + dz], _on_side(np.pi / 2)) for x in (0, .2) for dz in (0, -.01)])


def test_edge_on():
    """A box standing on an edge on a cylinder cap, and a cylinder standing on its rim on a box: the edge
    (2 contacts) or the rim point (1)."""
    edge = [([0, 0, 0], I, [x, 0, .2 + .1 * np.sqrt(2) + dz], [np.cos(np.pi / 8), np.sin(np.pi / 8), 0, 0])
            for x in (0, .1) for dz in (-.01, -.002)]
    _check("cylinder", ".5 .2", "box", ".2 .1 .1", edge)
    tilt = .5
    h = .2 + .2 * np.cos(tilt) + .3 * np.sin(tilt)
    rim = [([0, 0, 0], I, [x, 0, h + dz], [np.cos(tilt / 2), 0, np.sin(tilt / 2), 0]) for x in (0, .3)
           for dz in (-.01, -.002)]
    rim += [([0, 0, 0], I, [x, 0, .39], I) for x in (0, .3)]  # and flat, for the multi-contact
    _check("box", "1 1 .2", "cylinder", ".3 .2", rim)


# ------------------------------------------------------------------------------------------ sampled poses


def _quat2mat(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _axis_quat(axis, ang):
    axis = np.asarray(axis, float)
    return np.concatenate(([np.cos(ang / 2)], np.sin(ang / 2) * axis / np.linalg.norm(axis)))


def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


_SQUARE = [_axis_quat([1, 0, 0], 0), _axis_quat([1, 0, 0], np.pi / 2), _axis_quat([0, 1, 0], np.pi / 2),
           _axis_quat([1, 0, 0], np.pi)]


def _poses(mjm, k1, s1, k2, s2, n, rng):
    """n qpos rows: geom 1 at the origin, geom 2 along a direction u at a target mj_geomDistance (see the
    module docstring); a quarter with random orientations, the rest near-aligned."""
    d = mujoco.MjData(mjm)
    fromto = np.zeros(6)
    rows = []
    for i in range(n):
        mode = i % 4
        if mode == 0:
            q1, q2 = rand_quat(rng), rand_quat(rng)
            u = rng.normal(size=3)
            lat = np.zeros(3)
        else:
            tilt = (0.0, 0.05, 0.12)[mode - 1]
            q1, q2 = (_qmul(_axis_quat([0, 0, 1], rng.choice([0.0, rng.uniform(0, 2 * np.pi)])),
                            _qmul(_axis_quat(rng.normal(size=3), rng.uniform(0, tilt)), _SQUARE[rng.integers(4)]))
                      for _ in range(2))
            u = np.array([0, 0, 1.0]) + (0.3 * rng.normal(size=3) if rng.uniform() < 0.5 else 0.0)
            lat = np.append(rng.uniform(-.2, .2, size=2), 0.0)
        u = u / np.linalg.norm(u)
        e = extent(k1, s1, _quat2mat(q1), u) + extent(k2, s2, _quat2mat(q2), -u)
        q = np.concatenate(([0, 0, 0], q1, u * e + lat, q2))
        target = rng.uniform(-0.03, 0.015)
        for _ in range(6):
            d.qpos[:] = q
            mujoco.mj_kinematics(mjm, d)
            q[7:10] += u * (target - mujoco.mj_geomDistance(mjm, d, 0, 1, 10.0, fromto))
        rows.append(q)
    return np.array(rows)


PAIRS = {
    "capsule-cylinder": ("capsule", [.1, .2], "cylinder", [.3, .2]),
    "thin-capsule-flat-cylinder": ("capsule", [.05, .3], "cylinder", [.3, .1]),
    "cylinder-cylinder": ("cylinder", [.3, .2], "cylinder", [.25, .15]),
    "cylinder-box": ("cylinder", [.3, .2], "box", [.3, .25, .2]),
    "tall-cylinder-plate": ("cylinder", [.2, .3], "box", [.5, .5, .1]),
}


@pytest.mark.parametrize("margin,gap", [(0.0, 0.0), (0.01, 0.0), (0.02, 0.01)])
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_sampled_poses(pair, margin, gap):
    k1, s1, k2, s2 = PAIRS[pair]
    mjm = _model(k1, " ".join(map(str, s1)), k2, " ".join(map(str, s2)), margin, gap)
    rng = np.random.default_rng(sorted(PAIRS).index(pair) + int(1000 * (margin + gap)))
    q = _poses(mjm, k1, s1, k2, s2, 240, rng)
    ref = _compare(mjm, q, f"{pair} margin={margin} gap={gap}")
    counts = {len(r) for r in ref}
    assert {1, 2} <= counts and (4 in counts or "capsule" in pair), counts
    if margin > 0:  # contacts inside the margin, not touching
        assert any(c["dist"] > 0 for r in ref for c in r)


SCENE = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="cylinder" size="0.1 0.08"/></body>
    <body pos="0.05 0.02 0.35" euler="70 10 0"><freejoint/><geom type="cylinder" size="0.06 0.1" margin="0.01"/></body>
    <body pos="-0.05 0.05 0.6" euler="20 80 0"><freejoint/><geom type="capsule" size="0.04 0.12"/></body>
    <body pos="0.0 -0.05 0.85" euler="10 20 30"><freejoint/><geom type="box" size="0.07 0.05 0.04"/></body>
    <body pos="0.02 0.0 1.05" euler="5 3 0"><freejoint/><geom type="cylinder" size="0.08 0.03"/></body>
  </worldbody>
</mujoco>
"""


def test_falling_scene():
    """Cylinders, a capsule and a box falling on each other and on the floor (MuJoCo's own run): the pairs
    among them (multi-contact) within 1e-6, the floor's analytic pairs within 1e-9."""
    mjm = mujoco.MjModel.from_xml_string(SCENE)
    q = trajectory(mujoco, mjm, 100, every=4)
    ref = mujoco_contacts(mujoco, mjm, q)
    ours = rigidsim_contacts(model_from_mujoco(mjm), q)

    def convex(c):
        return 0 not in c["geom"]

    assert sum(1 for r in ref for c in r if convex(c)) > 50
    assert any(sum(1 for c in r if convex(c) and c["geom"] == g) > 1 for r in ref for g in {c["geom"] for c in r})
    for want, tol in ((True, TOL), (False, 1e-9)):
        pick = lambda envs: [[c for c in e if convex(c) == want] for e in envs]  # noqa: E731
        assert_same_contacts(pick(ours), pick(ref), tol, f"falling scene, convex={want}")
