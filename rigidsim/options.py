"""`RigidOptions`: the options file of docs/SPEC.md, its validation and its resolution.

Field names, defaults and meanings follow Genesis's `RigidOptions` reference
(shared/reference/seeds/001_*). Resolution order, lowest first: built-in
defaults, the scene's own `<option>`, the YAML file, `--set`. With
`enable_mujoco_compatibility: true` the built-in layer is MuJoCo's defaults
instead, so that an MJCF gives MuJoCo's trajectory.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np
import yaml

from rigidsim.errors import InputError
from rigidsim import model as M
from rigidsim.reset import NOISE_DISTRIBUTIONS


@dataclasses.dataclass(frozen=True)
class Spec:
    kind: str  # bool | int | float | vec3 | enum
    default: Any
    help: str
    choices: Tuple[str, ...] = ()
    low: Optional[float] = None  # inclusive lower bound
    positive: bool = False  # strictly > 0
    nullable: bool = False


INTEGRATORS = ("euler", "implicitfast", "approximate_implicitfast", "rk4", "implicit")
SOLVERS = ("newton", "cg", "pgs")
CONES = ("pyramidal", "elliptic")
BROADPHASES = ("sap", "all_vs_all")

SPECS: Dict[str, Spec] = {
    "dt": Spec("float", None, "time step in seconds; null takes the scene's <option timestep> (MuJoCo's 0.002 if it has none)", positive=True, nullable=True),
    "gravity": Spec("vec3", None, "gravity vector in m/s^2; null takes the scene's (0 0 -9.81 if it has none)", nullable=True),
    "enable_collision": Spec("bool", True, "detect contacts between geoms"),
    "enable_joint_limit": Spec("bool", True, "enforce joint range limits"),
    "enable_self_collision": Spec("bool", True, "collide geoms of the same articulated entity"),
    "enable_neutral_collision": Spec("bool", False, "keep self-collision pairs already touching at qpos0"),
    "enable_adjacent_collision": Spec("bool", False, "collide parent-child body pairs (MuJoCo's filterparent off)"),
    "disable_constraint": Spec("bool", False, "disable every constraint: contacts, limits, equalities, friction loss"),
    "max_collision_pairs": Spec("int", 150, "maximum geom pairs per env passing the broadphase in a step; null: no limit (MuJoCo)", low=1, nullable=True),
    "max_contacts": Spec("int", None, "maximum contact points per env after pruning; null sizes it automatically", low=1, nullable=True),
    "integrator": Spec("enum", "approximate_implicitfast", "euler | implicitfast | approximate_implicitfast (rk4 too, as MJCF asks)", INTEGRATORS),
    "constraint_solver": Spec("enum", "newton", "constraint solver: newton | cg", SOLVERS),
    "iterations": Spec("int", 50, "maximum constraint solver iterations per step", low=0),
    "tolerance": Spec("float", None, "solver tolerance; null: 1e-8 in float64, 1e-5 in float32", low=0.0, nullable=True),
    "ls_iterations": Spec("int", 50, "maximum line-search iterations per solver iteration", low=0),
    "ls_tolerance": Spec("float", 0.01, "line-search tolerance", low=0.0),
    "noslip_iterations": Spec("int", 0, "noslip post-solve iterations (0 disables noslip)", low=0),
    "noslip_tolerance": Spec("float", 1e-6, "noslip tolerance", low=0.0),
    "friction_cone": Spec("enum", "pyramidal", "friction cone: pyramidal | elliptic", CONES),
    "enable_torsional_friction": Spec("bool", False, "contacts resist spin about their normal (condim 4)"),
    "enable_rolling_friction": Spec("bool", False, "contacts resist rolling (condim 6); needs torsional friction"),
    "impratio": Spec("float", None, "friction-to-normal impedance ratio; null: 100 with the elliptic cone, else 1", positive=True, nullable=True),
    "contact_pruning_tolerance": Spec("float", 0.02, "distance under which nearby contact points are merged (m); null disables pruning", low=0.0, nullable=True),
    "sparse_solve": Spec("bool", None, "exploit sparsity in the constraint solve; null chooses automatically", nullable=True),
    "constraint_timeconst": Spec("float", 0.01, "constraint time constant (s) for geoms without their own solref; null keeps the model's", positive=True, nullable=True),
    "use_contact_island": Spec("bool", True, "solve independent contact islands separately"),
    "box_box_detection": Spec("bool", False, "dedicated box-box collision routine"),
    "use_hibernation": Spec("bool", False, "put bodies at rest to sleep"),
    "hibernation_thresh_vel": Spec("float", None, "hibernation velocity threshold (m/s); null: 1e-4 with MuJoCo compatibility, else 2e-3", positive=True, nullable=True),
    "enable_multi_contact": Spec("bool", True, "several contact points per convex pair"),
    "enable_mujoco_compatibility": Spec("bool", False, "unset options take MuJoCo's defaults or the scene's MJCF values"),
    "use_gjk_collision": Spec("bool", None, "GJK/EPA instead of MPR for convex pairs; null: off", nullable=True),
    "broadphase_traversal": Spec("enum", None, "broadphase: sap | all_vs_all (the same contacts); null: all_vs_all (measured faster on the filtered pair table, benchmarks/bench_collision.py)", BROADPHASES, nullable=True),
    "init_qpos_noise": Spec("float", 0.0, "scale of the noise added to each env's initial qpos (rad or m per dof; a ball or free joint's quaternion is turned by a rotation vector of that scale), seeded by --seed; 0: none", low=0.0),
    "init_qvel_noise": Spec("float", 0.0, "scale of the noise added to each env's initial qvel (per dof), seeded by --seed; 0: none", low=0.0),
    "init_noise_distribution": Spec("enum", "uniform", "reset noise: uniform on [-scale, scale] | normal with standard deviation scale", NOISE_DISTRIBUTIONS),
}

# Where each option goes, so that none is silently ignored:
#   "opt"      written to the Model's mjOption (`apply`): timestep, gravity, integrator, solver, cone, ...
#   "flags"    written to model.opt.disableflags (`apply`)
#   "pairs"    filters the candidate collision pairs (engine.collision_pairs)
#   "resolve"  only steers how the other options resolve
#   "contact"  only matters once contacts or other constraints are simulated; a run whose scene and options
#              need them is refused for them (runner.unsupported), so until then any value is accepted
#   "init"     sets each env's initial state (reset.initial_states)
#   "refused"  a value other than the default cannot be honoured yet: `not_honoured` names it and the run
#              is refused
REACH: Dict[str, str] = {
    "dt": "opt", "gravity": "opt", "integrator": "opt", "constraint_solver": "opt", "iterations": "opt",
    "tolerance": "opt", "ls_iterations": "opt", "ls_tolerance": "opt", "noslip_iterations": "opt",
    "noslip_tolerance": "opt", "friction_cone": "opt", "impratio": "opt",
    "enable_collision": "flags", "enable_joint_limit": "flags", "disable_constraint": "flags",
    "enable_adjacent_collision": "flags",
    "enable_self_collision": "pairs", "enable_neutral_collision": "pairs",
    "enable_mujoco_compatibility": "resolve",
    "max_collision_pairs": "contact", "max_contacts": "contact", "enable_torsional_friction": "contact",
    "enable_rolling_friction": "contact", "contact_pruning_tolerance": "contact", "sparse_solve": "contact",
    "constraint_timeconst": "contact", "use_contact_island": "contact", "box_box_detection": "contact",
    "enable_multi_contact": "flags", "use_gjk_collision": "contact", "broadphase_traversal": "contact",
    "use_hibernation": "refused", "hibernation_thresh_vel": "refused",
    "init_qpos_noise": "init", "init_qvel_noise": "init", "init_noise_distribution": "init",
}


def not_honoured(r: Mapping[str, Any]) -> list:
    """'option KEY=VALUE' for every resolved option whose value the engine cannot honour yet."""
    out = []
    if r["use_hibernation"]:  # the threshold matters only with hibernation on
        out.append(f"option use_hibernation={_fmt(r['use_hibernation'])} (bodies at rest are never put to sleep)")
    return out


# the option values MuJoCo uses when a scene says nothing (enable_mujoco_compatibility)
MUJOCO_DEFAULTS: Dict[str, Any] = {
    "integrator": "euler", "iterations": 100, "tolerance": 1e-8, "ls_iterations": 50, "ls_tolerance": 0.01,
    "noslip_iterations": 0, "noslip_tolerance": 1e-6, "friction_cone": "pyramidal", "impratio": 1.0,
    "constraint_timeconst": None, "constraint_solver": "newton", "contact_pruning_tolerance": None,
    "enable_adjacent_collision": False, "enable_neutral_collision": True, "hibernation_thresh_vel": 1e-4,
    "max_collision_pairs": None,
}

_INT_CODE = {"euler": M.INT_EULER, "rk4": M.INT_RK4, "implicit": M.INT_IMPLICIT,
             "implicitfast": M.INT_IMPLICITFAST, "approximate_implicitfast": M.INT_APPROX_IMPLICITFAST}
_INT_NAME = {v: k for k, v in _INT_CODE.items()}
_SOLVER_CODE = {"pgs": M.SOLVER_PGS, "cg": M.SOLVER_CG, "newton": M.SOLVER_NEWTON}
_SOLVER_NAME = {v: k for k, v in _SOLVER_CODE.items()}
_CONE_CODE = {"pyramidal": M.CONE_PYRAMIDAL, "elliptic": M.CONE_ELLIPTIC}
_CONE_NAME = {v: k for k, v in _CONE_CODE.items()}


_YAML11_EXP = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _yaml11_float(v: Any) -> Any:
    """YAML 1.1 reads 1e-5 or -1e1 (no dot) as a string; every user means the number."""
    if isinstance(v, str) and _YAML11_EXP.fullmatch(v.strip()):
        return float(v)
    return v


def _fmt(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True).strip().removesuffix("...").strip()


def check_value(key: str, value: Any, where: str) -> Any:
    """Validate one option value; return it normalized, or raise InputError."""
    if key not in SPECS:
        close = difflib.get_close_matches(key, SPECS.keys(), n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise InputError(f"unknown option '{key}'.{hint} Run 'rigidsim options' for the list of options.", where=where)
    s = SPECS[key]
    bad = lambda expected: InputError(  # noqa: E731
        f"option '{key}' has value {_fmt(value)}, expected {expected}.", where=where)
    if value is None:
        if s.nullable:
            return None
        raise bad(f"a {s.kind} (null is not allowed here)")
    if s.kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if s.kind == "enum":
        if not isinstance(value, str) or value.lower() not in s.choices:
            raise bad("one of " + ", ".join(s.choices))
        return value.lower()
    if s.kind == "vec3":
        if isinstance(value, (list, tuple)):
            value = [_yaml11_float(x) for x in value]
        if (not isinstance(value, (list, tuple)) or len(value) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
                or not all(math.isfinite(x) for x in value)):
            raise bad("a list of 3 finite numbers, e.g. [0, 0, -9.81]")
        return [float(x) for x in value]
    if s.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
    elif s.kind == "float":
        value = _yaml11_float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad("a finite number")
        value = float(value)
    if s.positive and not value > 0:
        raise bad("a number greater than 0")
    if s.low is not None and value < s.low:
        raise bad(f"a number of at least {s.low:g}")
    return value


def load_yaml(path: str | Path) -> Dict[str, Any]:
    """Read and validate an options file; return {key: value} of the keys it sets."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"options file not found: {p}")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark else str(p)
        problem = getattr(e, "problem", None) or str(e)
        raise InputError(f"malformed YAML: {problem}", where=where) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read options file {p}: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"an options file must be a YAML mapping of option: value, got a {type(data).__name__}", where=str(p))
    out = {}
    for k, v in data.items():
        out[str(k)] = check_value(str(k), v, where=f"{p}: key '{k}'")
    return out


def parse_set(items) -> Dict[str, Any]:
    """Parse --set KEY=VALUE items (VALUE read as YAML: true, 100, [0,0,-9.8])."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise InputError(f"--set expects KEY=VALUE, got '{item}'", where="--set")
        k, v = item.split("=", 1)
        k = k.strip()
        try:
            val = yaml.safe_load(v) if v.strip() != "" else None
        except yaml.YAMLError:
            raise InputError(f"cannot read the value '{v}' of option '{k}'", where="--set") from None
        out[k] = check_value(k, val, where=f"--set {k}")
    return out


def scene_options(model: M.Model) -> Dict[str, Any]:
    """The options a scene's own <option> element sets, in RigidOptions' names."""
    o, ex = model.opt, model.opt.explicit
    out: Dict[str, Any] = {}
    if "timestep" in ex:
        out["dt"] = float(o.timestep)
    if "gravity" in ex:
        out["gravity"] = [float(x) for x in o.gravity]
    if "integrator" in ex:
        out["integrator"] = _INT_NAME[o.integrator]
    if "solver" in ex:
        out["constraint_solver"] = _SOLVER_NAME[o.solver]
    if "cone" in ex:
        out["friction_cone"] = _CONE_NAME[o.cone]
    for k in ("iterations", "ls_iterations", "noslip_iterations"):
        if k in ex:
            out[k] = int(getattr(o, k))
    for k in ("tolerance", "ls_tolerance", "noslip_tolerance", "impratio"):
        if k in ex:
            out[k] = float(getattr(o, k))
    if o.disableflags & M.DSBL_CONSTRAINT:
        out["disable_constraint"] = True
    if o.disableflags & M.DSBL_CONTACT:
        out["enable_collision"] = False
    if o.disableflags & M.DSBL_LIMIT:
        out["enable_joint_limit"] = False
    if o.disableflags & M.DSBL_MULTICCD:
        out["enable_multi_contact"] = False
    if o.disableflags & M.DSBL_FILTERPARENT:
        out["enable_adjacent_collision"] = True
    return out


def resolve(model: M.Model, file_opts: Mapping[str, Any] = (), set_opts: Mapping[str, Any] = (),
            precision: int = 64, backend: str = "cpu") -> Dict[str, Any]:
    """Every option in force, after precedence and after the automatic (null) defaults are settled."""
    file_opts, set_opts = dict(file_opts or {}), dict(set_opts or {})
    user = {**file_opts, **set_opts}
    compat = bool(user.get("enable_mujoco_compatibility", False))
    base = {k: s.default for k, s in SPECS.items()}
    if compat:
        base.update(MUJOCO_DEFAULTS)
    r = {**base, **scene_options(model), **user}
    o = model.opt
    if r["dt"] is None:
        r["dt"] = float(o.timestep)
    if r["gravity"] is None:
        r["gravity"] = [float(x) for x in o.gravity]
    if r["tolerance"] is None:
        r["tolerance"] = 1e-8 if precision == 64 else 1e-5
    if r["impratio"] is None:
        r["impratio"] = 100.0 if (r["friction_cone"] == "elliptic" and not compat) else 1.0
    if r["hibernation_thresh_vel"] is None:
        r["hibernation_thresh_vel"] = 1e-4 if compat else 2e-3
    if r["use_gjk_collision"] is None:
        r["use_gjk_collision"] = False
    if r["broadphase_traversal"] is None:
        # Genesis picks sweep-and-prune on CPU; here each env walks the pair table already filtered at
        # put_model, and the sweep cost more than it saved in every benchmark scene (README, Speed)
        r["broadphase_traversal"] = "all_vs_all"
    if r["enable_rolling_friction"] and not r["enable_torsional_friction"]:
        raise InputError("enable_rolling_friction requires enable_torsional_friction: true", where="enable_rolling_friction")
    return r


def apply(model: M.Model, r: Mapping[str, Any]) -> M.Model:
    """A copy of `model` whose `opt` carries the resolved options (the engine reads only model.opt)."""
    o = model.opt
    flags = o.disableflags & ~(M.DSBL_CONSTRAINT | M.DSBL_CONTACT | M.DSBL_LIMIT | M.DSBL_FILTERPARENT | M.DSBL_MULTICCD)
    if r["disable_constraint"]:
        flags |= M.DSBL_CONSTRAINT
    if not r["enable_collision"]:
        flags |= M.DSBL_CONTACT
    if not r["enable_joint_limit"]:
        flags |= M.DSBL_LIMIT
    if r["enable_adjacent_collision"]:
        flags |= M.DSBL_FILTERPARENT
    if not r["enable_multi_contact"]:  # MuJoCo's multiccd: the convex collider's extra contacts
        flags |= M.DSBL_MULTICCD
    if not r["use_contact_island"]:  # MuJoCo 4 solves each constraint island on its own unless disabled
        flags |= M.DSBL_ISLAND
    opt = dataclasses.replace(
        o, timestep=float(r["dt"]), gravity=tuple(r["gravity"]), integrator=_INT_CODE[r["integrator"]],
        solver=_SOLVER_CODE[r["constraint_solver"]], cone=_CONE_CODE[r["friction_cone"]],
        iterations=int(r["iterations"]), tolerance=float(r["tolerance"]), ls_iterations=int(r["ls_iterations"]),
        ls_tolerance=float(r["ls_tolerance"]), noslip_iterations=int(r["noslip_iterations"]),
        noslip_tolerance=float(r["noslip_tolerance"]), impratio=float(r["impratio"]), disableflags=flags)
    out = dataclasses.replace(model, opt=opt)
    if not r["enable_mujoco_compatibility"]:
        out = _genesis_contacts(out, r)
    return out


def _genesis_contacts(model: M.Model, r: Mapping[str, Any]) -> M.Model:
    """Genesis's contact options on a copy of the model's geoms and explicit pairs (without MuJoCo
    compatibility): a frictional contact resists sliding only (condim 3), spin too with
    enable_torsional_friction (4), rolling too with enable_rolling_friction (6); frictionless geoms stay
    condim 1. A geom or pair whose solref is MuJoCo's default (0.02, 1), the value of one whose MJCF says
    nothing, takes constraint_timeconst as its time constant; with constraint_timeconst null, twice the time
    step (the floor MuJoCo's refsafe raises any shorter time constant to)."""
    dim = 6 if r["enable_rolling_friction"] else (4 if r["enable_torsional_friction"] else 3)
    tc = float(r["constraint_timeconst"]) if r["constraint_timeconst"] is not None else 2.0 * float(r["dt"])

    def condim(a):
        a = np.asarray(a).copy()
        a[a != 1] = dim
        return a

    def solref(a):
        a = np.array(a, dtype=np.float64, copy=True)
        if a.size:
            default = (a[:, 0] == 0.02) & (a[:, 1] == 1.0)
            a[default, 0] = tc
        return a

    arrays = {**model.arrays, "geom_condim": condim(model.geom_condim), "pair_dim": condim(model.pair_dim),
              "geom_solref": solref(model.geom_solref), "pair_solref": solref(model.pair_solref)}
    return dataclasses.replace(model, arrays=arrays)


def to_yaml(r: Mapping[str, Any]) -> str:
    """The options in force as YAML, in SPECS order (written to the trajectory file)."""
    return yaml.safe_dump({k: r[k] for k in SPECS}, sort_keys=False, default_flow_style=None)
