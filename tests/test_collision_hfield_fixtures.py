"""Height-field contacts against MuJoCo 4.0.0's mj_collision, on scenes read by OUR loader (issue 28, item 1).

The other height-field tests build their Model from MuJoCo's compiled model, so they never saw the loader's
elevation data (it was stored mirrored in y: MuJoCo's XML reader stores the text's rows in reverse order).
Here each scene is an MJCF file loaded both by `rigidsim.loaders.load_scene` and by MuJoCo:

- seeded random elevation data whose minimum is not 0 and maximum not 1 (negative samples too), an uneven
  grid (nrow != ncol), peaks and valleys between the samples, on a shifted, rotated field geom; the compiled
  hfield fields are checked equal to MuJoCo's, bit for bit;
- every geom type a height field collides with (sphere, capsule, ellipsoid, cylinder, box, mesh), each on its
  own free body, colliding with the field only (contype / conaffinity), at random orientations with their
  lowest point within +-1 mm of the field's surface above a cell interior, a cell edge, a cell diagonal (the
  edge that splits the cell into its two triangles) or a sample (vertex); with and without margin / gap;
- a free run: the six geoms released 0.5 mm above the surface (the issue's outside corpus) and MuJoCo's
  200 steps, contacts compared at every state.

At each state our contacts must equal MuJoCo's: the same count per geom pair (no-contact states included)
and dist, pos and frame within 1e-6 (every height-field pair goes through GJK/EPA, MuJoCo's
mjc_ConvexHField). Each test also asserts that its states do make contacts for every geom type, and that
some states make none, so that neither case passes vacuously.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.loaders import load_scene
from tests.collision_util import assert_same_contacts, mujoco_contacts, rand_quat, rigidsim_contacts
from tests.mjref import mujoco

TOL = 1e-6
NPOSE = 60  # states per seed; each state holds the six geoms at their own spots
KINDS = ("sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")
SIZE = {"sphere": (0.03,), "capsule": (0.02, 0.03), "ellipsoid": (0.035, 0.025, 0.02), "cylinder": (0.025, 0.02),
        "box": (0.03, 0.022, 0.018)}
# an irregular convex polyhedron (10 vertices: MuJoCo's hill-climbing support)
MESH_VERT = np.array([[0.03, 0.002, -0.004], [-0.028, 0.006, 0.003], [0.004, 0.027, 0.005],
                      [-0.003, -0.031, -0.002], [0.006, 0.003, 0.026], [-0.002, -0.004, -0.029],
                      [0.019, 0.018, 0.017], [-0.017, -0.02, 0.016], [0.02, -0.016, -0.018],
                      [-0.018, 0.019, -0.017]])
WHERE = ("interior", "edge", "diagonal", "vertex")
# (seed, nrow, ncol, field size, margin, gap)
# (elevation scales of 10-15 mm over cells of 60-100 mm: slopes gentle enough that a geom whose lowest point
# is 1 mm above the surface touches nowhere else, steep enough for uneven contacts)
SEEDS = [(0, 7, 9, (0.4, 0.3, 0.012, 0.05), 0.0, 0.0),
         (1, 9, 6, (0.25, 0.4, 0.015, 0.03), 0.0, 0.0),
         (2, 8, 11, (0.5, 0.35, 0.01, 0.04), 0.0002, 0.0001),
         (3, 6, 10, (0.3, 0.25, 0.02, 0.02), 0.0, 0.0)]
FPOS, FEULER = (0.02, -0.03, 0.01), (3, -2, 23)


def _fmt(v):
    return " ".join(repr(float(x)) for x in np.ravel(v))


def _elevation(rng, nrow, ncol):
    """Random samples in an arbitrary range (not [0, 1]: MuJoCo rescales them by their min / max)."""
    lo = rng.uniform(-2.0, 0.5)
    return lo + rng.uniform(0.5, 3.0) * rng.uniform(0.0, 1.0, nrow * ncol)


def _xml(elev, nrow, ncol, fsize, margin, gap, gravity="0 0 0", bodies=None):
    """The field geom (contype 0, conaffinity 1) and one free body per kind (contype 1, conaffinity 0)."""
    bodies = bodies or [f'<body pos="{k} 0 1">' for k in range(len(KINDS))]
    geoms = []
    for k, kind in enumerate(KINDS):
        shape = 'type="mesh" mesh="poly"' if kind == "mesh" else f'type="{kind}" size="{_fmt(SIZE[kind])}"'
        geoms.append(f'{bodies[k]}<freejoint/><geom name="{kind}" {shape} margin="{margin}" gap="{gap}" '
                     f'contype="1" conaffinity="0"/></body>')
    return f"""<mujoco><option gravity="{gravity}" timestep="0.002"/>
  <asset><hfield name="field" nrow="{nrow}" ncol="{ncol}" size="{_fmt(fsize)}" elevation="{_fmt(elev)}"/>
    <mesh name="poly" vertex="{_fmt(MESH_VERT)}"/></asset>
  <worldbody><geom name="field" type="hfield" hfield="field" pos="{_fmt(FPOS)}" euler="{_fmt(FEULER)}"
    margin="{margin}" gap="{gap}" contype="0" conaffinity="1"/>
    {''.join(geoms)}
  </worldbody></mujoco>"""


def _load(tmp_path, xml):
    """The scene loaded by our loader and by MuJoCo, from the same file."""
    path = tmp_path / "scene.xml"
    path.write_text(xml)
    return load_scene(path), mujoco.MjModel.from_xml_path(str(path))


class Field:
    """The field geom of a MuJoCo model: world pose, sizes and samples [nrow, ncol] (row r at y = -sy + r dy)."""

    def __init__(self, mjm, g=None):
        d = mujoco.MjData(mjm)
        mujoco.mj_kinematics(mjm, d)
        g = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, "field") if g is None else g
        self.pos, self.mat = d.geom_xpos[g].copy(), d.geom_xmat[g].reshape(3, 3).copy()
        h = int(mjm.geom_dataid[g])
        self.nrow, self.ncol = int(mjm.hfield_nrow[h]), int(mjm.hfield_ncol[h])
        self.sx, self.sy, self.sz, self.sb = (float(v) for v in mjm.hfield_size[h])
        adr = int(mjm.hfield_adr[h])
        self.z = np.asarray(mjm.hfield_data[adr:adr + self.nrow * self.ncol], float).reshape(self.nrow, self.ncol)
        self.z = self.z * self.sz
        self.dx, self.dy = 2 * self.sx / (self.ncol - 1), 2 * self.sy / (self.nrow - 1)

    def surface(self, x, y):
        """The height of MuJoCo's triangulated surface at (x, y): each cell is split along the diagonal from
        sample (r, c) to (r + 1, c + 1)."""
        u, v = (x + self.sx) / self.dx, (y + self.sy) / self.dy
        c, r = min(int(np.floor(u)), self.ncol - 2), min(int(np.floor(v)), self.nrow - 2)
        fu, fv = u - c, v - r
        z = self.z
        if fv >= fu:
            return z[r, c] + fv * (z[r + 1, c] - z[r, c]) + fu * (z[r + 1, c + 1] - z[r + 1, c])
        return z[r, c] + fu * (z[r, c + 1] - z[r, c]) + fv * (z[r + 1, c + 1] - z[r, c + 1])

    def spot(self, rng, where):
        """A point (x, y) of the field frame above a cell interior, edge, diagonal or vertex (not the outer
        ring of cells, so that the geoms stay over the field)."""
        c = rng.integers(1, self.ncol - 2)
        r = rng.integers(1, self.nrow - 2)
        a, b = rng.uniform(0.15, 0.85, 2)
        if where == "interior":
            while abs(a - b) < 0.1:  # off the diagonal
                a, b = rng.uniform(0.15, 0.85, 2)
            u, v = c + a, r + b
        elif where == "edge":
            u, v = (c + a, r) if rng.integers(2) else (c, r + a)
        elif where == "diagonal":
            u, v = c + a, r + a
        else:
            u, v = c, r
        return u * self.dx - self.sx, v * self.dy - self.sy


def _lowest(kind, size, rot):
    """The offset from a geom's centre to its lowest point along the field's -z (rot: the geom's rotation in
    the field frame)."""
    u = np.array([0.0, 0.0, -1.0])
    loc = rot.T @ u
    if kind == "sphere":
        p = size[0] * loc
    elif kind == "capsule":
        p = size[0] * loc + np.array([0, 0, np.sign(loc[2]) * size[1]])
    elif kind == "ellipsoid":
        s = np.asarray(size)
        p = s * s * loc / np.linalg.norm(s * loc)
    elif kind == "cylinder":
        rad = np.hypot(loc[0], loc[1])
        p = np.array([size[0] * loc[0] / rad, size[0] * loc[1] / rad, np.sign(loc[2]) * size[1]])
    elif kind == "box":
        p = np.sign(loc) * np.asarray(size)
    else:  # mesh: its vertices in the geom frame (the compiled mesh frame)
        p = size[np.argmax(size @ loc)]
    return rot @ p


def _mesh_vertices(mjm):
    g = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, "mesh")
    mid = int(mjm.geom_dataid[g])
    adr, n = int(mjm.mesh_vertadr[mid]), int(mjm.mesh_vertnum[mid])
    return np.asarray(mjm.mesh_vert[adr:adr + n], float)


def _set_geom_pose(mjm, qpos, k, xpos, xmat):
    """Set the free joint of body k + 1 in qpos so that its geom has world pose xpos, xmat (a mesh geom sits at
    an offset in its body: MuJoCo moves it to the mesh's own frame)."""
    g = mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, KINDS[k])
    gmat = np.zeros(9)
    mujoco.mju_quat2Mat(gmat, mjm.geom_quat[g])
    bmat = xmat @ gmat.reshape(3, 3).T
    bq = np.zeros(4)
    mujoco.mju_mat2Quat(bq, bmat.ravel())
    adr = int(mjm.jnt_qposadr[mjm.body_jntadr[k + 1]])
    qpos[adr:adr + 7] = np.concatenate([xpos - bmat @ mjm.geom_pos[g], bq])


def _hover_states(mjm, rng, npose):
    """qpos rows: geom k of state i above a spot of kind WHERE[(i + k) % 4], at a random orientation, its
    lowest point within +-1 mm of the surface there."""
    f = Field(mjm)
    verts = _mesh_vertices(mjm)
    rows = np.zeros((npose, mjm.nq))
    for i in range(npose):
        for k, kind in enumerate(KINDS):
            x, y = f.spot(rng, WHERE[(i + k) % len(WHERE)])
            q = rand_quat(rng)
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, q)
            rot = f.mat.T @ rot.reshape(3, 3)  # in the field frame
            low = _lowest(kind, verts if kind == "mesh" else SIZE[kind], rot)
            target = np.array([x, y, f.surface(x, y) + rng.uniform(-1e-3, 1e-3)])
            _set_geom_pose(mjm, rows[i], k, f.pos + f.mat @ (target - low), f.mat @ rot)
    return rows


def _compare(model, mjm, rows, what):
    """Our contacts against MuJoCo's at each row; returns, per geom kind, how many states had contacts."""
    ours = rigidsim_contacts(model, rows)
    theirs = mujoco_contacts(mujoco, mjm, rows)
    assert_same_contacts(ours, theirs, tol=TOL, what=what)
    names = {mujoco.mj_name2id(mjm, mujoco.mjtObj.mjOBJ_GEOM, k): k for k in KINDS}
    touched = {k: 0 for k in KINDS}
    for env in theirs:
        for kind in {names[g] for c in env for g in c["geom"] if g in names}:
            touched[kind] += 1
    return touched


@pytest.mark.parametrize("seed,nrow,ncol,fsize,margin,gap", SEEDS)
def test_hfield_hover(tmp_path, seed, nrow, ncol, fsize, margin, gap):
    rng = np.random.default_rng(seed)
    elev = _elevation(rng, nrow, ncol)
    assert elev.min() != 0 and elev.max() != 1
    model, mjm = _load(tmp_path, _xml(elev, nrow, ncol, fsize, margin, gap))
    # the compiled field is MuJoCo's, bit for bit (samples normalised to [0, 1] in float32, rows reversed)
    np.testing.assert_array_equal(np.asarray(model.hfield_data, np.float32), mjm.hfield_data)
    for k in ("hfield_size", "hfield_nrow", "hfield_ncol", "hfield_adr"):
        np.testing.assert_array_equal(np.asarray(getattr(model, k)), getattr(mjm, k), err_msg=k)
    rows = _hover_states(mjm, rng, NPOSE)
    touched = _compare(model, mjm, rows, f"hover seed {seed}")
    for kind, n in touched.items():  # contacts and no contacts both occur for every geom type
        assert NPOSE // 4 <= n <= NPOSE - 2, (kind, n, NPOSE)


def test_hfield_elevation_rows(tmp_path):
    """The first row of the elevation text is the field's +y edge: a single raised sample in the text's first
    row, first column, makes MuJoCo's and our contact with a small sphere at (-sx, +sy), none at (-sx, -sy)."""
    nrow, ncol, fsize = 4, 5, (0.4, 0.3, 0.1, 0.05)
    elev = np.zeros(nrow * ncol)
    elev[0] = 1.0
    model, mjm = _load(tmp_path, _xml(elev, nrow, ncol, fsize, 0.0, 0.0))
    f = Field(mjm)
    rows = np.zeros((2, mjm.nq))
    for b, y in enumerate((f.sy, -f.sy)):
        rows[b] = np.tile([0, 0, 5, 1, 0, 0, 0], len(KINDS))  # the others far above the field
        centre = f.pos + f.mat @ np.array([-f.sx + 0.01, y - 0.01 * np.sign(y), f.sz - 0.01])
        rows[b, :3] = centre
    ours = rigidsim_contacts(model, rows)
    theirs = mujoco_contacts(mujoco, mjm, rows)
    assert [len(e) for e in theirs] == [1, 0]
    assert_same_contacts(ours, theirs, tol=TOL, what="elevation rows")


def _drop_xml():
    """The free-run scene: the six geoms released 0.5 mm above the surface of a random 9 x 8 field (no floor),
    each from a hover pose (the lowest point lifted to 0.5 mm above the surface under it)."""
    rng = np.random.default_rng(11)
    nrow, ncol, fsize = 9, 8, (0.45, 0.4, 0.012, 0.05)
    elev = _elevation(rng, nrow, ncol)
    probe = mujoco.MjModel.from_xml_string(_xml(elev, nrow, ncol, fsize, 0.0, 0.0))
    start = _hover_states(probe, rng, 1)[0]
    f = Field(probe)
    verts = _mesh_vertices(probe)
    d = mujoco.MjData(probe)
    d.qpos[:] = start
    mujoco.mj_kinematics(probe, d)
    bodies = []
    for k, kind in enumerate(KINDS):
        g = mujoco.mj_name2id(probe, mujoco.mjtObj.mjOBJ_GEOM, kind)
        rot = f.mat.T @ d.geom_xmat[g].reshape(3, 3)
        low = f.mat.T @ (d.geom_xpos[g] - f.pos) + _lowest(kind, verts if kind == "mesh" else SIZE[kind], rot)
        p = start[7 * k:7 * k + 3] + f.mat @ np.array([0, 0, f.surface(low[0], low[1]) + 5e-4 - low[2]])
        bodies.append(f'<body pos="{_fmt(p)}" quat="{_fmt(start[7 * k + 3:7 * k + 7])}">')
    return _xml(elev, nrow, ncol, fsize, 0.0, 0.0, gravity="0 0 -9.81", bodies=bodies)


def test_hfield_free_run(tmp_path):
    """MuJoCo's 200 steps of the drop scene: our contacts at each of its states equal its own (first contacts,
    resting, rocking and sliding contacts); none at frame 0."""
    model, mjm = _load(tmp_path, _drop_xml())
    d = mujoco.MjData(mjm)
    rows = []
    for _ in range(200):
        rows.append(d.qpos.copy())
        mujoco.mj_step(mjm, d)
    rows = np.array(rows)
    theirs0 = mujoco_contacts(mujoco, mjm, rows[:1])
    assert len(theirs0[0]) == 0  # released above the surface: no contact at frame 0
    touched = _compare(model, mjm, rows, "free run")
    for kind, n in touched.items():
        assert n >= 100, (kind, n)


def test_hfield_compare_drop(tmp_path):
    """`rigidsim compare` on the drop scene for 100 steps: every stage within its tolerance (model; contacts at
    1e-9; constraint forces; one re-synchronised step; and the free run, each side on its own state, to 1e-6).
    (Later, near step 195, this scene meets a state where MuJoCo's own step jumps by 4e-4 under a 1e-14 change
    of qpos, a contact discontinuity: free runs past such a point cannot agree, so the run stops at 100.)"""
    from rigidsim.compare.stages import CompareArgs, compare

    path = tmp_path / "drop.xml"
    path.write_text(_drop_xml())
    res = compare(CompareArgs(scene=str(path), steps=100))
    assert [s.name for s in res.stages] == ["model", "kinematics", "contacts", "constraint forces", "one step",
                                            "free run"]
    bad = [(s.name, s.error, s.tol, s.detail) for s in res.stages if not s.ok]
    assert not bad, bad
    assert res.ok
