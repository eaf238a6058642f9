"""How MuJoCo 4.0 reads each MJCF attribute's text: one table of kind and arity, one validator.

`mjcf_schema` says which attributes an element may have and what rigidsim does with them; this module
says how many numbers of which type each one holds, found by experiment with MuJoCo 4.0:

* ``d3``: exactly 3 doubles (fewer: "does not have enough data", more: "has too much data");
  ``d5~``: 1 to 5 doubles (the rest keep their default); ``f4``: 32-bit floats; ``i1``: 32-bit ints;
* ``D``, ``F``, ``I``: a list of any length; ``s``: text; ``b``: true or false; ``k=a|b``: one keyword;
  ``K=a|b``: several distinct keywords; ``c3``: exactly 3 characters; a trailing ``!``: required.

Numbers are read as C's strtod/strtol read them: decimal or hexadecimal, ``inf``, ``nan``; a double
beyond 1.8e308, a float beyond 3.4e38 or an int beyond 32 bits is "too large"; denormals are fine. An
attribute whose text holds no number at all (``pos=""``) counts as absent, as in MuJoCo. rigidsim is
stricter in one way only: a non-finite number (inf, nan) in an attribute it builds is refused.
"""

from __future__ import annotations

import math
import re
from typing import Dict, Optional, Tuple

from rigidsim.errors import InputError

FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103  # the float32 maximum plus half its last step: rounds to inf
INT32 = (-2 ** 31, 2 ** 31 - 1)

_DEC = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_HEX = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?\Z")
_SPECIAL = re.compile(r"[+-]?(inf|infinity|nan(\([0-9A-Za-z_]*\))?)\Z", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+\Z")

_B = "b"
_TF = "k=false|true|auto"
_ORIENT = "quat:q4 axisangle:d4 xyaxes:d6 zaxis:d3 euler:d3"
_SOL = "solreflimit:d2~ solimplimit:d5~ solreffriction:d2~ solimpfriction:d5~"
_TENDON = (f"name:s class:s group:i1 limited:{_TF} actuatorfrclimited:{_TF} range:d2 actuatorfrcrange:d2 {_SOL} "
           "frictionloss:d1 margin:d1 stiffness:d3~ damping:d3~ armature:d1 springlength:d2~ user:D sleep:s "
           "material:s rgba:f4 width:d1")
_ACT = (f"name:s class:s group:i1 nsample:i1 delay:d1 ctrlrange:d2 user:D ctrllimited:{_TF} "
        f"forcelimited:{_TF} actlimited:{_TF} forcerange:d2 actrange:d2 lengthrange:d2 gear:d6~ "
        "damping:d3~ dampingpoly:d2~ armature:d1 actdim:i1 velrange:d2 ffrange:d2 actearly:b cranklength:d1 "
        "joint:s jointinparent:s tendon:s slidersite:s cranksite:s site:s refsite:s body:s")
_SENSOR = "name:s cutoff:d1 noise:d1 user:D nsample:i1 delay:d1 interval:d2~ interp:k=zoh|linear|cubic"
_FRAME_OBJ = "k=body|xbody|geom|site|camera"

_ROWS = {
    "mujoco": "model:s",
    "include": "file:s!",
    "compiler": ("autolimits:b boundmass:d1 boundinertia:d1 settotalmass:d1 balanceinertia:b angle:k=radian|degree "
                 "fitaabb:b eulerseq:c3 meshdir:s texturedir:s assetdir:s discardvisual:b usethread:b fusestatic:b "
                 "inertiafromgeom:k=false|true|auto inertiagrouprange:i2 saveinertial:b alignfree:b strippath:b "
                 "coordinate:k=local|global convexhull:b exactmeshinertia:b"),
    "compiler/lengthrange": ("mode:k=none|muscle|muscleuser|all useexisting:b uselimit:b accel:d1 maxforce:d1 "
                             "timeconst:d1 timestep:d1 inttotal:d1 interval:d1 tolrange:d1"),
    "option": ("timestep:d1 impratio:d1 tolerance:d1 ls_tolerance:d1 noslip_tolerance:d1 ccd_tolerance:d1 "
               "sleep_tolerance:d1 gravity:d3 wind:d3 magnetic:d3 density:d1 viscosity:d1 o_margin:d1 "
               "o_solref:d2~ o_solimp:d5~ o_friction:d5~ iterations:i1 ls_iterations:i1 noslip_iterations:i1 "
               "ccd_iterations:i1 sdf_iterations:i1 sdf_initpoints:i1 actuatorgroupdisable:I"),
    "size": ("memory:m nuserdata:i1 nkey:i1 nuser_body:i1 nuser_jnt:i1 nuser_geom:i1 nuser_site:i1 nuser_cam:i1 "
             "nuser_tendon:i1 nuser_actuator:i1 nuser_sensor:i1 nconmax:i1 njmax:i1 nstack:i1"),
    "statistic": "meaninertia:d1 meanmass:d1 meansize:d1 extent:d1 center:d3",
    "visual/global": ("cameraid:i1 orthographic:b fovy:f1 ipd:f1 azimuth:f1 elevation:f1 linewidth:f1 glow:f1 "
                      "offwidth:i1 offheight:i1 realtime:f1 ellipsoidinertia:b bvactive:b"),
    "visual/quality": "shadowsize:i1 offsamples:i1 numslices:i1 numstacks:i1 numquads:i1",
    "visual/headlight": "ambient:f3 diffuse:f3 specular:f3 active:i1",
    "visual/map": ("stiffness:f1 stiffnessrot:f1 force:f1 torque:f1 alpha:f1 fogstart:f1 fogend:f1 znear:f1 zfar:f1 "
                   "haze:f1 shadowclip:f1 shadowscale:f1 actuatortendon:f1"),
    "visual/scale": ("forcewidth:f1 contactwidth:f1 contactheight:f1 connect:f1 com:f1 camera:f1 light:f1 "
                     "selectpoint:f1 jointlength:f1 jointwidth:f1 actuatorlength:f1 actuatorwidth:f1 framelength:f1 "
                     "framewidth:f1 constraint:f1 slidercrank:f1 frustum:f1"),
    "visual/rgba": " ".join(f"{a}:f4" for a in (
        "fog haze force inertia joint actuator actuatornegative actuatorpositive com camera light selectpoint "
        "connect contactpoint contactforce contactfriction contacttorque contactgap rangefinder constraint "
        "slidercrank crankbroken frustum bv bvactive").split()),
    "default": "class:s",
    # assets
    "mesh": ("name:s class:s file:s content_type:s vertex:F normal:F texcoord:F face:I refpos:d3 refquat:q4 "
             "scale:d3 smoothnormal:b inertia:k=convex|legacy|exact|shell material:s maxhullvert:i1 builtin:s "
             "params:D"),
    "hfield": "name:s file:s content_type:s nrow:i1 ncol:i1 size:d4! elevation:F",
    "skin": "name:s file:s material:s rgba:f4 inflate:f1 vertex:F texcoord:F face:I group:i1 content_type:s",
    "skin/bone": "body:s! bindpos:d3! bindquat:d4! vertid:I! vertweight:F!",
    "texture": ("name:s type:k=2d|cube|skybox colorspace:k=auto|linear|sRGB content_type:s gridsize:i2 "
                "gridlayout:c12~ builtin:k=none|gradient|checker|flat rgb1:d3 rgb2:d3 "
                "mark:k=none|edge|cross|random markrgb:d3 random:d1 width:i1 height:i1 hflip:b vflip:b nchannel:i1 "
                "file:s fileright:s fileleft:s fileup:s filedown:s filefront:s fileback:s"),
    "material": ("name:s class:s texture:s texrepeat:f2 texuniform:b emission:f1 specular:f1 shininess:f1 "
                 "reflectance:f1 metallic:f1 roughness:f1 rgba:f4"),
    "material/layer": "texture:s! role:s!",
    # bodies
    "worldbody": "",
    "body": f"name:s childclass:s pos:d3 mocap:b gravcomp:d1 sleep:k=auto|never|allowed|init user:D {_ORIENT}",
    "frame": f"name:s childclass:s pos:d3 {_ORIENT}",
    "inertial": f"pos:d3! mass:d1! diaginertia:d3 fullinertia:d6 {_ORIENT}",
    "joint": (f"name:s class:s type:k=free|ball|slide|hinge group:i1 pos:d3 axis:d3 springdamper:d2 limited:{_TF} "
              f"actuatorfrclimited:{_TF} {_SOL} stiffness:d3~ range:d2 actuatorfrcrange:d2 actuatorgravcomp:b "
              f"margin:d1 ref:d1 springref:d1 armature:d1 damping:d3~ frictionloss:d1 user:D align:{_TF} sleep:s"),
    "freejoint": f"name:s group:i1 align:{_TF}",
    "geom": ("name:s class:s type:s contype:i1 conaffinity:i1 condim:i1 group:i1 priority:i1 size:d3~ material:s "
             "friction:d3~ mass:d1 density:d1 shellinertia:b solmix:d1 solref:d2~ solimp:d5~ margin:d1 gap:d1 "
             "surfacevel:d6~ adhesion:d1 fromto:d6 pos:d3 hfield:s mesh:s fitscale:d1 rgba:f4 "
             f"fluidshape:k=none|ellipsoid fluidcoef:d5~ user:D {_ORIENT}"),
    "site": f"name:s class:s type:s group:i1 pos:d3 material:s size:d3~ fromto:d6 rgba:f4 user:D {_ORIENT}",
    "camera": ("name:s class:s projection:k=perspective|orthographic orthographic:b fovy:d1 ipd:d1 resolution:i2 "
               "output:K=rgb|depth|distance|normal|segmentation pos:d3 "
               "mode:k=fixed|track|trackcom|targetbody|targetbodycom target:s focal:f2 focalpixel:f2 principal:f2 "
               f"principalpixel:f2 sensorsize:f2 user:D {_ORIENT}"),
    "light": ("name:s class:s castshadow:b active:b pos:d3 dir:d3 bulbradius:f1 intensity:f1 range:f1 "
              "attenuation:f3 cutoff:f1 softness:f1 exponent:f1 ambient:f3 diffuse:f3 specular:f3 "
              "mode:k=fixed|track|trackcom|targetbody|targetbodycom target:s texture:s directional:b "
              "type:k=spot|directional|point|image"),
    # contact, equality, tendons
    "pair": ("name:s class:s geom1:s geom2:s condim:i1 friction:d5~ solref:d2~ solreffriction:d2~ solimp:d5~ "
             "gap:d1 margin:d1 adhesion:d1"),
    "exclude": "name:s body1:s! body2:s!",
    "connect": "name:s class:s active:b solref:d2~ solimp:d5~ body1:s body2:s site1:s site2:s anchor:d3",
    "weld": ("name:s class:s active:b solref:d2~ solimp:d5~ body1:s body2:s site1:s site2:s anchor:d3 relpose:d7 "
             "torquescale:d1"),
    "equality/joint": "name:s class:s active:b solref:d2~ solimp:d5~ joint1:s! joint2:s polycoef:d5~",
    "equality/tendon": "name:s class:s active:b solref:d2~ solimp:d5~ tendon1:s! tendon2:s polycoef:d5~",
    "spatial": _TENDON,
    "fixed": _TENDON,
    "spatial/site": "site:s!",
    "spatial/geom": "geom:s! sidesite:s",
    "spatial/pulley": "divisor:d1!",
    "fixed/joint": "joint:s! coef:d1!",
    # actuators (the shortcuts read the general attributes, then their own)
    "general": _ACT + " dyntype:s gaintype:s biastype:s dynprm:d10~ gainprm:d10~ biasprm:d10~",
    "motor": _ACT,
    "position": _ACT + " kp:d1 kv:d1 dampratio:d1 timeconst:d1 inheritrange:d1",
    "velocity": _ACT + " kv:d1",
    "intvelocity": _ACT + " kp:d1 kv:d1 dampratio:d1 inheritrange:d1",
    "damper": _ACT + " kv:d1",
    "replicate": "count:i1! offset:d3 euler:d3 sep:s childclass:s",
    "key": "name:s time:d1 qpos:D qvel:D act:D mpos:D mquat:D ctrl:D",
}
for _t in ("touch", "accelerometer", "velocimeter", "gyro", "force", "torque", "magnetometer", "rangefinder"):
    _ROWS[_t] = _SENSOR + " site:s!"
for _t in ("jointpos", "jointvel", "jointlimitpos", "jointlimitvel", "jointlimitfrc", "jointactuatorfrc",
           "ballquat", "ballangvel"):
    _ROWS[_t] = _SENSOR + " joint:s!"
for _t in ("tendonpos", "tendonvel", "tendonlimitpos", "tendonlimitvel", "tendonlimitfrc", "tendonactuatorfrc"):
    _ROWS[_t] = _SENSOR + " tendon:s!"
for _t in ("actuatorpos", "actuatorvel", "actuatorfrc"):
    _ROWS[_t] = _SENSOR + " actuator:s!"
for _t in ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis", "framelinvel", "frameangvel",
           "framelinacc", "frameangacc"):
    _ROWS[_t] = _SENSOR + f" objtype:{_FRAME_OBJ}! objname:s! reftype:{_FRAME_OBJ} refname:s"
for _t in ("subtreecom", "subtreelinvel", "subtreeangmom"):
    _ROWS[_t] = _SENSOR + " body:s!"
for _t in ("clock", "e_potential", "e_kinetic"):
    _ROWS[_t] = _SENSOR
_ROWS["rangefinder"] += " data:s"
for _t in ("distance", "normal", "fromto"):
    _ROWS[_t] = _SENSOR + " geom1:s geom2:s body1:s body2:s"
_ROWS["insidesite"] = _SENSOR + f" site:s! objtype:{_FRAME_OBJ}! objname:s! enclosed:b"
_ROWS["contact"] = (_SENSOR + " site:s geom1:s geom2:s body1:s body2:s subtree1:s subtree2:s num:i1 data:s "
                    "reduce:k=none|mindist|maxforce|netforce")


# kind: (letter, count, exact, required, keywords)
Kind = Tuple[str, int, bool, bool, Optional[Tuple[str, ...]]]


def _parse_kind(code: str) -> Kind:
    req = code.endswith("!")
    code = code.rstrip("!")
    if code[0] in "kK":
        return code[0], 1, True, req, tuple(code[2:].split("|"))
    exact = not code.endswith("~")
    code = code.rstrip("~")
    n = int(code[1:]) if len(code) > 1 else 0
    return code[0], n, exact, req, None


TABLE: Dict[str, Dict[str, Kind]] = {
    ctx: {a: _parse_kind(k) for a, k in (item.split(":", 1) for item in rows.split())}
    for ctx, rows in _ROWS.items()
}


def table_for(ctx: str) -> Dict[str, Kind]:
    """The rows of an element context: ``"default/joint"`` and ``"actuator/position"`` read as their element."""
    if ctx in TABLE:
        return TABLE[ctx]
    return TABLE.get(ctx.split("/")[-1], {})


def _number(tok: str, letter: str) -> Optional[float]:
    """One token as strtod/strtof/strtol read it: the value, or None for a token that is not a number.
    Raises OverflowError for a value beyond the type's range."""
    if letter == "i":
        if not _INT.match(tok):
            return None
        v = int(tok)
        if not INT32[0] <= v <= INT32[1]:
            raise OverflowError
        return float(v)
    if _DEC.match(tok):
        v = float(tok)
        if math.isinf(v):
            raise OverflowError
    elif _HEX.match(tok):
        body = tok.lstrip("+-")
        v = float.fromhex(body if "p" in body.lower() else body + "p0")
        v = -v if tok.startswith("-") else v
        if math.isinf(v):
            raise OverflowError
    elif _SPECIAL.match(tok):
        v = float(tok.split("(")[0])
    else:
        return None
    if letter == "f" and math.isfinite(v) and abs(v) >= FLOAT32_OVERFLOW:
        raise OverflowError  # strtof rounds it to infinity: ERANGE
    return v


def validate(el, ctx: str, where: str, built: bool = True, built_attrs=()) -> None:
    """Check every attribute of `el` against its row, as MuJoCo's reader does; drop those whose text holds no
    number (MuJoCo reads them as absent). `built_attrs`: the attributes rigidsim builds, where a non-finite
    number is refused."""
    rows = table_for(ctx)
    for a, text in list(el.attrib.items()):
        row = rows.get(a)
        if row is None:
            continue
        letter, n, exact, _, words = row
        fail = lambda msg: _raise(msg, el, a, where)  # noqa: E731
        if letter == "s":
            continue
        if letter in "kb":
            allowed = words or ("false", "true")
            if text not in allowed:
                fail(f"'{text}' is not a valid keyword (expected {' or '.join(allowed)})")
            continue
        if letter == "K":
            toks = text.split()
            bad = [t for t in toks if t not in words]
            if bad or len(set(toks)) != len(toks) or not toks:
                fail(f"'{text}' is not a list of distinct keywords out of {', '.join(words)}")
            continue
        if letter == "m":
            if not _memory_ok(text):
                fail(f"'{text}' is not a size: an unsigned integer with an optional suffix K, M, G, T, P or E "
                     f"(or -1)")
            continue
        if letter == "c":
            if (exact and len(text) != n) or len(text) > n:
                fail(f"'{text}' must have {'exactly' if exact else 'at most'} {n} characters")
            continue
        toks = text.split()
        if not toks:
            if row[3]:
                fail("is required and is empty")
            del el.attrib[a]  # MuJoCo reads an attribute without numbers as absent
            continue
        vals = []
        for t in toks:
            try:
                v = _number(t, letter.lower())
            except OverflowError:
                fail(f"has a number too large for a {_TYPE_NAMES[letter.lower()]} ('{t}')")
            if v is None:
                fail(f"has an invalid value '{text}': bad number format ('{t}' is not a number)")
            vals.append(v)
        if letter in "dfiq":
            if len(vals) > n:
                fail(f"has too much data: {len(vals)} numbers '{text}', at most {n}")
            if exact and len(vals) < n:
                fail(f"does not have enough data: {len(vals)} number{'s' if len(vals) > 1 else ''} '{text}', "
                     f"expected {n}")
            if letter == "q" and not any(vals):
                fail("is a zero quaternion, which is not allowed")
        if a in built_attrs and ctx != "key" and not all(math.isfinite(v) for v in vals):
            fail(f"has a non-finite number '{text}' (rigidsim refuses inf and nan in what it simulates)")


_MEMORY = re.compile(r"\s*(\d+)([KMGTPEkmgtpe]?)\s*\Z")


def _memory_ok(text: str) -> bool:
    """<size memory>: bytes, with a binary suffix; -1 is the default (MuJoCo's choice)."""
    if text.strip() == "-1":
        return True
    m = _MEMORY.match(text)
    return bool(m) and int(m.group(1)) * 1024 ** "_kmgtpe".index(m.group(2).lower() or "_") < 2 ** 63


def numbers(text: str) -> list:
    """The doubles of an attribute `validate` accepted (decimal, hexadecimal, inf, nan)."""
    return [_number(t, "d") for t in text.split()]


_TYPE_NAMES = {"d": "double", "q": "double", "f": "32-bit float", "i": "32-bit integer"}


def _raise(msg: str, el, attr: str, where: str):
    raise InputError(f"attribute '{attr}' of <{el.tag}> {msg}", where=where)
