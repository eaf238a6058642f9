"""The analytic colliders of `rigidsim.engine.collision.primitive` against MuJoCo's ``mj_collision``.

Each case builds a two-geom MJCF scene (a plane on a mocap body and a free body, or two free bodies), samples
states near contact with a seeded generator, runs ``mj_forward`` per state and keeps MuJoCo's contacts of the
pair; our collider then runs once over all states on MuJoCo's own ``geom_xpos``, ``geom_xmat`` and
``geom_size``, with the margin MuJoCo passes its colliders (margin + gap of the pair). Contacts are matched
order-free: the same count per state, then dist, pos and the completed frame within `TOL`.

Distances are laid out as a gap ``t`` between the surfaces (exact up to rounding for the constructions here):
``t`` below zero penetrates, in ``[0, margin]`` is a contact within the margin, above it no contact.
"""

from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

from rigidsim.engine.collision import primitive as P
from tests.collision_util import contact_mismatch, run_collider
from tests.mjref import mujoco

TOL = 1e-9
MINVAL = 1e-15  # mjMINVAL
N = 150  # states per case

# margin and gap of geom 1 and geom 2: MuJoCo passes the collider the sum of all four
NOMARGIN = ((0.0, 0.0), (0.0, 0.0))
MARGIN = ((0.02, 0.015), (0.01, 0.005))  # margin + gap = 0.05
MTOT = 0.05
BIGMARGIN = ((0.1, 0.05), (0.05, 0.0))  # 0.2: a lying cylinder's rim points at 120 degrees come within it

# ----------------------------------------------------------------------------- quaternions, numpy


def _qmul(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def _qaxis(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = np.asarray(angle, float)[..., None]
    return np.concatenate([np.cos(angle / 2), axis * np.sin(angle / 2)], axis=-1)


def _qrand(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _mat(q):
    """[n, 3, 3] rotation matrices (columns: the frame's axes) of unit quaternions [n, 4]."""
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _perp(rng, a):
    """Random unit vectors perpendicular to the unit vectors a [n, 3]."""
    v = rng.normal(size=a.shape)
    return _unit(v - a * np.sum(v * a, axis=1, keepdims=True))


FLIP = np.array([0.0, 1.0, 0.0, 0.0])  # half turn about x: the z axis reversed exactly


def _qz(rng, n):
    return _qaxis([0.0, 0.0, 1.0], rng.uniform(0, 2 * np.pi, n))


def _qtilt(rng, n, angle):
    """Rotations by `angle` about random horizontal axes."""
    phi = rng.uniform(0, 2 * np.pi, n)
    return _qaxis(np.stack([np.cos(phi), np.sin(phi), np.zeros(n)], 1), np.full(n, angle))


# ----------------------------------------------------------------------------- scenes


GEOM_TYPES = {"plane": 0, "sphere": 2, "capsule": 3, "cylinder": 5, "box": 6}


@functools.lru_cache(maxsize=None)
def _model(type1, size1, type2, size2, mg):
    (m1, g1), (m2, g2) = mg

    def geom(name, t, size, m, g):
        return f'<geom name="{name}" type="{t}" size="{size}" margin="{m}" gap="{g}"/>'

    first = geom("g1", type1, size1, m1, g1)
    body1 = (f'<body name="b1" mocap="true">{first}</body>' if type1 == "plane"
             else f'<body name="b1"><freejoint/>{first}</body>')
    xml = f"""<mujoco><worldbody>{body1}
      <body name="b2"><freejoint/>{geom("g2", type2, size2, m2, g2)}</body></worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def _size(s):
    return np.array([float(v) for v in s.split()] + [0.0] * (3 - len(s.split())))


def _mujoco(m, plane, pos1, quat1, pos2, quat2):
    """Per state: MuJoCo's contacts of the pair [(dist, pos, frame[3, 3])] and both geoms' xpos/xmat."""
    d = mujoco.MjData(m)
    g1, g2 = 0, 1
    n = len(pos1)
    xpos = np.zeros((n, 2, 3))
    xmat = np.zeros((n, 2, 9))
    contacts = []
    for i in range(n):
        if plane:
            d.mocap_pos[0] = pos1[i]
            d.mocap_quat[0] = quat1[i]
            d.qpos[:] = np.concatenate([pos2[i], quat2[i]])
        else:
            d.qpos[:] = np.concatenate([pos1[i], quat1[i], pos2[i], quat2[i]])
        mujoco.mj_forward(m, d)
        xpos[i] = d.geom_xpos[[g1, g2]]
        xmat[i] = d.geom_xmat[[g1, g2]]
        cons = []
        for c in d.contact[: d.ncon]:
            assert tuple(c.geom) == (g1, g2), c.geom  # geom 1 is the lower type (the lower id for equal types)
            cons.append((float(c.dist), c.pos.copy(), c.frame.reshape(3, 3).copy()))
        contacts.append(cons)
    return contacts, xpos, xmat


# ----------------------------------------------------------------------------- state generators
# Each returns (pos1, quat1, pos2, quat2) for n states, geom 2 placed with gap t (an array) to geom 1.


def _plane_pose(rng, n):
    return rng.uniform(-0.5, 0.5, (n, 3)), _qrand(rng, n)


def _on_plane(rng, n, t, support, orient):
    """Geom 2 of orientation orient(qp) over a random plane, its lowest point t above it; support(R2, nrm)
    is how far the geom reaches below its centre along -nrm."""
    pp, qp = _plane_pose(rng, n)
    rp = _mat(qp)
    nrm = rp[:, :, 2]
    q2 = orient(qp)
    xy = rng.uniform(-0.3, 0.3, (n, 2))
    pos2 = pp + rp[:, :, 0] * xy[:, :1] + rp[:, :, 1] * xy[:, 1:] + nrm * (support(_mat(q2), nrm) + t)[:, None]
    return pp, qp, pos2, q2


def _sup_sphere(r):
    return lambda r2, nrm: np.full(len(nrm), r)


def _sup_capsule(r, h):
    return lambda r2, nrm: r + h * np.abs(np.sum(r2[:, :, 2] * nrm, 1))


def _sup_cylinder(r, h):
    def f(r2, nrm):
        c = np.abs(np.sum(r2[:, :, 2] * nrm, 1))
        return h * c + r * np.sqrt(np.maximum(0.0, 1.0 - c * c))
    return f


def _sup_box(s):
    return lambda r2, nrm: sum(s[i] * np.abs(np.sum(r2[:, :, i] * nrm, 1)) for i in range(3))


def _plane_gen(support, orient):
    def gen(rng, n, t):
        return _on_plane(rng, n, t, support, lambda qp: orient(rng, qp))
    return gen


def _o_random(rng, qp):
    return _qrand(rng, len(qp))


def _o_aligned(rng, qp):  # z axis along the plane normal (spun about it)
    return _qmul(qp, _qz(rng, len(qp)))


def _o_aligned_exact(rng, qp):  # the plane's own orientation: z axes bitwise equal
    return qp.copy()


def _o_flipped_exact(rng, qp):  # z axis bitwise opposite to the plane normal
    return _qmul(qp, FLIP)


def _o_lying(rng, qp):  # z axis in the plane
    n = len(qp)
    return _qmul(_qmul(qp, _qz(rng, n)), _qaxis([1.0, 0.0, 0.0], np.full(n, np.pi / 2)))


def _o_tilt(angle):
    return lambda rng, qp: _qmul(_qmul(qp, _qz(rng, len(qp))), _qtilt(rng, len(qp), angle))


def _o_tilt_lying(angle):
    return lambda rng, qp: _qmul(_o_lying(rng, qp), _qtilt(rng, len(qp), angle))


def _o_box_edge(rng, qp):  # an edge down: 45 degrees about a face axis
    n = len(qp)
    return _qmul(_qmul(qp, _qz(rng, n)), _qaxis([1.0, 0.0, 0.0], np.full(n, np.pi / 4)))


def _two(rng, n):
    return rng.uniform(-0.5, 0.5, (n, 3)), _qrand(rng, n), _qrand(rng, n)


def _ss_random(r1, r2):
    def gen(rng, n, t):
        p1, q1, q2 = _two(rng, n)
        return p1, q1, p1 + _unit(rng.normal(size=(n, 3))) * (r1 + r2 + t)[:, None], q2
    return gen


def _ss_coincident(same_quat):
    def gen(rng, n, t):
        p1, q1, q2 = _two(rng, n)
        return p1, q1, p1.copy(), (q1.copy() if same_quat else q2)
    return gen


def _sc_gen(rs, rc, h, where):
    """Sphere (geom 1) against a capsule (geom 2, radius rc, half-length h)."""
    def gen(rng, n, t):
        p2, q2, q1 = _two(rng, n)
        a = _mat(q2)[:, :, 2]
        if where == "side":
            s = rng.uniform(-h, h, n)
            d = _perp(rng, a)
        elif where == "end":
            s = np.where(rng.random(n) < 0.5, h, -h)
            d = _unit(rng.normal(size=(n, 3)))
            d = d * np.sign(np.sum(d * a, 1) * s)[:, None]  # outward hemisphere
        elif where == "axis":  # centre on the capsule's axis
            return p2 + a * rng.uniform(-h, h, n)[:, None], q1, p2, q2
        else:  # at the capsule's centre
            return p2.copy(), q1, p2, q2
        return p2 + a * s[:, None] + d * (rs + rc + t)[:, None], q1, p2, q2
    return gen


def _scyl_gen(rs, r, h, where):
    """Sphere (geom 1, radius rs) against a cylinder (geom 2, radius r, half-height h)."""
    def gen(rng, n, t):
        p2, q2, q1 = _two(rng, n)
        m2 = _mat(q2)
        a = m2[:, :, 2]
        radial = _perp(rng, a)
        updown = np.where(rng.random(n) < 0.5, 1.0, -1.0)[:, None]
        if where == "side":
            c = p2 + a * rng.uniform(-0.95 * h, 0.95 * h, n)[:, None] + radial * (r + rs + t)[:, None]
        elif where == "cap":
            c = p2 + radial * rng.uniform(0, 0.95 * r, n)[:, None] + a * updown * (h + rs + t)[:, None]
        elif where == "rim":
            th = rng.uniform(0.05, np.pi / 2 - 0.05, n)[:, None]
            d = radial * np.cos(th) + a * updown * np.sin(th)
            c = p2 + radial * r + a * updown * h + d * (rs + t)[:, None]
        elif where == "inside":
            c = p2 + radial * rng.uniform(0, r, n)[:, None] + a * rng.uniform(-h, h, n)[:, None]
        else:  # at the cylinder's centre
            c = p2.copy()
        return c, q1, p2, q2
    return gen


def _cc_gen(r1, h1, r2, h2, where, angle=0.0):
    """Capsule (geom 1: r1, h1) against capsule (geom 2: r2, h2)."""
    def gen(rng, n, t):
        p1, q1, q2 = _two(rng, n)
        if where in ("parallel", "antiparallel", "near"):
            q2 = q1.copy() if where == "parallel" else _qmul(q1, FLIP) if where == "antiparallel" \
                else _qmul(q1, _qtilt(rng, n, angle))
        a1 = _mat(q1)[:, :, 2]
        a2 = _mat(q2)[:, :, 2]
        if where == "random":
            s1 = rng.uniform(-h1, h1, n)[:, None]
            s2 = rng.uniform(-h2, h2, n)[:, None]
            p2 = p1 + a1 * s1 - a2 * s2 + _unit(rng.normal(size=(n, 3))) * (r1 + r2 + t)[:, None]
        elif where == "crossing":  # offset along the common perpendicular of skew axes
            s1 = rng.uniform(-0.9 * h1, 0.9 * h1, n)[:, None]
            s2 = rng.uniform(-0.9 * h2, 0.9 * h2, n)[:, None]
            p2 = p1 + a1 * s1 - a2 * s2 + _unit(np.cross(a1, a2)) * (r1 + r2 + t)[:, None]
        elif where == "same_centre":
            p2 = p1.copy()
        else:  # (near-)parallel: a sideways gap and an axial shift, overlapping or not
            shift = rng.uniform(-1.2 * (h1 + h2), 1.2 * (h1 + h2), n)[:, None]
            p2 = p1 + a1 * shift + _perp(rng, a1) * (r1 + r2 + t)[:, None]
        return p1, q1, p2, q2
    return gen


# ----------------------------------------------------------------------------- the cases


PEN = (-0.05, 0.02)  # penetrating or a little apart, no margin
WITHIN = (-0.02, MTOT + 0.03)  # with MARGIN: penetrating, within margin, just beyond
TOUCH = (-1e-12, 1e-12)
APART = (0.002, 0.2)  # beyond the margin
APART_M = (MTOT + 0.002, MTOT + 0.2)
WITHIN_BIG = (-0.02, 0.25)
AXES_MEET = (-0.09 + 1e-11, -0.09 + 1e-8)  # capsule_capsule (radii 0.05 + 0.04): segments 1e-11..1e-8 apart


_T_NAMES = {PEN: "", WITHIN: "-margin", TOUCH: "-touching", APART: "-apart", APART_M: "-apart",
            WITHIN_BIG: "-bigmargin", AXES_MEET: "-segments-1e-8-apart"}


def _case(name, func, type1, size1, type2, size2, gen, t=PEN, mg=NOMARGIN, expect=None, xfail=None):
    """A pytest param, its id `name` and the gap range's name. `expect`: the set of contact counts MuJoCo
    must report over the case's states (that the states reach what the case is about); `xfail`: the
    reason the case is known to differ."""
    id = name + _T_NAMES[t]
    c = dict(id=id, func=func, type1=type1, size1=size1, type2=type2, size2=size2, gen=gen, t=t, mg=mg,
             expect=expect)
    return pytest.param(c, id=id, marks=[pytest.mark.xfail(strict=True, reason=xfail)] if xfail else [])


def _plane_cases(name, type2, size2, support, orients, expect):
    func = getattr(P, name)
    cases = []
    for oname, orient in orients.items():
        gen = _plane_gen(support, orient)
        cases.append(_case(f"{name}-{oname}", func, "plane", "1 1 0.1", type2, size2, gen, expect=expect.get(oname)))
    gen = _plane_gen(support, _o_random)
    cases += [
        _case(f"{name}-random", func, "plane", "1 1 0.1", type2, size2, gen, t=WITHIN, mg=MARGIN),
        _case(f"{name}-random", func, "plane", "1 1 0.1", type2, size2, gen, t=TOUCH),
        _case(f"{name}-random", func, "plane", "1 1 0.1", type2, size2, gen, t=APART, expect={0}),
        _case(f"{name}-random-margin", func, "plane", "1 1 0.1", type2, size2, gen, t=APART_M, mg=MARGIN,
              expect={0}),
    ]
    return cases


CASES = (
    _plane_cases("plane_sphere", "sphere", "0.1", _sup_sphere(0.1), {"random": _o_random}, {})
    + _plane_cases("plane_capsule", "capsule", "0.05 0.2", _sup_capsule(0.05, 0.2), {
        "random": _o_random, "standing": _o_aligned, "standing-exact": _o_aligned_exact,
        "upside-down-exact": _o_flipped_exact, "lying": _o_lying, "lying-tilted": _o_tilt_lying(0.05),
    }, {"lying": {0, 2}, "standing-exact": {0, 1}})
    + _plane_cases("plane_cylinder", "cylinder", "0.1 0.15", _sup_cylinder(0.1, 0.15), {
        "random": _o_random, "disk-parallel-exact": _o_aligned_exact, "disk-parallel-flipped": _o_flipped_exact,
        "disk-parallel": _o_aligned, "disk-tilt-1e-7": _o_tilt(1e-7), "disk-tilt-0.05": _o_tilt(0.05),
        "lying": _o_lying, "lying-tilted": _o_tilt_lying(0.02),
    }, {"disk-parallel-exact": {0, 3}, "disk-tilt-0.05": {0, 1, 3}})
    + [_case("plane_cylinder-lying-tilted", P.plane_cylinder, "plane", "1 1 0.1", "cylinder", "0.1 0.15",
             _plane_gen(_sup_cylinder(0.1, 0.15), _o_tilt_lying(0.02)), t=WITHIN_BIG, mg=BIGMARGIN,
             expect={0, 2, 4})]
    + _plane_cases("plane_box", "box", "0.1 0.15 0.05", _sup_box((0.1, 0.15, 0.05)), {
        "random": _o_random, "face-down": _o_aligned, "face-down-exact": _o_aligned_exact,
        "edge-down": _o_box_edge, "face-tilt-0.05": _o_tilt(0.05),
    }, {"face-down-exact": {0, 4}})
    + [
        _case("sphere_sphere-random", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07", _ss_random(0.1, 0.07)),
        _case("sphere_sphere-random", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07", _ss_random(0.1, 0.07),
              t=WITHIN, mg=MARGIN),
        _case("sphere_sphere-random", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07", _ss_random(0.1, 0.07),
              t=TOUCH),
        _case("sphere_sphere-random", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07", _ss_random(0.1, 0.07),
              t=APART_M, mg=MARGIN, expect={0}),
        _case("sphere_sphere-coincident", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07",
              _ss_coincident(False), expect={1}),
        _case("sphere_sphere-coincident-same-axes", P.sphere_sphere, "sphere", "0.1", "sphere", "0.07",
              _ss_coincident(True), expect={1}),
    ]
    + [
        _case(f"sphere_capsule-{w}", P.sphere_capsule, "sphere", "0.08", "capsule", "0.05 0.2",
              _sc_gen(0.08, 0.05, 0.2, w), expect=e)
        for w, e in (("side", None), ("end", None), ("axis", {1}), ("centre", {1}))
    ] + [
        _case("sphere_capsule-side", P.sphere_capsule, "sphere", "0.08", "capsule", "0.05 0.2",
              _sc_gen(0.08, 0.05, 0.2, "side"), t=WITHIN, mg=MARGIN),
        _case("sphere_capsule-end", P.sphere_capsule, "sphere", "0.08", "capsule", "0.05 0.2",
              _sc_gen(0.08, 0.05, 0.2, "end"), t=WITHIN, mg=MARGIN),
        _case("sphere_capsule-side", P.sphere_capsule, "sphere", "0.08", "capsule", "0.05 0.2",
              _sc_gen(0.08, 0.05, 0.2, "side"), t=TOUCH),
        _case("sphere_capsule-side", P.sphere_capsule, "sphere", "0.08", "capsule", "0.05 0.2",
              _sc_gen(0.08, 0.05, 0.2, "side"), t=APART_M, mg=MARGIN, expect={0}),
    ]
    + [
        _case(f"sphere_cylinder-{w}", P.sphere_cylinder, "sphere", "0.05", "cylinder", "0.1 0.15",
              _scyl_gen(0.05, 0.1, 0.15, w), t=t, mg=mg, expect=e)
        for w, t, mg, e in (
            ("side", PEN, NOMARGIN, None), ("cap", PEN, NOMARGIN, None), ("rim", PEN, NOMARGIN, None),
            ("inside", PEN, NOMARGIN, {1}), ("centre", PEN, NOMARGIN, {1}),
            ("side", WITHIN, MARGIN, None), ("cap", WITHIN, MARGIN, None), ("rim", WITHIN, MARGIN, None),
            ("side", TOUCH, NOMARGIN, None), ("cap", TOUCH, NOMARGIN, None), ("rim", TOUCH, NOMARGIN, None),
            ("side", APART_M, MARGIN, {0}), ("cap", APART_M, MARGIN, {0}), ("rim", APART_M, MARGIN, {0}),
        )
    ] + [
        # a flat cylinder: a centred sphere leaves through a cap, not the side
        _case("sphere_cylinder-centre-flat", P.sphere_cylinder, "sphere", "0.05", "cylinder", "0.2 0.05",
              _scyl_gen(0.05, 0.2, 0.05, "centre"), expect={1}),
        _case("sphere_cylinder-inside-flat", P.sphere_cylinder, "sphere", "0.05", "cylinder", "0.2 0.05",
              _scyl_gen(0.05, 0.2, 0.05, "inside"), expect={1}),
    ]
    + [
        _case(f"capsule_capsule-{w}" + (f"-{angle:g}" if angle else ""), P.capsule_capsule,
              "capsule", "0.05 0.2", "capsule", "0.04 0.15", _cc_gen(0.05, 0.2, 0.04, 0.15, w, angle),
              t=t, mg=mg, expect=e)
        for w, angle, t, mg, e in (
            ("random", 0.0, PEN, NOMARGIN, None), ("crossing", 0.0, PEN, NOMARGIN, None),
            ("same_centre", 0.0, PEN, NOMARGIN, {1}),
            ("parallel", 0.0, PEN, NOMARGIN, {0, 2}), ("antiparallel", 0.0, PEN, NOMARGIN, {0, 2}),
            ("near", 1e-3, PEN, NOMARGIN, {0, 1}), ("near", 1e-5, PEN, NOMARGIN, None),
            ("near", 1e-7, PEN, NOMARGIN, None), ("near", 3e-5, WITHIN, MARGIN, None),
            ("random", 0.0, WITHIN, MARGIN, None), ("parallel", 0.0, WITHIN, MARGIN, {0, 2}),
            ("crossing", 0.0, TOUCH, NOMARGIN, None), ("parallel", 0.0, TOUCH, NOMARGIN, None),
            ("crossing", 0.0, APART_M, MARGIN, {0}), ("parallel", 0.0, APART_M, MARGIN, {0}),
        )
    ] + [
        _case("capsule_capsule-crossing", P.capsule_capsule, "capsule", "0.05 0.2", "capsule", "0.04 0.15",
              _cc_gen(0.05, 0.2, 0.04, 0.15, "crossing"), t=AXES_MEET, expect={1}),
    ]
)


# ----------------------------------------------------------------------------- running and comparing


@pytest.fixture(scope="module")
def runs():
    """Case id -> (mujoco contacts per state, our contacts per state), computed on first use."""
    cache = {}

    def get(case):
        key = case["id"], case["t"], case["mg"]
        if key not in cache:
            rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
            m = _model(case["type1"], case["size1"], case["type2"], case["size2"], case["mg"])
            t = rng.uniform(*case["t"], N)
            pos1, quat1, pos2, quat2 = case["gen"](rng, N, t)
            mj, xpos, xmat = _mujoco(m, case["type1"] == "plane", pos1, quat1, pos2, quat2)
            margin = float(m.geom_margin.sum() + m.geom_gap.sum())
            ours = run_collider(case["func"], xpos[:, 0], xmat[:, 0], m.geom_size[0], xpos[:, 1], xmat[:, 1],
                                m.geom_size[1], margin)
            cache[key] = mj, ours
        return cache[key]

    return get


def _mismatch(mj, ours):
    """'' when the contact lists agree order-free within TOL, else a description."""
    return contact_mismatch(mj, ours, TOL)


@pytest.mark.parametrize("case", CASES)
def test_matches_mujoco(runs, case):
    mj, ours = runs(case)
    bad = [(i, msg) for i, msg in ((i, _mismatch(a, b)) for i, (a, b) in enumerate(zip(mj, ours))) if msg]
    assert not bad, f"{len(bad)}/{len(mj)} states differ, e.g. " + "; ".join(f"#{i}: {m}" for i, m in bad[:3])
    counts = {len(a) for a in mj}
    if case["expect"] is not None:  # the case reaches the configurations it is about
        assert counts == set(case["expect"]), counts
