"""Every MJCF under ../shared/models loads and matches MuJoCo field by field."""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim.loaders.mjcf import load_mjcf
from tests.loader_compare import compare_models
from tests.cli_util import MODELS
from tests.mjref import model_from_mujoco, mujoco

# Panda's link5_c0 / link5_c2 collision hulls have coplanar facets that qhull merges while it builds the hull;
# qhull then keeps each vertex's neighbouring facets in build-history order, which scipy shows for every hull
# vertex but the three of the facet list's last facet (its Voronoi-ridge walk skips that facet). For those
# 3 vertices per mesh our mesh_graph edge order is a guess (see rigidsim/loaders/mesh.py convex_hull): a few
# edge_localid entries differ (4 of the 64 hull vertices' lists); every other field, the graph's sizes,
# vertices and faces, and each vertex's set of neighbours match (test_sweep_mesh_graph_structure).
GRAPH_ORDER_GUESSED = {f"menagerie/franka_emika_panda/{n}.xml" for n in (
    "panda", "panda_free_base", "panda_no_tendon", "panda_nohand", "panda_non_overlap", "scene",
    "scene_no_tendon")}
GRAPH_XFAIL = ("qhull merged coplanar hull facets: the edge order of the 3 vertices of the last hull facet "
               "cannot be read back through scipy (edge order of 4 vertices of link5_c0/c2)")

FILES = sorted(str(p.relative_to(MODELS)) for p in MODELS.rglob("*.xml")) if MODELS.exists() else []


@pytest.mark.skipif(not FILES, reason="../shared/models is absent")
@pytest.mark.parametrize("rel", FILES)
def test_sweep(rel):
    path = MODELS / rel
    mjm = mujoco.MjModel.from_xml_path(str(path))  # all 53 files compile in MuJoCo 4.0.0: a failure fails
    ours = load_mjcf(path)  # every shared model loads: a refusal fails here
    skip = ("mesh_graph",) if rel in GRAPH_ORDER_GUESSED else ()
    assert compare_models(ours, model_from_mujoco(mjm), skip=skip) == []


@pytest.mark.skipif(not FILES, reason="../shared/models is absent")
@pytest.mark.parametrize("rel", [pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=GRAPH_XFAIL))
                                 for r in sorted(GRAPH_ORDER_GUESSED) if r in FILES])
def test_sweep_mesh_graph_guessed(rel):
    """The models whose mesh_graph the sweep leaves out: exact equality is still expected to fail."""
    path = MODELS / rel
    mjm = mujoco.MjModel.from_xml_path(str(path))
    ours = load_mjcf(path)
    assert ours.sizes["nmeshgraph"] == mjm.nmeshgraph
    assert list(ours.mesh_graphadr) == list(mjm.mesh_graphadr)
    assert list(ours.mesh_graph) == list(mjm.mesh_graph)


def _graph_parts(g, adr):
    nv, nf = int(g[adr]), int(g[adr + 1])
    ea = list(g[adr + 2:adr + 2 + nv]) + [nv + 3 * nf]
    el = g[adr + 2 + 2 * nv:adr + 2 + 3 * nv + 3 * nf]
    head = list(g[adr:adr + 2 + 2 * nv]) + list(g[adr + 2 + 3 * nv + 3 * nf:adr + 2 + 3 * nv + 6 * nf])
    return head, [list(el[ea[k]:ea[k + 1]]) for k in range(nv)]


@pytest.mark.skipif(not FILES, reason="../shared/models is absent")
@pytest.mark.parametrize("rel", [r for r in sorted(GRAPH_ORDER_GUESSED) if r in FILES])
def test_sweep_mesh_graph_structure(rel):
    """Where the edge order is guessed, everything else of mesh_graph is exact, and each vertex's neighbours
    are right as a set (and in order for all but the few vertices of the last hull facet)."""
    path = MODELS / rel
    mjm = mujoco.MjModel.from_xml_path(str(path))
    ours = load_mjcf(path)
    assert ours.sizes["nmeshgraph"] == mjm.nmeshgraph
    assert list(ours.mesh_graphadr) == list(mjm.mesh_graphadr)
    for adr in mjm.mesh_graphadr:
        if adr < 0:
            continue
        head, edges = _graph_parts(ours.mesh_graph, adr)
        head_ref, edges_ref = _graph_parts(mjm.mesh_graph, adr)
        assert head == head_ref
        assert [sorted(e) for e in edges] == [sorted(e) for e in edges_ref]
        assert sum(e != r for e, r in zip(edges, edges_ref)) <= 3


_POLY_INT = ("mesh_polynum", "mesh_polyadr", "mesh_polyvertadr", "mesh_polyvertnum", "mesh_polyvert",
             "mesh_polymapadr", "mesh_polymapnum", "mesh_polymap", "mesh_extrema")
_POLY_SIZES = ("nmeshpoly", "nmeshpolyvert", "nmeshpolymap", "npolygonmax")


@pytest.mark.skipif(not FILES, reason="../shared/models is absent")
@pytest.mark.parametrize("rel", [r for r in ("menagerie/franka_emika_panda/scene.xml",
                                             "menagerie/franka_emika_panda/panda_nohand.xml") if r in FILES])
def test_sweep_mesh_polygons(rel):
    """The Panda's hull polygons, which its plane-mesh contacts use, are MuJoCo's: every polygon in MuJoCo's
    order starting at MuJoCo's vertex, and the normals to round-off (the sweep allows sliver polygons 1e-6)."""
    path = MODELS / rel
    mjm = mujoco.MjModel.from_xml_path(str(path))
    ours = load_mjcf(path)
    assert ours.sizes["nmeshpoly"] > 1000
    for s in _POLY_SIZES:
        assert ours.sizes[s] == getattr(mjm, s), s
    for f in _POLY_INT:
        assert np.array_equal(ours.arrays[f], np.asarray(getattr(mjm, f)).reshape(ours.arrays[f].shape)), f
    assert np.allclose(ours.mesh_polynormal, mjm.mesh_polynormal, rtol=0, atol=1e-12)
