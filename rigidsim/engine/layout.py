"""Fixed, scene-independent column layouts of the packed arrays the kernels take.

Taichi kernels here take arrays as arguments so that one compiled kernel
serves every scene and batch size. A kernel may take at most 512 argument
elements (Quadrants; Taichi 1.7 allowed 64), and each array is one, so
per-element-kind quantities are packed column-wise into a few 2-D (model) or
3-D (data, env axis first) arrays. Every column keeps
MuJoCo's name: ``body_f[i, BODY_POS:BODY_POS+3]`` is ``m.body_pos[i]`` and
``d_body[b, i, XPOS:XPOS+3]`` is ``d.xpos[i]`` of env ``b``.

The layouts are constants: changing one changes every kernel's code, so the
offline cache is keyed on them through the module source.
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- model: bodies
BODY_POS, BODY_QUAT, BODY_IPOS, BODY_IQUAT = 0, 3, 7, 10
BODY_MASS, BODY_INERTIA, BODY_GRAVCOMP = 14, 15, 18
BODY_INVWEIGHT0 = 19  # body_invweight0: translation, rotation
NBODY_F = 21
BODY_PARENTID, BODY_ROOTID, BODY_JNTNUM, BODY_JNTADR = 0, 1, 2, 3
BODY_DOFNUM, BODY_DOFADR, BODY_MOCAPID, BODY_SAMEFRAME = 4, 5, 6, 7
BODY_LASTDOF = 8  # the last dof that moves the body (of its weld root, body_weldid), -1 for none: Jacobians' start
BODY_TREEDOF = 9  # the first dof of that dof's kinematic tree (-1 for none): the body's Jacobian lies in between
NBODY_I = 10

# ----------------------------------------------------------------------------- model: joints
JNT_POS, JNT_AXIS, JNT_STIFFNESS, JNT_ACTFRCRANGE = 0, 3, 6, 7
JNT_RANGE, JNT_MARGIN, JNT_SOLREF, JNT_SOLIMP = 9, 11, 12, 14  # limits: jnt_range, jnt_margin, solref, solimp
NJNT_F = 19
JNT_TYPE, JNT_QPOSADR, JNT_DOFADR, JNT_BODYID, JNT_ACTFRCLIMITED, JNT_ACTGRAVCOMP = 0, 1, 2, 3, 4, 5
JNT_STANDALONE = 6  # a free joint whose tree has no other dofs (implicitfast solves its block exactly)
JNT_LIMITED = 7  # 1: the joint's limit makes constraint rows (jnt_limited, and limits enabled)
NJNT_I = 8

# ----------------------------------------------------------------------------- model: dofs
DOF_ARMATURE, DOF_DAMPING, DOF_M0 = 0, 1, 2
DOF_FRICTIONLOSS, DOF_SOLREF, DOF_SOLIMP, DOF_INVWEIGHT0 = 3, 4, 6, 11  # dry friction rows: dof_solref/solimp
NDOF_F = 12
DOF_BODYID, DOF_JNTID, DOF_PARENTID, DOF_MADR, DOF_SIMPLENUM, DOF_MROWNNZ = 0, 1, 2, 3, 4, 5
# DOF_SUBTREEEND: one past the dof's last descendant (dofs are numbered depth first, so its descendants are
# the dofs after it up to there): a sum over them is a loop over a range, not a walk of the tree
DOF_SUBTREEEND = 6
NDOF_I = 7

# ----------------------------------------------------------------------------- model: mass-matrix entries
# qM's legacy sparse layout: row i starts at dof_Madr[i] with the diagonal, then i's ancestor dofs nearest
# first (dof_Mrownnz[i] entries). Per entry: the column's dof and the address of that dof's own row, so the
# stages read a row's columns as independent loads instead of walking dof_parentid.
M_COLIND, M_COLADR = 0, 1
NM_I = 2

# ----------------------------------------------------------------------------- model: geoms and sites
FRAME_POS, FRAME_QUAT = 0, 3  # geom_pos/geom_quat, site_pos/site_quat
NFRAME_F = 7
FRAME_BODYID, FRAME_SAMEFRAME = 0, 1
FRAME_RAY = 2  # geoms: 1 when a ray sees it (mj_ray: not transparent, by its rgba or its material's); sites: 0
NFRAME_I = 3

# ----------------------------------------------------------------------------- model: actuators
ACT_DYNPRM, ACT_GAINPRM, ACT_BIASPRM = 0, 10, 20
ACT_CTRLRANGE, ACT_FORCERANGE, ACT_ACTRANGE, ACT_GEAR = 30, 32, 34, 36
ACT_CRANKLENGTH, ACT_WRAPPERIOD, ACT_ROWSCALE = 42, 43, 44  # WRAPPERIOD: > 0 for servos on ball joints
NACT_F = 45
ACT_TRNTYPE, ACT_DYNTYPE, ACT_GAINTYPE, ACT_BIASTYPE, ACT_TRNID = 0, 1, 2, 3, 4
ACT_ACTADR, ACT_ACTNUM, ACT_CTRLLIMITED, ACT_FORCELIMITED, ACT_ACTLIMITED, ACT_ACTEARLY = 5, 6, 7, 8, 9, 10
ACT_TRN_DOFADR, ACT_TRN_QPOSADR = 11, 12  # the transmission joint's dof and qpos address
ACT_TRN_KIND, ACT_TRN_ROW, ACT_TRNID2 = 13, 14, 15  # see TRNK_*; the moment row in ten_J; slider site
NACT_I = 16
# how an actuator's moment is held: one dof (a hinge or slide joint: gear), or a row of ten_J times
# ACT_ROWSCALE (a tendon: its Jacobian times gear[0]; a slider-crank or a ball or free joint: its own row,
# after the tendons, holding the moment before gear[0] or the whole moment)
TRNK_DOF, TRNK_ROW = 0, 2

# ----------------------------------------------------------------------------- model: tendons and their wraps
TEN_STIFFNESS, TEN_DAMPING, TEN_LENGTHSPRING = 0, 1, 2
# the tendon's constraint rows: tendon_range, margin, solref_lim, solimp_lim, solref_fri, solimp_fri,
# frictionloss, invweight0 (diagA), length0 (tendon equalities' reference)
TEN_RANGE, TEN_MARGIN, TEN_SOLREF_LIM, TEN_SOLIMP_LIM, TEN_SOLREF_FRI, TEN_SOLIMP_FRI = 4, 6, 7, 9, 14, 16
TEN_FRICTIONLOSS, TEN_INVWEIGHT0, TEN_LENGTH0 = 21, 22, 23
NTEN_F = 24
TEN_ADR, TEN_NUM, TEN_FIXED = 0, 1, 2  # TEN_FIXED: the first wrap is a joint (MuJoCo's fixed tendon)
TEN_LIMITED = 3  # tendon_limited
NTEN_I = 4
WRAP_TYPE, WRAP_OBJID, WRAP_BODYID = 0, 1, 2  # WRAP_BODYID: a site's body (-1 for other wraps)
NWRAP_I = 3
WRAP_PRM = 0
NWRAP_F = 1

# ----------------------------------------------------------------------------- model: equality constraints
# eq_solref, eq_solimp, eq_data (mjNEQDATA = 12), and EQ_INVWEIGHT: the rows' diagA (mj_diagApprox: connect
# and weld translation, weld rotation; joint and tendon: the objects' invweight0 summed)
EQ_SOLREF, EQ_SOLIMP, EQ_DATA, EQ_INVWEIGHT = 0, 2, 7, 19
NEQ_F = 21
# eq_type, eq_obj1id, eq_obj2id, eq_objtype; EQ_BODY1/2: connect and weld's bodies (a site's body), -1 otherwise
EQ_TYPE, EQ_OBJ1ID, EQ_OBJ2ID, EQ_OBJTYPE, EQ_BODY1, EQ_BODY2 = 0, 1, 2, 3, 4, 5
NEQ_I = 6

# ----------------------------------------------------------------------------- model: geoms' collision shapes
GEOM_SIZE, GEOM_RBOUND = 0, 3  # geom_size, geom_rbound
GEOM_SAPMARGIN = 4  # the largest margin + gap of the geom's candidate pairs: its sweep-and-prune interval's padding
NGCOL_F = 5
GEOM_TYPE = 0
GEOM_PAIRADR, GEOM_PAIRNUM = 1, 2  # the pair-table rows whose lower geom index is this geom (contiguous)
GEOM_SAP = 3  # 1: the geom takes part in sweep-and-prune (a bounding sphere); 0: its pairs are always tested
# a mesh geom's mesh: its first vertex row in mesh_vert, its vertex count, its hull graph's address in mesh_graph
# (-1: no graph); -1 / 0 / -1 for other geoms
GEOM_VERTADR, GEOM_VERTNUM, GEOM_GRAPHADR = 4, 5, 6
GEOM_HFIELDID = 7  # a height-field geom's hfield (row of hfield_f / hfield_i), -1 for other geoms
GEOM_POLYADR, GEOM_POLYNUM, GEOM_EXTREMA = 8, 9, 10  # a mesh geom's first polygon, polygon count, its mesh id
NGCOL_I = 11

# ----------------------------------------------------------------------------- model: mesh polygons
# MuJoCo's mesh polygons (mesh_poly*): per polygon its normal (mesh frame), first vertex slot in mesh_polyvert
# and vertex count; per mesh vertex its polygons' slots in mesh_polymap; mesh_extrema: per mesh 27 extreme
# vertex ids (hill-climbing seeds)
MPOLY_NORMAL = 0
NMPOLY_F = 3
MPOLY_VERTADR, MPOLY_VERTNUM = 0, 1
NMPOLY_I = 2
MVERT_POLYMAPADR, MVERT_POLYMAPNUM = 0, 1
NMVERT_I = 2

# ----------------------------------------------------------------------------- model: height fields
HFIELD_SIZE = 0  # hfield_size: x and y half-extents, top elevation, base depth
NHFIELD_F = 4
HFIELD_NROW, HFIELD_NCOL, HFIELD_ADR = 0, 1, 2  # the grid and its first sample in hfield_data
NHFIELD_I = 3

# ----------------------------------------------------------------------------- model: candidate collision pairs
# the pair table of `collision_pairs`, computed once at put_model, in its order (sorted geom pairs); each row's
# geoms as MuJoCo orders them for the collider (geom 1 of the lower type); PAIR_EXPLICIT: 1 for a pair from an
# explicit <pair> element; PAIR_COLLIDER: which collider (collision.params.COLLIDER); PAIR_DIM: the contact's
# condim. The floats are the contact parameters mixed once (mj_contactParam, or the <pair>'s own).
PAIR_GEOM1, PAIR_GEOM2, PAIR_EXPLICIT, PAIR_COLLIDER, PAIR_DIM = 0, 1, 2, 3, 4
PAIR_SWEPT = 5  # 1: both geoms take part in sweep-and-prune, which decides whether the row is tested
# MuJoCo's midphase (`bvh`, `collision.broadphase.midphase`): the node pairs of the row's tree walk, rows
# PAIR_BVHADR .. + PAIR_BVHNUM of pair_bvh; PAIR_BVHNUM -1: the midphase does not take the row. (Table widths
# matter: one more float column, 17 instead of 16, cost the 27 boxes 0.8 % more instructions per step.)
PAIR_BVHADR, PAIR_BVHNUM = 6, 7
NPAIR_I = 8
PAIR_MARGIN, PAIR_GAP, PAIR_FRICTION, PAIR_SOLREF, PAIR_SOLREFFRICTION, PAIR_SOLIMP = 0, 1, 2, 7, 9, 11
NPAIR_F = 16
BVH_MARGIN = 6  # column of bvh_f

# ----------------------------------------------------------------------------- model: sensors
# MuJoCo's sensor_type, datatype, objtype, objid, reftype, refid, dim, adr; SENS_BODY, SENS_REFBODY: the body of
# the object and of the reference frame (-1 for none); SENS_SITETYPE: a touch sensor's site's geom type, its
# zone (SENS_SITESIZE: the site's size; an insidesite sensor's site, its reference); SENS_INTPRM: sensor_intprm
# (3: a rangefinder's and a contact sensor's data bits, a contact sensor's reduction and number of contacts);
# SENS_CUTOFF: sensor_cutoff
SENS_TYPE, SENS_DATATYPE, SENS_OBJTYPE, SENS_OBJID, SENS_REFTYPE, SENS_REFID, SENS_DIM, SENS_ADR = range(8)
SENS_BODY, SENS_REFBODY, SENS_SITETYPE, SENS_INTPRM = 8, 9, 10, 11
# MuJoCo 4.0's history: sensor_history (nsample, interp), sensor_historyadr (-1: none); sensor_delay,
# sensor_interval (period, phase)
SENS_NSAMPLE, SENS_INTERP, SENS_HISTADR = 14, 15, 16
# a distance, normal or fromto sensor's two geom ranges (first geom, count): a geom's own, or a body's geoms
SENS_GEOMADR1, SENS_GEOMNUM1, SENS_GEOMADR2, SENS_GEOMNUM2 = 17, 18, 19, 20
NSENS_I = 21
SENS_CUTOFF, SENS_SITESIZE, SENS_DELAY, SENS_PERIOD = 0, 1, 4, 5
NSENS_F = 6

# ----------------------------------------------------------------------------- model: qpos-sized
QPOS0, QPOS_SPRING = 0, 1
NQPOS_F = 2

# ----------------------------------------------------------------------------- model: options, sizes
OPT_TIMESTEP, OPT_GRAVITY, OPT_WIND, OPT_DENSITY, OPT_VISCOSITY = 0, 1, 4, 7, 8
OPT_PRUNETOL = 9  # contact_pruning_tolerance (0: off): contacts of a pair closer than this are merged
OPT_CCDTOL = 10  # opt.ccd_tolerance: GJK/EPA's tolerance
# the constraint solver: opt.impratio, tolerance, ls_tolerance, noslip_tolerance; stat.meaninertia
OPT_IMPRATIO, OPT_TOLERANCE, OPT_LS_TOLERANCE, OPT_NOSLIP_TOLERANCE, OPT_MEANINERTIA = 11, 12, 13, 14, 15
OPT_MAGNETIC = 16  # opt.magnetic (the magnetometer sensor)
NOPT_F = 19
(SZ_NQ, SZ_NV, SZ_NU, SZ_NA, SZ_NBODY, SZ_NJNT, SZ_NGEOM, SZ_NSITE, SZ_NMOCAP, SZ_NM, SZ_NTENDON,
 OPT_DISABLEFLAGS, OPT_EULERDAMP, OPT_NGRAVCOMP, OPT_NACTGRAVCOMP, OPT_JACROW) = range(16)
SZ_NPAIR = 16  # rows of pair_i
OPT_SAP = 17  # broadphase: 1 sweep-and-prune, 0 every candidate pair (broadphase_traversal)
OPT_CCDITER = 18  # opt.ccd_iterations: GJK/EPA's iteration limit (the convex collider's scratch is sized on it)
# the constraint solver: opt.cone (CONE_*), opt.solver (SOLVER_*), iterations, ls_iterations, noslip_iterations;
# SZ_NEFCMAX: rows of efc_J / efc / efc_i per env
OPT_CONE, OPT_SOLVER, OPT_ITERATIONS, OPT_LS_ITERATIONS, OPT_NOSLIP_ITERATIONS, SZ_NEFCMAX = 19, 20, 21, 22, 23, 24
SZ_NCONMAX = 25  # contact rows per env (max_contacts): the collider's capacity inside a step
SZ_NEQ = 26  # equality constraints (rows of eq_f, eq_i, eq_active)
# the column of d.M whose matrix the constraint solver's Gauss term uses: QM (qM), or QH under
# approximate_implicitfast, whose qacc_smooth and factor are of qM - h qDeriv
OPT_SOLVER_M = 27
# efc_J's storage per env: SZ_NEFCWIDE rows of nv columns (room for every non-contact row), then rows of
# SZ_EFCW columns (the widest contact row's spans); a row's entries are stored compactly, span after span
SZ_NEFCWIDE, SZ_EFCW = 28, 29
SZ_NSENSOR, SZ_NSENSORDATA = 30, 31  # sensors (rows of sens_f / sens_i) and the length of a sensordata row
# OPT_JACROW: the first of 6 scratch rows of ten_J (point and axis Jacobians of spatial tendons and slider-cranks)
# from OPT_STRIDES on: the per-env stride of each data array (STR, at the end of this file)
OPT_STRIDES = 32

# ----------------------------------------------------------------------------- data: bodies [B, nbody, NDBODY]
XPOS, XQUAT, XMAT, XIPOS, XIMAT = 0, 3, 7, 16, 19
SUBTREE_COM, CINERT, CVEL, CRB = 28, 31, 41, 47
CACC, CFRC_BODY, SUBTREE_MASS = 57, 63, 69  # RNE and com_pos scratch
# the sensors' (`sensor`): mj_subtreeVel's subtree_linvel, subtree_angmom; mj_rnePostConstraint's cfrc_int (its
# cacc goes in CACC, whose RNE values are spent by then)
SUBTREE_LINVEL, SUBTREE_ANGMOM, CFRC_INT = 70, 73, 76
NDBODY = 82

# ----------------------------------------------------------------------------- data: joints [B, njnt, NDJNT]
XANCHOR, XAXIS = 0, 3
NDJNT = 6

# ----------------------------------------------------------------------------- data: dofs [B, nv, NDDOF]
CDOF, CDOF_DOT = 0, 6
QFRC_BIAS, QFRC_PASSIVE, QFRC_ACTUATOR, QFRC_SMOOTH, QACC_SMOOTH = 12, 13, 14, 15, 16
QLDIAGINV, QFRC_GRAVCOMP, QFRC_SPRING, QFRC_DAMPER = 17, 18, 19, 20
QACC_FREE, QHDIAGINV, QACC_INT = 21, 22, 23  # implicit integration scratch
QFRC_FLUID = 24
QFRC_CONSTRAINT, QACC_WARMSTART = 25, 26  # the solver's result and the next step's starting point
NDDOF = 27

# ----------------------------------------------------------------------------- data: mass matrix [B, nM, NDM]
QM, QLD, QH = 0, 1, 2  # QH holds qDeriv (reduced to qM's sparsity) while implicit integration builds it
NDM = 3

# ----------------------------------------------------------------------------- data: tendons [B, ntendon, NDTEN]
TEN_LENGTH, TEN_VELOCITY = 0, 1
NDTEN = 2
# ten_J [B, rows, nv]: dense tendon Jacobians, then the moment rows of slider-crank and ball/free joint
# transmissions, then (with spatial tendons or slider-cranks) 6 scratch rows from OPT_JACROW

# ----------------------------------------------------------------------------- data: geoms and sites [B, n, NDFRAME]
FXPOS, FXMAT = 0, 3
NDFRAME = 12

# ----------------------------------------------------------------------------- data: actuators [B, nu, NDACT]
ACTUATOR_LENGTH, ACTUATOR_VELOCITY, ACTUATOR_FORCE, ACTUATOR_CTRL = 0, 1, 2, 3
NDACT = 4

# ----------------------------------------------------------------------------- data: contacts [B, nconmax, NDCON]
# floats: MuJoCo's mjContact dist, pos and frame (row 0 the normal from geom 1 to geom 2, rows 1-2 tangents)
CON_DIST, CON_POS, CON_FRAME = 0, 1, 4
NDCON = 13
# ints [B, nconmax, NDCON_I]: the two geoms (geom 1 of the lower type, as MuJoCo orders them) and the row of
# the candidate pair table the contact came from (its parameters are that row's)
CON_GEOM1, CON_GEOM2, CON_PAIR = 0, 1, 2
CON_EFCADR = 3  # the contact's first constraint row (-1: no rows, e.g. in the gap)
NDCON_I = 4

# ----------------------------------------------------------------------------- data: constraint rows [B, nefcmax, NDEFC]
# MuJoCo's efc_* of env b, rows in its order (equality, friction loss, limits, contacts); efc_J [B, njsize]:
# each row's stored entries (EFC_SPAN, EFC_JADR; `data.dense_efc_J` unpacks them). EFC_MU: a contact's
# regularized friction con.mu (on every row of the contact); EFC_FRICTION: the friction coefficient of the
# row's tangent direction (pyramidal rows k: friction[k // 2]; elliptic row j >= 1: friction[j - 1]; 0
# otherwise). EFC_JAREF, EFC_JV, EFC_QUAD: the solver's per-row scratch.
EFC_POS, EFC_MARGIN, EFC_FRICTIONLOSS, EFC_DIAGA, EFC_R, EFC_D, EFC_AREF, EFC_VEL = 0, 1, 2, 3, 4, 5, 6, 7
EFC_FORCE, EFC_JAREF, EFC_MU, EFC_FRICTION, EFC_K, EFC_B, EFC_IMP = 8, 9, 10, 11, 12, 13, 14
EFC_JV, EFC_QUAD = 15, 16  # EFC_QUAD: 3 floats
NDEFC = 19
# ints: MuJoCo's efc_type (CNSTR_*), efc_id (the equality, dof, joint, tendon or contact), efc_state
# (CNSTRSTATE_*); EFC_DIM: the contact's condim (0 for other rows); EFC_BLOCK: the row's index within its contact.
# EFC_SPAN: 4 ints lo1, hi1, lo2, hi2, the dof ranges [lo1, hi1) and [lo2, hi2) (ascending, disjoint) outside
# which the row's Jacobian is zero and not stored (a contact's or a weld's: its two bodies' dof chains lie in
# their trees' ranges); hi1 <= lo1 (all zeros) means the whole row [0, nv). EFC_JADR: where the row starts in
# env b's efc_J: its span entries follow, span after span (dof i of span 1 at JADR + i - lo1, of span 2 at
# JADR + hi1 - lo1 + i - lo2; of a whole row at JADR + i). The solver walks only the spans.
EFC_TYPE, EFC_ID, EFC_STATE, EFC_DIM, EFC_BLOCK, EFC_SPAN, EFC_JADR = 0, 1, 2, 3, 4, 5, 9
NDEFC_I = 10
# per env [B, NEFC_N]: row counts (ne, nf, nl, nefc) and the solver's outcome (iterations, 1 when it converged)
EFCN_NE, EFCN_NF, EFCN_NL, EFCN_NEFC, EFCN_NITER, EFCN_CONVERGED = 0, 1, 2, 3, 4, 5
NEFC_N = 6
CNSTR_EQUALITY, CNSTR_FRICTION_DOF, CNSTR_FRICTION_TENDON, CNSTR_LIMIT_JOINT, CNSTR_LIMIT_TENDON = 0, 1, 2, 3, 4
CNSTR_CONTACT_FRICTIONLESS, CNSTR_CONTACT_PYRAMIDAL, CNSTR_CONTACT_ELLIPTIC = 5, 6, 7
CNSTRSTATE_SATISFIED, CNSTRSTATE_QUADRATIC, CNSTRSTATE_LINEARNEG, CNSTRSTATE_LINEARPOS, CNSTRSTATE_CONE = 0, 1, 2, 3, 4

# ----------------------------------------------------------------------------- data: the constraint solver's scratch
# (rigidsim.engine.solver; nothing outside it reads these)
# solver_v [B, nv, NSOLV]: per-dof vectors of the primal solver, indexed by dof: M*qacc, M*search, the gradient,
# the preconditioned gradient (M or H solve), the search direction, CG's previous gradient and preconditioned
# gradient, a rank-1 update vector, 6 rows of L'J for a cone's Cholesky update (noslip reuses them), and
# the island's qacc while it is solved
SV_MA, SV_MV, SV_GRAD, SV_MGRAD, SV_SEARCH, SV_GRADOLD, SV_MGRADOLD, SV_UPD, SV_LTJ = 0, 1, 2, 3, 4, 5, 6, 7, 8
SV_QACC = 14
NSOLV = 15
# solver_vi [B, nv, NSOLVI] ints: SVI_TREE the dof's kinematic tree (named by its first dof), SVI_PARENT the
# union-find parent of a tree (rows of first dofs), SVI_ISLAND the dof's constraint island (-1: none),
# SVI_LIST row k: the k-th dof of the island being solved, SVI_POS the dof's position in that list,
# SVI_NITER row k: island k's iterations; SVI_NEXT the next dof of the dof's island (-1: the last), SVI_HEAD
# and SVI_RHEAD row k: island k's first dof and first row (-1: none); SVI_FIRST row k: a lower bound on the
# first nonzero of row k of Newton's factor (its profile: `linalg.chol_factor`). Newton's factor orders the
# island's dofs its own way (`solver.ordering`): SVI_HPOS the dof's row in solver_H, SVI_HLIST row k: the dof
# of solver_H's row k; while the order is computed, per tree of the island (row s: the s-th tree of the list,
# its slot) SVI_TSTART its first position in the list, SVI_DEG and SVI_ADJ its neighbours' count and first
# entry in solver_efc_i's SEI_ADJ, SVI_ORDER row q: the q-th slot visited; SVI_SLOT row t: tree t's slot.
# SVI_REACH row j: a bound on the factor's rows whose profile reaches column j (`linalg.chol_factor`)
SVI_TREE, SVI_PARENT, SVI_ISLAND, SVI_LIST, SVI_POS, SVI_NITER, SVI_NEXT, SVI_HEAD, SVI_RHEAD = range(9)
SVI_FIRST = 9
SVI_HPOS, SVI_HLIST, SVI_SLOT, SVI_TSTART, SVI_DEG, SVI_ADJ, SVI_ORDER, SVI_REACH = range(10, 18)
NSOLVI = 18
# solver_efc_i [B, nefcmax, NSOLEI] ints: the row's state before the last step, its island, row k: the k-th
# row of the island being solved, and SEI_STATE: after a solve by islands, the state the solver ended with
# (efc_state then holds what MuJoCo 4 reports there: the state at qacc_smooth of its warmstart), SEI_NEXT the
# next row of the row's island (-1: the last); while Newton's order is computed (`solver.ordering`), the
# island's tree graph: SEI_ADJ, 2 columns, its adjacency lists (entry e at row e // 2, column SEI_ADJ + e % 2),
# SEI_EDGE, 2 columns, row e: edge e's two trees (slots)
SEI_OLDSTATE, SEI_ISLAND, SEI_LIST, SEI_STATE, SEI_NEXT = 0, 1, 2, 3, 4
SEI_ADJ, SEI_EDGE = 5, 7
NSOLEI = 9
# solver_H, solver_Hcone [B, nv, nv]: the dense Newton Hessian's Cholesky factor (lower triangle, indexed by
# the factor's order of the island's dofs, SVI_HPOS), and the same with the elliptic cones' rank updates
# solver_n [B, NSOLN] ints: the number of islands of the last solve
SN_NISLAND = 0
NSOLN = 1

# ----------------------------------------------------------------------------- MuJoCo's enums
# Defined once, in rigidsim.model (MuJoCo's names and values), and re-exported here as plain module-level
# ints, so kernels read them as `L.JNT_FREE` or `from rigidsim.engine.layout import JNT_FREE`.
from rigidsim.model import (  # noqa: E402
    BIAS_AFFINE as BIAS_AFFINE, BIAS_NONE as BIAS_NONE,
    CONE_ELLIPTIC as CONE_ELLIPTIC, CONE_PYRAMIDAL as CONE_PYRAMIDAL,
    SOLVER_CG as SOLVER_CG, SOLVER_NEWTON as SOLVER_NEWTON, SOLVER_PGS as SOLVER_PGS,
    DSBL_ACTUATION as DSBL_ACTUATION, DSBL_CLAMPCTRL as DSBL_CLAMPCTRL, DSBL_DAMPER as DSBL_DAMPER,
    DSBL_EULERDAMP as DSBL_EULERDAMP, DSBL_GRAVITY as DSBL_GRAVITY, DSBL_SPRING as DSBL_SPRING,
    DSBL_CONSTRAINT as DSBL_CONSTRAINT, DSBL_CONTACT as DSBL_CONTACT, DSBL_EQUALITY as DSBL_EQUALITY,
    DSBL_FRICTIONLOSS as DSBL_FRICTIONLOSS, DSBL_LIMIT as DSBL_LIMIT, DSBL_REFSAFE as DSBL_REFSAFE,
    DSBL_WARMSTART as DSBL_WARMSTART, DSBL_ISLAND as DSBL_ISLAND, DSBL_SENSOR as DSBL_SENSOR,
    DYN_FILTER as DYN_FILTER, DYN_FILTEREXACT as DYN_FILTEREXACT, DYN_INTEGRATOR as DYN_INTEGRATOR,
    DYN_NONE as DYN_NONE,
    GAIN_AFFINE as GAIN_AFFINE, GAIN_FIXED as GAIN_FIXED,
    INT_APPROX_IMPLICITFAST as INT_APPROX_IMPLICITFAST, INT_EULER as INT_EULER, INT_IMPLICIT as INT_IMPLICIT,
    INT_IMPLICITFAST as INT_IMPLICITFAST, INT_RK4 as INT_RK4,
    JNT_BALL as JNT_BALL, JNT_FREE as JNT_FREE, JNT_HINGE as JNT_HINGE, JNT_SLIDE as JNT_SLIDE,
    SAMEFRAME_BODY as SAMEFRAME_BODY, SAMEFRAME_BODYROT as SAMEFRAME_BODYROT, SAMEFRAME_INERTIA as SAMEFRAME_INERTIA,
    SAMEFRAME_INERTIAROT as SAMEFRAME_INERTIAROT, SAMEFRAME_NONE as SAMEFRAME_NONE,
    TRN_JOINT as TRN_JOINT, TRN_JOINTINPARENT as TRN_JOINTINPARENT, TRN_SLIDERCRANK as TRN_SLIDERCRANK,
    TRN_TENDON as TRN_TENDON,
    WRAP_JOINT as WRAP_JOINT, WRAP_PULLEY as WRAP_PULLEY, WRAP_SITE as WRAP_SITE,
)

MINVAL = 1e-15  # mjMINVAL

# rollout frame layout: per env, [time, qpos, qvel, qacc, ctrl, act, xpos, xquat] (offsets from sizes), then
# sensordata when recorded (`sensor`); a scene with constraints adds [ncon, nefc, solver_niter, solver_converged, qfrc_constraint] and, when contacts are
# recorded, "crec": where the frame's ncon contact rows start in the launch's contact pool, as two floats
# (start // CREC_SPLIT, start % CREC_SPLIT: exact in float32 too). The pool holds rows of NCREC floats
# (`CREC_*`: the two geoms, position, normal from geom 1 to geom 2, dist, the force geom 1 exerts on geom 2
# in world coordinates), each frame's rows together, the frames in the order they found room
# a rollout launch's own numbers, in one int32 array the simulator keeps and rewrites before each launch (its
# identity never changes, so the launch reuses its cached argument context: `lang._cached_host_array_launches`);
# LAUNCH_RESUME: 1 for a launch that runs the paused envs (status 2, 3) alone; LAUNCH_GROW: 1 when the contact
# capacity grows (an env that finds more contacts than it holds pauses instead of failing);
# LAUNCH_POOL_N: the contact pool's rows handed out, counted up by the kernel (past the pool's size when an
# env found no room); LAUNCH_ENV0, LAUNCH_ENV1: the launch's slice of the env loop, iterations [ENV0, ENV1) of
# B (`lang.env_of` maps an iteration to its env): a launch may step some envs alone; LAUNCH_CANARY: 2, the
# length of the loop that ends each env's launch on a device (`kernels._loop_canary`); LAUNCH_PASS: the pass a
# staged launch does (`kernels._staged`: 0 the step, or the final pass when the launch has no step; 1 the final
# pass after the step)
LAUNCH_S0, LAUNCH_NSTEPS, LAUNCH_EVERY, LAUNCH_FRAME0, LAUNCH_FINAL, LAUNCH_USE_CTRL, LAUNCH_RECORD = range(7)
LAUNCH_CONTACTS, LAUNCH_RESUME, LAUNCH_POOL_N, LAUNCH_GROW, LAUNCH_ENV0, LAUNCH_ENV1 = 7, 8, 9, 10, 11, 12
LAUNCH_CANARY, LAUNCH_PASS = 13, 14
NLAUNCH = 15
# status[b, 0] of a rollout's env: 0 running, 1 failed (status[b, 1:4]: step, kind, detail), 2 paused for room
# in the contact pool, 3 paused for contact capacity (LAUNCH_GROW: max_contacts is sized automatically;
# status[b, 3]: the contacts it found), both at step status[b, 1]. A failure's kind (status[b, 2]): 1 qpos, 2
# qvel, 3 qacc not finite, 4 more contacts than max_contacts, FAIL_LOOP_LIMIT the device cut its loops short
FAIL_LOOP_LIMIT = 5
ENV_RUNNING, ENV_FAILED, ENV_PAUSED_POOL, ENV_PAUSED_CAPACITY = 0, 1, 2, 3
# status[b, STATUS_START], status[b, STATUS_RESUMED]: what a device's staged launch (`kernels._staged`) keeps
# between its tasks: the first pass of the launch env b does, and 1 while that pass's forward is kept (paused for
# the pool); the host reads columns 0-3 alone
STATUS_START, STATUS_RESUMED = 4, 5
NSTATUS = 6
# what a launch cut short by a device's loop limit was doing (status[b, 3] of FAIL_LOOP_LIMIT): the whole step,
# or a staged task (`kernels._staged`): the step's start, the smooth dynamics, the constraint stage's parts, its end
STAGE_NAMES = ("step", "start", "smooth dynamics", "collision", "constraint rows", "constraint solver", "end")

FRAME_KEYS = ("time", "qpos", "qvel", "qacc", "ctrl", "act", "xpos", "xquat")
CONSTRAINT_KEYS = ("ncon", "nefc", "solver_niter", "solver_converged", "qfrc_constraint")
CREC_GEOM, CREC_POS, CREC_NORMAL, CREC_DIST, CREC_FORCE = 0, 2, 5, 8, 9
NCREC = 12
CREC_SPLIT = 1 << 20


def frame_layout(nq: int, nv: int, nu: int, na: int, nbody: int, constraint: bool = False, contacts: bool = False,
                 nsensordata: int = 0):
    """Offsets and shapes of the fields of one recorded frame, and its width. `nsensordata` > 0: the frame
    records sensordata after xquat (before the constraint fields)."""
    sizes = {"time": (1, ()), "qpos": (nq, (nq,)), "qvel": (nv, (nv,)), "qacc": (nv, (nv,)),
             "ctrl": (nu, (nu,)), "act": (na, (na,)), "xpos": (3 * nbody, (nbody, 3)),
             "xquat": (4 * nbody, (nbody, 4)), "ncon": (1, ()), "nefc": (1, ()), "solver_niter": (1, ()),
             "solver_converged": (1, ()), "qfrc_constraint": (nv, (nv,)), "crec": (2, (2,)),
             "sensordata": (nsensordata, (nsensordata,))}
    keys = (FRAME_KEYS + (("sensordata",) if nsensordata else ()) + (CONSTRAINT_KEYS if constraint else ())
            + (("crec",) if constraint and contacts else ()))
    out, off = {}, 0
    for k in keys:
        n, shape = sizes[k]
        out[k] = (off, n, shape)
        off += n
    return out, off


# the distance sensors' scratch contact rows (sens_con: the 4 contacts at most of the analytic colliders they use)
SENSOR_CONTACTS = 8

# ----------------------------------------------------------------------------- the kernels' array arguments
# One line per array. Every kernel takes these arrays, in this order, flattened to 1-D (groups._Flat):
# `data.put_model` fills the model arrays and `data.make_data` allocates the data arrays from these tables,
# and kernels.py's argument lists are generated from them (`python -m rigidsim.engine.kernel_args`; a test
# fails when they are out of date). Rows and columns name a size of `data.array_sizes` or are constants;
# every array has at least one row (kernels take no empty arrays).

# data, env axis first: (name, rows per env or None for one value per env, columns: 1 for a [B, rows] array[,
# 'i' for int32; floats otherwise])
DATA_ARRAYS = (
    ("qpos", "nq", 1), ("qvel", "nv", 1), ("act", "na", 1), ("ctrl", "nu", 1), ("qacc", "nv", 1),
    ("time", None, 1),
    ("mocap_pos", "nmocap", 3), ("mocap_quat", "nmocap", 4),
    ("body", "nbody", NDBODY), ("jnt", "njnt", NDJNT), ("dof", "nv", NDDOF), ("M", "nM", NDM),
    ("geom", "ngeom", NDFRAME), ("site", "nsite", NDFRAME), ("actu", "nu", NDACT), ("act_dot", "na", 1),
    ("rk", "nrk", 1), ("ten", "nrow", NDTEN), ("ten_J", "nrow", "nv"),
    ("contact", "nconmax", NDCON), ("contact_i", "nconmax", NDCON_I, "i"), ("ncon", None, 1, "i"),
    ("nbroad", None, 1, "i"),
    ("sap_f", "ngeom", 2), ("sap_i", "ngeom", 1, "i"), ("pair_hit", "npair", 1, "i"),
    ("ccd_f", "nccdf", 1), ("ccd_i", "nccdi", 1, "i"),  # the convex collider's scratch (GJK simplex, EPA polytope)
    ("efc_J", "njsize", 1), ("efc", "nefcmax", NDEFC), ("efc_i", "nefcmax", NDEFC_I, "i"),
    ("efc_n", NEFC_N, 1, "i"),
    ("eq_active", "neq", 1, "i"),  # MuJoCo's eq_active: 1 while equality e makes rows (from eq_active0)
    ("history", "nhistory", 1),  # MuJoCo's history: each history sensor's buffer (`data.history_init`)
    ("sens_con", "nsenscon", NDCON),  # distance sensors' scratch contact rows (a collider's output)
    ("solver_v", "nv", NSOLV), ("solver_vi", "nv", NSOLVI, "i"), ("solver_efc_i", "nefcmax", NSOLEI, "i"),
    ("solver_H", "nv", "nv"), ("solver_Hcone", "nv", "nv"), ("solver_n", NSOLN, 1, "i"),
)
# opt_i column of each data array's per-env stride (elements from one env's rows to the next's)
STR = {a[0]: OPT_STRIDES + k for k, a in enumerate(x for x in DATA_ARRAYS if x[1] is not None)}
NOPT_I = OPT_STRIDES + len(STR)
# size names of columns read at run time from opt_i
SZ_OF = {"nv": SZ_NV}

# model: (name, rows or None for a single row, columns, 'f' for floats or 'i' for int32)
MODEL_ARRAYS = (
    ("body_f", "nbody", NBODY_F, "f"), ("body_i", "nbody", NBODY_I, "i"),
    ("jnt_f", "njnt", NJNT_F, "f"), ("jnt_i", "njnt", NJNT_I, "i"),
    ("dof_f", "nv", NDOF_F, "f"), ("dof_i", "nv", NDOF_I, "i"), ("m_i", "nM", NM_I, "i"),
    ("geom_f", "ngeom", NFRAME_F, "f"), ("geom_i", "ngeom", NFRAME_I, "i"),
    ("site_f", "nsite", NFRAME_F, "f"), ("site_i", "nsite", NFRAME_I, "i"),
    ("act_f", "nu", NACT_F, "f"), ("act_i", "nu", NACT_I, "i"),
    ("qpos_f", "nq", NQPOS_F, "f"),
    ("ten_f", "ntendon", NTEN_F, "f"), ("ten_i", "ntendon", NTEN_I, "i"),
    ("eq_f", "neq", NEQ_F, "f"), ("eq_i", "neq", NEQ_I, "i"),
    ("wrap_f", "nwrap", NWRAP_F, "f"), ("wrap_i", "nwrap", NWRAP_I, "i"),
    ("gcol_f", "ngeom", NGCOL_F, "f"), ("gcol_i", "ngeom", NGCOL_I, "i"),
    ("pair_f", "npair", NPAIR_F, "f"), ("pair_i", "npair", NPAIR_I, "i"),
    # the midphase's boxes (centre and half-sizes): the geoms' (geom_aabb, in the geom frame), then the bodies'
    # bounding-volume trees' nodes (bvh_aabb, in the body's inertial frame; column BVH_MARGIN their body's
    # margin), and the node pairs (rows of bvh_f) of its walks
    ("bvh_f", "nbvh", 7, "f"), ("pair_bvh", "npairbvh", 2, "i"),
    # mesh vertices in the mesh's frame (MuJoCo's float32 values, widened) and the convex-hull graphs
    ("mesh_vert", "nmeshvert", 3, "f"), ("mesh_graph", "nmeshgraph", 1, "i"),
    ("mesh_vert_i", "nmeshvert", NMVERT_I, "i"), ("mesh_poly_f", "nmeshpoly", NMPOLY_F, "f"),
    ("mesh_poly_i", "nmeshpoly", NMPOLY_I, "i"), ("mesh_polyvert", "nmeshpolyvert", 1, "i"),
    ("mesh_polymap", "nmeshpolymap", 1, "i"), ("mesh_extrema", "nmesh", 27, "i"),
    # height fields: sizes, grids, and the elevation samples (MuJoCo's float32 values in [0, 1], widened)
    ("hfield_f", "nhfield", NHFIELD_F, "f"), ("hfield_i", "nhfield", NHFIELD_I, "i"),
    ("hfield_data", "nhfielddata", 1, "f"),
    ("sens_f", "nsensor", NSENS_F, "f"), ("sens_i", "nsensor", NSENS_I, "i"),
    ("opt_f", None, NOPT_F, "f"), ("opt_i", None, NOPT_I, "i"),
)
MODEL_ARGS = tuple(a[0] for a in MODEL_ARRAYS)
DATA_ARGS = tuple(a[0] for a in DATA_ARRAYS)
DATA_KIND = {a[0]: (a[3] if len(a) > 3 else "f") for a in DATA_ARRAYS}
