"""The MJCF vocabulary we accept: every element and attribute, and what we do with it.

Each element context (``"body/geom"``, ``"default/joint"``, ...) maps its
attributes to one of three treatments:

* built: parsed and compiled;
* ignored: visual-only data (colours, materials, user data) that cannot change
  the physics; read and dropped;
* refused unless default: a MuJoCo feature we do not build; accepted only
  when the scene leaves it at MuJoCo's default value (given here as text,
  compared numerically), otherwise a clear error at load.

An attribute that is in none of the three is unknown to MuJoCo as well and is
an error, as in MuJoCo's own parser. How many numbers of which type each
attribute holds is `mjcf_attrs`'s table; ignored elements are still read with
MuJoCo's rules and cross-references (`mjcf_visual`).
"""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

_VIS = {"rgba", "material", "user"}

# orientation alternatives shared by frames, bodies, geoms, sites, cameras
ORIENT = {"quat", "axisangle", "xyaxes", "zaxis", "euler"}

_JOINT = {"type", "group", "pos", "axis", "limited", "solreflimit", "solimplimit", "solreffriction",
          "solimpfriction", "stiffness", "range", "margin", "ref", "springref", "armature", "damping",
          "frictionloss", "actuatorfrclimited", "actuatorfrcrange", "actuatorgravcomp", "springdamper"}
_JOINT_U = {"align": "auto", "sleep": None}

_GEOM = {"type", "contype", "conaffinity", "condim", "group", "priority", "size", "friction", "mass",
         "density", "shellinertia", "solmix", "solref", "solimp", "margin", "gap", "fromto", "pos",
         "hfield", "mesh"} | ORIENT
_GEOM_U = {"fitscale": "1", "fluidshape": "none", "fluidcoef": "0.5 0.25 1.5 1.0 1.0",
           "surfacevel": None}

_SITE = {"type", "group", "pos", "size", "fromto"} | ORIENT
_CAMERA = {"fovy", "ipd", "pos", "mode", "target", "resolution", "focal", "focalpixel", "principal",
           "principalpixel", "sensorsize", "orthographic", "output"} | ORIENT
_LIGHT = {"directional", "castshadow", "active", "pos", "dir", "attenuation", "cutoff", "exponent",
          "ambient", "diffuse", "specular", "mode", "target", "bulbradius", "intensity", "range",
          "texture", "type"}

_ACT_COMMON = {"ctrllimited", "forcelimited", "actlimited", "ctrlrange", "forcerange", "actrange", "gear",
               "cranklength", "group", "actearly"}
_ACT_TARGET = {"joint", "jointinparent", "tendon", "slidersite", "cranksite", "site", "refsite", "body"}
_ACT_U = {"lengthrange": "0 0", "actdim": "-1", "damping": "0", "armature": "0", "dampingpoly": None}
_ACTUATORS = {
    "general": {"dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm"},
    "motor": set(),
    "position": {"kp", "kv", "dampratio", "timeconst", "inheritrange"},
    "velocity": {"kv"},
    "intvelocity": {"kp", "kv", "dampratio", "inheritrange"},
    "damper": {"kv"},
}
# actuator shortcuts MuJoCo has and we do not build (refused outright)
ACTUATORS_REFUSED = {"cylinder", "muscle", "adhesion", "plugin", "pid", "orientation", "dcmotor"}

_TENDON = {"group", "limited", "range", "solreflimit", "solimplimit", "solreffriction", "solimpfriction",
           "frictionloss", "springlength", "margin", "stiffness", "damping", "armature",
           "actuatorfrclimited", "actuatorfrcrange"}
_TENDON_U = {"sleep": None}

SENSORS_SITE = ("touch", "accelerometer", "velocimeter", "gyro", "force", "torque", "magnetometer")
SENSORS_JOINT = ("jointpos", "jointvel", "jointlimitpos", "jointlimitvel", "jointlimitfrc",
                 "jointactuatorfrc")
SENSORS_TENDON = ("tendonpos", "tendonvel", "tendonlimitpos", "tendonlimitvel", "tendonlimitfrc",
                  "tendonactuatorfrc")
SENSORS_ACTUATOR = ("actuatorpos", "actuatorvel", "actuatorfrc")
SENSORS_BALL = ("ballquat", "ballangvel")
SENSORS_FRAME = ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis", "framelinvel",
                 "frameangvel", "framelinacc", "frameangacc")
SENSORS_SUBTREE = ("subtreecom", "subtreelinvel", "subtreeangmom")
SENSORS_GLOBAL = ("clock", "e_potential", "e_kinetic")

# context -> (built, ignored, refused-unless-default {attr: default text or None})
Spec = Tuple[Set[str], Set[str], Dict[str, Optional[str]]]
SCHEMA: Dict[str, Spec] = {
    "mujoco": ({"model"}, set(), {}),
    "include": ({"file"}, set(), {}),
    "compiler": ({"angle", "eulerseq", "meshdir", "assetdir", "autolimits", "inertiafromgeom",
                  "inertiagrouprange", "boundmass", "boundinertia", "balanceinertia", "settotalmass",
                  "discardvisual", "fusestatic", "strippath"},
                 {"texturedir", "usethread", "convexhull", "exactmeshinertia"},
                 {"coordinate": "local", "fitaabb": "false", "alignfree": "false", "saveinertial": None}),
    "compiler/lengthrange": (set(), set(), {"mode": "limit", "useexisting": "true", "uselimit": "false",
                                            "accel": "20", "maxforce": "0", "timeconst": "1",
                                            "timestep": "0.01", "inttotal": "10", "interval": "2",
                                            "tolrange": "0.05"}),
    "option": ({"timestep", "impratio", "tolerance", "ls_tolerance", "noslip_tolerance", "ccd_tolerance",
                "gravity", "wind", "magnetic", "density", "viscosity", "o_margin", "o_solref", "o_solimp",
                "o_friction", "integrator", "cone", "jacobian", "solver", "iterations", "ls_iterations",
                "noslip_iterations", "ccd_iterations"},
               {"sdf_iterations", "sdf_initpoints"},
               {"actuatorgroupdisable": None, "sleep_tolerance": None}),
    "option/flag": ({"constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper",
                     "gravity", "clampctrl", "warmstart", "filterparent", "actuation", "refsafe", "sensor",
                     "midphase", "eulerdamp", "autoreset", "nativeccd", "island", "multiccd", "override",
                     "energy", "fwdinv", "invdiscrete", "sleep", "diagexact", "ipc", "speculative"},
                    set(), {}),
    "size": ({"nkey"}, {"memory", "njmax", "nconmax", "nstack", "nuserdata", "nuser_body", "nuser_jnt",
                     "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon", "nuser_actuator",
                     "nuser_sensor"}, {}),
    "statistic": ({"meaninertia", "meanmass", "meansize", "extent", "center"}, set(), {}),
    # defaults
    "default": ({"class"}, set(), {}),
    "default/mesh": ({"scale", "inertia"}, set(), {"maxhullvert": "-1"}),
    "default/material": (set(), {"texture", "emission", "specular", "shininess", "reflectance", "rgba",
                                 "texrepeat", "texuniform", "metallic", "roughness"}, {}),
    "default/joint": (_JOINT, {"user"}, dict(_JOINT_U)),
    "default/geom": (_GEOM, _VIS, dict(_GEOM_U)),
    "default/site": (_SITE, _VIS, {}),
    "default/camera": (_CAMERA, {"user"}, {}),
    "default/light": (_LIGHT, set(), {}),
    "default/pair": ({"condim", "friction", "solref", "solreffriction", "solimp", "gap", "margin"}, set(), {}),
    "default/equality": ({"active", "solref", "solimp"}, set(), {}),
    "default/tendon": (_TENDON | {"width"}, _VIS, dict(_TENDON_U)),
    # world and bodies
    "worldbody": (set(), set(), {}),
    "body": ({"name", "childclass", "pos", "mocap", "gravcomp"} | ORIENT, {"user"}, {"sleep": None}),
    "frame": ({"name", "childclass", "pos"} | ORIENT, set(), {}),
    "inertial": ({"pos", "mass", "diaginertia", "fullinertia"} | ORIENT, set(), {}),
    "joint": ({"name", "class"} | _JOINT, {"user"}, dict(_JOINT_U)),
    "freejoint": ({"name", "group"}, set(), {"align": "auto"}),  # 'false' accepted (see Reader.check)
    "geom": ({"name", "class"} | _GEOM, _VIS, dict(_GEOM_U)),
    "site": ({"name", "class"} | _SITE, _VIS, {}),
    "camera": ({"name", "class"} | _CAMERA, {"user"}, {}),
    "light": ({"name", "class"} | _LIGHT, set(), {}),
    # assets
    "asset": (set(), set(), {}),
    "mesh": ({"name", "class", "file", "vertex", "face", "scale", "refpos", "refquat", "inertia"},
             {"normal", "texcoord", "smoothnormal", "content_type", "material"},
             {"maxhullvert": "-1", "builtin": None, "params": None}),
    "hfield": ({"name", "file", "nrow", "ncol", "size", "elevation"}, {"content_type"}, {}),
    "texture": (set(), {"name", "type", "file", "gridsize", "gridlayout", "fileright", "fileleft", "fileup",
                        "filedown", "filefront", "fileback", "builtin", "rgb1", "rgb2", "mark", "markrgb",
                        "random", "width", "height", "hflip", "vflip", "content_type", "colorspace",
                        "nchannel"}, {}),
    "material": (set(), {"name", "class", "texture", "texrepeat", "texuniform", "emission", "specular",
                         "shininess", "reflectance", "rgba", "metallic", "roughness"}, {}),
    "material/layer": (set(), {"texture", "role"}, {}),
    # skins: visual only (a rendered surface bound to bodies), read and ignored like textures
    "skin": (set(), {"name", "file", "material", "rgba", "inflate", "vertex", "texcoord", "face", "group",
                     "content_type"}, {}),
    "skin/bone": (set(), {"body", "bindpos", "bindquat", "vertid", "vertweight"}, {}),
    # contact
    "contact": (set(), set(), {}),
    "pair": ({"name", "class", "geom1", "geom2", "condim", "friction", "solref", "solreffriction", "solimp",
              "gap", "margin"}, set(), {}),
    "exclude": ({"name", "body1", "body2"}, set(), {}),
    # equality
    "equality": (set(), set(), {}),
    "connect": ({"name", "class", "body1", "body2", "site1", "site2", "anchor", "active", "solref", "solimp"},
                set(), {}),
    "weld": ({"name", "class", "body1", "body2", "site1", "site2", "relpose", "anchor", "active", "solref",
              "solimp", "torquescale"}, set(), {}),
    "equality/joint": ({"name", "class", "joint1", "joint2", "polycoef", "active", "solref", "solimp"},
                       set(), {}),
    "equality/tendon": ({"name", "class", "tendon1", "tendon2", "polycoef", "active", "solref", "solimp"},
                        set(), {}),
    # tendons
    "tendon": (set(), set(), {}),
    "spatial": ({"name", "class", "width"} | _TENDON, _VIS, dict(_TENDON_U)),
    "fixed": ({"name", "class"} | _TENDON, _VIS, dict(_TENDON_U)),
    "spatial/site": ({"site"}, set(), {}),
    "spatial/geom": ({"geom", "sidesite"}, set(), {}),
    "spatial/pulley": ({"divisor"}, set(), {}),
    "fixed/joint": ({"joint", "coef"}, set(), {}),
    # actuators, sensors, keyframes
    "actuator": (set(), set(), {}),
    "sensor": (set(), set(), {}),
    "keyframe": (set(), set(), {}),
    "key": ({"name", "time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"}, set(), {}),
    # visual: everything ignored
    "visual": (set(), set(), {}),
    "custom": (set(), set(), {}),
}

for _tag, _extra in _ACTUATORS.items():
    SCHEMA["actuator/" + _tag] = ({"name", "class"} | _ACT_COMMON | _ACT_TARGET | _extra, {"user"}, dict(_ACT_U))
    SCHEMA["default/" + _tag] = (_ACT_COMMON | _extra, {"user"}, dict(_ACT_U))

_SENSOR_COMMON = {"name", "cutoff", "noise", "nsample", "interp", "delay", "interval"}
for _t in SENSORS_SITE:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"site"}, {"user"}, {})
for _t in SENSORS_JOINT + SENSORS_BALL:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"joint"}, {"user"}, {})
for _t in SENSORS_TENDON:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"tendon"}, {"user"}, {})
for _t in SENSORS_ACTUATOR:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"actuator"}, {"user"}, {})
for _t in SENSORS_FRAME:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"objtype", "objname", "reftype", "refname"}, {"user"}, {})
for _t in SENSORS_SUBTREE:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"body"}, {"user"}, {})
for _t in SENSORS_GLOBAL:
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON, {"user"}, {})
SCHEMA["sensor/rangefinder"] = (_SENSOR_COMMON | {"site", "data"}, {"user"}, {})
SCHEMA["sensor/insidesite"] = (_SENSOR_COMMON | {"site", "objtype", "objname"}, {"user"}, {"enclosed": "false"})
for _t in ("distance", "normal", "fromto"):
    SCHEMA["sensor/" + _t] = (_SENSOR_COMMON | {"geom1", "geom2", "body1", "body2"}, {"user"}, {})
SCHEMA["sensor/contact"] = (_SENSOR_COMMON | {"site", "geom1", "geom2", "body1", "body2", "subtree1", "subtree2",
                                              "num", "data", "reduce"}, {"user"}, {})

# the keywords of a rangefinder's and a contact sensor's 'data' (in this order, MuJoCo's mjtRayData and
# mjtConDataField) with the numbers each adds per ray or contact; a contact sensor's 'reduce' (mjtConReduce)
RAYDATA = {"dist": 1, "dir": 3, "origin": 3, "point": 3, "normal": 3, "depth": 1}
CONDATA = {"found": 1, "force": 3, "torque": 3, "dist": 1, "pos": 3, "normal": 3, "tangent": 3}
CONREDUCE = ("none", "mindist", "maxforce", "netforce")

# whole elements MuJoCo has that we do not build: refused wherever they appear
REFUSED_ELEMENTS = {
    "flexcomp", "flex", "composite", "plugin", "extension", "instance",
    "deformable", "distance", "flex/edge", "muscle", "cylinder", "adhesion",
}

# visual children: anything goes (ignored) under <visual>, <custom>
IGNORED_SUBTREES = {"visual", "custom"}
