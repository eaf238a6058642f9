"""Mesh assets: small inline and generated files compiled by us and by MuJoCo, compared field by field;
missing and malformed files refused with the file and the MJCF line."""

from __future__ import annotations

import struct

import numpy as np

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco

# an irregular closed hexahedron (two tetrahedra glued), distinct principal moments
VERT = [[0.0, 0.0, 0.0], [0.3, 0.0, 0.05], [0.05, 0.2, 0.0], [0.02, 0.04, 0.15], [0.12, 0.1, -0.11]]
FACE = [[0, 1, 3], [0, 3, 2], [1, 2, 3], [0, 4, 1], [1, 4, 2], [2, 4, 0]]


def _check(tmp_path, asset, geom='<geom type="mesh" mesh="m"/>', skip=()):
    p = tmp_path / "scene.xml"
    p.write_text(f'<mujoco><asset>{asset}</asset><worldbody><body pos="0 0 1"><freejoint/>{geom}'
                 f'</body></worldbody></mujoco>')
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref, skip=skip) == []
    return ours


def _stl(path, scale=1.0):
    tri = [[VERT[i] for i in f] for f in FACE]
    with open(path, "wb") as fh:
        fh.write(b"\0" * 80 + struct.pack("<I", len(tri)))
        for t in tri:
            fh.write(struct.pack("<3f", 0, 0, 0))
            for v in t:
                fh.write(struct.pack("<3f", *[x * scale for x in v]))
            fh.write(b"\0\0")


def _inline():
    return (f'vertex="{" ".join(str(x) for v in VERT for x in v)}" '
            f'face="{" ".join(str(i) for f in FACE for i in f)}"')


@pytest.mark.parametrize("extra", ["", 'scale="2 1 .5"', 'scale="-1 1 1"', 'inertia="exact"', 'inertia="shell"',
                                   'refpos=".1 0 0" refquat="1 .2 0 0"', 'inertia="convex"'])
def test_inline_mesh(tmp_path, extra):
    _check(tmp_path, f'<mesh name="m" {_inline()} {extra}/>')


def test_binary_stl_merges_corners(tmp_path):
    _stl(tmp_path / "t.stl")
    m = _check(tmp_path, '<mesh name="m" file="t.stl"/>')
    assert m.arrays["mesh_vertnum"][0] == len(VERT)


def test_obj_with_quads_and_meshdir(tmp_path):
    (tmp_path / "a").mkdir()
    lines = [f"v {x} {y} {z}" for x, y, z in VERT] + [f"f {a + 1}/1 {b + 1} {c + 1}" for a, b, c in FACE]
    (tmp_path / "a" / "t.obj").write_text("\n".join(lines) + "\n")
    p = tmp_path / "scene.xml"
    p.write_text('<mujoco><compiler meshdir="a"/><asset><mesh name="m" file="t.obj" scale=".5 .5 .5"/></asset>'
                 '<worldbody><body><freejoint/><geom type="mesh" mesh="m" density="500"/></body></worldbody>'
                 '</mujoco>')
    assert compare_models(load_mjcf(p), model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))) == []


# boxes and a tetrahedron: equal or nearly equal principal moments exercise the mesh compiler's loose
# (1e-7 relative) Jacobi stopping rule and its sorting margin; rotated copies leave off-diagonals to sweep
_CUBE_V = [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
_CUBE_F = [[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4], [2, 6, 3], [3, 6, 7], [0, 4, 2],
           [2, 4, 6], [1, 3, 5], [3, 7, 5]]


@pytest.mark.parametrize("extra", ['scale=".1 .1 .1"', 'scale=".1 .2 .3"', 'scale=".1 .1 .1000001"',
                                   'scale=".05 .07 .09" refquat="1 .3 .2 .1"', 'refquat=".9 .1 -.4 .2"'])
def test_box_mesh_principal_axes(tmp_path, extra):
    v = " ".join(str(x) for p in _CUBE_V for x in p)
    f = " ".join(str(i) for t in _CUBE_F for i in t)
    _check(tmp_path, f'<mesh name="m" vertex="{v}" face="{f}" {extra}/>')


def test_tetrahedron_mesh(tmp_path):
    _check(tmp_path, '<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 2 1 0 1 3 0 3 2 1 2 3"/>')


def _refused(tmp_path, asset, words):
    p = tmp_path / "scene.xml"
    p.write_text(f'<mujoco>\n<asset>\n{asset}\n</asset><worldbody><body><freejoint/><geom type="mesh" mesh="m"/>'
                 f'</body></worldbody></mujoco>')
    with pytest.raises(InputError) as e:
        load_mjcf(p)
    msg = str(e.value)
    assert "scene.xml:3" in msg, msg
    for w in words:
        assert w in msg, msg


def test_missing_file(tmp_path):
    _refused(tmp_path, '<mesh name="m" file="nope.stl"/>', ["nope.stl", "not found"])


def test_ascii_stl_refused_as_mujoco_does(tmp_path):
    (tmp_path / "a.stl").write_text("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                                    "vertex 0 1 0\nendloop\nendfacet\nendsolid t\n")
    _refused(tmp_path, '<mesh name="m" file="a.stl"/>', ["ASCII", "a.stl"])


def test_truncated_stl(tmp_path):
    _stl(tmp_path / "t.stl")
    data = (tmp_path / "t.stl").read_bytes()
    (tmp_path / "t.stl").write_bytes(data[:-7])
    _refused(tmp_path, '<mesh name="m" file="t.stl"/>', ["wrong size", "t.stl"])


def test_malformed_obj(tmp_path):
    (tmp_path / "t.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 x\n")
    _refused(tmp_path, '<mesh name="m" file="t.obj"/>', ["t.obj", "line 5"])


def test_face_index_out_of_range(tmp_path):
    _refused(tmp_path, '<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 1 9"/>', ["does not exist"])


# convex-hull graph (mesh_graphadr / mesh_graph): built for meshes that collide, for convex inertia and for
# meshes without faces; compared exactly (qhull's vertex, facet and neighbour orders) by `_check`
def _cloud(n, seed, round_to=None):
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n, 3)) * [0.1, 0.07, 0.05]
    if round_to:
        p = np.round(p / round_to) * round_to  # coplanar points and facets: qhull merges while building
    return " ".join(f"{x:.6g}" for x in p.ravel())


def test_hull_graph_only_for_colliding_meshes(tmp_path):
    m = _check(tmp_path, f'<mesh name="m" {_inline()}/><mesh name="v" {_inline()}/>',
               '<geom type="mesh" mesh="m"/><geom type="mesh" mesh="v" contype="0" conaffinity="0"/>')
    assert m.arrays["mesh_graphadr"].tolist() == [0, -1]


def test_hull_graph_for_paired_geom(tmp_path):
    p = tmp_path / "scene.xml"
    p.write_text(f'<mujoco><asset><mesh name="m" {_inline()}/></asset><worldbody><geom name="f" type="plane" '
                 f'size="1 1 1"/><body><freejoint/><geom name="g" type="mesh" mesh="m" contype="0" '
                 f'conaffinity="0"/></body></worldbody><contact><pair geom1="f" geom2="g"/></contact></mujoco>')
    ours = load_mjcf(p)
    assert compare_models(ours, model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))) == []
    assert ours.arrays["mesh_graphadr"].tolist() == [0]


@pytest.mark.parametrize("extra", ["", 'scale="-1 1 1"', 'inertia="convex"'])
def test_hull_graph_point_cloud(tmp_path, extra):
    # no faces: the mesh is its hull (faces copied from the graph)
    m = _check(tmp_path, f'<mesh name="m" vertex="{_cloud(300, 1)}" {extra}/>')
    assert m.sizes["nmeshgraph"] > 0


@pytest.mark.parametrize("seed", [2, 3])
def test_hull_graph_merged_facets(tmp_path, seed):
    _check(tmp_path, f'<mesh name="m" vertex="{_cloud(200, seed, round_to=0.02)}"/>')


def test_hull_graph_maxhullvert_option():
    # the MJCF reader does not take maxhullvert yet; the hull builder already passes MuJoCo's qhull options
    from rigidsim.loaders.mesh import convex_hull

    xml = f'<mujoco><asset><mesh name="m" vertex="{_cloud(300, 1)}" maxhullvert="12"/></asset></mujoco>'
    mjm = mujoco.MjModel.from_xml_string(xml)
    v = np.array(_cloud(300, 1).split(), dtype=np.float32).astype(np.float64).reshape(-1, 3)
    graph, _ = convex_hull(v, pytest.fail, 12)
    assert graph.tolist() == mjm.mesh_graph.tolist()
    assert graph[0] == 12


def _cylinder_points():
    # rings of points on flat caps: qhull merges the coplanar cap facets while it builds the hull
    rng = np.random.default_rng(0)
    a = 2 * np.pi * np.arange(16) / 16 + 0.01 * rng.normal(size=16)
    ring = np.stack([0.05 * np.cos(a), 0.05 * np.sin(a), np.zeros(16)], 1)
    p = np.concatenate([ring, ring + [0, 0, 0.1], [[0, 0, -0.02], [0, 0, 0.12]]])
    return " ".join(f"{x:.6g}" for x in p.ravel())


@pytest.mark.xfail(strict=True, reason="qhull merged coplanar hull facets, so it kept each vertex's neighbouring "
                   "facets in build-history order; scipy shows that order for every hull vertex but the 3 of the "
                   "facet list's last facet, whose edge order is guessed (rigidsim/loaders/mesh.py convex_hull)")
def test_hull_graph_merged_cylinder(tmp_path):
    _check(tmp_path, f'<mesh name="m" vertex="{_cylinder_points()}"/>')


def test_hull_graph_merged_cylinder_structure(tmp_path):
    p = tmp_path / "scene.xml"
    p.write_text(f'<mujoco><asset><mesh name="m" vertex="{_cylinder_points()}"/></asset><worldbody><body>'
                 f'<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    ours, mjm = load_mjcf(p), mujoco.MjModel.from_xml_path(str(p))
    assert compare_models(ours, model_from_mujoco(mjm), skip=("mesh_graph",)) == []
    g, r = ours.arrays["mesh_graph"], mjm.mesh_graph
    nv, nf = int(r[0]), int(r[1])
    edges = slice(2 + 2 * nv, 2 + 3 * nv + 3 * nf)
    assert g[:edges.start].tolist() == r[:edges.start].tolist()
    assert g[edges.stop:].tolist() == r[edges.stop:].tolist()
    assert sorted(g[edges].tolist()) == sorted(r[edges].tolist())
    assert int((g != r).sum()) <= 12  # only the 3 vertices of the last hull facet


# hull polygons (mesh_poly*) and extrema (mesh_extrema): MuJoCo groups a colliding mesh's hull triangles by
# their normal's spherical angles rounded to 0.01 rad, joins each group along shared edges into loops (in a
# hash map's order) and stores loops, Newell normals and a vertex -> polygon map; compared by `_check`.
# Hulls on which qhull merged coplanar facets leave mesh_graph out (its edge order there is a guess, see
# test_hull_graph_merged_cylinder): the polygons do not depend on it.
_MERGED = ("mesh_graph",)
def _prism(k=16, h=0.1):
    a = 2 * np.pi * np.arange(k) / k
    ring = np.stack([0.05 * np.cos(a), 0.04 * np.sin(a), np.zeros(k)], 1)
    return " ".join(f"{x:.6g}" for x in np.concatenate([ring, ring + [0.01, 0, h]]).ravel())


@pytest.mark.parametrize("scale", [".1 .2 .3", "-.1 .2 .3", ".1 -.2 -.3", ".05 .05 -.05"])
def test_polygons_box(tmp_path, scale):
    v = " ".join(str(x) for p in _CUBE_V for x in p)
    f = " ".join(str(i) for t in _CUBE_F for i in t)
    m = _check(tmp_path, f'<mesh name="m" vertex="{v}" face="{f}" scale="{scale}"/>')
    assert m.sizes["nmeshpoly"] == 6 and m.sizes["npolygonmax"] == 4
    assert m.arrays["mesh_polyvertnum"].tolist() == [4] * 6
    assert m.arrays["mesh_polymapnum"].tolist() == [3] * 8


@pytest.mark.parametrize("extra", ["", 'scale="-1 1 1"', 'scale="1 -2 -1"'])
def test_polygons_prism(tmp_path, extra):
    # 16-gon caps (many coplanar hull triangles joined into one loop) and quad sides; a left-handed scale
    # reverses each loop after its first vertex
    m = _check(tmp_path, f'<mesh name="m" vertex="{_prism()}" {extra}/>', skip=_MERGED)
    assert m.sizes["npolygonmax"] == 16 and m.sizes["nmeshpoly"] == 18


def test_polygons_rounded_normals(tmp_path):
    # triangles of different planes whose rounded normals agree: a group that ends as 3 edges out of their
    # loop order (MuJoCo walks the loop)
    _check(tmp_path, f'<mesh name="m" vertex="{_cloud(1000, 3, round_to=0.02)}"/>', skip=_MERGED)


def _ellipsoid(n, seed):
    p = np.random.default_rng(seed).normal(size=(n, 3))
    p = p / np.linalg.norm(p, axis=1)[:, None] * [0.1, 0.07, 0.05]
    return " ".join(f"{x:.6g}" for x in p.ravel())


@pytest.mark.parametrize("seed", [0, 2])
def test_polygons_fine_ellipsoid(tmp_path, seed):
    # a finely tessellated hull: thousands of groups (the hash map grows and re-buckets many times), some
    # holding triangles that touch only later (islands joined) or never (several loops per group)
    m = _check(tmp_path, f'<mesh name="m" vertex="{_ellipsoid(3000, seed)}"/>')
    assert m.sizes["nmeshpoly"] > 5000


def test_polygons_only_with_hull_graph(tmp_path):
    m = _check(tmp_path, f'<mesh name="m" {_inline()}/><mesh name="v" {_inline()}/>',
               '<geom type="mesh" mesh="v" contype="0" conaffinity="0"/><geom type="mesh" mesh="m"/>')
    assert m.arrays["mesh_polynum"].tolist() == [6, 0]
    assert m.arrays["mesh_polyadr"].tolist() == [0, 6]
    assert m.arrays["mesh_polymapnum"][5:].tolist() == [0] * 5
    assert m.arrays["mesh_extrema"][1].tolist() == [0] * 27
