"""MJCF attribute reading and default classes, with MuJoCo's semantics.

An element's values start from MuJoCo's built-in defaults, then the default
class chain applies (each nested ``<default class>`` copies its parent and
overrides what it sets), then the element's own attributes. Vector attributes
given with fewer numbers than they hold keep the remaining values (``size``,
``solimp``, ``gear``...), exactly as MuJoCo's reader does.
"""

from __future__ import annotations

import copy
import math
from typing import Callable, Dict, List, Optional

from rigidsim import model as M
from rigidsim.errors import InputError
from rigidsim.loaders import mjcf_visual as V

NAN = float("nan")
SOLREF = (0.02, 1.0)
SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)

LIMITED = {"false": 0, "true": 1, "auto": 2}
BOOL = {"false": False, "true": True}
GEOM_TYPES = {"plane": M.GEOM_PLANE, "hfield": M.GEOM_HFIELD, "sphere": M.GEOM_SPHERE, "capsule": M.GEOM_CAPSULE,
              "ellipsoid": M.GEOM_ELLIPSOID, "cylinder": M.GEOM_CYLINDER, "box": M.GEOM_BOX, "mesh": M.GEOM_MESH,
              "sdf": M.GEOM_SDF}
JOINT_TYPES = {"free": M.JNT_FREE, "ball": M.JNT_BALL, "slide": M.JNT_SLIDE, "hinge": M.JNT_HINGE}
DYN_TYPES = {"none": M.DYN_NONE, "integrator": M.DYN_INTEGRATOR, "filter": M.DYN_FILTER,
             "filterexact": M.DYN_FILTEREXACT, "muscle": M.DYN_MUSCLE, "user": M.DYN_USER}
GAIN_TYPES = {"fixed": M.GAIN_FIXED, "affine": M.GAIN_AFFINE, "muscle": M.GAIN_MUSCLE, "user": M.GAIN_USER}
BIAS_TYPES = {"none": M.BIAS_NONE, "affine": M.BIAS_AFFINE, "muscle": M.BIAS_MUSCLE, "user": M.BIAS_USER}

# value parsers by attribute name: ("f", n) floats (at most n), ("i", n) ints, ("k", table), "s", "b"
_F1 = ("f", 1)
ATTR_TYPES: Dict[str, object] = {
    "pos": ("f", 3), "quat": ("fx", 4), "axisangle": ("fx", 4), "xyaxes": ("fx", 6), "zaxis": ("fx", 3),
    "euler": ("fx", 3), "axis": ("f", 3), "size": ("f", 3), "fromto": ("fx", 6), "friction": ("f", 3),
    "solref": ("f", 2), "solimp": ("f", 5), "solreflimit": ("f", 2), "solimplimit": ("f", 5),
    "solreffriction": ("f", 2), "solimpfriction": ("f", 5), "range": ("f", 2), "ctrlrange": ("f", 2),
    "forcerange": ("f", 2), "actrange": ("f", 2), "springdamper": ("f", 2), "actuatorfrcrange": ("f", 2), "springlength": ("f", 2),
    "gear": ("f", 6), "gainprm": ("f", 10), "biasprm": ("f", 10), "dynprm": ("f", 10), "polycoef": ("f", 5),
    "relpose": ("fx", 7), "anchor": ("f", 3), "diaginertia": ("fx", 3), "fullinertia": ("fx", 6),
    "scale": ("f", 3), "refpos": ("f", 3), "refquat": ("fx", 4), "gravity": ("f", 3), "wind": ("f", 3),
    "magnetic": ("f", 3), "o_solref": ("f", 2), "o_solimp": ("f", 5), "o_friction": ("f", 5),
    "center": ("f", 3), "rgba": ("f", 4), "inertiagrouprange": ("i", 2), "dir": ("f", 3),
    "mass": _F1, "density": _F1, "solmix": _F1, "margin": _F1, "gap": _F1, "stiffness": _F1, "ref": _F1,
    "springref": _F1, "armature": _F1, "damping": _F1, "frictionloss": _F1, "cranklength": _F1, "kp": _F1,
    "kv": _F1, "dampratio": _F1, "timeconst": _F1, "inheritrange": _F1, "width": _F1, "divisor": _F1,
    "coef": _F1, "torquescale": _F1, "cutoff": _F1, "noise": _F1, "time": _F1, "gravcomp": _F1,
    "boundmass": _F1, "boundinertia": _F1, "settotalmass": _F1, "timestep": _F1, "impratio": _F1,
    "tolerance": _F1, "ls_tolerance": _F1, "noslip_tolerance": _F1, "ccd_tolerance": _F1, "viscosity": _F1,
    "o_margin": _F1, "meaninertia": _F1, "meanmass": _F1, "meansize": _F1, "extent": _F1,
    "contype": ("i", 1), "conaffinity": ("i", 1), "condim": ("i", 1), "group": ("i", 1),
    "priority": ("i", 1), "iterations": ("i", 1), "ls_iterations": ("i", 1), "noslip_iterations": ("i", 1),
    "ccd_iterations": ("i", 1), "nrow": ("i", 1), "ncol": ("i", 1),
    "inertia": ("k", {"convex": 0, "exact": 1, "legacy": 2, "shell": 3}),
    "limited": ("k", LIMITED), "ctrllimited": ("k", LIMITED), "forcelimited": ("k", LIMITED),
    "actlimited": ("k", LIMITED), "actuatorfrclimited": ("k", LIMITED),
    "dyntype": ("k", DYN_TYPES), "gaintype": ("k", GAIN_TYPES), "biastype": ("k", BIAS_TYPES),
    "mocap": "b", "actearly": "b", "active": "b", "shellinertia": "b", "actuatorgravcomp": "b",
    "autolimits": "b", "balanceinertia": "b", "discardvisual": "b", "fusestatic": "b", "strippath": "b",
}


def where(el, filename: str) -> str:
    src = el.get("_src") if el is not None else None
    return f"{src or filename}:{el.sourceline if el is not None else '?'}"


# numeric attributes MuJoCo 4.0 refuses when blank: read as one integer ("problem reading attribute") or
# required (<inertial pos>); every other blank number is read as absent
BLANK_REFUSED = {("size", "nconmax"), ("size", "njmax"), ("size", "nstack"), ("mesh", "maxhullvert"),
                 ("freejoint", "group"), ("inertial", "pos")}


def drop_blank_numbers(root, filename: str) -> None:
    """Remove the numeric attributes whose text is empty or white space, as MuJoCo 4.0 reads them as absent
    (`pos=""`, `width=" "` keep the default); refuse those of `BLANK_REFUSED`, as it does. A blank keyword
    (`limited=""`) stays, for the reader to refuse."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for a in [a for a, t in el.attrib.items() if not t.strip()]:
            if (el.tag, a) in BLANK_REFUSED:
                raise InputError(f"attribute '{a}' of <{el.tag}> is blank: give a number (MuJoCo refuses it "
                                 "blank too)", where=where(el, filename))
            kind = ATTR_TYPES.get(a)
            if isinstance(kind, tuple) and kind[0] in ("f", "fx", "i"):
                del el.attrib[a]


def parse_value(el, attr: str, kind, filename: str, text: Optional[str] = None):
    """Parse one attribute's text into its value (floats as a list for vectors)."""
    text = el.get(attr) if text is None else text
    try:
        if kind == "s":
            return text
        if kind == "b":
            if text not in BOOL:
                raise ValueError
            return BOOL[text]
        tag, arg = kind
        if tag == "k":
            if text not in arg:
                raise InputError(f"attribute '{attr}' of <{el.tag}> is '{text}', expected one of "
                                 f"{', '.join(arg)}", where=where(el, filename))
            return arg[text]
        parts = text.split()
        if tag == "i":
            vals = [int(p) for p in parts]
        else:
            vals = [float(p) for p in parts]
            if any(math.isnan(v) for v in vals):
                raise ValueError
        if not vals or len(vals) > arg or (tag == "fx" and len(vals) != arg):
            want = f"exactly {arg}" if tag == "fx" else (f"1 to {arg}" if arg > 1 else "one")
            raise InputError(f"attribute '{attr}' of <{el.tag}> has {len(vals)} value(s) '{text}', expected "
                             f"{want} number(s)", where=where(el, filename))
        return vals
    except ValueError:
        raise InputError(f"attribute '{attr}' of <{el.tag}> has an invalid value '{text}'",
                         where=where(el, filename)) from None


# stiffness and damping of joints and tendons take 1 to 3 numbers in MuJoCo 4.0: the coefficient, then a
# polynomial (`stiffnesspoly`, `dampingpoly`: spring force -(k0 x + k1 x^2 + k2 x^3), damper force
# -v (d0 + d1 |v| + d2 v^2)); rigidsim builds the linear coefficient alone
POLY = ("stiffness", "damping")


def _read_poly(spec: dict, el, a: str, filename: str) -> None:
    v = parse_value(el, a, ("f", 3), filename)
    spec[a] = v[0]
    poly = list(spec.get(a + "poly", (0.0, 0.0)))
    poly[:len(v) - 1] = v[1:]
    spec[a + "poly"] = poly


def check_poly(spec: dict, el, filename: str) -> None:
    """Refuse a nonzero stiffness or damping polynomial (MuJoCo 4.0's nonlinear springs and dampers)."""
    for a in POLY:
        if any(spec.get(a + "poly", ())):
            law = "-(k0 x + k1 x^2 + k2 x^3)" if a == "stiffness" else "-v (d0 + d1 |v| + d2 v^2)"
            coef = " ".join(f"{c:g}" for c in [spec[a]] + list(spec[a + "poly"]))
            raise InputError(f"attribute '{a}' of <{el.tag}> (or its class) gives a {a} polynomial '{coef}', "
                             f"MuJoCo 4.0's nonlinear {'spring' if a == 'stiffness' else 'damper'} {law}: "
                             f"not supported by rigidsim; give one number", where=where(el, filename))


def read_into(spec: dict, el, attrs, filename: str, rename: Optional[Dict[str, str]] = None) -> None:
    """Read the given attributes of ``el`` into ``spec`` (vectors keep unread trailing values)."""
    for a in attrs:
        text = el.get(a)
        if text is None:
            continue
        if a in POLY and el.tag not in ACTUATOR_TAGS:
            _read_poly(spec, el, a, filename)
            continue
        kind = ATTR_TYPES.get(a, "s")
        v = parse_value(el, a, kind, filename)
        key = rename.get(a, a) if rename else a
        if isinstance(v, list):
            old = spec.get(key)
            if isinstance(old, (list, tuple)) and kind[0] != "fx" and len(old) >= len(v):
                new = list(old)
                new[:len(v)] = v
                v = new
            elif kind[1] == 1:
                v = v[0]
        spec[key] = v


# ------------------------------------------------------------------ MuJoCo's built-in element defaults

def joint_defaults() -> dict:
    return dict(type=3, group=0, pos=[0.0, 0, 0], axis=[0.0, 0, 1], ref=0.0, springref=0.0, limited=2,
                range=[0.0, 0.0], margin=0.0, solreflimit=list(SOLREF), solimplimit=list(SOLIMP),
                solreffriction=list(SOLREF), solimpfriction=list(SOLIMP), stiffness=0.0, armature=0.0,
                damping=0.0, frictionloss=0.0, actuatorfrclimited=2, actuatorfrcrange=[0.0, 0.0],
                actuatorgravcomp=False, springdamper=[0.0, 0.0])


def geom_defaults() -> dict:
    return dict(type=2, size=[0.0, 0.0, 0.0], contype=1, conaffinity=1, condim=3, group=0, priority=0,
                friction=[1.0, 0.005, 0.0001], mass=NAN, density=1000.0, shellinertia=False, solmix=1.0,
                solref=list(SOLREF), solimp=list(SOLIMP), margin=0.0, gap=0.0, fromto=None,
                pos=[0.0, 0, 0], quat=[1.0, 0, 0, 0], alt=None, mesh="", hfield="", material="",
                rgba=[0.5, 0.5, 0.5, 1.0])


def site_defaults() -> dict:
    return dict(type=2, group=0, size=[0.005, 0.005, 0.005], pos=[0.0, 0, 0], quat=[1.0, 0, 0, 0],
                alt=None, fromto=None, material="")


def tendon_defaults() -> dict:
    return dict(group=0, limited=2, range=[0.0, 0.0], solreflimit=list(SOLREF), solimplimit=list(SOLIMP),
                solreffriction=list(SOLREF), solimpfriction=list(SOLIMP), frictionloss=0.0,
                springlength=[-1.0, -1.0], margin=0.0, stiffness=0.0, damping=0.0, armature=0.0,
                width=0.003, actuatorfrclimited=2, actuatorfrcrange=[0.0, 0.0], material="")


def actuator_defaults() -> dict:
    return dict(group=0, ctrllimited=2, forcelimited=2, actlimited=2, ctrlrange=[0.0, 0.0],
                forcerange=[0.0, 0.0], actrange=[0.0, 0.0], gear=[1.0, 0, 0, 0, 0, 0], cranklength=0.0,
                dyntype=0, gaintype=0, biastype=0, dynprm=[1.0] + [0.0] * 9, gainprm=[1.0] + [0.0] * 9,
                biasprm=[0.0] * 10, actearly=False, inheritrange=0.0)


def equality_defaults() -> dict:
    return dict(active=True, solref=list(SOLREF), solimp=list(SOLIMP))


def pair_defaults() -> dict:
    return dict(condim=3, friction=[1.0, 1.0, 0.005, 0.0001, 0.0001], solref=list(SOLREF),
                solreffriction=[0.0, 0.0], solimp=list(SOLIMP), margin=0.0, gap=0.0)


def mesh_defaults() -> dict:
    return dict(scale=[1.0, 1.0, 1.0], inertia=2)  # inertia: mjtMeshInertia, 'legacy' by default


ORIENT_ATTRS = ("axisangle", "xyaxes", "zaxis", "euler")


def read_orientation(spec: dict, el, filename: str) -> None:
    """quat, or one alternative (axisangle/xyaxes/zaxis/euler); more than one is an error."""
    given = [a for a in ("quat",) + ORIENT_ATTRS if el.get(a) is not None]
    if len(given) > 1:
        raise InputError(f"<{el.tag}> has more than one orientation ({', '.join(given)}); give only one",
                         where=where(el, filename))
    if not given:
        return
    a = given[0]
    v = parse_value(el, a, ATTR_TYPES[a], filename)
    if a == "quat":
        spec["quat"] = v
        spec["alt"] = None
    else:
        spec["alt"] = (a, v)


def _read_actuator(spec: dict, el, tag: str, filename: str) -> None:
    """Apply one actuator element (general or a shortcut) to an actuator spec, as MuJoCo's reader does."""
    common = ("group", "ctrllimited", "forcelimited", "actlimited", "ctrlrange", "forcerange", "actrange",
              "gear", "cranklength", "actearly")
    read_into(spec, el, common, filename)
    w = where(el, filename)

    def opt(name):
        t = el.get(name)
        return None if t is None else parse_value(el, name, _F1, filename)[0]

    if tag == "general":
        read_into(spec, el, ("dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm"), filename)
    elif tag == "motor":
        spec["gainprm"][0] = 1.0
        spec.update(dyntype=0, gaintype=0, biastype=0)
    elif tag in ("position", "intvelocity"):
        kp = opt("kp")
        kp = spec["gainprm"][0] if kp is None else kp
        kv, dampratio, timeconst = opt("kv"), opt("dampratio"), opt("timeconst")
        ir = opt("inheritrange")
        ir = spec["inheritrange"] if ir is None else ir
        spec["gainprm"][0] = kp
        spec["biasprm"][1] = -kp
        if kv is not None and dampratio is not None:
            raise InputError(f"<{tag}>: kv and dampratio cannot both be defined", where=w)
        if kv is not None:
            if kv < 0:
                raise InputError(f"<{tag}>: kv cannot be negative", where=w)
            spec["biasprm"][2] = -kv
        if dampratio is not None:
            if dampratio < 0:
                raise InputError(f"<{tag}>: dampratio cannot be negative", where=w)
            spec["biasprm"][2] = dampratio
        if timeconst is not None:
            if timeconst < 0:
                raise InputError(f"<{tag}>: timeconst cannot be negative", where=w)
            spec["dynprm"][0] = timeconst
            spec["dyntype"] = 0 if timeconst == 0 else 3
        spec["inheritrange"] = ir
        if ir > 0 and (spec["ctrlrange"][0] or spec["ctrlrange"][1]) and tag == "position":
            raise InputError(f"<{tag}>: ctrlrange and inheritrange cannot both be defined", where=w)
        spec["gaintype"], spec["biastype"] = 0, 1
        if tag == "intvelocity":
            spec["dyntype"] = 1
            spec["actlimited"] = 1
            if ir > 0 and (spec["actrange"][0] or spec["actrange"][1]):
                raise InputError(f"<{tag}>: actrange and inheritrange cannot both be defined", where=w)
    elif tag == "velocity":
        kv = opt("kv")
        kv = spec["gainprm"][0] if kv is None else kv
        spec["biasprm"] = [0.0] * 10
        spec["gainprm"][0] = kv
        spec["biasprm"][2] = -kv
        spec.update(dyntype=0, gaintype=0, biastype=1)
    elif tag == "damper":
        kv = opt("kv")
        kv = 0.0 if kv is None else kv
        spec["gainprm"] = [0.0] * 10
        spec["gainprm"][2] = -kv
        spec["ctrllimited"] = 1
        spec.update(dyntype=0, gaintype=1, biastype=0)
        if kv < 0:
            raise InputError(f"<{tag}>: damping coefficient cannot be negative", where=w)
        cr = spec["ctrlrange"]
        if cr[0] < 0 or cr[1] < 0:
            raise InputError(f"<{tag}>: damper control range cannot be negative", where=w)


# element kind -> (factory, attributes read as plain values)
_JOINT_ATTRS = ("type", "group", "pos", "axis", "ref", "springref", "limited", "range", "margin",
                "solreflimit", "solimplimit", "solreffriction", "solimpfriction", "stiffness", "armature",
                "damping", "frictionloss", "actuatorfrclimited", "actuatorfrcrange", "actuatorgravcomp",
                "springdamper")
_GEOM_ATTRS = ("type", "size", "contype", "conaffinity", "condim", "group", "priority", "friction", "mass",
               "density", "shellinertia", "solmix", "solref", "solimp", "margin", "gap", "fromto", "pos",
               "mesh", "hfield", "material", "rgba")
_SITE_ATTRS = ("type", "group", "size", "pos", "fromto", "material")
_TENDON_ATTRS = ("group", "limited", "range", "solreflimit", "solimplimit", "solreffriction",
                 "solimpfriction", "frictionloss", "springlength", "margin", "stiffness", "damping",
                 "armature", "width", "actuatorfrclimited", "actuatorfrcrange", "material")


def _types(el, filename, table, key="type"):
    t = el.get(key)
    if t is None:
        return None
    if t not in table:
        raise InputError(f"attribute '{key}' of <{el.tag}> is '{t}', expected one of {', '.join(table)}",
                         where=where(el, filename))
    return table[t]


def read_joint(spec: dict, el, filename: str) -> None:
    t = _types(el, filename, JOINT_TYPES)
    read_into(spec, el, [a for a in _JOINT_ATTRS if a != "type"], filename)
    if t is not None:
        spec["type"] = t


def read_geom(spec: dict, el, filename: str) -> None:
    t = _types(el, filename, GEOM_TYPES)
    read_into(spec, el, [a for a in _GEOM_ATTRS if a != "type"], filename)
    if t is not None:
        spec["type"] = t
    read_orientation(spec, el, filename)


def read_site(spec: dict, el, filename: str) -> None:
    t = _types(el, filename, GEOM_TYPES)
    read_into(spec, el, [a for a in _SITE_ATTRS if a != "type"], filename)
    if t is not None:
        spec["type"] = t
    read_orientation(spec, el, filename)


def read_tendon(spec: dict, el, filename: str) -> None:
    read_into(spec, el, _TENDON_ATTRS, filename)


def read_equality(spec: dict, el, filename: str) -> None:
    read_into(spec, el, ("active", "solref", "solimp"), filename)


def read_pair(spec: dict, el, filename: str) -> None:
    for a in ("condim", "friction", "solref", "solreffriction", "solimp", "margin", "gap"):
        if el.get(a) is None:
            continue
        kind = ("f", 5) if a == "friction" else ATTR_TYPES[a]
        v = parse_value(el, a, kind, filename)
        old = spec.get(a)
        if isinstance(old, list):
            base = list(old)
            base[:len(v)] = v
            v = base
        else:
            v = v[0]
        spec[a] = v


def read_mesh_default(spec: dict, el, filename: str) -> None:
    read_into(spec, el, ("scale", "inertia"), filename)


KINDS: Dict[str, tuple] = {
    "joint": (joint_defaults, read_joint),
    "geom": (geom_defaults, read_geom),
    "site": (site_defaults, read_site),
    "tendon": (tendon_defaults, read_tendon),
    "equality": (equality_defaults, read_equality),
    "pair": (pair_defaults, read_pair),
    "mesh": (mesh_defaults, read_mesh_default),
    "actuator": (actuator_defaults, None),
    "material": (V.material_defaults, V.read_material_spec),
    "camera": (V.camera_defaults, V.read_camera_spec),
    "light": (V.light_defaults, V.read_light_spec),
}
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper")


class DefaultClass:
    """One ``<default class>``: a full spec per element kind, inherited from the parent class."""

    def __init__(self, name: str, parent: Optional["DefaultClass"]):
        self.name = name
        self.parent = parent
        if parent is None:
            self.specs = {k: f() for k, (f, _) in KINDS.items()}
        else:
            self.specs = copy.deepcopy(parent.specs)

    def spec(self, kind: str) -> dict:
        return copy.deepcopy(self.specs[kind])


def build_defaults(default_els: List, filename: str, check: Callable) -> Dict[str, DefaultClass]:
    """Build every default class from the top-level ``<default>`` elements (class 'main' at the root)."""
    classes: Dict[str, DefaultClass] = {}
    main = DefaultClass("main", None)
    classes["main"] = main

    def visit(el, cls: DefaultClass):
        for child in el:
            if not isinstance(child.tag, str) or child.tag == "_":
                continue
            tag = child.tag
            if tag == "default":
                check(child, "default")
                name = child.get("class")
                if name is None:
                    raise InputError("a nested <default> needs a 'class' name", where=where(child, filename))
                if name in classes:
                    raise InputError(f"repeated default class name '{name}'", where=where(child, filename))
                sub = DefaultClass(name, cls)
                classes[name] = sub
                visit(child, sub)
                continue
            check(child, "default/" + tag)
            if tag in ACTUATOR_TAGS:
                _read_actuator(cls.specs["actuator"], child, tag, filename)
            elif tag in KINDS:
                KINDS[tag][1](cls.specs[tag], child, filename)
            # camera, light, material: checked, physics-free

    for top in default_els:
        check(top, "default")
        name = top.get("class")
        if name is not None and name != "main":
            raise InputError(f"the top-level <default> is class 'main'; it cannot be named '{name}'",
                             where=where(top, filename))
        visit(top, main)
    return classes


def read_actuator(spec: dict, el, tag: str, filename: str) -> None:
    _read_actuator(spec, el, tag, filename)
