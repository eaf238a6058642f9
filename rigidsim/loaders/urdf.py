"""URDF loader: a URDF robot becomes an MJCF element tree, compiled by the MJCF loader.

`urdf_to_mjcf` translates the document the way MuJoCo's own URDF import
(``mujoco.MjModel.from_xml_path`` on a ``.urdf``, MuJoCo 4.0.0) reads it, so
that our compile of the result and MuJoCo's compile of the URDF agree; the
tests check it against MuJoCo. `rigidsim.loaders.urdf_compile.load_urdf`
hands the tree to the MJCF compiler (this module imports no MJCF code, so
the MJCF reader can translate a URDF it is asked to ``<attach>``).

How URDF maps onto MuJoCo (what MuJoCo's importer does, and so do we):

- Every ``<link>`` is a body named after it. The link called ``world`` is the
  world body itself; a link that is no joint's child is a root, placed at the
  origin, with no joint (MuJoCo adds no free joint to URDF roots).
- Joints: revolute and continuous -> hinge, prismatic -> slide, fixed -> no
  joint, floating -> free (legal only where the child ends up a child of the
  world), planar -> two slides and a hinge named NAME_TX, NAME_TY, NAME_RZ in
  the plane normal to ``axis``, spherical (Bullet's extension) -> ball. The
  joint ``<origin>`` is the child body's pose, ``axis`` defaults to x.
- ``<limit>``: lower and upper give the range, limited only when both are
  present and lower < upper (continuous joints ignore them); ``effort`` gives
  the actuator force range +-|effort|; ``velocity`` has no MuJoCo meaning and
  is dropped. On a planar joint, limit and effort go to its first slide.
  ``<dynamics>``: damping -> damping, friction -> frictionloss.
- ``<mimic joint=J multiplier=k offset=c>`` -> an equality
  ``<joint joint1=THIS joint2=J polycoef="c k 0 0 0">``.
- ``<inertial>``: mass, centre (origin xyz) and the full inertia tensor rotated
  by origin rpy; all six inertia numbers zero means a point mass. A link with
  no ``<inertial>`` takes its inertia from its collision geoms (density 1000).
- ``<collision>``: box, cylinder, sphere, capsule (an extension MuJoCo reads)
  and mesh with ``scale``. A mesh asset is named after its file stem, with an
  index appended for a second scale of the same file. ``<visual>`` is dropped
  (``discardvisual``), unless ``discardvisual="false"``: then it becomes a
  non-colliding geom of group 1 and zero density.
- Static bodies (fixed joints, roots) are fused into their parent
  (``fusestatic``, on for URDF): their geoms and children move to the parent,
  their mass and inertia are added to it (not when the parent is the world,
  where they have no effect). We fuse here, in the translation, so the MJCF we
  emit has MuJoCo's final body structure.
- ``<mujoco>`` inside ``<robot>`` may hold ``<compiler>`` (meshdir, assetdir,
  strippath, fusestatic, discardvisual, inertiafromgeom, autolimits="true",
  angle - ignored, URDF angles are radians), ``<option>`` and ``<size>``, which
  are copied into the MJCF.

Mesh files (our rule; MuJoCo itself only opens plain paths):

- ``package://NAME/REST``: the first of DIR/NAME/REST or DIR/REST (when DIR is
  itself named NAME), for DIR in the ``RIGIDSIM_PACKAGE_PATH`` directories
  (``os.pathsep``-separated, searched first), then the URDF's directory and
  each of its parents.
- ``file:///abs/path`` and absolute paths are used as they are.
- A relative path is taken from meshdir (itself relative to the URDF's
  directory), or from the URDF's directory, as MuJoCo does.
- With ``strippath="true"`` the directories are dropped first and the bare
  file name is looked up in meshdir, as MuJoCo does.

Colours, as MuJoCo's import gives them: every named ``<material>`` holding a
``<color rgba>``, anywhere in the file (the first of a name wins), is a named
colour. Each link keeps a current colour, unset at its start; its elements are
read in document order, and a ``<visual>`` whose first ``<material>`` has a
``<color>`` sets it to that, else one naming a coloured material sets it to
that material's (an unknown or colourless name leaves it as it was). Every
geom (collision, and visual when kept) takes the current colour when set,
else MuJoCo's default grey (0.5 0.5 0.5 1). A ``<material>`` inside
``<collision>`` is ignored, as are textures. No MuJoCo material is made.

Ignored, as MuJoCo ignores them (no effect on the dynamics): ``<transmission>``,
``<gazebo>``, ``<ros2_control>``, ``<calibration>``, ``<safety_controller>``,
limit ``velocity``, and Bullet's ``<contact>`` inside ``<link>`` (its friction,
stiffness and damping have no MuJoCo counterpart in the import; set contact
parameters in an MJCF that attaches the robot).

Refused with file, line and name: unknown joint types, any other element MuJoCo
would skip silently (xacro macros, ...), a link or
joint defined twice, a joint whose parent or child link is undefined, a link
with two parents, a cycle, a mimic of a joint that is missing or not one-dof, a
zero axis, a link inertia MuJoCo refuses (not positive definite, A + B < C) or a
negative mass, missing meshes and mesh formats other than STL/OBJ/MSH, an
``<inertial>`` on the world link, ``<compiler>`` attributes other than those
above, and a mesh geom whose inertia would have to be combined with an
explicit ``<inertial>`` by fusion (give that link an ``<inertial>``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
from lxml import etree

from rigidsim.errors import InputError
from rigidsim.loaders import inputs
from rigidsim.loaders.urdf_frames import _Pose, _fmt, _quat_mat, _rpy_quat, _z_to
from rigidsim.loaders.xmlsafe import parse_xml

PACKAGE_PATH_ENV = inputs.PACKAGE_PATH_ENV
DENSITY = 1000.0  # MuJoCo's default geom density, used for links without <inertial>
MINVAL = 1e-15  # MuJoCo's mjMINVAL: masses below it are not fused

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")
_IGNORED_TOP = ("transmission", "gazebo", "ros2_control", "material")
_IGNORED_JOINT = ("calibration", "safety_controller")
_IGNORED_LINK = ("contact",)  # Bullet's contact parameters: MuJoCo's import skips them
_COMPILER_ATTRS = ("meshdir", "assetdir", "strippath", "fusestatic", "discardvisual",
                   "inertiafromgeom", "autolimits", "angle")


# ----------------------------------------------------------------------------- parsed URDF

class _Geom:
    def __init__(self, el, kind: str, size, pose: _Pose, name: str, collision: bool, mesh: str = ""):
        self.el, self.kind, self.size, self.pose = el, kind, np.asarray(size, float), pose
        self.name, self.collision, self.mesh = name, collision, mesh
        self.rgba: Optional[np.ndarray] = None  # None: MuJoCo's default geom colour


class _Link:
    def __init__(self, el, name: str):
        self.el, self.name = el, name
        self.inertial: Optional[Tuple[float, np.ndarray, np.ndarray]] = None  # mass, com, I (link frame)
        self.geoms: List[_Geom] = []
        self.parent_joint: Optional["_Joint"] = None
        self.children: List["_Joint"] = []


class _Joint:
    def __init__(self, el, name: str, jtype: str, parent: str, child: str):
        self.el, self.name, self.type, self.parent, self.child = el, name, jtype, parent, child
        self.origin = _Pose()
        self.axis = np.array([1.0, 0.0, 0.0])
        self.lower: Optional[float] = None
        self.upper: Optional[float] = None
        self.effort = 0.0
        self.damping = 0.0
        self.friction = 0.0
        self.mimic = None  # (element, joint name, multiplier, offset)


class _Translator:
    def __init__(self, root, filename: str, basedir: Path):
        self.root, self.filename, self.basedir = root, filename, Path(basedir)
        self.links: Dict[str, _Link] = {}
        self.joints: Dict[str, _Joint] = {}
        self.meshes: Dict[str, List[Tuple[np.ndarray, Path, str]]] = {}  # stem -> (scale, file, name)
        self.mesh_order: List[Tuple[str, Path, np.ndarray, int]] = []
        self.geom_names: set = set()
        self.meshdir: Optional[str] = None
        self.strippath = False
        self.fusestatic = True
        self.discardvisual = True
        self.inertiafromgeom = "auto"
        self.option_els: List = []
        self.materials: Dict[str, np.ndarray] = {}  # named <material> with a <color>, anywhere: name -> rgba

    # ---- errors and attribute readers

    def err(self, msg: str, el=None) -> InputError:
        line = getattr(el, "sourceline", None) if el is not None else None
        return InputError(msg, where=f"{self.filename}:{line if line else '?'}")

    def _what(self, el) -> str:
        name = el.get("name")
        return f"<{el.tag} name=\"{name}\">" if name is not None else f"<{el.tag}>"

    def text(self, el, attr: str, required: bool = True) -> Optional[str]:
        v = el.get(attr)
        if v is None and required:
            raise self.err(f"{self._what(el)} needs the attribute '{attr}'", el)
        return v

    def floats(self, el, attr: str, n: int, default=None, required: bool = False):
        v = el.get(attr)
        if v is None:
            if required:
                raise self.err(f"{self._what(el)} needs the attribute '{attr}' ({n} number{'s' * (n > 1)})", el)
            return default
        parts = v.split()
        try:
            vals = [float(p) for p in parts]
        except ValueError:
            vals = None
        if vals is None or len(vals) != n or not all(math.isfinite(x) for x in vals):
            raise self.err(f"{self._what(el)} attribute {attr}=\"{v}\" must be {n} finite "
                           f"number{'s' * (n > 1)}", el)
        return np.array(vals) if n > 1 else vals[0]

    def boolean(self, el, attr: str, default: bool) -> bool:
        v = el.get(attr)
        if v is None:
            return default
        if v not in ("true", "false"):
            raise self.err(f"<{el.tag}> attribute {attr}=\"{v}\" must be 'true' or 'false'", el)
        return v == "true"

    def children(self, el, allowed, ignored=()):
        out = []
        for c in el:
            if not isinstance(c.tag, str):
                continue
            if c.tag in ignored:
                continue
            if c.tag not in allowed:
                hint = ""
                if ":" in c.tag or c.tag.startswith("{"):
                    hint = " (xacro or another namespace: expand the file with xacro first)"
                raise self.err(f"<{c.tag}> inside {self._what(el)} is not supported by rigidsim's URDF "
                               f"loader{hint}; expected one of: {', '.join('<%s>' % a for a in allowed)}", c)
            out.append(c)
        return out

    def one(self, el, tag: str, required: bool = False):
        found = [c for c in el if isinstance(c.tag, str) and c.tag == tag]
        if len(found) > 1 and tag not in ("visual", "collision"):
            raise self.err(f"{self._what(el)} has {len(found)} <{tag}> elements, expected at most one", found[1])
        if not found:
            if required:
                raise self.err(f"{self._what(el)} needs a <{tag}> element", el)
            return None
        return found[0]

    def origin(self, el) -> _Pose:
        o = self.one(el, "origin")
        if o is None:
            return _Pose()
        xyz = self.floats(o, "xyz", 3, np.zeros(3))
        rpy = o.get("rpy")
        return _Pose(xyz, _rpy_quat(self.floats(o, "rpy", 3)) if rpy is not None else (1, 0, 0, 0))

    # ---- the <mujoco> extension

    def mujoco_ext(self, el):
        secs = self.children(el, ("compiler", "option", "size"))
        for k, sec in enumerate(secs):
            if any(o.tag == sec.tag for o in secs[:k]):
                raise self.err(f"the URDF's <mujoco> element has more than one <{sec.tag}>", sec)
            if sec.tag == "compiler":
                for a in sec.attrib:
                    if a not in _COMPILER_ATTRS:
                        raise self.err(f"<compiler {a}=...> inside the URDF's <mujoco> element is not "
                                       f"supported by rigidsim's URDF loader; supported: "
                                       f"{', '.join(_COMPILER_ATTRS)}", sec)
                self.meshdir = sec.get("meshdir", sec.get("assetdir"))
                self.strippath = self.boolean(sec, "strippath", False)
                self.fusestatic = self.boolean(sec, "fusestatic", True)
                self.discardvisual = self.boolean(sec, "discardvisual", True)
                if not self.boolean(sec, "autolimits", True):
                    raise self.err("<compiler autolimits=\"false\"> is not supported for URDF: URDF limits "
                                   "carry no 'limited' flag", sec)
                self.inertiafromgeom = sec.get("inertiafromgeom", "auto")
                if self.inertiafromgeom not in ("auto", "true", "false"):
                    raise self.err(f"<compiler inertiafromgeom=\"{self.inertiafromgeom}\"> must be "
                                   "'auto', 'true' or 'false'", sec)
            else:
                self.option_els.append(sec)

    # ---- links

    def link(self, el):
        name = self.text(el, "name")
        if name in self.links:
            raise self.err(f"link '{name}' is defined twice (first at line {self.links[name].el.sourceline})", el)
        ln = _Link(el, name)
        self.links[name] = ln
        rgba = None  # the colour of the link's latest <visual> so far, in document order
        for c in self.children(el, ("inertial", "visual", "collision"), _IGNORED_LINK):
            if c.tag == "inertial":
                if self.one(el, "inertial") is not c:
                    raise self.err(f"link '{name}' has more than one <inertial>", c)
                ln.inertial = self.inertial(c)
                continue
            if c.tag == "visual":
                rgba = self.visual_rgba(c, rgba)
            if c.tag == "collision" or not self.discardvisual:
                g = self.geom(c, name)
                if g is not None:
                    g.rgba = rgba
                    ln.geoms.append(g)
            else:
                self.children(c, ("origin", "geometry", "material"))
        if name == "world" and ln.inertial is not None:
            raise self.err("the link 'world' is the world body, which cannot move; its <inertial> would have "
                           "no effect, remove it", el)

    # ---- colours

    def color(self, el) -> np.ndarray:
        """The rgba of a <color> element."""
        return self.floats(el, "rgba", 4, required=True)

    def collect_materials(self):
        """Every named <material> with a <color>, at any depth, in document order; the first of a name wins."""
        for m in self.root.iter("material"):
            name = m.get("name")
            col = _first(m, "color")
            if name is not None and col is not None and name not in self.materials:
                self.materials[name] = self.color(col)

    def visual_rgba(self, el, rgba):
        """The link's colour after the <visual> `el`: its material's <color>, else the colour of the named
        material (when one has a colour), else unchanged."""
        mat = _first(el, "material")
        if mat is None:
            return rgba
        col = _first(mat, "color")
        if col is not None:
            return self.color(col)
        name = self.text(mat, "name")
        return self.materials.get(name, rgba)

    def inertial(self, el):
        self.children(el, ("origin", "mass", "inertia"))
        pose = self.origin(el)
        mass = self.floats(self.one(el, "mass", required=True), "value", 1, required=True)
        ie = self.one(el, "inertia", required=True)
        vals = [self.floats(ie, a, 1, required=True) for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")]
        ixx, iyy, izz, ixy, ixz, iyz = vals
        full = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        link = el.getparent().get("name")
        if mass < 0:
            raise self.err(f"link '{link}' has a negative mass ({mass})", el)
        if np.any(full) and self.inertiafromgeom != "true":
            # MuJoCo checks each link before fusing it, so a fused link's bad inertia is refused too
            lam = np.linalg.eigvalsh(full)
            if lam[0] < MINVAL:
                raise self.err(f"the inertia of link '{link}' is not positive definite (principal moments "
                               f"{_fmt(lam)}); MuJoCo refuses it", ie)
            if lam[0] + lam[1] < lam[2] * (1 - 1e-12):
                raise self.err(f"the inertia of link '{link}' is not physical: its principal moments "
                               f"{_fmt(lam)} break A + B >= C; MuJoCo refuses it", ie)
        r = _quat_mat(pose.quat)
        return mass, pose.pos, r @ full @ r.T  # all zeros -> a point mass, as MuJoCo reads it

    def geom(self, el, link: str) -> Optional[_Geom]:
        collision = el.tag == "collision"
        self.children(el, ("origin", "geometry", "material"))  # <material> is visual only, in <collision> too
        g = self.one(el, "geometry", required=True)
        shapes = self.children(g, ("box", "cylinder", "sphere", "capsule", "mesh"))
        if len(shapes) != 1:
            raise self.err(f"<geometry> of link '{link}' must hold exactly one of <box>, <cylinder>, <sphere>, "
                           f"<capsule>, <mesh>; it holds {len(shapes)}", g)
        s = shapes[0]
        mesh = ""
        if s.tag == "box":
            size = self.floats(s, "size", 3, required=True) / 2
        elif s.tag in ("cylinder", "capsule"):
            size = [self.floats(s, "radius", 1, required=True), self.floats(s, "length", 1, required=True) / 2]
        elif s.tag == "sphere":
            size = [self.floats(s, "radius", 1, required=True)]
        else:
            size = []
            mesh = self.mesh(s)
        size = np.concatenate([np.asarray(size, float), np.zeros(3 - len(size))])
        if s.tag != "mesh" and np.any(size[:{"box": 3, "sphere": 1}.get(s.tag, 2)] <= 0):
            raise self.err(f"<{s.tag}> of link '{link}' has a size that is not positive", s)
        name = el.get("name", "")
        if name in self.geom_names:
            name = ""  # MuJoCo leaves a repeated geom name unnamed
        elif name:
            self.geom_names.add(name)
        return _Geom(el, s.tag, size, self.origin(el), name, collision, mesh)

    # ---- meshes

    def resolve_mesh(self, el, fname: str) -> Path:
        if self.strippath:
            fname = fname.replace("\\", "/").rsplit("/", 1)[-1]
        tried: List[Path] = []
        if fname.startswith("package://"):
            rest = fname[len("package://"):]
            pkg, _, sub = rest.partition("/")
            dirs = [Path(d) for d in os.environ.get(PACKAGE_PATH_ENV, "").split(os.pathsep) if d]
            base = self.basedir.resolve()
            dirs += [base, *base.parents]
            for d in dirs:
                for cand in (d / pkg / sub, d / sub if d.name == pkg else None):
                    if cand is not None:
                        tried.append(cand)
                        if inputs.is_file(cand):
                            return cand.resolve()
            raise self.err(f"mesh file '{fname}' not found: no folder '{pkg}' holding '{sub}' in "
                           f"{PACKAGE_PATH_ENV} or in {base} and its parents. Set {PACKAGE_PATH_ENV} to the "
                           "folder that holds the package, or give the mesh a path relative to the URDF", el)
        if fname.startswith("file://"):
            fname = fname[len("file://"):]
        p = Path(fname)
        if not p.is_absolute():
            d = self.basedir
            if self.meshdir:
                d = Path(self.meshdir) if Path(self.meshdir).is_absolute() else self.basedir / self.meshdir
            p = d / p
        if not inputs.is_file(p):
            raise self.err(f"mesh file '{fname}' not found (looked for {p})", el)
        return p.resolve()

    def mesh(self, el) -> str:
        fname = self.text(el, "filename")
        scale = self.floats(el, "scale", 3, np.ones(3))
        path = self.resolve_mesh(el, fname)
        if path.suffix.lower() not in (".stl", ".obj", ".msh"):
            raise self.err(f"mesh file '{fname}' is not STL, OBJ or MSH, the formats MuJoCo reads; convert it "
                           "(a collision mesh in another format has no decoder in MuJoCo either)", el)
        stem = fname.replace("\\", "/").rsplit("/", 1)[-1]
        stem = stem.rsplit(".", 1)[0] if "." in stem else stem
        versions = self.meshes.setdefault(stem, [])
        for sc, p, name in versions:
            if np.array_equal(sc, scale):
                if p != path:
                    raise self.err(f"mesh files '{p}' and '{path}' share the name '{stem}'; MuJoCo's URDF import "
                                   "would load the first for both. Rename one of them", el)
                return name
        name = stem if not versions else f"{stem}{len(versions)}"
        versions.append((scale, path, name))
        self.mesh_order.append((name, path, scale, el.sourceline))
        return name

    # ---- joints

    def joint(self, el):
        name = self.text(el, "name")
        jtype = self.text(el, "type")
        if jtype not in _JOINT_TYPES:
            raise self.err(f"joint '{name}' has the unknown type '{jtype}'; expected one of: "
                           f"{', '.join(_JOINT_TYPES)}", el)
        if name in self.joints:
            raise self.err(f"joint '{name}' is defined twice (first at line {self.joints[name].el.sourceline})", el)
        self.children(el, ("origin", "parent", "child", "axis", "limit", "dynamics", "mimic"), _IGNORED_JOINT)
        ends = []
        for tag in ("parent", "child"):
            e = self.one(el, tag, required=True)
            lk = self.text(e, "link")
            if lk not in self.links:
                raise self.err(f"joint '{name}' names the {tag} link '{lk}', which is not defined", e)
            ends.append(lk)
        j = _Joint(el, name, jtype, *ends)
        j.origin = self.origin(el)
        ax = self.one(el, "axis")
        if ax is not None:
            j.axis = self.floats(ax, "xyz", 3, required=True)
            if jtype not in ("fixed", "floating") and np.linalg.norm(j.axis) < 1e-10:
                raise self.err(f"joint '{name}' has a zero axis", ax)
        lim = self.one(el, "limit")
        if lim is not None:
            if jtype == "floating":
                raise self.err(f"floating joint '{name}' cannot have a <limit>", lim)
            j.lower = self.floats(lim, "lower", 1)
            j.upper = self.floats(lim, "upper", 1)
            self.floats(lim, "velocity", 1)  # checked, no MuJoCo counterpart
            j.effort = abs(self.floats(lim, "effort", 1, 0.0))
            if jtype == "spherical" and j.lower not in (None, 0.0):
                raise self.err(f"spherical joint '{name}': MuJoCo's ball joint limit is a cone angle, so lower "
                               f"must be 0 (it is {j.lower})", lim)
        dyn = self.one(el, "dynamics")
        if dyn is not None:
            j.damping = self.floats(dyn, "damping", 1, 0.0)
            j.friction = self.floats(dyn, "friction", 1, 0.0)
        mim = self.one(el, "mimic")
        if mim is not None:
            j.mimic = (mim, self.text(mim, "joint"), self.floats(mim, "multiplier", 1, 1.0),
                       self.floats(mim, "offset", 1, 0.0))
            if jtype not in ("revolute", "continuous", "prismatic"):
                raise self.err(f"joint '{name}' of type '{jtype}' cannot mimic another joint; a mimic needs a "
                               "revolute, continuous or prismatic joint", mim)
        child = self.links[j.child]
        if child.parent_joint is not None:
            raise self.err(f"link '{j.child}' has two parents: joint '{child.parent_joint.name}' "
                           f"(line {child.parent_joint.el.sourceline}) and joint '{name}'", el)
        if j.child == "world":
            raise self.err(f"joint '{name}' makes the world link a child; 'world' must be the root", el)
        child.parent_joint = j
        self.links[j.parent].children.append(j)
        self.joints[name] = j

    # ---- inertia of links without <inertial>

    def geom_inertia(self, g: _Geom, link: _Link):
        """Mass, centre and inertia tensor (link frame) of a collision geom at MuJoCo's default density."""
        if not g.collision:
            return 0.0, g.pose.pos, np.zeros((3, 3))
        s = g.size
        if g.kind == "sphere":
            m = DENSITY * 4 / 3 * math.pi * s[0] ** 3
            d = np.full(3, 0.4 * m * s[0] ** 2)
        elif g.kind == "box":
            m = DENSITY * 8 * s[0] * s[1] * s[2]
            d = m / 3 * np.array([s[1] ** 2 + s[2] ** 2, s[0] ** 2 + s[2] ** 2, s[0] ** 2 + s[1] ** 2])
        elif g.kind == "cylinder":
            m = DENSITY * math.pi * s[0] ** 2 * 2 * s[1]
            ixx = m * (3 * s[0] ** 2 + 4 * s[1] ** 2) / 12
            d = np.array([ixx, ixx, m * s[0] ** 2 / 2])
        elif g.kind == "capsule":
            r, h = s[0], 2 * s[1]
            mc = DENSITY * math.pi * r * r * h
            ms = DENSITY * 4 / 3 * math.pi * r ** 3
            ixx = mc * (3 * r * r + h * h) / 12 + ms * (0.4 * r * r + h * h / 4 + 3 * h * r / 8)
            m, d = mc + ms, np.array([ixx, ixx, mc * r * r / 2 + 0.4 * ms * r * r])
        else:
            raise self.err(f"link '{link.name}' has no <inertial>, so its inertia would come from its mesh geom, "
                           "and fusing it with a link that has an <inertial> needs that mesh inertia here, which "
                           "rigidsim's URDF loader does not compute; give the link an <inertial>", g.el)
        r = _quat_mat(g.pose.quat)
        return m, g.pose.pos, r @ np.diag(d) @ r.T

    def link_inertia(self, ln: _Link) -> Optional[Tuple[float, np.ndarray, np.ndarray]]:
        """The link's own (mass, com, inertia) in its frame; None when it comes from its geoms."""
        if ln.inertial is not None and self.inertiafromgeom != "true":
            return ln.inertial
        if self.inertiafromgeom == "false":
            return 0.0, np.zeros(3), np.zeros((3, 3))
        return None

    # ---- the whole document

    def run(self):
        root = self.root
        if root.tag != "robot":
            raise self.err(f"the root element is <{root.tag}>, expected <robot> (URDF)", root)
        top = self.children(root, ("link", "joint", "mujoco"), _IGNORED_TOP)
        ext = [e for e in top if e.tag == "mujoco"]
        if len(ext) > 1:
            raise self.err("the URDF has more than one <mujoco> element", ext[1])
        if ext:
            self.mujoco_ext(ext[0])
        if getattr(self, "fuse_override", None) is not None:
            self.fusestatic = self.fuse_override
        self.collect_materials()
        for e in top:
            if e.tag == "link":
                self.link(e)
        if not self.links:
            raise self.err("the URDF defines no <link>", root)
        for e in top:
            if e.tag == "joint":
                self.joint(e)
        roots = [ln for ln in self.links.values() if ln.parent_joint is None]
        reached = set()
        for r in roots:
            stack = [r]
            while stack:
                ln = stack.pop()
                reached.add(ln.name)
                stack += [self.links[j.child] for j in ln.children]
        for ln in self.links.values():
            if ln.name not in reached:
                raise self.err(f"link '{ln.name}' is part of a cycle of joints; URDF links must form a tree", ln.el)
        return self.emit(roots)

    def emit(self, roots: List[_Link]):
        mj = etree.Element("mujoco", model=self.root.get("name", ""))
        mj.sourceline = self.root.sourceline
        etree.SubElement(mj, "compiler", angle="radian", autolimits="true", fusestatic="false",
                         discardvisual="false", inertiafromgeom=self.inertiafromgeom)
        for o in self.option_els:
            mj.append(_copy(o))
        if self.mesh_order:
            asset = etree.SubElement(mj, "asset")
            for name, path, scale, line in self.mesh_order:
                m = etree.SubElement(asset, "mesh", name=name, file=str(path))
                m.sourceline = line
                if not np.array_equal(scale, np.ones(3)):
                    m.set("scale", _fmt(scale))
        world = etree.SubElement(mj, "worldbody")
        eqs: List[_Joint] = []
        for r in roots:
            if r.name == "world" or self.fusestatic:
                self.fill(world, r, _Pose(), eqs)  # a root has no joint: fused into the world
            else:
                self.body(world, r, _Pose(), eqs)
        if eqs:
            eq = etree.SubElement(mj, "equality")
            for j in sorted(eqs, key=lambda j: j.el.sourceline or 0):
                mim, target, mult, off = j.mimic
                t = self.joints.get(target)
                if t is None or t.type not in ("revolute", "continuous", "prismatic"):
                    what = "is not defined" if t is None else f"is of type '{t.type}'"
                    raise self.err(f"joint '{j.name}' mimics joint '{target}', which {what}; a mimic needs a "
                                   "revolute, continuous or prismatic joint", mim)
                e = etree.SubElement(eq, "joint", joint1=j.name, joint2=target, polycoef=_fmt([off, mult, 0, 0, 0]))
                e.sourceline = mim.sourceline
        for e in mj.iter():
            if e.sourceline is None:
                e.sourceline = self.root.sourceline  # sections we add point at <robot>
        return mj

    def body(self, parent_el, ln: _Link, pose: _Pose, eqs):
        """Emit link `ln` as a body under `parent_el`, at `pose` in the parent's frame."""
        b = etree.SubElement(parent_el, "body", name=ln.name, pos=_fmt(pose.pos), quat=_fmt(pose.quat))
        b.sourceline = ln.el.sourceline
        j = ln.parent_joint
        if j is not None and j.type != "fixed":
            self.joint_els(b, j)
            if j.mimic is not None:
                eqs.append(j)
        self.fill(b, ln, _Pose(), eqs)
        return b

    def fill(self, b, ln: _Link, at: _Pose, eqs):
        """Put link `ln` (at pose `at` in body `b`) into `b`: its geoms, and its children.

        Static children are fused into `b` when fusestatic is on; moving children become bodies.
        The inertial of `b` is written once, by the call that starts the body.
        """
        members: List[Tuple[_Link, _Pose]] = []
        geoms: List[Tuple[_Geom, _Pose]] = []
        kids: List[Tuple[_Link, _Pose]] = []

        def collect(link: _Link, where: _Pose):
            members.append((link, where))
            geoms.extend((g, where) for g in link.geoms)
            for j in link.children:
                c = self.links[j.child]
                cp = where.then(j.origin)
                if self.fusestatic and j.type == "fixed":
                    collect(c, cp)
                else:
                    kids.append((c, cp))

        collect(ln, at)
        is_world = b.tag == "worldbody"
        if not is_world:
            self.inertial_el(b, members)
        for g, where in geoms:
            self.geom_el(b, g, where.then(g.pose))
        for c, cp in kids:
            if c.parent_joint.type == "floating" and not is_world:
                raise self.err(f"floating joint '{c.parent_joint.name}' makes link '{c.name}' a free body, but its "
                               f"parent '{c.parent_joint.parent}' is not the world (nor fused into it); MuJoCo "
                               "allows free joints only on children of the world", c.parent_joint.el)
            self.body(b, c, cp, eqs)

    def inertial_el(self, b, members: List[Tuple[_Link, _Pose]]):
        own = [(self.link_inertia(ln), ln, where) for ln, where in members]
        # fused links of no mass add nothing (MuJoCo fuses only bodies with mass)
        own = [(x, ln, w) for k, (x, ln, w) in enumerate(own) if k == 0 or x is None or x[0] >= MINVAL]
        if all(x is None for x, _, _ in own):
            return  # every member takes its inertia from geoms: the compiler does it for the body
        parts = []
        for k, (x, ln, where) in enumerate(own):
            if x is None:
                gs = [self.geom_inertia(g, ln) for g in ln.geoms]
                m = sum(g[0] for g in gs)
                if m > 0:
                    com = sum(g[0] * g[1] for g in gs) / m
                    inert = sum(g[2] + g[0] * _offset(g[1] - com) for g in gs)
                    x = (m, com, inert)
                else:
                    x = (0.0, np.zeros(3), np.zeros((3, 3)))
            m, com, inert = x
            if k > 0 and m < MINVAL:
                continue  # MuJoCo fuses only bodies with mass
            r = _quat_mat(where.quat)
            parts.append((m, where.pos + r @ com, r @ inert @ r.T))
        mass = sum(p[0] for p in parts)
        el = etree.SubElement(b, "inertial")
        el.sourceline = b.sourceline
        if len(parts) == 1:
            m, com, inert = parts[0]
        elif mass < MINVAL:
            m, com, inert = 0.0, np.zeros(3), np.zeros((3, 3))
        else:
            com = sum(p[0] * p[1] for p in parts) / mass
            inert = sum(p[2] + p[0] * _offset(p[1] - com) for p in parts)
            m = mass
        el.set("pos", _fmt(com))
        el.set("mass", _fmt(m))
        if not np.any(inert):
            el.set("diaginertia", "0 0 0")
        else:
            el.set("fullinertia", _fmt([inert[0, 0], inert[1, 1], inert[2, 2], inert[0, 1], inert[0, 2],
                                        inert[1, 2]]))

    def geom_el(self, b, g: _Geom, pose: _Pose):
        e = etree.SubElement(b, "geom", type=g.kind, pos=_fmt(pose.pos), quat=_fmt(pose.quat))
        e.sourceline = g.el.sourceline
        if g.name:
            e.set("name", g.name)
        if g.kind == "mesh":
            e.set("mesh", g.mesh)
        else:
            n = {"sphere": 1, "box": 3}.get(g.kind, 2)
            e.set("size", _fmt(g.size[:n]))
        if g.rgba is not None:
            e.set("rgba", _fmt(g.rgba))
        if g.collision:
            e.set("contype", "1")
            e.set("conaffinity", "1")
        else:
            e.set("contype", "0")
            e.set("conaffinity", "0")
            e.set("group", "1")
            e.set("density", "0")

    def joint_els(self, b, j: _Joint):
        def add(name, jtype, axis=None):
            e = etree.SubElement(b, "joint", name=name, type=jtype, pos="0 0 0")
            e.sourceline = j.el.sourceline
            if axis is not None:
                e.set("axis", _fmt(axis))
            if j.damping:
                e.set("damping", _fmt(j.damping))
            if j.friction:
                e.set("frictionloss", _fmt(j.friction))
            return e

        if j.type == "floating":
            first = add(j.name, "free")
        elif j.type == "planar":
            rot = _quat_mat(_z_to(j.axis))
            first = add(j.name + "_TX", "slide", rot[:, 0])
            add(j.name + "_TY", "slide", rot[:, 1])
            add(j.name + "_RZ", "hinge", j.axis)
        else:
            jtype = {"revolute": "hinge", "continuous": "hinge", "prismatic": "slide", "spherical": "ball"}[j.type]
            first = add(j.name, jtype, j.axis)
        if j.type not in ("continuous", "floating") and (j.lower is not None or j.upper is not None):
            lo = j.lower if j.lower is not None else 0.0
            hi = j.upper if j.upper is not None else 0.0
            first.set("range", _fmt([lo, hi]))
            good = j.lower is not None and j.upper is not None and lo < hi
            first.set("limited", "true" if good else "false")
        if j.effort > 0:
            first.set("actuatorfrcrange", _fmt([-j.effort, j.effort]))
            first.set("actuatorfrclimited", "true")


def _offset(d) -> np.ndarray:
    """Inertia of a unit point mass at offset d about the origin (parallel axes)."""
    d = np.asarray(d, float)
    return np.dot(d, d) * np.eye(3) - np.outer(d, d)


def _first(el, tag: str):
    """The first child element `tag` of `el`, or None (MuJoCo's importer reads only the first)."""
    return next((c for c in el if isinstance(c.tag, str) and c.tag == tag), None)


def _copy(el):
    c = etree.Element(el.tag, dict(el.attrib))
    c.sourceline = el.sourceline
    for k in el:
        if isinstance(k.tag, str):
            c.append(_copy(k))
    return c


# ----------------------------------------------------------------------------- public API

def urdf_to_mjcf(root, filename: str, basedir: Path, fusestatic: Optional[bool] = None):
    """Translate a parsed URDF <robot> element into an MJCF <mujoco> element (lxml).

    `fusestatic`: None, the URDF's own setting (on unless its <mujoco><compiler> says otherwise); False for
    a robot attached into an MJCF (<attach>), whose links stay bodies as in MuJoCo (the parent's compiler
    decides, and fuses nothing by default).

    Mesh files are written with absolute paths; every emitted element carries the
    source line of the URDF element it came from, so errors found later point there.
    """
    t = _Translator(root, str(filename), Path(basedir))
    t.fuse_override = fusestatic
    return t.run()
