"""Mesh assets: small inline and generated files compiled by us and by MuJoCo, compared field by field;
missing and malformed files refused with the file and the MJCF line."""

from __future__ import annotations

import struct

import pytest

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.mjref import model_from_mujoco, mujoco

# an irregular closed hexahedron (two tetrahedra glued), distinct principal moments
VERT = [[0.0, 0.0, 0.0], [0.3, 0.0, 0.05], [0.05, 0.2, 0.0], [0.02, 0.04, 0.15], [0.12, 0.1, -0.11]]
FACE = [[0, 1, 3], [0, 3, 2], [1, 2, 3], [0, 4, 1], [1, 4, 2], [2, 4, 0]]


def _check(tmp_path, asset, geom='<geom type="mesh" mesh="m"/>'):
    p = tmp_path / "scene.xml"
    p.write_text(f'<mujoco><asset>{asset}</asset><worldbody><body pos="0 0 1"><freejoint/>{geom}'
                 f'</body></worldbody></mujoco>')
    ours = load_mjcf(p)
    ref = model_from_mujoco(mujoco.MjModel.from_xml_path(str(p)))
    assert compare_models(ours, ref) == []
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
