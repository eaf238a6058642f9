"""The height-field collider (`engine.collision.hfield`: a GJK/EPA run per triangular prism of the field)
against MuJoCo 4.0.0's mj_collision (mjc_ConvexHField), through our whole collision pipeline.

Inline height fields with irregular elevations (a rotated, shifted field geom) against a sphere, capsule,
ellipsoid, cylinder and box on a free body, without and with geom margins and gaps: poses at random
orientations over the field's interior and near (and past) its edges, at heights that make the geom
penetrate deeply or slightly, touch, lie within the margin or just beyond it, or reach the field's base
from below; states of MuJoCo's own runs (the five geoms dropped on a field: resting, rolling contacts);
a large box on a fine grid (MuJoCo's 50-contact limit per pair); the shared models' height fields
(mujoco_warp's hfield.xml; dm_control's quadruped terrain with dm_control-like bumps, its terrain contacts
only, since the model needs colliders not built yet). Contacts are compared order-free: the same count
per geom pair and dist, pos and frame within 1e-6 (in practice within 1e-12, mostly bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli_util import MODELS
from tests.collision_util import assert_same_contacts, extent, mujoco_contacts, rand_quat, rigidsim_contacts
from tests.mjref import model_from_mujoco, mujoco

TOL = 1e-6
NPOSE = 36

_SIZE = {"sphere": [0.09], "capsule": [0.06, 0.11], "ellipsoid": [0.07, 0.12, 0.09], "cylinder": [0.08, 0.07],
         "box": [0.09, 0.06, 0.05]}
KINDS = tuple(_SIZE)
# (margin, gap) of each geom
MARGINS = [(0.0, 0.0), (0.015, 0.004)]
# the field: nrow x ncol samples over [-sx, sx] x [-sy, sy], elevation scale sz, base depth sb
NROW, NCOL = 8, 11
FSIZE = (0.5, 0.35, 0.2, 0.08)
FPOS, FEULER = (0.03, -0.02, 0.01), (4, -3, 17)


def _fmt(v):
    return " ".join(f"{x:.6g}" for x in v)


def _elevation(rng, nrow=NROW, ncol=NCOL):
    """Irregular samples: a few bumps plus noise (MuJoCo normalizes them to [0, 1])."""
    y, x = np.mgrid[0:nrow, 0:ncol]
    z = 0.5 + 0.3 * np.sin(0.9 * x + 0.4) * np.cos(0.7 * y) + 0.25 * rng.uniform(-1, 1, (nrow, ncol))
    return z.ravel()


def _field_xml(elev, nrow=NROW, ncol=NCOL, size=FSIZE, margin=0.0, gap=0.0, extra=""):
    return (f'<hfield name="field" nrow="{nrow}" ncol="{ncol}" elevation="{_fmt(elev)}" size="{_fmt(size)}"/>',
            f'<geom name="field" type="hfield" hfield="field" pos="{_fmt(FPOS)}" euler="{_fmt(FEULER)}" '
            f'margin="{margin}" gap="{gap}" {extra}/>')


def _scene(kind, margin, gap, seed):
    asset, field = _field_xml(_elevation(np.random.default_rng(seed)), margin=margin, gap=gap)
    xml = f"""<mujoco><option gravity="0 0 0"/><asset>{asset}</asset><worldbody>{field}
      <body pos="0 0 1"><freejoint/><geom name="g" type="{kind}" size="{_fmt(_SIZE[kind])}" margin="{margin}"
        gap="{gap}"/></body>
    </worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)






def _field_frame(mjm):
    """The field geom's world pose after mj_kinematics, and its samples scaled to heights."""
    d = mujoco.MjData(mjm)
    mujoco.mj_kinematics(mjm, d)
    g = 0
    h = int(mjm.geom_dataid[g])
    nrow, ncol = int(mjm.hfield_nrow[h]), int(mjm.hfield_ncol[h])
    adr = int(mjm.hfield_adr[h])
    data = np.asarray(mjm.hfield_data[adr:adr + nrow * ncol]).reshape(nrow, ncol)
    return d.geom_xpos[g].copy(), d.geom_xmat[g].reshape(3, 3).copy(), np.asarray(mjm.hfield_size[h]), data


def _poses(mjm, kind, npose, rng):
    """qpos rows near contact: (x, y) in the field frame, inside or near / past its edges; the geom's lowest
    point (along the field's -z) put at the highest sample within its bounding radius, shifted by an
    offset (deep, shallow, touching, within or beyond the margin, or at the base from below)."""
    pos, mat, (sx, sy, sz, sb), data = _field_frame(mjm)
    nrow, ncol = data.shape
    size = mjm.geom_size[1]
    rb = float(mjm.geom_rbound[1])
    summargin = float(mjm.geom_margin.sum() + mjm.geom_gap.sum())
    xs = np.linspace(-sx, sx, ncol)
    ys = np.linspace(-sy, sy, nrow)
    rows = []
    for i in range(npose):
        q = rand_quat(rng)
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, q)
        rot = mat.T @ rot.reshape(3, 3)  # the geom's rotation in the field frame
        if i % 3 == 2:  # near an edge, inside or out by up to the bounding radius
            e = rng.integers(4)
            x = rng.uniform(-sx, sx) if e < 2 else rng.choice([-1, 1]) * (sx + rng.uniform(-rb, rb))
            y = rng.uniform(-sy, sy) if e >= 2 else rng.choice([-1, 1]) * (sy + rng.uniform(-rb, rb))
        else:
            x, y = rng.uniform(-0.9 * sx, 0.9 * sx), rng.uniform(-0.9 * sy, 0.9 * sy)
        near = (np.abs(xs - x)[None, :] <= rb + 1e-9) | (np.abs(xs - x)[None, :] == np.abs(xs - x).min())
        near = near & ((np.abs(ys - y)[:, None] <= rb + 1e-9) | (np.abs(ys - y)[:, None] == np.abs(ys - y).min()))
        top = float(data[near].max()) * sz
        down = extent(kind, size, rot, np.array([0.0, 0.0, -1.0]))
        c = i % 7
        if c == 0:
            off = -rng.uniform(0.1, 0.5) * rb  # deep
        elif c == 1:
            off = -rng.uniform(0.0, 0.05) * rb  # shallow
        elif c == 2:
            off = rng.uniform(-1e-7, 1e-7)  # touching the highest sample
        elif c == 3:
            off = rng.uniform(0.0, 1.0) * summargin if summargin > 0 else -rng.uniform(0, 1e-3) * rb
        elif c == 4:
            off = summargin + rng.uniform(0.0, 0.02) * rb  # just beyond the margin
        elif c == 5:
            off = rng.uniform(-0.6, 0.3) * rb
        else:  # at the base, from below
            top = -sb - 2 * extent(kind, size, rot, np.array([0.0, 0.0, 1.0]))
            off = rng.uniform(-0.2, 0.2) * rb
        local = np.array([x, y, top + down + off])
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, (mat @ rot).ravel())
        rows.append(np.concatenate([pos + mat @ local, quat]))
    return np.array(rows)


def _inside(mjm, kind, rows):
    """The rows whose geom (body 1) has its lowest point (along the field's -z) strictly inside the field's
    solid: over the field, at least 1e-6 under its triangulated surface and above its base."""
    from tests.test_collision_hfield_fixtures import Field, _lowest

    f = Field(mjm, 0)
    out = []
    for i, r in enumerate(rows):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, r[3:7])
        low = f.mat.T @ (r[:3] - f.pos) + _lowest(kind, _SIZE[kind], f.mat.T @ rot.reshape(3, 3))
        if abs(low[0]) < f.sx and abs(low[1]) < f.sy and -f.sb < low[2] < f.surface(low[0], low[1]) - 1e-6:
            out.append(i)
    return out


def _compare(mjm, rows, what, only=None):
    ours = rigidsim_contacts(model_from_mujoco(mjm), rows)
    theirs = mujoco_contacts(mujoco, mjm, rows)
    if only is not None:
        keep = lambda env: [c for c in env if only in c["geom"]]  # noqa: E731
        ours, theirs = [keep(e) for e in ours], [keep(e) for e in theirs]
    assert_same_contacts(ours, theirs, tol=TOL, what=what)
    return [len(e) for e in theirs]  # MuJoCo's contacts per state (ours are the same)


@pytest.mark.parametrize("margin,gap", MARGINS)
@pytest.mark.parametrize("kind", KINDS)
def test_hfield_poses(kind, margin, gap):
    mjm = _scene(kind, margin, gap, seed=KINDS.index(kind))
    rows = _poses(mjm, kind, NPOSE, np.random.default_rng(100 + KINDS.index(kind)))
    n = _compare(mjm, rows, f"{kind} margin={margin}")
    assert sum(n) >= NPOSE // 3 and n.count(0) >= 3  # the poses make contacts, and some make none
    # every pose whose lowest point lies inside the field's solid (over the field, under its triangulated
    # surface, above its base) makes contacts
    inside = _inside(mjm, kind, rows)
    assert len(inside) >= 3
    assert all(n[i] > 0 for i in inside), [(i, n[i]) for i in inside]


def _drop_scene(margin):
    """The five geoms dropped on a field (they collide with it only, not with each other)."""
    asset, field = _field_xml(_elevation(np.random.default_rng(7)), margin=margin,
                              extra='contype="2" conaffinity="1"')
    bodies = []
    for k, kind in enumerate(KINDS):
        x = -0.36 + 0.18 * k
        y = 0.12 * (-1) ** k
        bodies.append(f'<body pos="{x} {y} {0.35 + 0.05 * k}" euler="{20 * k} {35 - 9 * k} {11 * k}"><freejoint/>'
                      f'<geom type="{kind}" size="{_fmt(_SIZE[kind])}" margin="{margin}" contype="1" '
                      f'conaffinity="2"/></body>')
    xml = f"""<mujoco><option timestep="0.004"/><asset>{asset}</asset><worldbody>{field}
      {''.join(bodies)}</worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def _trajectory(mjm, nstate, every, seed=0):
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(mjm)
    d.qvel[:] = rng.normal(scale=0.3, size=mjm.nv)
    out = []
    for t in range(nstate * every):
        mujoco.mj_step(mjm, d)
        if t % every == every - 1:
            out.append(d.qpos.copy())
    return np.array(out)


@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_hfield_trajectory(margin):
    mjm = _drop_scene(margin)
    rows = _trajectory(mjm, 30, 8)
    n = _compare(mjm, rows, f"drop margin={margin}")
    assert sum(n) >= 30


def _box_on_grid(margin):
    """A large box (geom 1) over a fine, nearly flat grid (geom 0), both with the given margin."""
    rng = np.random.default_rng(3)
    elev = 0.5 + 0.02 * rng.uniform(-1, 1, 24 * 24)
    asset = f'<hfield name="field" nrow="24" ncol="24" elevation="{_fmt(elev)}" size="0.6 0.6 0.1 0.05"/>'
    xml = f"""<mujoco><option gravity="0 0 0"/><asset>{asset}</asset><worldbody>
      <geom type="hfield" hfield="field" margin="{margin}"/>
      <body pos="0 0 1"><freejoint/><geom type="box" size="0.3 0.25 0.05" margin="{margin}"/></body>
      </worldbody></mujoco>"""
    return mujoco.MjModel.from_xml_string(xml)


def _quat_rows(pos_z, quats):
    rows = np.array([[0.05, -0.03, z, *q] for z in pos_z for q in quats], float)
    rows[:, 3:] /= np.linalg.norm(rows[:, 3:], axis=1, keepdims=True)
    return rows


def test_hfield_contact_limit():
    """A large box on a fine grid, within a wide margin: MuJoCo stops at 50 contacts for the pair."""
    mjm = _box_on_grid(0.02)
    rows = _quat_rows((0.105, 0.11, 0.12, 0.13), [(np.cos(0.15), 0.01, 0.015, np.sin(0.15)),
                                                   (np.cos(-0.35), 0.02, -0.01, np.sin(-0.35))])
    theirs = mujoco_contacts(mujoco, mjm, rows)
    assert max(map(len, theirs)) == 50
    _compare(mjm, rows, "contact limit")


@pytest.mark.parametrize("margin", [0.0, 0.005])
def test_hfield_box_aligned(margin):
    """The box's faces parallel to the grid lines (a tilt about y only), descending into the grid. Without a
    margin the shapes are discrete (EPA stops on a repeated box corner). With one, a box side face exactly
    parallel to a prism's vertical face gives its contact from the distance stage (GJK between the shapes
    without margin), whose witness points on two parallel faces are not unique: they agree because that
    stage, too, runs GJK for discrete shapes (no duality-gap tolerance), as MuJoCo 4.0.0 does."""
    mjm = _box_on_grid(margin)
    rows = _quat_rows(np.linspace(0.06, 0.13, 15), [(1, 0, 0, 0), (1, 0, 0.01, 0)])
    n = _compare(mjm, rows, f"aligned box margin={margin}")
    assert min(n) > 0  # every state in contact


def test_hfield_shared_model():
    path = MODELS / "mujoco_warp/test_data/hfield/hfield.xml"
    if not path.exists():
        pytest.skip("../shared/models is absent")
    mjm = mujoco.MjModel.from_xml_path(str(path))
    rows = _trajectory(mjm, 24, 10)
    assert sum(_compare(mjm, rows, "hfield.xml")) > 0


def test_hfield_quadruped_terrain():
    """dm_control's quadruped on its terrain, given bumps like dm_control's (the XML's field is flat); only
    the terrain's contacts (the model needs colliders not built yet for some of its other pairs)."""
    path = MODELS / "dm_control/quadruped.xml"
    if not path.exists():
        pytest.skip("../shared/models is absent")
    mjm = mujoco.MjModel.from_xml_path(str(path))
    h = 0
    nrow, ncol = int(mjm.hfield_nrow[h]), int(mjm.hfield_ncol[h])
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:nrow, 0:ncol] / (nrow - 1)
    bumps = 0.5 + 0.25 * np.sin(40 * x) * np.cos(37 * y) + 0.1 * rng.uniform(-1, 1, (nrow, ncol))
    r = np.hypot(x - 0.5, y - 0.5)
    bumps *= np.clip((r - 0.01) / 0.04, 0, 1)  # flat under the start, as dm_control's bowl
    adr = int(mjm.hfield_adr[h])
    mjm.hfield_data[adr:adr + nrow * ncol] = (0.15 * bumps).ravel()
    terrain = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, "terrain")
    rng = np.random.default_rng(0)
    d = mujoco.MjData(mjm)
    rows = []
    for t in range(24 * 12):
        d.ctrl[:] = rng.uniform(mjm.actuator_ctrlrange[:, 0], mjm.actuator_ctrlrange[:, 1])
        mujoco.mj_step(mjm, d)
        if t % 12 == 11:
            rows.append(d.qpos.copy())
    rows = np.array(rows)
    # also the body pushed down into the bumps
    low = rows.copy()
    low[:, 2] -= 0.12
    assert sum(_compare(mjm, np.concatenate([rows, low]), "quadruped terrain", only=terrain)) > 0
