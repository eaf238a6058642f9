"""The compiled scene: a plain numpy `Model` with MuJoCo's names and layouts.

The loaders (MJCF, URDF) produce it; the engine reads it and never writes it.
Every array field below carries MuJoCo's name (``mjModel``), shape and meaning,
so a compiled model can be compared with ``mujoco.MjModel`` field by field.
Shapes are written with MuJoCo's size names; ``FIELDS`` is the single table
of what a `Model` holds, used to validate it, to write ``/model`` in the HDF5
file and by the tests that compare it with MuJoCo.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Tuple

import numpy as np

# ----------------------------------------------------------------------------- MuJoCo's enums
# The one definition of MuJoCo's enum values (names and values as in mujoco's mjt* enums), used by the
# loaders, the options and the writer; engine/layout.py re-exports those its kernels read, as plain ints.

# joint types (mjtJoint)
JNT_FREE, JNT_BALL, JNT_SLIDE, JNT_HINGE = 0, 1, 2, 3
JNT_NQ = {JNT_FREE: 7, JNT_BALL: 4, JNT_SLIDE: 1, JNT_HINGE: 1}
JNT_NV = {JNT_FREE: 6, JNT_BALL: 3, JNT_SLIDE: 1, JNT_HINGE: 1}

# geom types (mjtGeom)
GEOM_PLANE, GEOM_HFIELD, GEOM_SPHERE, GEOM_CAPSULE, GEOM_ELLIPSOID = 0, 1, 2, 3, 4
GEOM_CYLINDER, GEOM_BOX, GEOM_MESH, GEOM_SDF = 5, 6, 7, 8

# integrators (mjtIntegrator); Genesis's approximate_implicitfast is ours alone
INT_EULER, INT_RK4, INT_IMPLICIT, INT_IMPLICITFAST = 0, 1, 2, 3
INT_APPROX_IMPLICITFAST = 100

# tendon wrap types (mjtWrap)
WRAP_NONE, WRAP_JOINT, WRAP_PULLEY, WRAP_SITE, WRAP_SPHERE, WRAP_CYLINDER = 0, 1, 2, 3, 4, 5

# cones, solvers (mjtCone, mjtSolver)
CONE_PYRAMIDAL, CONE_ELLIPTIC = 0, 1
SOLVER_PGS, SOLVER_CG, SOLVER_NEWTON = 0, 1, 2

# actuator transmission / dynamics / gain / bias types
TRN_JOINT, TRN_JOINTINPARENT, TRN_SLIDERCRANK, TRN_TENDON, TRN_SITE, TRN_BODY = 0, 1, 2, 3, 4, 5
DYN_NONE, DYN_INTEGRATOR, DYN_FILTER, DYN_FILTEREXACT, DYN_MUSCLE, DYN_DCMOTOR, DYN_PID, DYN_USER = 0, 1, 2, 3, 4, 5, 6, 7
GAIN_FIXED, GAIN_AFFINE, GAIN_MUSCLE, GAIN_DCMOTOR, GAIN_SO3, GAIN_PID, GAIN_USER = 0, 1, 2, 3, 4, 5, 6
BIAS_NONE, BIAS_AFFINE, BIAS_MUSCLE, BIAS_DCMOTOR, BIAS_SO3, BIAS_USER = 0, 1, 2, 3, 4, 5

# frame alignment of a body's inertia, a geom or a site (mjtSameFrame)
SAMEFRAME_NONE, SAMEFRAME_BODY, SAMEFRAME_INERTIA, SAMEFRAME_BODYROT, SAMEFRAME_INERTIAROT = 0, 1, 2, 3, 4

# equality types (mjtEq)
EQ_CONNECT, EQ_WELD, EQ_JOINT, EQ_TENDON = 0, 1, 2, 3

# object types used by eq_objtype / sensor_objtype (mjtObj subset)
OBJ_BODY, OBJ_XBODY, OBJ_JOINT, OBJ_DOF, OBJ_GEOM, OBJ_SITE = 1, 2, 3, 4, 5, 6
OBJ_TENDON, OBJ_ACTUATOR = 18, 19

# sensor types the loaders and the engine's arrays treat apart (mjtSensor)
SENS_INSIDESITE, SENS_GEOMDIST, SENS_GEOMNORMAL, SENS_GEOMFROMTO, SENS_CONTACT = 38, 39, 40, 41, 42

# disable / enable flags (mjtDisableBit / mjtEnableBit), MuJoCo's bit values
DSBL_CONSTRAINT, DSBL_EQUALITY, DSBL_FRICTIONLOSS, DSBL_LIMIT = 1 << 0, 1 << 1, 1 << 2, 1 << 3
DSBL_CONTACT, DSBL_SPRING, DSBL_DAMPER, DSBL_GRAVITY = 1 << 4, 1 << 5, 1 << 6, 1 << 7
DSBL_CLAMPCTRL, DSBL_WARMSTART, DSBL_FILTERPARENT, DSBL_ACTUATION = 1 << 8, 1 << 9, 1 << 10, 1 << 11
DSBL_REFSAFE, DSBL_SENSOR, DSBL_MIDPHASE, DSBL_EULERDAMP = 1 << 12, 1 << 13, 1 << 14, 1 << 15
DSBL_NATIVECCD, DSBL_MULTICCD = 1 << 17, 1 << 19  # libccd instead of native GJK/EPA; one contact per convex pair
DSBL_ISLAND = 1 << 18  # solve all constraint rows together instead of per constraint island
ENBL_OVERRIDE = 1 << 0  # contact parameters from <option o_margin/o_solref/o_solimp/o_friction>


@dataclasses.dataclass
class ModelOption:
    """MuJoCo's ``mjOption``: the scene's ``<option>`` with MuJoCo's defaults.

    ``explicit`` names the attributes the scene itself set, so that option
    precedence (defaults < scene < YAML < --set) can tell them apart.
    """

    timestep: float = 0.002
    gravity: Tuple[float, float, float] = (0.0, 0.0, -9.81)
    wind: Tuple[float, float, float] = (0.0, 0.0, 0.0)
    magnetic: Tuple[float, float, float] = (0.0, -0.5, 0.0)
    density: float = 0.0
    viscosity: float = 0.0
    impratio: float = 1.0
    o_margin: float = 0.0
    o_solref: Tuple[float, float] = (0.02, 1.0)
    o_solimp: Tuple[float, float, float, float, float] = (0.9, 0.95, 0.001, 0.5, 2.0)
    o_friction: Tuple[float, float, float, float, float] = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    tolerance: float = 1e-8
    ls_tolerance: float = 0.01
    noslip_tolerance: float = 1e-6
    ccd_tolerance: float = 1e-6
    integrator: int = INT_EULER
    cone: int = CONE_PYRAMIDAL
    jacobian: int = 2  # auto
    solver: int = SOLVER_NEWTON
    iterations: int = 100
    ls_iterations: int = 50
    noslip_iterations: int = 0
    ccd_iterations: int = 35
    disableflags: int = 0
    enableflags: int = 0
    explicit: frozenset = frozenset()


@dataclasses.dataclass
class ModelStatistic:
    """MuJoCo's ``mjStatistic`` (``meaninertia`` is what the solver scales by)."""

    meaninertia: float = 1.0
    meanmass: float = 1.0
    meansize: float = 1.0
    extent: float = 1.0
    center: Tuple[float, float, float] = (0.0, 0.0, 0.0)


# name -> (shape in MuJoCo's size names, dtype). One row per mjModel field we hold.
F, I, U8 = np.float64, np.int32, np.uint8
FIELDS: Dict[str, Tuple[Tuple, type]] = {
    # generalized coordinates
    "qpos0": (("nq",), F),
    "qpos_spring": (("nq",), F),
    # bodies
    "body_parentid": (("nbody",), I),
    "body_rootid": (("nbody",), I),
    "body_weldid": (("nbody",), I),
    "body_mocapid": (("nbody",), I),
    "body_jntnum": (("nbody",), I),
    "body_jntadr": (("nbody",), I),
    "body_dofnum": (("nbody",), I),
    "body_dofadr": (("nbody",), I),
    "body_treeid": (("nbody",), I),
    "body_geomnum": (("nbody",), I),
    "body_geomadr": (("nbody",), I),
    "body_simple": (("nbody",), U8),
    "body_sameframe": (("nbody",), U8),
    "body_pos": (("nbody", 3), F),
    "body_quat": (("nbody", 4), F),
    "body_ipos": (("nbody", 3), F),
    "body_iquat": (("nbody", 4), F),
    "body_mass": (("nbody",), F),
    "body_subtreemass": (("nbody",), F),
    "body_inertia": (("nbody", 3), F),
    "body_invweight0": (("nbody", 2), F),
    "body_gravcomp": (("nbody",), F),
    "body_margin": (("nbody",), F),
    "body_contype": (("nbody",), I),
    "body_conaffinity": (("nbody",), I),
    # joints
    "jnt_type": (("njnt",), I),
    "jnt_qposadr": (("njnt",), I),
    "jnt_dofadr": (("njnt",), I),
    "jnt_bodyid": (("njnt",), I),
    "jnt_group": (("njnt",), I),
    "jnt_limited": (("njnt",), U8),
    "jnt_actfrclimited": (("njnt",), U8),
    "jnt_actgravcomp": (("njnt",), U8),
    "jnt_solref": (("njnt", 2), F),
    "jnt_solimp": (("njnt", 5), F),
    "jnt_pos": (("njnt", 3), F),
    "jnt_axis": (("njnt", 3), F),
    "jnt_stiffness": (("njnt",), F),
    "jnt_range": (("njnt", 2), F),
    "jnt_actfrcrange": (("njnt", 2), F),
    "jnt_margin": (("njnt",), F),
    # dofs
    "dof_bodyid": (("nv",), I),
    "dof_jntid": (("nv",), I),
    "dof_parentid": (("nv",), I),
    "dof_treeid": (("nv",), I),
    "dof_Madr": (("nv",), I),
    "dof_simplenum": (("nv",), I),
    "dof_solref": (("nv", 2), F),
    "dof_solimp": (("nv", 5), F),
    "dof_frictionloss": (("nv",), F),
    "dof_armature": (("nv",), F),
    "dof_damping": (("nv",), F),
    "dof_invweight0": (("nv",), F),
    "dof_M0": (("nv",), F),
    # geoms
    "geom_type": (("ngeom",), I),
    "geom_contype": (("ngeom",), I),
    "geom_conaffinity": (("ngeom",), I),
    "geom_condim": (("ngeom",), I),
    "geom_bodyid": (("ngeom",), I),
    "geom_dataid": (("ngeom",), I),
    "geom_rgba": (("ngeom", 4), np.float32),  # colour (visual only; MuJoCo's default 0.5 0.5 0.5 1)
    "geom_matid": (("ngeom",), I),  # material (visual only; -1: none)
    "mat_rgba": (("nmat", 4), np.float32),  # material colour (visual only)
    "geom_group": (("ngeom",), I),
    "geom_priority": (("ngeom",), I),
    "geom_sameframe": (("ngeom",), U8),
    "geom_solmix": (("ngeom",), F),
    "geom_solref": (("ngeom", 2), F),
    "geom_solimp": (("ngeom", 5), F),
    "geom_size": (("ngeom", 3), F),
    "geom_aabb": (("ngeom", 6), F),
    "geom_rbound": (("ngeom",), F),
    "geom_pos": (("ngeom", 3), F),
    "geom_quat": (("ngeom", 4), F),
    "geom_friction": (("ngeom", 3), F),
    "geom_margin": (("ngeom",), F),
    "geom_gap": (("ngeom",), F),
    # sites
    "site_type": (("nsite",), I),
    "site_bodyid": (("nsite",), I),
    "site_group": (("nsite",), I),
    "site_sameframe": (("nsite",), U8),
    "site_size": (("nsite", 3), F),
    "site_pos": (("nsite", 3), F),
    "site_quat": (("nsite", 4), F),
    # meshes (vertices in the mesh frame, centred and aligned as MuJoCo stores them)
    "mesh_vertadr": (("nmesh",), I),
    "mesh_vertnum": (("nmesh",), I),
    "mesh_faceadr": (("nmesh",), I),
    "mesh_facenum": (("nmesh",), I),
    "mesh_vert": (("nmeshvert", 3), np.float32),
    "mesh_face": (("nmeshface", 3), I),
    "mesh_pos": (("nmesh", 3), F),
    "mesh_quat": (("nmesh", 4), F),
    "mesh_scale": (("nmesh", 3), F),
    # convex-hull graph of meshes that collide (-1: none): per mesh numvert, numface,
    # vert_edgeadr[numvert], vert_globalid[numvert], edge_localid[numvert+3*numface], face_globalid[3*numface]
    "mesh_graphadr": (("nmesh",), I),
    "mesh_graph": (("nmeshgraph",), I),
    # per hull-local vertex id, the first hull vertex farthest along each of the 27 directions
    # (cx, cy, cz) in {-1, 0, 1}^3 (x slowest); zeros for meshes without a hull graph
    "mesh_extrema": (("nmesh", 27), I),
    # polygons of the hull (coplanar hull triangles merged; none without a hull graph): per mesh the
    # first polygon and count; per polygon its unit normal (mesh frame) and its vertex list (mesh vertex
    # ids, counter-clockwise seen from outside); per mesh vertex the polygons holding it
    "mesh_polynum": (("nmesh",), I),
    "mesh_polyadr": (("nmesh",), I),
    "mesh_polynormal": (("nmeshpoly", 3), F),
    "mesh_polyvertadr": (("nmeshpoly",), I),
    "mesh_polyvertnum": (("nmeshpoly",), I),
    "mesh_polyvert": (("nmeshpolyvert",), I),
    "mesh_polymapadr": (("nmeshvert",), I),
    "mesh_polymapnum": (("nmeshvert",), I),
    "mesh_polymap": (("nmeshpolymap",), I),
    # height fields
    "hfield_size": (("nhfield", 4), F),
    "hfield_nrow": (("nhfield",), I),
    "hfield_ncol": (("nhfield",), I),
    "hfield_adr": (("nhfield",), I),
    "hfield_data": (("nhfielddata",), np.float32),
    # explicit contact pairs and excludes
    "pair_dim": (("npair",), I),
    "pair_geom1": (("npair",), I),
    "pair_geom2": (("npair",), I),
    "pair_signature": (("npair",), I),
    "pair_solref": (("npair", 2), F),
    "pair_solreffriction": (("npair", 2), F),
    "pair_solimp": (("npair", 5), F),
    "pair_margin": (("npair",), F),
    "pair_gap": (("npair",), F),
    "pair_friction": (("npair", 5), F),
    "exclude_signature": (("nexclude",), I),
    # equality constraints
    "eq_type": (("neq",), I),
    "eq_obj1id": (("neq",), I),
    "eq_obj2id": (("neq",), I),
    "eq_objtype": (("neq",), I),
    "eq_active0": (("neq",), U8),
    "eq_solref": (("neq", 2), F),
    "eq_solimp": (("neq", 5), F),
    "eq_data": (("neq", 12), F),
    # tendons
    "tendon_adr": (("ntendon",), I),
    "tendon_num": (("ntendon",), I),
    "tendon_limited": (("ntendon",), U8),
    "tendon_solref_lim": (("ntendon", 2), F),
    "tendon_solimp_lim": (("ntendon", 5), F),
    "tendon_solref_fri": (("ntendon", 2), F),
    "tendon_solimp_fri": (("ntendon", 5), F),
    "tendon_range": (("ntendon", 2), F),
    "tendon_margin": (("ntendon",), F),
    "tendon_stiffness": (("ntendon",), F),
    "tendon_damping": (("ntendon",), F),
    "tendon_armature": (("ntendon",), F),
    "tendon_frictionloss": (("ntendon",), F),
    "tendon_lengthspring": (("ntendon", 2), F),
    "tendon_length0": (("ntendon",), F),
    "tendon_invweight0": (("ntendon",), F),
    "wrap_type": (("nwrap",), I),
    "wrap_objid": (("nwrap",), I),
    "wrap_prm": (("nwrap",), F),
    # actuators
    "actuator_trntype": (("nu",), I),
    "actuator_dyntype": (("nu",), I),
    "actuator_gaintype": (("nu",), I),
    "actuator_biastype": (("nu",), I),
    "actuator_trnid": (("nu", 2), I),
    "actuator_actadr": (("nu",), I),
    "actuator_actnum": (("nu",), I),
    "actuator_group": (("nu",), I),
    "actuator_ctrllimited": (("nu",), U8),
    "actuator_forcelimited": (("nu",), U8),
    "actuator_actlimited": (("nu",), U8),
    "actuator_actearly": (("nu",), U8),
    "actuator_dynprm": (("nu", 10), F),
    "actuator_gainprm": (("nu", 10), F),
    "actuator_biasprm": (("nu", 10), F),
    "actuator_ctrlrange": (("nu", 2), F),
    "actuator_forcerange": (("nu", 2), F),
    "actuator_actrange": (("nu", 2), F),
    "actuator_gear": (("nu", 6), F),
    "actuator_cranklength": (("nu",), F),
    "actuator_acc0": (("nu",), F),
    "actuator_length0": (("nu",), F),
    "actuator_lengthrange": (("nu", 2), F),
    # sensors (compiled now, evaluated later)
    "sensor_type": (("nsensor",), I),
    "sensor_intprm": (("nsensor", 3), I),
    "sensor_history": (("nsensor", 2), I),
    "sensor_historyadr": (("nsensor",), I),
    "sensor_delay": (("nsensor",), F),
    "sensor_interval": (("nsensor", 2), F),
    "sensor_datatype": (("nsensor",), I),
    "sensor_needstage": (("nsensor",), I),
    "sensor_objtype": (("nsensor",), I),
    "sensor_objid": (("nsensor",), I),
    "sensor_reftype": (("nsensor",), I),
    "sensor_refid": (("nsensor",), I),
    "sensor_dim": (("nsensor",), I),
    "sensor_adr": (("nsensor",), I),
    "sensor_cutoff": (("nsensor",), F),
    "sensor_noise": (("nsensor",), F),
    # keyframes
    "key_time": (("nkey",), F),
    "key_qpos": (("nkey", "nq"), F),
    "key_qvel": (("nkey", "nv"), F),
    "key_act": (("nkey", "na"), F),
    "key_ctrl": (("nkey", "nu"), F),
    "key_mpos": (("nkey", "nmocap", 3), F),
    "key_mquat": (("nkey", "nmocap", 4), F),
}

SIZES: Tuple[str, ...] = (
    "nq", "nv", "nu", "na", "nbody", "njnt", "ngeom", "nsite", "nmesh", "nmeshvert",
    "nmeshface", "nmeshgraph", "nmeshpoly", "nmeshpolyvert", "nmeshpolymap", "npolygonmax", "nhfield",
    "nhfielddata", "nmat", "npair", "nexclude", "neq", "ntendon", "nwrap",
    "nsensor", "nsensordata", "nhistory", "nkey", "nmocap", "nM",
)

# element kind -> the name list a Model carries for it (MuJoCo's name_*adr, as lists)
NAME_LISTS = ("body", "jnt", "geom", "site", "mesh", "hfield", "eq", "tendon", "actuator", "sensor", "key")


@dataclasses.dataclass
class Model:
    """A compiled scene. Sizes are ints, arrays are numpy with MuJoCo's layout.

    Build one with `Model.empty(**sizes)` and fill its arrays, or let a loader
    do it; `validate()` checks every field against `FIELDS`.
    """

    sizes: Dict[str, int]
    arrays: Dict[str, np.ndarray]
    names: Dict[str, List[str]]
    opt: ModelOption = dataclasses.field(default_factory=ModelOption)
    stat: ModelStatistic = dataclasses.field(default_factory=ModelStatistic)
    source: str = ""  # path of the scene file it was compiled from

    def __getattr__(self, name: str):
        # attributes: sizes (m.nq) and arrays (m.body_pos), as on mujoco.MjModel
        d = self.__dict__
        if name in d.get("sizes", ()):
            return d["sizes"][name]
        if name in d.get("arrays", ()):
            return d["arrays"][name]
        raise AttributeError(name)

    @classmethod
    def empty(cls, **sizes: int) -> "Model":
        full = {s: int(sizes.get(s, 0)) for s in SIZES}
        arrays = {}
        for name, (shape, dtype) in FIELDS.items():
            dims = tuple(full[s] if isinstance(s, str) else s for s in shape)
            arrays[name] = np.zeros(dims, dtype=dtype)
        names = {k: [] for k in NAME_LISTS}
        return cls(sizes=full, arrays=arrays, names=names)

    def shape_of(self, name: str) -> Tuple[int, ...]:
        shape, _ = FIELDS[name]
        return tuple(self.sizes[s] if isinstance(s, str) else s for s in shape)

    def validate(self) -> None:
        """Raise ValueError when a field is missing or has the wrong shape or dtype."""
        for name, (_, dtype) in FIELDS.items():
            if name not in self.arrays:
                raise ValueError(f"Model field {name} is missing")
            a = self.arrays[name]
            if a.shape != self.shape_of(name):
                raise ValueError(f"Model field {name} has shape {a.shape}, expected {self.shape_of(name)}")
            if a.dtype != dtype:
                raise ValueError(f"Model field {name} has dtype {a.dtype}, expected {np.dtype(dtype)}")
