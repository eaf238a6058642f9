"""MJCF loader: read a MuJoCo XML scene into element records, then compile it.

`load_mjcf(path)` and `load_mjcf_root(root, filename, basedir)` are the entry
points. This module expands ``<include>``, checks every element and attribute
against `mjcf_schema` (unknown ones are errors, unsupported ones are refused
with file and line) and each value against MuJoCo 4.0's reading rules
(`mjcf_attrs`; what is not rendered, in `mjcf_visual`), resolves default
classes and frames, and collects plain
records (`Scene`); `compiler.compile_scene` turns them into a `Model` exactly
as MuJoCo's compiler does.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Dict, List, Optional

from lxml import etree

from rigidsim.errors import InputError
from rigidsim.loaders import inputs
from rigidsim.loaders import mjcf_attach as A
from rigidsim.loaders import mjcf_attrs as VA
from rigidsim.loaders import mjcf_visual as V
from rigidsim.loaders.compiler import compile_scene
from rigidsim.loaders import mjcf_defaults as D
from rigidsim.loaders.mjcf_replicate import expand_replicates
from rigidsim.loaders import mjcf_schema as S
from rigidsim.loaders import spatial as sp
from rigidsim.loaders.records import Rec
from rigidsim.model import Model
from rigidsim.loaders import xmlsafe

MAX_INCLUDE_DEPTH = 16
MAX_ATTACH_DEPTH = 8
# compiler settings an attached model must share with its parent
_ATTACH_COMPILER_KEYS = ("degree", "eulerseq", "autolimits", "inertiafromgeom", "inertiagrouprange", "boundmass",
                         "boundinertia", "balanceinertia", "discardvisual", "fusestatic")

_INTEGRATORS = {"Euler": 0, "RK4": 1, "implicit": 2, "implicitfast": 3, "discrete": 4}
_CONES = {"pyramidal": 0, "elliptic": 1}
_JACOBIANS = {"dense": 0, "sparse": 1, "auto": 2}
_SOLVERS = {"PGS": 0, "CG": 1, "Newton": 2}
DISABLE_FLAGS = ("constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper", "gravity",
                 "clampctrl", "warmstart", "filterparent", "actuation", "refsafe", "sensor", "midphase",
                 "eulerdamp", "autoreset", "nativeccd", "island", "multiccd")
ENABLE_FLAGS = ("override", "energy", "fwdinv", "invdiscrete", "sleep", "diagexact", "ipc", "speculative")


class Scene:
    """Everything read from the XML, before compilation."""

    def __init__(self, filename: str, basedir: Path):
        self.filename = filename
        self.basedir = basedir
        self.model_name = "MuJoCo Model"
        self.compiler = dict(degree=True, eulerseq="xyz", meshdir="", autolimits=True, inertiafromgeom=2,
                             inertiagrouprange=[0, 5], boundmass=0.0, boundinertia=0.0,
                             balanceinertia=False, settotalmass=-1.0, discardvisual=False,
                             fusestatic=False, strippath=False)
        self.option: Dict[str, object] = {}
        self.flags: Dict[str, bool] = {}
        self.statistic: Dict[str, object] = {}
        self.bodies: List[Rec] = []
        self.meshes: List[Rec] = []
        self.hfields: List[Rec] = []
        self.pairs: List[Rec] = []
        self.excludes: List[Rec] = []
        self.equalities: List[Rec] = []
        self.tendons: List[Rec] = []
        self.actuators: List[Rec] = []
        self.sensors: List[Rec] = []
        self.keys: List[Rec] = []
        self.skins: List[object] = []  # visual only: kept to refuse them where they would matter
        self.materials: List[tuple] = []  # (name, rgba) in definition order: visual only, for a viewer


class Reader:
    def __init__(self, root, filename: str, basedir: Path):
        self.filename = filename
        self.scene = Scene(filename, basedir)
        self.root = root
        self.classes: Dict[str, D.DefaultClass] = {}
        self.models: Dict[str, list] = {}  # <model> assets: name -> [path, element, Scene once read]
        self.attached: Dict[str, list] = {k: [] for k in ("tendons", "equalities", "actuators", "sensors",
                                                          "pairs", "excludes", "keys")}
        self.attach_depth = 0  # how many <attach> levels below the scene file this reader is
        self.names = V.Names()  # materials, textures, cameras, lights: defined and referenced

    # ------------------------------------------------------------------ helpers
    def where(self, el) -> str:
        return D.where(el, self.filename)

    def fail(self, el, msg: str):
        raise InputError(msg, where=self.where(el))

    def check(self, el, ctx: str) -> None:
        """Refuse unknown attributes, values MuJoCo 4.0 would not read (`mjcf_attrs`: arity, number format,
        keywords; an attribute without numbers is dropped, as absent) and non-default values of unsupported
        attributes."""
        if ctx not in S.SCHEMA:
            self.fail(el, f"<{el.tag}> is not supported here (in <{el.getparent().tag}>)")
        built, ignored, refused = S.SCHEMA[ctx]
        for a in el.attrib:
            if not (a == "_src" or a in built or a in ignored or a in refused):
                self.fail(el, f"unknown attribute '{a}' in <{el.tag}>")
        visual = ctx.split("/")[-1] in ("camera", "light")  # never simulated: MuJoCo's rules, finite or not
        VA.validate(el, ctx, self.where(el), built_attrs=set() if visual else built | set(refused))
        for a, text in el.attrib.items():
            if a == "_src" or a in built or a in ignored:
                continue
            if a in refused:  # (an unknown attribute was refused above, before its value was read)
                dflt = refused[a]
                if dflt is not None and _same_value(text, dflt):
                    continue
                if a == "align" and text == "false" and not self.scene.compiler.get("alignfree"):
                    continue  # the same as 'auto' while compiler alignfree is false
                self.fail(el, f"attribute '{a}' of <{el.tag}> (value '{text}') is not supported by rigidsim; "
                              f"remove it" + (f" or set it to its default '{dflt}'" if dflt is not None else ""))

    def children(self, el):
        return [c for c in el if isinstance(c.tag, str)]

    def unsupported(self, el):
        self.fail(el, f"<{el.tag}> is not supported by rigidsim (MuJoCo feature not built); remove it")

    def cls(self, el, childclass: Optional[str]) -> D.DefaultClass:
        name = el.get("class")
        name = (childclass or "main") if name is None else name
        if name not in self.classes:
            self.fail(el, f"unknown default class '{name}' in <{el.tag}>")
        return self.classes[name]

    def val(self, el, attr, kind=None, default=None):
        if el.get(attr) is None:
            return default
        kind = kind or D.ATTR_TYPES.get(attr, "s")
        v = D.parse_value(el, attr, kind, self.filename)
        if isinstance(v, list) and kind not in ("s", "b") and kind[0] in ("f", "i") and kind[1] == 1:
            return v[0]
        return v

    def parse(self, path):
        """The root element of the XML file at `path` (`parse_xml`), for the <model> assets."""
        return parse_xml(path)

    def child_scene(self, name: str, el) -> Scene:
        """The scene of <model> asset `name`, read once by its own Reader (for <attach> element `el`)."""
        entry = self.models[name]
        if entry[2] is None:
            if self.attach_depth >= MAX_ATTACH_DEPTH:
                self.fail(el, f"<attach> nested deeper than {MAX_ATTACH_DEPTH} models (a cycle?)")
            path = entry[0]
            root = parse_xml(path)
            if root.tag == "robot":  # a URDF robot: MuJoCo attaches its links unfused (the parent's compiler)
                from rigidsim.loaders.urdf import urdf_to_mjcf

                root = urdf_to_mjcf(root, str(path), path.resolve().parent, fusestatic=False)
            for e in root.iter():
                if isinstance(e.tag, str) and e.get("_src") is None:
                    e.set("_src", str(path))
            expand_includes(root, str(path), path.parent)
            expand_replicates(root, str(path))
            sub = Reader(root, str(path), path.parent)
            sub.attach_depth = self.attach_depth + 1
            entry[2] = sub.read()
            diff = [k for k in _ATTACH_COMPILER_KEYS if entry[2].compiler[k] != self.scene.compiler[k]]
            if diff:
                self.fail(el, f"attaching model '{name}' whose compiler settings differ from the parent's "
                              f"({', '.join(diff)}) is not supported by rigidsim")
        return entry[2]

    # ------------------------------------------------------------------ top level
    def read(self) -> Scene:
        root = self.root
        if root.tag != "mujoco":
            self.fail(root, f"the root element is <{root.tag}>, expected <mujoco>")
        self.check(root, "mujoco")
        sc = self.scene
        sc.model_name = root.get("model", "MuJoCo Model")
        sections: Dict[str, list] = {}
        for el in self.children(root):
            if el.tag in S.REFUSED_ELEMENTS:
                self.unsupported(el)
            known = ("compiler", "option", "size", "statistic", "visual", "custom", "default", "asset",
                     "worldbody", "contact", "equality", "tendon", "actuator", "sensor", "keyframe")
            if el.tag not in known:
                self.fail(el, f"unknown element <{el.tag}> in <mujoco>")
            sections.setdefault(el.tag, []).append(el)
        for el in sections.get("compiler", []):
            self.read_compiler(el)
        for el in sections.get("option", []):
            self.read_option(el)
        size_nkey = None
        for el in sections.get("size", []):
            self.check(el, "size")
            if el.get("nkey") is not None:
                size_nkey = (int(self.val(el, "nkey", ("i", 1))), el)
        for el in sections.get("visual", []):
            V.read_visual(self, el)
        for el in sections.get("statistic", []):
            self.check(el, "statistic")
            ext = self.val(el, "extent")
            if ext is not None and ext <= 0:
                self.fail(el, "attribute 'extent' of <statistic> must be strictly positive")
            for a in ("meaninertia", "meanmass", "meansize", "extent", "center"):
                v = self.val(el, a)
                if v is not None:
                    sc.statistic[a] = v
        self.classes = D.build_defaults(sections.get("default", []), self.filename, self.check_default)
        for el in sections.get("asset", []):
            self.read_assets(el)
        world = Rec(name="world", el=root, parent=-1, pos=[0.0, 0, 0], quat=[1.0, 0, 0, 0], alt=None,
                    mocap=False, gravcomp=0.0, inertial=None, joints=[], geoms=[], sites=[], frame=None,
                    children=[])
        sc.bodies.append(world)
        for el in sections.get("worldbody", []):
            self.check(el, "worldbody")
            self.read_body_content(el, 0, None, None)
        for el in sections.get("contact", []):
            self.read_contact(el)
        for el in sections.get("equality", []):
            self.read_equality(el)
        for el in sections.get("tendon", []):
            self.read_tendons(el)
        for el in sections.get("actuator", []):
            self.read_actuators(el)
        for el in sections.get("sensor", []):
            self.read_sensors(el)
        for el in sections.get("keyframe", []):
            self.check(el, "keyframe")
            for k in self.children(el):
                if k.tag != "key":
                    self.fail(k, f"unknown element <{k.tag}> in <keyframe>")
                self.check(k, "key")
                rec = Rec(name=k.get("name", ""), el=k)
                for a in ("time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"):
                    v = None
                    if k.get(a) is not None:
                        v = VA.numbers(k.get(a))  # non-finite values are refused if the key is used
                    setattr(rec, a, v[0] if (a == "time" and v) else v)
                sc.keys.append(rec)
        V.check_refs(self)
        # attached models' elements follow the parent's own
        for k, lst in self.attached.items():
            getattr(sc, k).extend(lst)
        if size_nkey is not None:
            n, el = size_nkey
            if n < 0:
                self.fail(el, "nkey must be non-negative")
            while len(sc.keys) < n:  # MuJoCo adds default keyframes (qpos0, zero velocities) up to nkey
                sc.keys.append(Rec(name="", el=el, time=None, qpos=None, qvel=None, act=None, ctrl=None,
                                   mpos=None, mquat=None))
        return sc

    def check_default(self, el, ctx):
        tag = ctx.split("/")[-1]
        if ctx.startswith("default/") and (tag in S.ACTUATORS_REFUSED or tag in S.REFUSED_ELEMENTS):
            self.unsupported(el)
        if ctx not in S.SCHEMA:
            self.fail(el, f"unknown element <{tag}> in <default>")
        self.check(el, ctx)
        if ctx == "default/material":
            return
        for c in self.children(el) if ctx != "default" else []:
            self.fail(c, f"unknown element <{c.tag}> in <{tag}>")

    def read_compiler(self, el):
        self.check(el, "compiler")
        c = self.scene.compiler
        for ch in self.children(el):
            if ch.tag != "lengthrange":
                self.fail(ch, f"unknown element <{ch.tag}> in <compiler>")
            self.check(ch, "compiler/lengthrange")
        a = el.get("angle")
        if a is not None:
            if a not in ("degree", "radian"):
                self.fail(el, f"compiler angle is '{a}', expected 'degree' or 'radian'")
            c["degree"] = a == "degree"
        seq = el.get("eulerseq")
        if seq is not None:
            if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
                self.fail(el, f"compiler eulerseq '{seq}' must be 3 characters out of x, y, z, X, Y, Z")
            c["eulerseq"] = seq
        if el.get("assetdir") is not None:
            c["meshdir"] = el.get("assetdir")
        if el.get("meshdir") is not None:
            c["meshdir"] = el.get("meshdir")
        for k in ("assetdir", "texturedir"):  # textures are looked for in texturedir, else assetdir
            if el.get(k) is not None:
                c["texturedir"] = el.get(k)
        ifg = el.get("inertiafromgeom")
        if ifg is not None:
            table = {"false": 0, "true": 1, "auto": 2}
            if ifg not in table:
                self.fail(el, f"compiler inertiafromgeom is '{ifg}', expected false, true or auto")
            c["inertiafromgeom"] = table[ifg]
        for k in ("autolimits", "boundmass", "boundinertia", "balanceinertia", "settotalmass", "discardvisual",
                  "fusestatic", "inertiagrouprange", "strippath"):
            v = self.val(el, k)
            if v is not None:
                c[k] = v

    def read_option(self, el):
        self.check(el, "option")
        sc = self.scene
        enums = {"integrator": _INTEGRATORS, "cone": _CONES, "jacobian": _JACOBIANS, "solver": _SOLVERS}
        for a, text in el.attrib.items():
            if a in ("_src",) or a not in S.SCHEMA["option"][0]:
                continue
            if a in enums:
                if text not in enums[a]:
                    self.fail(el, f"option {a} is '{text}', expected one of {', '.join(enums[a])}")
                sc.option[a] = enums[a][text]
            else:
                v = self.val(el, a)
                sc.option[a] = v
        for f in self.children(el):
            if f.tag != "flag":
                self.fail(f, f"unknown element <{f.tag}> in <option>")
            self.check(f, "option/flag")
            for a, text in f.attrib.items():
                if a == "_src":
                    continue
                if text not in ("enable", "disable"):
                    self.fail(f, f"flag {a} is '{text}', expected 'enable' or 'disable'")
                sc.flags[a] = text == "enable"

    # ------------------------------------------------------------------ assets
    def read_assets(self, el):
        self.check(el, "asset")
        for a in self.children(el):
            if a.tag in ("texture", "material"):
                self.check(a, a.tag)
                for ch in self.children(a):
                    if a.tag == "material" and ch.tag == "layer":
                        self.check(ch, "material/layer")
                    else:
                        self.fail(ch, f"unknown element <{ch.tag}> in <{a.tag}>")
                (V.read_texture if a.tag == "texture" else V.read_material)(self, a)
            elif a.tag == "mesh":
                self.check(a, "mesh")
                for ch in self.children(a):
                    self.unsupported(ch)
                spec = self.cls(a, None).spec("mesh")
                D.read_into(spec, a, ("scale", "inertia"), self.filename)
                rec = Rec(el=a, name=a.get("name"), file=a.get("file"), scale=spec["scale"], inertia=spec["inertia"],
                          vertex=self.val(a, "vertex", ("f", 1 << 30)), face=self.val(a, "face", ("i", 1 << 30)),
                          refpos=self.val(a, "refpos"), refquat=self.val(a, "refquat"))
                if rec.name is None:
                    if rec.file is None:
                        self.fail(a, "<mesh> needs a name or a file")
                    rec.name = Path(rec.file.replace("\\", "/")).stem
                self.scene.meshes.append(rec)
            elif a.tag == "hfield":
                self.check(a, "hfield")
                rec = Rec(el=a, name=a.get("name"), file=a.get("file"), nrow=self.val(a, "nrow", default=0),
                          ncol=self.val(a, "ncol", default=0), size=self.val(a, "size", ("fx", 4)),
                          elevation=self.val(a, "elevation", ("f", 1 << 30)))
                if rec.name is None:
                    rec.name = Path(rec.file.replace("\\", "/")).stem if rec.file else ""
                self.scene.hfields.append(rec)
            elif a.tag == "skin":
                self.check(a, "skin")
                for ch in self.children(a):
                    if ch.tag != "bone":
                        self.fail(ch, f"unknown element <{ch.tag}> in <skin>")
                    self.check(ch, "skin/bone")
                V.read_skin(self, a)
                self.scene.skins.append(a)
            elif a.tag == "model":
                A.read_model_asset(self, a)
            elif a.tag == "flex":
                self.unsupported(a)
            else:
                self.fail(a, f"unknown element <{a.tag}> in <asset>")

    # ------------------------------------------------------------------ bodies
    def resolve_frame(self, el, outer):
        spec = {"pos": [0.0, 0, 0], "quat": [1.0, 0, 0, 0], "alt": None}
        D.read_into(spec, el, ("pos",), self.filename)
        D.read_orientation(spec, el, self.filename)
        pos, quat = spec["pos"], self.orient(el, spec)
        if outer is not None:
            pos, quat = sp.frameaccum(outer[0], outer[1], pos, quat)
        sp.normvec(quat)
        return (pos, quat)

    def orient(self, el, spec) -> list:
        q = list(spec["quat"])
        sp.normvec(q)
        if spec.get("alt") is not None:
            q, err = sp.resolve_orientation(spec["alt"], self.scene.compiler["degree"],
                                            self.scene.compiler["eulerseq"])
            if err:
                self.fail(el, f"orientation error in <{el.tag}>: {err}")
        return q

    def read_body_content(self, el, bid: int, frame, childclass):
        body = self.scene.bodies[bid]
        for ch in self.children(el):
            tag = ch.tag
            if tag in S.REFUSED_ELEMENTS:
                self.unsupported(ch)
            if tag == "body":
                self.check(ch, "body")
                cc = ch.get("childclass") or childclass
                if ch.get("childclass") is not None and ch.get("childclass") not in self.classes:
                    self.fail(ch, f"unknown default class '{ch.get('childclass')}' in <body childclass>")
                spec = {"pos": [0.0, 0, 0], "quat": [1.0, 0, 0, 0], "alt": None}
                D.read_into(spec, ch, ("pos",), self.filename)
                D.read_orientation(spec, ch, self.filename)
                rec = Rec(name=ch.get("name", ""), el=ch, parent=bid, pos=spec["pos"], quat=self.orient(ch, spec),
                          mocap=self.val(ch, "mocap", default=False), gravcomp=self.val(ch, "gravcomp", default=0.0),
                          inertial=None, joints=[], geoms=[], sites=[], frame=frame, children=[])
                self.scene.bodies.append(rec)
                nid = len(self.scene.bodies) - 1
                body.children.append(nid)
                self.read_body_content(ch, nid, None, cc)
            elif tag == "frame":
                self.check(ch, "frame")
                cc = ch.get("childclass") or childclass
                if ch.get("childclass") is not None and ch.get("childclass") not in self.classes:
                    self.fail(ch, f"unknown default class '{ch.get('childclass')}' in <frame childclass>")
                self.read_body_content(ch, bid, self.resolve_frame(ch, frame), cc)
            elif tag == "inertial":
                if bid == 0:
                    self.fail(ch, "<inertial> is not allowed in <worldbody>")
                self.check(ch, "inertial")
                spec = {"pos": [0.0, 0, 0], "quat": [1.0, 0, 0, 0], "alt": None}
                D.read_into(spec, ch, ("pos",), self.filename)
                D.read_orientation(spec, ch, self.filename)
                if ch.get("mass") is None:
                    self.fail(ch, "<inertial> requires 'mass'")
                if ch.get("fullinertia") is not None and (spec["alt"] is not None or ch.get("quat") is not None):
                    self.fail(ch, "fullinertia and inertial orientation cannot both be specified")
                if ch.get("fullinertia") is not None and ch.get("diaginertia") is not None:
                    self.fail(ch, "fullinertia and diagonal inertia cannot both be specified")
                if ch.get("fullinertia") is None and ch.get("diaginertia") is None:
                    self.fail(ch, "<inertial> requires 'diaginertia' or 'fullinertia'")
                body.inertial = Rec(el=ch, pos=spec["pos"], quat=self.orient(ch, spec), mass=self.val(ch, "mass"),
                                    diag=self.val(ch, "diaginertia"), full=self.val(ch, "fullinertia"),
                                    frame=frame)
            elif tag in ("joint", "freejoint"):
                if bid == 0:
                    self.fail(ch, f"<{tag}> is not allowed in <worldbody>")
                self.check(ch, tag)
                if tag == "joint":
                    spec = self.cls(ch, childclass).spec("joint")
                    D.read_joint(spec, ch, self.filename)
                    D.check_poly(spec, ch, self.filename)
                else:
                    spec = D.joint_defaults()
                    spec["type"] = 0
                    D.read_into(spec, ch, ("group",), self.filename)
                body.joints.append(Rec(name=ch.get("name", ""), el=ch, spec=spec, frame=frame, body=bid))
            elif tag == "geom":
                self.check(ch, "geom")
                spec = self.cls(ch, childclass).spec("geom")
                D.read_geom(spec, ch, self.filename)
                V.note_material(self, ch, spec)
                body.geoms.append(Rec(name=ch.get("name", ""), el=ch, spec=spec, frame=frame, body=bid))
            elif tag == "site":
                self.check(ch, "site")
                spec = self.cls(ch, childclass).spec("site")
                D.read_site(spec, ch, self.filename)
                V.note_material(self, ch, spec)
                body.sites.append(Rec(name=ch.get("name", ""), el=ch, spec=spec, frame=frame, body=bid))
            elif tag == "attach":
                A.attach(self, ch, bid, frame)
            elif tag in ("camera", "light"):
                self.check(ch, tag)
                (V.read_camera if tag == "camera" else V.read_light)(self, ch, childclass)
            else:
                self.fail(ch, f"unknown element <{tag}> in <{el.tag}>")

    # ------------------------------------------------------------------ contact, equality, tendons
    def read_contact(self, el):
        self.check(el, "contact")
        for ch in self.children(el):
            if ch.tag == "pair":
                self.check(ch, "pair")
                spec = self.cls(ch, None).spec("pair")
                D.read_pair(spec, ch, self.filename)
                for a in ("geom1", "geom2"):
                    if ch.get(a) is None:
                        self.fail(ch, f"<pair> requires '{a}'")
                self.scene.pairs.append(Rec(name=ch.get("name", ""), el=ch, spec=spec, geom1=ch.get("geom1"),
                                            geom2=ch.get("geom2")))
            elif ch.tag == "exclude":
                self.check(ch, "exclude")
                for a in ("body1", "body2"):
                    if ch.get(a) is None:
                        self.fail(ch, f"<exclude> requires '{a}'")
                self.scene.excludes.append(Rec(name=ch.get("name", ""), el=ch, body1=ch.get("body1"),
                                               body2=ch.get("body2")))
            else:
                self.fail(ch, f"unknown element <{ch.tag}> in <contact>")

    def read_equality(self, el):
        self.check(el, "equality")
        for ch in self.children(el):
            tag = ch.tag
            if tag in S.REFUSED_ELEMENTS or tag in ("flex", "flexvert", "flexstrain"):
                self.unsupported(ch)
            ctx = {"connect": "connect", "weld": "weld", "joint": "equality/joint",
                   "tendon": "equality/tendon"}.get(tag)
            if ctx is None:
                self.fail(ch, f"unknown element <{tag}> in <equality>")
            self.check(ch, ctx)
            spec = self.cls(ch, None).spec("equality")
            D.read_equality(spec, ch, self.filename)
            rec = Rec(name=ch.get("name", ""), el=ch, tag=tag, spec=spec)
            if tag in ("connect", "weld"):
                b1, s1 = ch.get("body1"), ch.get("site1")
                if (b1 is None) == (s1 is None):
                    self.fail(ch, f"<{tag}> needs either body1 or site1 (exactly one)")
                if b1 is not None and ch.get("site2") is not None or s1 is not None and ch.get("body2") is not None:
                    self.fail(ch, f"<{tag}> cannot mix bodies and sites")
                rec.objtype = "body" if b1 is not None else "site"
                rec.name1 = b1 if b1 is not None else s1
                rec.name2 = ch.get("body2") if b1 is not None else ch.get("site2")
                if rec.objtype == "site" and rec.name2 is None:
                    self.fail(ch, f"<{tag}> with site1 also needs site2")
                rec.anchor = self.val(ch, "anchor", default=[0.0, 0.0, 0.0])
                if tag == "connect" and rec.objtype == "body" and ch.get("anchor") is None:
                    self.fail(ch, "<connect> with bodies requires 'anchor'")
                rec.relpose = self.val(ch, "relpose")
                rec.torquescale = self.val(ch, "torquescale", default=1.0)
            else:
                k = "joint" if tag == "joint" else "tendon"
                rec.name1, rec.name2 = ch.get(k + "1"), ch.get(k + "2")
                if rec.name1 is None:
                    self.fail(ch, f"<{tag}> equality requires '{k}1'")
                pc = [0.0, 1.0, 0.0, 0.0, 0.0]
                v = self.val(ch, "polycoef")
                if v is not None:
                    pc[:len(v)] = v
                rec.polycoef = pc
            self.scene.equalities.append(rec)

    def read_tendons(self, el):
        self.check(el, "tendon")
        for ch in self.children(el):
            if ch.tag not in ("fixed", "spatial"):
                self.fail(ch, f"unknown element <{ch.tag}> in <tendon>")
            self.check(ch, ch.tag)
            spec = self.cls(ch, None).spec("tendon")
            D.read_tendon(spec, ch, self.filename)
            V.note_material(self, ch, spec)
            D.check_poly(spec, ch, self.filename)
            path = []
            for w in self.children(ch):
                ctx = f"{ch.tag}/{w.tag}"
                if ctx not in S.SCHEMA:
                    self.fail(w, f"<{w.tag}> is not allowed in a {ch.tag} tendon")
                self.check(w, ctx)
                if w.tag == "joint":
                    if w.get("joint") is None or w.get("coef") is None:
                        self.fail(w, "tendon <joint> requires 'joint' and 'coef'")
                    path.append(Rec(kind="joint", name=w.get("joint"), prm=self.val(w, "coef"), el=w))
                elif w.tag == "site":
                    path.append(Rec(kind="site", name=w.get("site"), prm=0.0, el=w))
                elif w.tag == "geom":
                    path.append(Rec(kind="geom", name=w.get("geom"), side=w.get("sidesite"), prm=0.0, el=w))
                elif w.tag == "pulley":
                    path.append(Rec(kind="pulley", name=None, prm=self.val(w, "divisor"), el=w))
            self.scene.tendons.append(Rec(name=ch.get("name", ""), el=ch, kind=ch.tag, spec=spec, path=path))

    def read_actuators(self, el):
        self.check(el, "actuator")
        for ch in self.children(el):
            tag = ch.tag
            if tag in S.ACTUATORS_REFUSED:
                self.unsupported(ch)
            if "actuator/" + tag not in S.SCHEMA:
                self.fail(ch, f"unknown element <{tag}> in <actuator>")
            self.check(ch, "actuator/" + tag)
            spec = self.cls(ch, None).spec("actuator")
            D.read_actuator(spec, ch, tag, self.filename)
            targets = [(a, ch.get(a)) for a in ("joint", "jointinparent", "tendon", "cranksite", "site", "body")
                       if ch.get(a) is not None]
            if len(targets) != 1:
                self.fail(ch, f"<{tag}> needs exactly one transmission target (joint, jointinparent, tendon, "
                              f"cranksite, site or body)")
            kind, target = targets[0]
            if kind in ("cranksite",) and ch.get("slidersite") is None:
                self.fail(ch, "slider-crank actuator requires 'slidersite'")
            self.scene.actuators.append(Rec(name=ch.get("name", ""), el=ch, tag=tag, spec=spec, trn=kind,
                                            target=target, slidersite=ch.get("slidersite"),
                                            refsite=ch.get("refsite")))

    def read_sensors(self, el):
        self.check(el, "sensor")
        for ch in self.children(el):
            if "sensor/" + ch.tag not in S.SCHEMA:
                self.fail(ch, f"sensor <{ch.tag}> is not supported by rigidsim" if ch.tag in
                          ("camprojection", "tactile", "user", "plugin")
                          else f"unknown element <{ch.tag}> in <sensor>")
            self.check(ch, "sensor/" + ch.tag)
            rec = Rec(name=ch.get("name", ""), el=ch, tag=ch.tag, cutoff=self.val(ch, "cutoff", default=0.0),
                      noise=self.val(ch, "noise", default=0.0), attrs=dict(ch.attrib), intprm=[0, 0, 0], dim=None)
            if ch.tag in ("rangefinder", "contact"):
                self.read_data_spec(ch, rec)
            self.read_history(ch, rec)
            self.scene.sensors.append(rec)

    def read_history(self, el, rec):
        """MuJoCo 4.0's sensor history: `nsample` past values kept (with their times), read `delay` seconds
        late (`interp`: zero-order hold, linear or cubic), or computed every `interval` = (period, phase)."""
        n = self.val(el, "nsample", ("i", 1), default=0)
        delay = self.val(el, "delay", ("f", 1), default=0.0)
        interval = (self.val(el, "interval", ("f", 2), default=[0.0, 0.0]) + [0.0])[:2]  # (period[, phase])
        interp = self.val(el, "interp", ("k", {"zoh": 0, "linear": 1, "cubic": 2}), default=0)
        # (as MuJoCo: nsample <= 0 keeps no history, a delay <= 0 reads none)
        if n > 1 << 24:
            self.fail(el, f"<{el.tag}> nsample='{el.get('nsample')}': at most 2^24 samples")
        if delay > 0 and n <= 0:
            self.fail(el, f"<{el.tag}> delay='{el.get('delay')}' needs a history buffer (nsample > 0)")
        if interval[0] < 0:
            self.fail(el, f"<{el.tag}> interval='{el.get('interval')}': the period must not be negative")
        if interval[1] > 0:
            self.fail(el, f"<{el.tag}> interval='{el.get('interval')}': the phase must not be positive")
        if interval[0] > 0 and interval[1] <= -interval[0]:
            self.fail(el, f"<{el.tag}> interval='{el.get('interval')}': the phase must be greater than -period")
        rec.history = (n, interp)
        rec.delay = delay
        rec.interval = interval

    def read_data_spec(self, el, rec):
        """A rangefinder's or a contact sensor's MuJoCo sensor_intprm (the bits of its 'data' keywords; a contact
        sensor's 'reduce' and 'num') and its dim: the numbers per ray, or per contact times num."""
        table = S.RAYDATA if el.tag == "rangefinder" else S.CONDATA
        keys = list(table)
        words = (el.get("data") or keys[0]).split()
        for w in words:
            if w not in table:
                self.fail(el, f"<{el.tag}> data='{el.get('data')}': unknown keyword '{w}' (one of {', '.join(keys)})")
        order = [keys.index(w) for w in words]
        if any(b <= a for a, b in zip(order, order[1:])):
            self.fail(el, f"<{el.tag}> data='{el.get('data')}': the keywords must be in this order: {', '.join(keys)}")
        rec.intprm[0] = sum(1 << k for k in order)
        rec.dim = sum(table[w] for w in words)
        if el.tag == "contact":
            rec.intprm[1] = self.val(el, "reduce", ("k", {k: i for i, k in enumerate(S.CONREDUCE)}), default=0)
            num = self.val(el, "num", ("i", 1), default=1)
            if num <= 0:
                self.fail(el, f"<contact> num='{el.get('num')}' must be positive")
            rec.intprm[2] = num
            rec.dim *= num


def parse_xml(path) -> etree._Element:
    """Parse a scene file with `xmlsafe.parse_xml`.

    xmlsafe reads ``docinfo.internal_dtd``, which the installed lxml calls
    ``internalDTD``; until that is fixed there, the same checks run here.
    """
    try:
        return xmlsafe.parse_xml(path)
    except AttributeError:
        p = Path(path)
        data = inputs.read_bytes(p)
        parser = etree.XMLParser(**xmlsafe._PARSER_KW)
        try:
            tree = etree.fromstring(data, parser=parser, base_url=str(p)).getroottree()
        except etree.XMLSyntaxError as e:
            raise InputError(f"malformed XML: {e.msg}", where=f"{p}:{e.lineno or '?'}") from None
        dt = tree.docinfo
        if dt.internalDTD is not None or dt.system_url or dt.public_id or b"<!ENTITY" in data:
            raise InputError("XML document type declarations and entities are not allowed in scene files; "
                             "remove the <!DOCTYPE ...> block", where=f"{p}:1")
        return tree.getroot()


def _same_value(text: str, dflt: str) -> bool:
    if text.strip() == dflt:
        return True
    try:
        a = [float(x) for x in text.split()]
        b = [float(x) for x in dflt.split()]
        return a == b
    except ValueError:
        return False


def expand_includes(root, filename: str, basedir: Path, depth: int = 0) -> None:
    """Replace each <include file> by the children of the included file's root element, in place; then drop
    the numeric attributes left blank (`mjcf_defaults.drop_blank_numbers`)."""
    for inc in list(root.iter("include")):
        where = D.where(inc, filename)
        if depth >= MAX_INCLUDE_DEPTH:
            raise InputError(f"<include> nested deeper than {MAX_INCLUDE_DEPTH} levels (a cycle?)", where=where)
        for a in inc.attrib:
            if a not in ("file", "_src"):
                raise InputError(f"unknown attribute '{a}' in <include>", where=where)
        f = inc.get("file")
        if not f:
            raise InputError("<include> requires 'file'", where=where)
        src_dir = Path(inc.get("_src")).parent if inc.get("_src") else basedir
        path = (src_dir / f)
        if not inputs.is_file(path):
            raise InputError(f"included file '{f}' not found (looked for {path})", where=where)
        sub = parse_xml(path)
        subname = str(path)
        for el in sub.iter():
            if isinstance(el.tag, str) and el.get("_src") is None:
                el.set("_src", subname)
        sub_basedir = path.parent
        # nested includes resolve relative to the included file
        expand_includes(sub, subname, sub_basedir, depth + 1)
        parent = inc.getparent()
        idx = parent.index(inc)
        parent.remove(inc)
        for k, child in enumerate([c for c in sub]):
            parent.insert(idx + k, child)

    if depth == 0:
        D.drop_blank_numbers(root, filename)


def load_mjcf_root(root, filename: str, basedir: Path) -> Model:
    """Compile an already-parsed MJCF element tree (``<mujoco>`` root) into a Model."""
    root = copy.deepcopy(root)
    expand_includes(root, filename, Path(basedir))
    expand_replicates(root, filename)
    scene = Reader(root, filename, Path(basedir)).read()
    model = compile_scene(scene)
    model.source = str(filename)
    return model


def load_mjcf(path) -> Model:
    """Load an MJCF file into a Model (``<include>`` files resolve relative to the including file)."""
    p = Path(path)
    root = parse_xml(p)
    return load_mjcf_root(root, str(path), p.resolve().parent)
