"""The candidate geom pairs of a model, computed once: MuJoCo Warp's pair table (numpy only, no Taichi).

`collision_pairs(model, r)` returns every geom pair that could ever produce a
contact, after MuJoCo's static filters (engine_collision_driver.c, in the
order MuJoCo applies them) and the RigidOptions that add filters of their own:

- explicit ``<pair>`` elements come first and bypass every filter below; a
  geom pair that has an explicit pair is not also taken as a default pair;
- default pairs are the geom pairs of different bodies that pass
  - the body-pair filter: not on the same weld body (so not the same body,
    and not both welded to the world), and not a weld body and its parent's
    weld body (filterparent) unless ``enable_adjacent_collision`` (MuJoCo's
    ``<flag filterparent="disable"/>`` sets it) lifts that;
  - without ``enable_mujoco_compatibility`` (Genesis's filter, which counts an entity's fixed base as a
    link), and unless ``enable_adjacent_collision``: not a weld body jointed to the world (by joints other
    than a free joint) and its fixed base, which MuJoCo's filterparent leaves colliding because the base
    is welded to the world. The base is the chain of static bodies from the weld body's parent up to the
    world, and the world body's own geoms (where a URDF's root link lands, fused) except planes and
    height fields, which are terrain, never a base;
  - ``<exclude body1 body2>``;
  - contype/conaffinity: ``(contype1 & conaffinity2) | (contype2 & conaffinity1)``;
  - a collision function exists for the two geom types (none for
    plane-plane, plane-hfield, hfield-hfield);
- ``enable_self_collision: false`` drops the default pairs of two bodies of
  one articulated tree (the same ``body_rootid``, not the world);
- ``enable_neutral_collision: false`` (the default) drops the default pairs of
  one tree that already touch at qpos0. Without collision detection
  "touching" is decided conservatively from bounding spheres: the two
  geoms' ``geom_rbound`` spheres overlap (for a plane: the other geom's
  sphere reaches the plane's half-space), so a pair whose spheres overlap but
  whose shapes do not is dropped too; margins are not counted.
- With ``enable_collision: false`` or ``disable_constraint: true`` there are
  no candidate pairs.

MuJoCo's dynamic filters (the bounding-sphere test with margin and gap, the
broadphase, sleeping bodies) stay with collision detection at run time.
"""

from __future__ import annotations

from typing import Any, Mapping, Tuple

import numpy as np

from rigidsim import model as M

# geom type pairs MuJoCo has no collision function for (mjCOLLISIONFUNC is NULL)
_NO_COLLISION = {(M.GEOM_PLANE, M.GEOM_PLANE), (M.GEOM_PLANE, M.GEOM_HFIELD), (M.GEOM_HFIELD, M.GEOM_HFIELD)}


def _frames_at_qpos0(model: M.Model) -> Tuple[np.ndarray, np.ndarray]:
    """Body positions and rotation matrices in the world at qpos0.

    At qpos0 every joint is at its reference, where MuJoCo's body frame is its
    compiled body_pos/body_quat in the parent (free joints included: their
    qpos0 is that pose), so the world frames are the plain composition.
    """
    nbody = model.nbody
    xpos = np.zeros((nbody, 3))
    xmat = np.zeros((nbody, 3, 3))
    xmat[0] = np.eye(3)
    for b in range(1, nbody):
        p = int(model.body_parentid[b])
        xpos[b] = xpos[p] + xmat[p] @ model.body_pos[b]
        xmat[b] = xmat[p] @ _quat2mat(model.body_quat[b])
    return xpos, xmat


def _quat2mat(q) -> np.ndarray:
    w, x, y, z = (float(v) for v in q)
    n = w * w + x * x + y * y + z * z
    w, x, y, z = (v / np.sqrt(n) for v in (w, x, y, z))
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _touching_at_qpos0(model: M.Model, g1: np.ndarray, g2: np.ndarray) -> np.ndarray:
    """Whether the bounding spheres of geoms g1[k], g2[k] overlap at qpos0 (conservative 'touching')."""
    xpos, xmat = _frames_at_qpos0(model)
    body = model.geom_bodyid
    gpos = xpos[body] + np.einsum("gij,gj->gi", xmat[body], model.geom_pos)
    gz = np.stack([(xmat[body[g]] @ _quat2mat(model.geom_quat[g]))[:, 2] for g in range(model.ngeom)]) \
        if model.ngeom else np.zeros((0, 3))
    rb = model.geom_rbound
    plane = model.geom_type == M.GEOM_PLANE
    out = np.zeros(len(g1), dtype=bool)
    for k, (a, b) in enumerate(zip(g1, g2)):
        if plane[a] or plane[b]:
            p, o = (a, b) if plane[a] else (b, a)
            out[k] = float(np.dot(gpos[o] - gpos[p], gz[p])) <= rb[o]
        else:
            out[k] = float(np.linalg.norm(gpos[a] - gpos[b])) <= rb[a] + rb[b]
    return out


def _base_adjacent(model: M.Model, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Whether geom pair (i[k], j[k]) is a weld body jointed to the world and a geom of its fixed base."""
    out = np.zeros(len(i), dtype=bool)
    body = np.asarray(model.geom_bodyid)
    weld = np.asarray(model.body_weldid)
    parent = np.asarray(model.body_parentid)
    terrain = np.isin(np.asarray(model.geom_type), (M.GEOM_PLANE, M.GEOM_HFIELD))
    for w in range(1, model.nbody):
        if weld[w] != w or weld[parent[w]] != 0:
            continue
        adr, n = int(model.body_jntadr[w]), int(model.body_jntnum[w])
        if n and np.any(np.asarray(model.jnt_type)[adr:adr + n] == M.JNT_FREE):
            continue  # a free body is no link of the world's
        chain, b = set(), int(parent[w])
        while True:
            chain.add(b)
            if b == 0:
                break
            b = int(parent[b])
        base = np.isin(body, list(chain)) & ~((body == 0) & terrain)
        mine = weld[body] == w
        out |= (mine[i] & base[j]) | (mine[j] & base[i])
    return out


# the options the table reads, at RigidOptions' defaults (for callers without resolved options)
PAIR_OPTIONS = {"enable_collision": True, "disable_constraint": False, "enable_adjacent_collision": False,
                "enable_mujoco_compatibility": False,
                "enable_self_collision": True, "enable_neutral_collision": False}


def collision_pairs(model: M.Model, r: Mapping[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """The candidate geom pairs ``int32 [npair, 2]`` (geom1 < geom2, sorted) and, parallel to them, a bool array
    saying whether each pair comes from an explicit ``<pair>`` element. `r` is the resolved options dict."""
    empty = (np.zeros((0, 2), np.int32), np.zeros(0, bool))
    if not r["enable_collision"] or r["disable_constraint"]:
        return empty
    n = model.ngeom
    explicit = {(min(int(a), int(b)), max(int(a), int(b))) for a, b in zip(model.pair_geom1, model.pair_geom2)}

    i, j = np.triu_indices(n, 1)
    body = np.asarray(model.geom_bodyid)
    weld = np.asarray(model.body_weldid)
    bi, bj = body[i], body[j]
    wi, wj = weld[bi], weld[bj]
    ok = wi != wj  # the same weld body: the same body, or both welded to the world
    if not r["enable_adjacent_collision"]:  # filterparent: a weld body and its parent's weld body
        wparent = weld[np.asarray(model.body_parentid)[weld]]  # per body: the weld body of its weld body's parent
        ok &= ~((wi != 0) & (wj != 0) & ((wi == wparent[wj]) | (wj == wparent[wi])))
        if not r["enable_mujoco_compatibility"]:
            ok &= ~_base_adjacent(model, i, j)
    if model.nexclude:
        sig = (np.minimum(bi, bj).astype(np.int64) << 16) + np.maximum(bi, bj)
        ok &= ~np.isin(sig, np.asarray(model.exclude_signature, dtype=np.int64))
    ct, ca = np.asarray(model.geom_contype), np.asarray(model.geom_conaffinity)
    ok &= ((ct[i] & ca[j]) | (ct[j] & ca[i])) != 0
    gt = np.asarray(model.geom_type)
    t1, t2 = np.minimum(gt[i], gt[j]), np.maximum(gt[i], gt[j])
    for a, b in _NO_COLLISION:
        ok &= ~((t1 == a) & (t2 == b))
    root = np.asarray(model.body_rootid)
    same_tree = (root[bi] == root[bj]) & (root[bi] != 0)
    if not r["enable_self_collision"]:
        ok &= ~same_tree
    elif not r["enable_neutral_collision"]:
        k = np.flatnonzero(ok & same_tree)
        ok[k[_touching_at_qpos0(model, i[k], j[k])]] = False
    pairs = {(int(a), int(b)) for a, b in zip(i[ok], j[ok])} | explicit
    table = np.array(sorted(pairs), dtype=np.int32).reshape(-1, 2)
    is_explicit = np.array([tuple(p) in explicit for p in table.tolist()], dtype=bool)
    return table, is_explicit
