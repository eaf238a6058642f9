"""``<model>`` assets and ``<attach model body prefix>``, as MuJoCo 4.0 attaches a model.

The attached model is read by its own `Reader` (its own default classes and
compiler settings; its options, size and statistic are ignored: the parent's
win, as in MuJoCo, which only warns). The subtree of ``body`` is grafted where
the ``<attach>`` stands, posed by the enclosing frame; every non-empty name
becomes prefix + name + suffix (the suffix collects enclosing replicates).
Tendons, equalities, actuators, sensors, pairs and excludes of the attached
model come along when everything they reference is inside the subtree, after
the parent's own. The attached model's keyframes become parent keyframes named
prefix + name (no suffix; once per ``<attach>`` element, on its first
replicated copy), after the parent's, with the attached joints' and
actuators' values and the defaults elsewhere.

A ``<model>`` file may be a URDF robot: it is translated as `rigidsim.loaders.urdf`
reads it, with its links kept as bodies (MuJoCo attaches them unfused), so
``body`` names a link; its angles are radians, so the parent needs
``<compiler angle="radian">`` (the compiler settings must agree, below).

Refused (with file:line): attaching a whole world or a frame, attached models
whose compiler settings differ from the parent's, attached meshes, height
fields, and keyframes with act or mocap data.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Dict, Set

from rigidsim import model as M
from rigidsim.loaders import inputs
from rigidsim.loaders import spatial as sp
from rigidsim.loaders.mjcf_replicate import _OBJTYPES, _SENSOR_REFS

_TRN_KIND = {"joint": "joint", "jointinparent": "joint", "tendon": "tendon", "cranksite": "site", "site": "site",
             "body": "body"}


def read_model_asset(reader, el) -> None:
    """Register a <model name file> asset; the file is read at its first <attach>."""
    for a in el.attrib:
        if a not in ("name", "file", "content_type", "_src"):
            reader.fail(el, f"unknown attribute '{a}' in <model>")
    f = el.get("file")
    if not f:
        reader.fail(el, "<model> requires 'file'")
    ct = el.get("content_type")
    if ct is not None and ct not in ("text/xml", "text/mjcf", "application/xml"):
        reader.fail(el, f"<model> content_type '{ct}' is not supported by rigidsim (MJCF files only)")
    src_dir = Path(el.get("_src")).parent if el.get("_src") else reader.scene.basedir
    path = src_dir / f
    if not inputs.is_file(path):
        reader.fail(el, f"model file '{f}' not found (looked for {path})")
    name = el.get("name")
    if name is None:  # MuJoCo names it after the file's model (a URDF's robot), not after the file
        root = reader.parse(path)
        name = root.get("name" if root.tag == "robot" else "model", "MuJoCo Model")
    if name in reader.models:
        reader.fail(el, f"repeated model name '{name}'")
    reader.models[name] = [path, el, None]


def attach(reader, el, bid: int, frame) -> None:
    """Graft the attached body's subtree under body `bid` (inside `frame`), with its referencing elements."""
    for a in el.attrib:
        if a not in ("model", "body", "frame", "prefix", "_src", "_suffix", "_rep0"):
            reader.fail(el, f"unknown attribute '{a}' in <attach>")
    if el.get("prefix") is None:
        reader.fail(el, "<attach> requires 'prefix'")
    model = el.get("model")
    if model is None:
        reader.fail(el, "<attach> without 'model' (attaching part of this model) is not supported by rigidsim")
    if el.get("frame") is not None or el.get("body") is None:
        reader.fail(el, "<attach> of a frame or a whole world is not supported by rigidsim; attach a body")
    if model not in reader.models:
        reader.fail(el, f"could not find model '{model}'")
    child = reader.child_scene(model, el)
    pre, suf = el.get("prefix"), el.get("_suffix", "")
    ren = (lambda n: pre + n + suf if n else n)
    root = next((i for i, b in enumerate(child.bodies) if i and b.name == el.get("body")), None)
    if root is None:
        reader.fail(el, f"could not find body '{el.get('body')}' in model asset '{model}'")
    sc = reader.scene
    full = {n for b in sc.bodies for n in [b.name] if n}
    if ren(el.get("body")) in full:
        reader.fail(el, f"cannot attach: element {el.get('body')} already exists with prefix {pre}")

    # the subtree: contiguous in the child's (depth-first) body list
    sub = [root]
    for i in range(root + 1, len(child.bodies)):
        p = child.bodies[i].parent
        if p in sub:
            sub.append(i)
    # the child's materials (visual only), named with the prefix alone: replicas of one <attach> share them
    known = {n for n, _ in sc.materials}
    sc.materials.extend((pre + n, rgba) for n, rgba in child.materials if n and pre + n not in known)
    newid: Dict[int, int] = {}
    inside: Dict[str, Set[str]] = {"body": set(), "joint": set(), "geom": set(), "site": set()}
    jmap = {}  # child joint rec -> grafted rec (keyframes)
    for ci in sub:
        cb = child.bodies[ci]
        nb = copy.copy(cb)
        nb.name = ren(cb.name)
        inside["body"].add(cb.name)
        if ci == root:
            nb.parent = bid
            nb.frame = frame if cb.frame is None else (
                cb.frame if frame is None else sp.frameaccum(frame[0], frame[1], cb.frame[0], cb.frame[1]))
        else:
            nb.parent = newid[cb.parent]
        nb.children = []
        sc.bodies.append(nb)
        nid = len(sc.bodies) - 1
        newid[ci] = nid
        (sc.bodies[nb.parent]).children.append(nid)
        for kind, lst in (("joint", "joints"), ("geom", "geoms"), ("site", "sites")):
            out = []
            for r in getattr(cb, lst):
                nr = copy.copy(r)
                nr.spec = copy.deepcopy(r.spec)
                nr.name, nr.body = ren(r.name), nid
                inside[kind].add(r.name)
                if kind == "geom" and (r.spec.get("mesh") or r.spec.get("hfield")):
                    reader.fail(el, "attaching models with mesh or height-field geoms is not supported by rigidsim")
                if kind == "geom" and r.spec.get("material"):
                    nr.spec["material"] = pre + r.spec["material"]
                if kind == "joint":
                    jmap[id(r)] = nr
                out.append(nr)
            setattr(nb, lst, out)

    att = reader.attached
    tendons = []
    for t in child.tendons:
        refs = [(w.kind, w.name) for w in t.path if w.kind != "pulley"] + \
               [("site", w.side) for w in t.path if getattr(w, "side", None)]
        if refs and all(n in inside.get(k, ()) for k, n in refs):
            nt = copy.copy(t)
            nt.name = ren(t.name)
            nt.path = []
            for w in t.path:
                nw = copy.copy(w)
                if w.kind != "pulley":
                    nw.name = ren(w.name)
                if getattr(w, "side", None):
                    nw.side = ren(w.side)
                nt.path.append(nw)
            tendons.append(nt)
            inside.setdefault("tendon", set()).add(t.name)
    att["tendons"] += tendons
    for e in child.equalities:
        kind = e.objtype if e.tag in ("connect", "weld") else ("joint" if e.tag == "joint" else "tendon")
        names = [n for n in (e.name1, e.name2) if n is not None]
        if all(n in inside.get(kind, ()) for n in names):
            ne = copy.copy(e)
            ne.name, ne.name1 = ren(e.name), ren(e.name1)
            ne.name2 = ren(e.name2) if e.name2 is not None else None
            att["equalities"].append(ne)
    amap = {}
    for a in child.actuators:
        refs = [(_TRN_KIND[a.trn], a.target)] + [("site", s) for s in (a.slidersite, a.refsite) if s]
        if all(n in inside.get(k, ()) for k, n in refs):
            na = copy.copy(a)
            na.spec = copy.deepcopy(a.spec)
            na.name, na.target = ren(a.name), ren(a.target)
            na.slidersite = ren(a.slidersite) if a.slidersite else a.slidersite
            na.refsite = ren(a.refsite) if a.refsite else a.refsite
            att["actuators"].append(na)
            amap[id(a)] = na
            if a.name:
                inside.setdefault("actuator", set()).add(a.name)
    for s in child.sensors:
        refs = [(k, s.attrs[a]) for a, k in _SENSOR_REFS.items() if a in s.attrs]
        for a, t in (("objname", "objtype"), ("refname", "reftype")):
            if a in s.attrs and s.attrs.get(t) in _OBJTYPES:
                refs.append((_OBJTYPES[s.attrs[t]], s.attrs[a]))
        if refs and all(n in inside.get(k, ()) for k, n in refs):
            ns = copy.copy(s)
            ns.attrs = dict(s.attrs)
            ns.name = ren(s.name)
            for a in list(_SENSOR_REFS) + ["objname", "refname"]:
                if a in ns.attrs:
                    ns.attrs[a] = ren(ns.attrs[a])
            att["sensors"].append(ns)
    for p in child.pairs:
        if p.geom1 in inside["geom"] and p.geom2 in inside["geom"]:
            np_ = copy.copy(p)
            np_.name, np_.geom1, np_.geom2 = ren(p.name), ren(p.geom1), ren(p.geom2)
            att["pairs"].append(np_)
    for x in child.excludes:
        if x.body1 in inside["body"] and x.body2 in inside["body"]:
            nx = copy.copy(x)
            nx.name, nx.body1, nx.body2 = ren(x.name), ren(x.body1), ren(x.body2)
            att["excludes"].append(nx)
    if el.get("_rep0", "1") == "1":
        _keys(reader, el, child, jmap, amap, pre)


def _keys(reader, el, child, jmap, amap, pre) -> None:
    """The attached model's keyframes, restricted to the grafted joints and actuators."""
    joints = [j for b in child.bodies for j in b.joints]
    for k in child.keys:
        if any(getattr(k, a) is not None for a in ("act", "mpos", "mquat")):
            reader.fail(el, "keyframes with act or mocap data in an attached model are not supported by rigidsim")
        part = {"qpos": {}, "qvel": {}, "ctrl": {}}
        qa = va = 0
        for j in joints:
            t = j.spec["type"]
            nq, nv = M.JNT_NQ[t], M.JNT_NV[t]
            if id(j) in jmap:
                for a, adr, n in (("qpos", qa, nq), ("qvel", va, nv)):
                    v = getattr(k, a)
                    if v is not None:
                        if len(v) != sum(M.JNT_NQ[x.spec["type"]] if a == "qpos" else M.JNT_NV[x.spec["type"]]
                                         for x in joints):
                            reader.fail(k.el, f"keyframe '{k.name}': {a} has {len(v)} values, which does not "
                                              f"match the attached model")
                        part[a][id(jmap[id(j)])] = list(v[adr:adr + n])
            qa, va = qa + nq, va + nv
        if k.ctrl is not None:
            if len(k.ctrl) != len(child.actuators):
                reader.fail(k.el, f"keyframe '{k.name}': ctrl has {len(k.ctrl)} values, expected "
                                  f"{len(child.actuators)}")
            for a, c in zip(child.actuators, k.ctrl):
                if id(a) in amap:
                    part["ctrl"][id(amap[id(a)])] = c
        nk = copy.copy(k)
        nk.name = pre + (k.name or "")
        nk.qpos = nk.qvel = nk.ctrl = None
        nk.partial = part
        reader.attached["keys"].append(nk)
