"""A sweep over MuJoCo's whole MJCF schema: every element's every attribute, one at a time, set to a valid
value and to invalid ones, compiled by rigidsim and by MuJoCo (issue 28).

The element and attribute list is MuJoCo's own, read at run time from the installed package
(``mujoco.mj_printSchema``), so the sweep follows the MuJoCo version the suite tests against. Each element is
placed in a small base scene (`BASE`: bodies with hinge, slide, ball and free joints, geoms of several types, a
mesh, sites, tendons, equalities, actuators, a sensor, a keyframe); elements the base lacks are added under
their parent with the attributes they need (`REQUIRED`). The attribute's type, and so its values, comes from
rigidsim's table of MuJoCo's attribute kinds (`rigidsim.loaders.mjcf_attrs`), with `VALID` overrides where a
generic number is not a meaningful value; an attribute that table lacks gets the first of `PROBES` MuJoCo
accepts.

Outcomes of one case (`Case.outcome`):

* ``equal``: both compile and `compare_models` finds no difference;
* ``both_refuse``: both refuse;
* ``unsupported``: MuJoCo compiles, rigidsim refuses with an InputError saying the feature is not supported
  (or refuses a non-finite number, which it documents);
* ``differ``: both compile, the compiled fields differ;
* ``accepts_refused``: rigidsim compiles what MuJoCo refuses;
* ``refuses_accepted``: rigidsim refuses, with some other InputError, what MuJoCo compiles;
* ``crash``: rigidsim raised something that is not an InputError (an internal error for the user), in the
  loader, in the option resolution or in the engine's feature check (`runner.unsupported`), which is where
  ``<option viscosity>`` crashed.

`python -m tests.schema_sweep` prints the counts and every case that is not equal / both_refuse / unsupported.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from lxml import etree

Path_ = Tuple[str, ...]

# ------------------------------------------------------------------ MuJoCo's schema


def mujoco_schema() -> List[Tuple[Path_, List[str]]]:
    """(element path, attributes) for every element of the installed MuJoCo's schema, in its order. The
    world body's row is ``("worldbody",)``; its children (``("worldbody", "geom")``) are any body's."""
    import mujoco

    rows: List[Tuple[Path_, List[str]]] = []
    stack: List[str] = []
    for line in mujoco.mj_printSchema(False, False).splitlines():
        if not line.strip():
            continue
        head, attrs = line[:30], line[30:].split()
        if head.strip():
            depth = (len(head) - len(head.lstrip())) // 3
            tag = head.split()[0].replace("(world)body", "worldbody")
            stack[depth:] = [tag]
            rows.append((tuple(stack[1:]), attrs))
        else:
            rows[-1][1].extend(attrs)
    return [(p, a) for p, a in rows if p]


# ------------------------------------------------------------------ the base scene

BASE = """<mujoco model="base">
  <compiler autolimits="true"/>
  <option timestep="0.002"><flag energy="enable"/></option>
  <size nkey="1"/>
  <statistic meansize="0.1"/>
  <visual><global fovy="45"/><quality shadowsize="1024"/><headlight active="1"/><map znear="0.01"/>
    <scale com="0.1"/><rgba com="1 0 0 1"/></visual>
  <default>
    <joint damping="0.01"/>
    <geom rgba="0.5 0.5 0.5 1"/>
    <default class="c1"><joint armature="0.01"/><geom friction="0.9"/></default>
  </default>
  <asset>
    <mesh name="m_tet" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/>
    <hfield name="h1" nrow="2" ncol="2" elevation="0 1 1 0" size="1 1 0.1 0.1"/>
    <texture name="tex1" type="2d" builtin="checker" width="8" height="8" rgb1="1 1 1" rgb2="0 0 0"/>
    <material name="mat1" texture="tex1"/>
  </asset>
  <worldbody>
    <geom name="g_floor" type="plane" size="5 5 0.1"/>
    <body name="b1" pos="0 0 1">
      <joint name="j_hinge" type="hinge" axis="0 1 0"/>
      <joint name="j_slide" type="slide" axis="1 0 0"/>
      <geom name="g_box" type="box" size="0.1 0.2 0.3"/>
      <geom name="g_sphere" type="sphere" size="0.05" pos="0 0 0.4"/>
      <site name="s1" pos="0.1 0 0"/>
      <camera name="cam1" pos="0 -1 0"/>
      <light name="l1" pos="0 0 1"/>
      <body name="b2" pos="0 0 -0.5">
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
        <joint name="j_ball" type="ball"/>
        <geom name="g_capsule" type="capsule" size="0.05 0.1"/>
        <geom name="g_mesh" type="mesh" mesh="m_tet" pos="0.2 0 0"/>
        <geom name="g_cyl" type="cylinder" size="0.05 0.1" pos="0 0.3 0"/>
        <site name="s2" pos="0 0 -0.1"/>
        <site name="s3" pos="0 0.1 -0.1"/>
      </body>
    </body>
    <body name="b3" pos="2 0 1">
      <freejoint name="j_free"/>
      <geom name="g_ell" type="ellipsoid" size="0.1 0.2 0.3"/>
    </body>
    <body name="b_mocap" mocap="true" pos="0 2 1"><geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
  </worldbody>
  <contact>
    <pair name="p1" geom1="g_box" geom2="g_ell"/>
    <exclude name="x1" body1="b1" body2="b3"/>
  </contact>
  <equality>
    <connect name="e_connect" body1="b3" anchor="0 0 0"/>
    <weld name="e_weld" body1="b2" body2="b3"/>
    <joint name="e_joint" joint1="j_hinge" joint2="j_slide"/>
    <tendon name="e_tendon" tendon1="t_fixed"/>
  </equality>
  <tendon>
    <spatial name="t_spatial" width="0.01"><site site="s1"/><site site="s2"/></spatial>
    <fixed name="t_fixed"><joint joint="j_hinge" coef="1"/><joint joint="j_slide" coef="-0.5"/></fixed>
  </tendon>
  <actuator>
    <general name="a_gen" joint="j_hinge"/>
    <motor name="a_motor" joint="j_slide"/>
    <position name="a_pos" joint="j_hinge" kp="10"/>
    <velocity name="a_vel" tendon="t_fixed" kv="1"/>
    <intvelocity name="a_intvel" joint="j_slide" kp="5" actrange="-1 1"/>
    <damper name="a_damper" joint="j_hinge" kv="1" ctrlrange="0 1"/>
  </actuator>
  <sensor>
    <jointpos name="sn1" joint="j_hinge"/>
  </sensor>
  <keyframe>
    <key name="k1" time="0.5"/>
  </keyframe>
</mujoco>
"""

# attributes an element added to the base needs, by its path (or its tag, for sensors)
_SITE_S = {"site": "s1"}
REQUIRED: Dict[object, Dict[str, str]] = {
    ("asset", "skin"): {"vertex": "0 0 0  1 0 0  0 1 0", "face": "0 1 2"},
    ("asset", "skin", "bone"): {"body": "b1", "bindpos": "0 0 0", "bindquat": "1 0 0 0", "vertid": "0 1 2",
                                "vertweight": "1 1 1"},
    ("asset", "material", "layer"): {"texture": "tex1", "role": "rgb"},
    ("default", "material", "layer"): {"texture": "tex1", "role": "rgb"},
    ("asset", "model"): {"name": "mdl", "file": "zz_missing.xml"},
    ("worldbody", "attach"): {"model": "mdl", "body": "b1", "prefix": "x_"},
    ("tendon", "spatial", "pulley"): {"divisor": "2"},
    ("custom", "numeric"): {"name": "cn", "data": "1 2"},
    ("custom", "text"): {"name": "ct", "data": "hello"},
    ("custom", "tuple"): {"name": "cu"},
    ("custom", "tuple", "element"): {"objtype": "body", "objname": "b1", "prm": "0.5"},
    ("equality", "flex"): {"flex": "zz_missing"},
    ("equality", "flexstrain"): {"flex": "zz_missing"},
}
for _t in ("touch", "accelerometer", "velocimeter", "gyro", "force", "torque", "magnetometer", "rangefinder",
           "camprojection", "insidesite"):
    REQUIRED[_t] = dict(_SITE_S)
REQUIRED["camprojection"]["camera"] = "cam1"
REQUIRED["insidesite"].update(objtype="body", objname="b1")
for _t in ("jointpos", "jointvel", "jointlimitpos", "jointlimitvel", "jointlimitfrc", "jointactuatorfrc"):
    REQUIRED[_t] = {"joint": "j_hinge"}
for _t in ("ballquat", "ballangvel"):
    REQUIRED[_t] = {"joint": "j_ball"}
for _t in ("tendonpos", "tendonvel", "tendonlimitpos", "tendonlimitvel", "tendonlimitfrc", "tendonactuatorfrc"):
    REQUIRED[_t] = {"tendon": "t_fixed"}
for _t in ("actuatorpos", "actuatorvel", "actuatorfrc"):
    REQUIRED[_t] = {"actuator": "a_motor"}
for _t in ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis", "framelinvel", "frameangvel",
           "framelinacc", "frameangacc"):
    REQUIRED[_t] = {"objtype": "body", "objname": "b1"}
for _t in ("subtreecom", "subtreelinvel", "subtreeangmom"):
    REQUIRED[_t] = {"body": "b1"}
for _t in ("distance", "normal", "fromto"):
    REQUIRED[_t] = {"geom1": "g_box", "geom2": "g_ell"}
REQUIRED["contact"] = {"geom1": "g_box", "geom2": "g_ell"}
for _t in ("cylinder", "muscle", "dcmotor", "pid"):
    REQUIRED[("actuator", _t)] = {"joint": "j_hinge"}
REQUIRED[("actuator", "orientation")] = {"site": "s1"}
REQUIRED[("actuator", "adhesion")] = {"body": "b1"}

# ------------------------------------------------------------------ values

# references and names: a valid value, by attribute name (an invalid one is a missing name)
NAMES = {"joint": "j_hinge", "joint1": "j_hinge", "joint2": "j_slide", "jointinparent": "j_hinge",
         "body": "b1", "body1": "b1", "body2": "b2", "site": "s1", "site1": "s1", "site2": "s2",
         "sidesite": "s3", "slidersite": "s1", "cranksite": "s2", "refsite": "s2", "geom": "g_cyl",
         "geom1": "g_box", "geom2": "g_ell", "tendon": "t_fixed", "tendon1": "t_fixed", "tendon2": "t_fixed",
         "actuator": "a_motor", "mesh": "m_tet", "hfield": "h1", "material": "mat1", "texture": "tex1",
         "target": "b2", "objname": "b1", "refname": "b2", "class": "c1", "childclass": "c1",
         "camera": "cam1", "name": "n_sweep"}
# keyword lists for attributes rigidsim's table holds as text
KEYWORDS = {
    ("geom", "type"): ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"),
    ("site", "type"): ("sphere", "capsule", "ellipsoid", "cylinder", "box"),
    ("general", "dyntype"): ("none", "integrator", "filter", "filterexact", "muscle", "user"),
    ("general", "gaintype"): ("fixed", "affine", "muscle", "user"),
    ("general", "biastype"): ("none", "affine", "muscle", "user"),
    ("option", "integrator"): ("Euler", "RK4", "implicit", "implicitfast"),
    ("option", "cone"): ("pyramidal", "elliptic"),
    ("option", "jacobian"): ("dense", "sparse", "auto"),
    ("option", "solver"): ("PGS", "CG", "Newton"),
    ("flag", "*"): ("enable", "disable"),
}
# numbers where a generic value is not meaningful, by (tag, attribute) or attribute
VALID = {
    "quat": "0.9 0.1 0.2 0.3", "axisangle": "0 0 1 0.5", "xyaxes": "1 0.1 0 0 1 0.2", "zaxis": "0.1 0.2 1",
    "euler": "0.1 0.2 0.3", "fromto": "0 0 0 0.1 0.2 0.3", "range": "-0.5 0.7", "ctrlrange": "-0.5 0.7",
    "forcerange": "-3 2", "actrange": "-0.5 0.7", "actuatorfrcrange": "-3 2", "lengthrange": "0 0",
    "solref": "0.03 1.1", "solreflimit": "0.03 1.1", "solreffriction": "0.03 1.1", "o_solref": "0.03 1.1",
    "solimp": "0.8 0.9 0.01 0.4 3", "solimplimit": "0.8 0.9 0.01 0.4 3", "solimpfriction": "0.8 0.9 0.01 0.4 3",
    "o_solimp": "0.8 0.9 0.01 0.4 3", "condim": "4", "relpose": "0.1 0.2 0.3 0.9 0.1 0.2 0.3",
    "diaginertia": "0.01 0.02 0.03", "fullinertia": "0.03 0.04 0.05 0.001 0.002 0.003", "size": "0.1 0.2 0.3",
    "polycoef": "0.1 1.2 0.3 0.04 0.05", "gear": "2 0 0 0 0 0", "eulerseq": "zyx", "memory": "1M",
    "springdamper": "0.5 0.3", "inertiagrouprange": "0 3", "rgba": "0.1 0.2 0.3 0.4",
    ("option", "timestep"): "0.004", ("key", "time"): "0.25", "nkey": "2", "mass": "0.7",
}
# values tried, in order, for an attribute rigidsim's table does not know: the first MuJoCo accepts
PROBES = ("true", "0.5", "2", "0.5 0.5", "0.5 0.5 0.5", "1 0 0 0", "0.5 0.5 0.5 0.5 0.5 0.5", "1 2 3 4 5 6 7 8 9 10",
          "n_sweep")


def kind_of(path: Path_, attr: str):
    """rigidsim's kind row of this attribute (`mjcf_attrs`), or None."""
    from rigidsim.loaders import mjcf_attrs as VA

    for ctx in ("/".join(path[-2:]), path[-1]):
        rows = VA.TABLE.get(ctx)
        if rows is not None:
            return rows.get(attr)
    return None


def _key(path: Path_, attr: str):
    return (path[-1], attr)


def values(path: Path_, attr: str) -> Iterator[Tuple[str, str]]:
    """(label, text) of the values swept: ``valid`` ones first, then ``invalid`` ones."""
    tag = path[-1]
    kw = KEYWORDS.get((tag, attr)) or KEYWORDS.get((tag, "*"))
    if kw:
        for w in kw:
            yield f"valid:{w}", w
        yield "invalid:keyword", "zz_bogus"
        return
    k = kind_of(path, attr)
    if k is None:
        if attr in NAMES:
            yield "valid", NAMES[attr]
            if attr != "name":
                yield "invalid:missing", "zz_missing"
            return
        yield "probe", ""  # resolved against MuJoCo in `cases`
        return
    letter, n, exact, _, words = k
    if letter == "s":
        if attr in NAMES:
            yield "valid", NAMES[attr]
            if attr != "name":
                yield "invalid:missing", "zz_missing"
        return
    if letter in "kK":
        for w in words:
            yield f"valid:{w}", w
        yield "invalid:keyword", "zz_bogus"
        return
    if letter == "b":
        yield "valid:true", "true"
        yield "valid:false", "false"
        yield "invalid:keyword", "maybe"
        return
    if letter == "m":
        yield "valid", VALID["memory"]
        yield "invalid:word", "abc"
        return
    if letter == "c":
        yield "valid", VALID.get(attr, "x" * n)
        yield "invalid:count", "x" * (n + 1)
        return
    generic = {"i": "2", "q": "0.9 0.1 0.2 0.3"}.get(letter.lower())
    if letter in "DFI":
        yield "valid", "1 2 3"
        yield "invalid:word", "1 abc"
        return
    text = VALID.get((tag, attr)) or VALID.get(attr)
    if text is None or len(text.split()) > n:
        text = generic if generic and len(generic.split()) == n else " ".join(
            f"{0.3 + 0.1 * i:.1f}" for i in range(n))
    yield "valid", text
    yield "invalid:word", "abc" if n == 1 else " ".join(["0.5"] * (n - 1) + ["abc"])
    yield "invalid:count", " ".join(["0.5"] * (n + 1))
    if exact and n > 1:
        yield "invalid:short", " ".join(["0.5"] * (n - 1))


# ------------------------------------------------------------------ placing an element in the base


def _xpath(path: Path_) -> str:
    if path[0] == "worldbody":
        return "./worldbody//body" + "".join("/" + t for t in path[1:])
    return "./" + "/".join(path)


def locate(root, path: Path_):
    """The base's first element at `path`, added under its parent (with `REQUIRED`) when there is none."""
    found = root.xpath(_xpath(path))
    if found:
        return found[0]
    parent = root if len(path) == 1 else locate(root, path[:-1])
    attrs = REQUIRED.get(path) or REQUIRED.get(path[-1] if path[0] == "sensor" else None) or {}
    return etree.SubElement(parent, path[-1], dict(attrs))


def scene_with(path: Path_, attr: str, text: Optional[str]) -> bytes:
    root = etree.fromstring(BASE)
    el = locate(root, path)
    if text is not None:
        el.set(attr, text)
    return etree.tostring(root)


# ------------------------------------------------------------------ the two verdicts


def mujoco_compile(xml_path: Path):
    import mujoco

    try:
        return mujoco.MjModel.from_xml_path(str(xml_path)), ""
    except Exception as e:  # MuJoCo raises ValueError for every refusal
        return None, " ".join(str(e).split()) or type(e).__name__


def rigidsim_compile(xml_path: Path):
    """(Model or None, error text, crashed): the loader, the option resolution under MuJoCo compatibility and
    the engine's feature check, as `rigidsim run` does before it builds kernels."""
    from rigidsim import options as opts
    from rigidsim import runner
    from rigidsim.errors import InputError
    from rigidsim.loaders import load_scene

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning would reach the user: count it as a crash
            model = load_scene(str(xml_path))
            resolved = opts.resolve(model, {}, {"enable_mujoco_compatibility": True}, precision=64, backend="cpu")
            runner.unsupported(model, resolved)
        return model, "", False
    except InputError as e:
        return None, " ".join(str(e).split()), False
    except Exception as e:  # anything else is an internal error for the user
        return None, f"{type(e).__name__}: {e}", True


UNSUPPORTED = re.compile(r"not supported|non-finite")


@dataclass
class Case:
    path: Path_
    attr: str
    label: str
    text: Optional[str]
    mujoco: str = ""
    rigidsim: str = ""
    outcome: str = ""
    detail: str = ""

    @property
    def key(self) -> Tuple[str, str, str]:
        return ("/".join(self.path), self.attr, self.label)


def judge(case: Case, tmp: Path) -> Case:
    from rigidsim.compare.model import compare_models, model_from_mujoco

    p = tmp / "sweep.xml"
    p.write_bytes(scene_with(case.path, case.attr, case.text))
    mjm, case.mujoco = mujoco_compile(p)
    ours, case.rigidsim, crash = rigidsim_compile(p)
    if crash:
        case.outcome = "crash"
    elif mjm is None and ours is None:
        case.outcome = "both_refuse"
    elif mjm is None:
        case.outcome = "accepts_refused"
    elif ours is None:
        case.outcome = "unsupported" if UNSUPPORTED.search(case.rigidsim) else "refuses_accepted"
    else:
        bad = compare_models(ours, model_from_mujoco(mjm))
        case.outcome = "differ" if bad else "equal"
        case.detail = "; ".join(bad[:3])
    return case


def cases(tmp: Path, only=None) -> List[Case]:
    """Every case of the schema (or of the element paths in `only`), probes resolved against MuJoCo."""
    out = []
    for path, attrs in mujoco_schema():
        if only is not None and path not in only:
            continue
        for attr in attrs:
            for label, text in values(path, attr):
                if label == "probe":
                    text = _probe(path, attr, tmp)
                    label = "valid:probed" if text is not None else "unprobed"
                out.append(Case(path, attr, label, text))
    return out


def _probe(path: Path_, attr: str, tmp: Path) -> Optional[str]:
    p = tmp / "probe.xml"
    for text in PROBES:
        p.write_bytes(scene_with(path, attr, text))
        if mujoco_compile(p)[0] is not None:
            return text
    return None


def run(only=None, stride: int = 1, offset: int = 0) -> List[Case]:
    """Judge every `stride`-th case (from `offset`) of the schema (`run_all`'s judged cases)."""
    return run_all(only, stride, offset)[1]


def run_all(only=None, stride: int = 1, offset: int = 0) -> Tuple[List[Case], List[Case]]:
    """(every case of the schema, unjudged; every `stride`-th of them from `offset`, judged). The loader's model
    cache is off meanwhile: each case's file is compiled once and thrown away (storing and pruning 4,000 entries
    cost 40 % of the run)."""
    from rigidsim.loaders import model_cache

    before = os.environ.get(model_cache.ENV)
    os.environ[model_cache.ENV] = "0"
    try:
        with tempfile.TemporaryDirectory() as td:
            tmp = Path(td)
            every = cases(tmp, only)
            todo = every[offset::stride]
            return every, [judge(c, tmp) for c in todo if c.label != "unprobed"] + [
                Case(c.path, c.attr, c.label, None, outcome="unprobed") for c in todo if c.label == "unprobed"]
    finally:
        if before is None:
            os.environ.pop(model_cache.ENV, None)
        else:
            os.environ[model_cache.ENV] = before


def counts(res: List[Case]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for c in res:
        out[c.outcome] = out.get(c.outcome, 0) + 1
    return out


# ------------------------------------------------------------------ the known-gap list
# tests/data/schema_sweep_gaps.txt: one failing case a line, "outcome<TAB>element path<TAB>attribute<TAB>label",
# each a real disagreement with MuJoCo that remains (its comments group them by cause). `test_schema_sweep`
# requires every failing case to be listed with its outcome, and every listed case to still fail that way.
GAPS_FILE = Path(__file__).parent / "data" / "schema_sweep_gaps.txt"
FAILING = ("differ", "accepts_refused", "refuses_accepted")


def read_gaps() -> Dict[Tuple[str, str, str], str]:
    out = {}
    for line in GAPS_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            outcome, path, attr, label = line.split("\t")
            out[(path, attr, label)] = outcome
    return out


_GAPS_HEAD = """# Known gaps of the MJCF schema sweep (tests/schema_sweep.py, tests/test_schema_sweep.py): MuJoCo 4.0.0 cases
# where rigidsim's loader still disagrees with MuJoCo. One case a line: outcome, element path, attribute, label
# (TAB-separated). The test fails on a disagreement missing here and on a line here that no longer
# disagrees, so fix the loader, then delete the line. Regenerate: python -m tests.schema_sweep --gaps.
#
# Outcomes: differ = both compile, the compiled fields differ; accepts_refused = rigidsim compiles what MuJoCo
# refuses; refuses_accepted = rigidsim refuses, without calling it unsupported, what MuJoCo compiles.
# Each element's group opens with the first case's reason (MuJoCo's or rigidsim's message, or the field).
"""


def gaps_text(res: List[Case]) -> str:
    """The known-gap file for these results, grouped by outcome and element, each group with its reason."""
    out, prev = [_GAPS_HEAD], None
    for c in sorted((c for c in res if c.outcome in FAILING), key=lambda c: (c.outcome, c.key)):
        if (c.outcome, c.key[0]) != prev:
            why = {"differ": c.detail, "accepts_refused": "MuJoCo: " + c.mujoco}.get(
                c.outcome, "rigidsim: " + re.sub(r"^\S+\.xml:\d+: ", "", c.rigidsim))
            out.append(f"\n# {c.outcome} {c.key[0]}: {why[:150]}")
            prev = (c.outcome, c.key[0])
        out.append("\t".join((c.outcome,) + c.key))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    t0 = time.time()
    stride = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1
    res = run(stride=stride)
    if "--gaps" in sys.argv:
        GAPS_FILE.write_text(gaps_text(res))
        print(f"wrote {GAPS_FILE}")
        sys.exit(0)
    n_attrs = len({(c.path, c.attr) for c in res})
    print(f"{len(res)} cases over {n_attrs} attributes in {time.time() - t0:.1f} s: {counts(res)}")
    for c in res:
        if c.outcome not in ("equal", "both_refuse"):
            print(f"[{c.outcome}] {'/'.join(c.path)} {c.attr}={c.text!r} ({c.label})\n"
                  f"    MuJoCo: {c.mujoco or 'compiles'}\n    rigidsim: {c.rigidsim or 'compiles'}"
                  + (f"\n    {c.detail}" if c.detail else ""))
