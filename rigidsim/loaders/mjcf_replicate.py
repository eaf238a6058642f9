"""``<replicate>`` expanded in the XML tree before the reader sees it, as MuJoCo 4.0 expands it.

A ``<replicate count offset euler sep childclass>`` becomes ``count`` sibling
``<frame>`` elements in its place, copy ``i`` posed by ``i * euler`` (resolved
with the compiler's angle unit and euler sequence) at the position reached by
stepping ``offset`` through the previous copies' frames, and holding a deep
copy of the replicate's children. Every non-empty name inside copy ``i`` gets
the suffix ``sep`` + ``i`` zero-padded to the digits of ``count``. Nested
replicates expand innermost first, so the inner suffix comes first in a name
and the outer loop is the slow one in element order.

Elements of the top-level sections (tendons, actuators, sensors, equalities,
contact pairs and excludes) that reference anything inside a replicate are
copied once per copy with their references and names suffixed, and the copies
(copy-major, then document order) move to the end of their section (MuJoCo
drops, rather than copies, an equality or actuator that also references
something outside); an
element referencing a replicated tendon or actuator follows along. Keyframes
describe the expanded model and are untouched. ``<attach>`` elements inside a
replicate collect the suffix in a private ``_suffix`` attribute (and ``_rep0``,
true only in the all-zeros copy, where the attached model's keyframes go).
"""

from __future__ import annotations

import copy
from typing import Dict, List, Set

from rigidsim.errors import InputError
from rigidsim.loaders import mjcf_attrs as VA
from rigidsim.loaders import mjcf_defaults as D
from rigidsim.loaders import spatial as sp

_NAMED = {"body": "body", "joint": "joint", "freejoint": "joint", "geom": "geom", "site": "site",
          "camera": "camera", "light": "light", "frame": "frame"}

# reference attributes of the referencing sections -> object kind
_ACT_REFS = {"joint": "joint", "jointinparent": "joint", "tendon": "tendon", "site": "site", "refsite": "site",
             "cranksite": "site", "slidersite": "site", "body": "body"}
_SENSOR_REFS = {"site": "site", "joint": "joint", "tendon": "tendon", "actuator": "actuator", "body": "body",
                "geom1": "geom", "geom2": "geom", "body1": "body", "body2": "body", "subtree1": "body",
                "subtree2": "body", "camera": "camera"}
_EQ_REFS = {"body1": "body", "body2": "body", "site1": "site", "site2": "site", "joint1": "joint",
            "joint2": "joint", "tendon1": "tendon", "tendon2": "tendon"}
_WRAP_REFS = {"joint": "joint", "site": "site", "geom": "geom", "sidesite": "site"}
_PAIR_REFS = {"geom1": "geom", "geom2": "geom", "body1": "body", "body2": "body"}
_OBJTYPES = {"body": "body", "xbody": "body", "joint": "joint", "geom": "geom", "site": "site",
             "camera": "camera", "actuator": "actuator", "tendon": "tendon"}
# equalities and actuators are copied only when every reference is inside (else dropped)
_ALL_INSIDE = ("equality", "actuator")
# sections in dependency order: a replicated tendon can make an actuator or sensor follow
_SECTIONS = ("tendon", "equality", "actuator", "sensor", "contact")


def _tag(el):
    return el.tag if isinstance(el.tag, str) else None


def _refs(section: str, el) -> List[tuple]:
    """(element, attribute, kind) for every object reference of a section element."""
    out = []
    if section == "tendon":
        for w in el:
            if _tag(w):
                out += [(w, a, k) for a, k in _WRAP_REFS.items() if w.get(a) is not None]
        return out
    table = {"actuator": _ACT_REFS, "sensor": _SENSOR_REFS, "equality": _EQ_REFS, "contact": _PAIR_REFS}[section]
    out = [(el, a, k) for a, k in table.items() if el.get(a) is not None]
    if section == "sensor":
        for a, t in (("objname", "objtype"), ("refname", "reftype")):
            if el.get(a) is not None and el.get(t) in _OBJTYPES:
                out.append((el, a, _OBJTYPES[el.get(t)]))
    return out


def _suffix(sep: str, count: int, i: int) -> str:
    return sep + str(i).zfill(len(str(count)))


def _compiler(root):
    degree, seq = True, "xyz"
    for c in root.iter("compiler"):
        if c.get("angle") is not None:
            degree = c.get("angle") == "degree"
        if c.get("eulerseq") is not None:
            seq = c.get("eulerseq")
    return degree, seq


def expand_replicates(root, filename: str) -> None:
    """Expand every <replicate> under <worldbody> in place (innermost first, in document order)."""
    reps = [r for r in root.iter("replicate")]
    if not reps:
        return
    degree, seq = _compiler(root)
    sections: Dict[str, list] = {}
    for el in root:
        if _tag(el) in _SECTIONS:
            sections.setdefault(el.tag, []).append(el)
    # post-order: a replicate is expanded after every replicate inside it
    order: List = []

    def visit(el):
        for c in el:
            if _tag(c):
                visit(c)
        if el.tag == "replicate":
            order.append(el)

    for wb in root.iter("worldbody"):
        visit(wb)
    for rep in order:
        _expand_one(rep, filename, degree, seq, sections)


def _expand_one(rep, filename: str, degree: bool, seq: str, sections) -> None:
    where = D.where(rep, filename)
    for a in rep.attrib:
        if a not in ("count", "offset", "euler", "sep", "childclass", "_src"):
            raise InputError(f"unknown attribute '{a}' in <replicate>", where=where)
    VA.validate(rep, "replicate", where, built_attrs=("count", "offset", "euler"))
    if rep.get("count") is None:
        raise InputError("<replicate> requires 'count'", where=where)
    count = int(D.parse_value(rep, "count", ("i", 1), filename)[0])
    if count < 1:
        raise InputError(f"replicate count must be positive (got {count})", where=where)
    offset = D.parse_value(rep, "offset", ("f", 3), filename) if rep.get("offset") else [0.0, 0.0, 0.0]
    euler = D.parse_value(rep, "euler", ("f", 3), filename) if rep.get("euler") else [0.0, 0.0, 0.0]
    sep = rep.get("sep", "")
    for c in rep:
        if _tag(c) in ("joint", "freejoint"):
            raise InputError(f"<{c.tag}> cannot be a direct child of <replicate>", where=D.where(c, filename))

    # names defined inside, by kind (attached models add theirs when they are read)
    inside: Dict[str, Set[str]] = {}
    for el in rep.iter():
        k = _NAMED.get(_tag(el) or "")
        if k and el.get("name"):
            inside.setdefault(k, set()).add(el.get("name"))

    parent = rep.getparent()
    idx = parent.index(rep)
    parent.remove(rep)
    pos = [0.0, 0.0, 0.0]
    for i in range(count):
        quat, err = sp.resolve_orientation(("euler", [i * e for e in euler]), degree, seq)
        if err:
            raise InputError(f"orientation error in <replicate>: {err}", where=where)
        fr = rep.makeelement("frame", {})
        fr.set("pos", " ".join(repr(float(x)) for x in pos))
        fr.set("quat", " ".join(repr(float(x)) for x in quat))
        if rep.get("childclass") is not None:
            fr.set("childclass", rep.get("childclass"))
        if rep.get("_src") is not None:
            fr.set("_src", rep.get("_src"))
        fr.sourceline = rep.sourceline
        sfx = _suffix(sep, count, i)
        for c in rep:
            cc = copy.deepcopy(c)
            fr.append(cc)
            for el in cc.iter():
                if not _tag(el):
                    continue
                if el.tag in _NAMED and el.get("name"):
                    el.set("name", el.get("name") + sfx)
                elif el.tag == "attach":
                    el.set("_suffix", el.get("_suffix", "") + sfx)
                    el.set("_rep0", "1" if i == 0 and el.get("_rep0", "1") == "1" else "0")
        parent.insert(idx + i, fr)
        pos = [p + d for p, d in zip(pos, sp.rot_vec_quat(offset, quat))]

    # referencing elements of the top-level sections follow the copies
    for sec in _SECTIONS:
        els = sections.get(sec, [])
        if not els:
            continue
        moved = []
        for s in els:
            for el in list(s):
                if not _tag(el):
                    continue
                refs = _refs(sec, el)
                hits = [(e, a, k) for e, a, k in refs if e.get(a) in inside.get(k, ())]
                if hits:
                    s.remove(el)
                    if len(hits) == len(refs) or sec not in _ALL_INSIDE:
                        moved.append(el)
        kind = {"tendon": "tendon", "actuator": "actuator"}.get(sec)
        for i in range(count):
            sfx = _suffix(sep, count, i)
            for el in moved:
                cc = copy.deepcopy(el)
                for (e, a, k), (e2, _, _) in zip(_refs(sec, el), _refs(sec, cc)):
                    if e.get(a) in inside.get(k, ()):
                        e2.set(a, e.get(a) + sfx)
                if cc.get("name"):
                    cc.set("name", cc.get("name") + sfx)
                els[-1].append(cc)
        if kind:
            inside.setdefault(kind, set()).update(el.get("name") for el in moved if el.get("name"))
