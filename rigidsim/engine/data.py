"""Model packing and batched Data: MuJoCo Warp's io.py for our kernels.

`check_supported` refuses, with the elements' names, what the engine does
not build yet (`unsupported_features` lists it as feature names, which read
well after "not supported yet: "). `put_model` packs a numpy `Model` into the
fixed column layouts of `layout`; `make_data` allocates the batched Data (env
axis first). `DATA_FIELDS` maps every MuJoCo Data name we hold to where it lives,
so `Simulator.get(name)` returns it as ``[B, ...]``.

Every array has at least one row (Taichi kernels take no empty arrays);
sizes travel in ``opt_i``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from rigidsim.engine import bvh as BVH
from rigidsim.engine import collision_pairs as CP
from rigidsim.engine import layout as L
from rigidsim.engine.collision import params as CPRM
from rigidsim.errors import InputError
from rigidsim import model as M

_INTEGRATORS = {M.INT_EULER: "euler", M.INT_RK4: "rk4", M.INT_IMPLICIT: "implicit",
                M.INT_IMPLICITFAST: "implicitfast", M.INT_APPROX_IMPLICITFAST: "approximate_implicitfast"}


def _name(model: M.Model, kind: str, i: int) -> str:
    names = model.names.get(kind, [])
    n = names[i] if i < len(names) and names[i] else f"#{i}"
    return repr(n) if not n.startswith("#") else n


def _feature(what: str, kind: str, ids: List[str]) -> str:
    """One item: tendon armature (tendon 'rope'), or (tendons 'a', 'b', 'c'...) when several need it."""
    names = ", ".join(ids[:3]) + ("..." if len(ids) > 3 else "")
    return f"{what} ({kind}{'s' if len(ids) > 1 else ''} {names})"


def unsupported_features(model: M.Model) -> List[str]:
    """What this model needs that the engine does not build yet, one item per feature, phrased as a
    feature with the elements that need it ("tendon armature (tendon 'rope')"), so that the items read
    well after "not supported yet: " (here and in `runner.unsupported`)."""
    integ = int(model.opt.integrator)
    out: List[str] = []
    fluid = model.opt.density > 0 or model.opt.viscosity > 0
    if integ == M.INT_IMPLICIT:
        out.append("the implicit integrator (use implicitfast, euler or rk4, e.g. --set integrator="
                   f"{'euler' if fluid else 'implicitfast'})")
    armature, wrap = [], []
    for t in range(model.ntendon):
        if model.tendon_armature[t] != 0:
            armature.append(_name(model, "tendon", t))
        adr, num = int(model.tendon_adr[t]), int(model.tendon_num[t])
        if any(int(model.wrap_type[w]) not in (M.WRAP_JOINT, M.WRAP_PULLEY, M.WRAP_SITE) for w in range(adr, adr + num)):
            wrap.append(_name(model, "tendon", t))
    if armature:
        out.append(_feature("tendon armature", "tendon", armature))
    flexeq = [_name(model, "eq", e) for e in range(model.neq)
              if int(model.eq_type[e]) not in (M.EQ_CONNECT, M.EQ_WELD, M.EQ_JOINT, M.EQ_TENDON)]
    if flexeq:
        out.append(_feature("flex equality constraints", "equality", flexeq))
    if wrap:
        out.append(_feature("tendon wrapping around geoms", "tendon", wrap))
    if fluid and integ not in (M.INT_EULER, M.INT_RK4):
        out.append(f"fluid forces (option density/viscosity > 0) with the {_INTEGRATORS.get(integ, integ)} "
                   "integrator, whose fluid velocity derivatives are not built (use euler or rk4, e.g. "
                   "--set integrator=euler)")
    groups: Dict[str, List[str]] = {}
    for i in range(model.nu):
        name = _name(model, "actuator", i)
        if int(model.actuator_trntype[i]) not in (M.TRN_JOINT, M.TRN_JOINTINPARENT, M.TRN_TENDON, M.TRN_SLIDERCRANK):
            groups.setdefault("site and body transmissions", []).append(name)
        if int(model.actuator_dyntype[i]) not in (M.DYN_NONE, M.DYN_INTEGRATOR, M.DYN_FILTER, M.DYN_FILTEREXACT):
            groups.setdefault("muscle and user actuator dynamics", []).append(name)
        if int(model.actuator_gaintype[i]) not in (M.GAIN_FIXED, M.GAIN_AFFINE):
            groups.setdefault("actuator gains other than fixed and affine", []).append(name)
        if int(model.actuator_biastype[i]) not in (M.BIAS_NONE, M.BIAS_AFFINE):
            groups.setdefault("actuator biases other than affine", []).append(name)
        if model.actuator_actadr[i] >= 0 and model.actuator_actnum[i] != 1:
            groups.setdefault("actuators with more than one activation", []).append(name)
    out += [_feature(what, "actuator", names) for what, names in groups.items()]
    return out


def check_supported(model: M.Model) -> None:
    """Raise InputError listing every element or option the engine does not support yet."""
    src = model.source or None
    integ = int(model.opt.integrator)
    if integ not in _INTEGRATORS:
        raise InputError(f"unknown integrator {integ}", where=src)
    missing = unsupported_features(model)
    if missing:
        raise InputError("not supported yet: " + "; ".join(missing) + ".", where=src)


def integrator_of(model: M.Model) -> int:
    return int(model.opt.integrator)


def _rows(n: int) -> int:
    return max(int(n), 1)


def _size(sizes: Mapping[str, int], n) -> int:
    """Rows or columns of a layout table entry: a size name of `array_sizes` (at least 1) or a constant."""
    return _rows(sizes[n]) if isinstance(n, str) else int(n)


def subtree_end(dof_parentid) -> np.ndarray:
    """Per dof, one past its last descendant (layout.DOF_SUBTREEEND): its descendants are the dofs after it up
    to there, as MuJoCo numbers bodies, and so dofs, depth first. Checked (a dof's parent must be the dof
    before it or an ancestor of that dof), since the solver's sums over a subtree rely on it."""
    parent = np.asarray(dof_parentid, dtype=np.int64)
    nv = len(parent)
    for k in range(1, nv):
        j = k - 1
        while j > parent[k]:
            j = parent[j]
        if j != parent[k]:
            raise RuntimeError(f"dof {k}'s parent {parent[k]} is not dof {k - 1} or an ancestor of it: the "
                               "model's dofs are not numbered depth first")
    end = np.arange(1, nv + 1)
    for i in range(nv - 1, -1, -1):
        if parent[i] >= 0:
            end[parent[i]] = max(end[parent[i]], end[i])
    return end


def put_model(model: M.Model, fdtype, pair_options: Optional[Mapping[str, Any]] = None) -> Dict[str, np.ndarray]:
    """The packed model arrays, keyed by the kernels' argument names (`layout.MODEL_ARGS`). `pair_options`:
    the resolved options the collision pair table reads (`collision_pairs.PAIR_OPTIONS`, their defaults
    when None)."""
    f, i32 = fdtype, np.int32
    nbody, njnt, nv, ngeom, nsite, nu, nq = (model.nbody, model.njnt, model.nv, model.ngeom, model.nsite, model.nu,
                                             model.nq)

    body_f = np.zeros((_rows(nbody), L.NBODY_F), f)
    body_f[:nbody, L.BODY_POS:L.BODY_POS + 3] = model.body_pos
    body_f[:nbody, L.BODY_QUAT:L.BODY_QUAT + 4] = model.body_quat
    body_f[:nbody, L.BODY_IPOS:L.BODY_IPOS + 3] = model.body_ipos
    body_f[:nbody, L.BODY_IQUAT:L.BODY_IQUAT + 4] = model.body_iquat
    body_f[:nbody, L.BODY_MASS] = model.body_mass
    body_f[:nbody, L.BODY_INERTIA:L.BODY_INERTIA + 3] = model.body_inertia
    body_f[:nbody, L.BODY_GRAVCOMP] = model.body_gravcomp
    body_f[:nbody, L.BODY_INVWEIGHT0:L.BODY_INVWEIGHT0 + 2] = model.body_invweight0
    body_i = np.zeros((_rows(nbody), L.NBODY_I), i32)
    for col, name in ((L.BODY_PARENTID, "body_parentid"), (L.BODY_ROOTID, "body_rootid"),
                      (L.BODY_JNTNUM, "body_jntnum"), (L.BODY_JNTADR, "body_jntadr"),
                      (L.BODY_DOFNUM, "body_dofnum"), (L.BODY_DOFADR, "body_dofadr"),
                      (L.BODY_MOCAPID, "body_mocapid"), (L.BODY_SAMEFRAME, "body_sameframe")):
        body_i[:nbody, col] = getattr(model, name)
    body_i[:nbody, L.BODY_LASTDOF], body_i[:nbody, L.BODY_TREEDOF] = body_chains(model)

    jnt_f = np.zeros((_rows(njnt), L.NJNT_F), f)
    jnt_f[:njnt, L.JNT_POS:L.JNT_POS + 3] = model.jnt_pos
    jnt_f[:njnt, L.JNT_AXIS:L.JNT_AXIS + 3] = model.jnt_axis
    jnt_f[:njnt, L.JNT_STIFFNESS] = model.jnt_stiffness
    jnt_f[:njnt, L.JNT_ACTFRCRANGE:L.JNT_ACTFRCRANGE + 2] = model.jnt_actfrcrange
    jnt_f[:njnt, L.JNT_RANGE:L.JNT_RANGE + 2] = model.jnt_range
    jnt_f[:njnt, L.JNT_MARGIN] = model.jnt_margin
    jnt_f[:njnt, L.JNT_SOLREF:L.JNT_SOLREF + 2] = model.jnt_solref
    jnt_f[:njnt, L.JNT_SOLIMP:L.JNT_SOLIMP + 5] = model.jnt_solimp
    jnt_i = np.zeros((_rows(njnt), L.NJNT_I), i32)
    for col, name in ((L.JNT_TYPE, "jnt_type"), (L.JNT_QPOSADR, "jnt_qposadr"), (L.JNT_DOFADR, "jnt_dofadr"),
                      (L.JNT_BODYID, "jnt_bodyid"), (L.JNT_ACTFRCLIMITED, "jnt_actfrclimited"),
                      (L.JNT_ACTGRAVCOMP, "jnt_actgravcomp"), (L.JNT_LIMITED, "jnt_limited")):
        jnt_i[:njnt, col] = getattr(model, name)
    rootid = np.asarray(model.body_rootid)
    for j in range(njnt):
        if int(model.jnt_type[j]) == M.JNT_FREE:
            root = int(model.jnt_bodyid[j])
            jnt_i[j, L.JNT_STANDALONE] = int(np.asarray(model.body_dofnum)[rootid == root].sum() == 6)

    dof_f = np.zeros((_rows(nv), L.NDOF_F), f)
    dof_f[:nv, L.DOF_ARMATURE] = model.dof_armature
    dof_f[:nv, L.DOF_DAMPING] = model.dof_damping
    dof_f[:nv, L.DOF_M0] = model.dof_M0
    dof_f[:nv, L.DOF_FRICTIONLOSS] = model.dof_frictionloss
    dof_f[:nv, L.DOF_SOLREF:L.DOF_SOLREF + 2] = model.dof_solref
    dof_f[:nv, L.DOF_SOLIMP:L.DOF_SOLIMP + 5] = model.dof_solimp
    dof_f[:nv, L.DOF_INVWEIGHT0] = model.dof_invweight0
    dof_i = np.zeros((_rows(nv), L.NDOF_I), i32)
    for col, name in ((L.DOF_BODYID, "dof_bodyid"), (L.DOF_JNTID, "dof_jntid"), (L.DOF_PARENTID, "dof_parentid"),
                      (L.DOF_MADR, "dof_Madr"), (L.DOF_SIMPLENUM, "dof_simplenum")):
        dof_i[:nv, col] = getattr(model, name)
    madr = np.asarray(model.dof_Madr, dtype=np.int64)
    m_i = np.zeros((_rows(model.nM), L.NM_I), i32)
    for i in range(nv):
        j, adr = i, int(madr[i])
        while j >= 0:
            m_i[adr, L.M_COLIND] = j
            m_i[adr, L.M_COLADR] = madr[j]
            adr += 1
            j = int(model.dof_parentid[j])
        dof_i[i, L.DOF_MROWNNZ] = adr - madr[i]
    dof_i[:nv, L.DOF_SUBTREEEND] = subtree_end(model.dof_parentid)

    def frames(prefix, n):
        ff = np.zeros((_rows(n), L.NFRAME_F), f)
        ff[:n, L.FRAME_POS:L.FRAME_POS + 3] = getattr(model, prefix + "_pos")
        ff[:n, L.FRAME_QUAT:L.FRAME_QUAT + 4] = getattr(model, prefix + "_quat")
        fi = np.zeros((_rows(n), L.NFRAME_I), i32)
        fi[:n, L.FRAME_BODYID] = getattr(model, prefix + "_bodyid")
        fi[:n, L.FRAME_SAMEFRAME] = getattr(model, prefix + "_sameframe")
        return ff, fi

    geom_f, geom_i = frames("geom", ngeom)
    geom_i[:ngeom, L.FRAME_RAY] = ray_visible(model)
    site_f, site_i = frames("site", nsite)

    act_f = np.zeros((_rows(nu), L.NACT_F), f)
    act_f[:nu, L.ACT_DYNPRM:L.ACT_DYNPRM + 10] = model.actuator_dynprm
    act_f[:nu, L.ACT_GAINPRM:L.ACT_GAINPRM + 10] = model.actuator_gainprm
    act_f[:nu, L.ACT_BIASPRM:L.ACT_BIASPRM + 10] = model.actuator_biasprm
    act_f[:nu, L.ACT_CTRLRANGE:L.ACT_CTRLRANGE + 2] = model.actuator_ctrlrange
    act_f[:nu, L.ACT_FORCERANGE:L.ACT_FORCERANGE + 2] = model.actuator_forcerange
    act_f[:nu, L.ACT_ACTRANGE:L.ACT_ACTRANGE + 2] = model.actuator_actrange
    act_f[:nu, L.ACT_GEAR:L.ACT_GEAR + 6] = model.actuator_gear
    act_i = np.zeros((_rows(nu), L.NACT_I), i32)
    for col, name in ((L.ACT_TRNTYPE, "actuator_trntype"), (L.ACT_DYNTYPE, "actuator_dyntype"),
                      (L.ACT_GAINTYPE, "actuator_gaintype"), (L.ACT_BIASTYPE, "actuator_biastype"),
                      (L.ACT_ACTADR, "actuator_actadr"), (L.ACT_ACTNUM, "actuator_actnum"),
                      (L.ACT_CTRLLIMITED, "actuator_ctrllimited"), (L.ACT_FORCELIMITED, "actuator_forcelimited"),
                      (L.ACT_ACTLIMITED, "actuator_actlimited"), (L.ACT_ACTEARLY, "actuator_actearly")):
        act_i[:nu, col] = getattr(model, name)
    act_f[:nu, L.ACT_CRANKLENGTH] = model.actuator_cranklength
    for i in range(nu):
        act_f[i, L.ACT_WRAPPERIOD] = wrap_period(model, i)
    trnid = np.asarray(model.actuator_trnid[:, 0], dtype=np.int64)
    act_i[:nu, L.ACT_TRNID] = trnid
    act_i[:nu, L.ACT_TRNID2] = np.asarray(model.actuator_trnid[:, 1], dtype=np.int64)
    rows, _, _ = moment_rows(model)
    for i in range(nu):
        trn = int(model.actuator_trntype[i])
        if trn in (M.TRN_JOINT, M.TRN_JOINTINPARENT):
            act_i[i, L.ACT_TRN_DOFADR] = model.jnt_dofadr[trnid[i]]
            act_i[i, L.ACT_TRN_QPOSADR] = model.jnt_qposadr[trnid[i]]
        act_i[i, L.ACT_TRN_KIND] = L.TRNK_ROW if i in rows else L.TRNK_DOF
        act_i[i, L.ACT_TRN_ROW] = rows.get(i, 0)
        scaled = trn in (M.TRN_TENDON, M.TRN_SLIDERCRANK)
        act_f[i, L.ACT_ROWSCALE] = model.actuator_gear[i, 0] if scaled else 1.0

    nten, nwrap = model.ntendon, model.nwrap
    _, nrow, jacrow = moment_rows(model)
    ten_f = np.zeros((_rows(nten), L.NTEN_F), f)
    ten_i = np.zeros((_rows(nten), L.NTEN_I), i32)
    if nten:
        ten_f[:nten, L.TEN_STIFFNESS] = model.tendon_stiffness
        ten_f[:nten, L.TEN_DAMPING] = model.tendon_damping
        ten_f[:nten, L.TEN_LENGTHSPRING:L.TEN_LENGTHSPRING + 2] = model.tendon_lengthspring
        ten_i[:nten, L.TEN_ADR] = model.tendon_adr
        ten_i[:nten, L.TEN_NUM] = model.tendon_num
        ten_i[:nten, L.TEN_FIXED] = np.asarray(model.wrap_type)[np.asarray(model.tendon_adr)] == M.WRAP_JOINT
        ten_i[:nten, L.TEN_LIMITED] = model.tendon_limited
        for col, name, w in ((L.TEN_RANGE, "tendon_range", 2), (L.TEN_MARGIN, "tendon_margin", 1),
                             (L.TEN_SOLREF_LIM, "tendon_solref_lim", 2), (L.TEN_SOLIMP_LIM, "tendon_solimp_lim", 5),
                             (L.TEN_SOLREF_FRI, "tendon_solref_fri", 2), (L.TEN_SOLIMP_FRI, "tendon_solimp_fri", 5),
                             (L.TEN_FRICTIONLOSS, "tendon_frictionloss", 1),
                             (L.TEN_INVWEIGHT0, "tendon_invweight0", 1), (L.TEN_LENGTH0, "tendon_length0", 1)):
            ten_f[:nten, col:col + w] = np.asarray(getattr(model, name), np.float64).reshape(nten, w)
    eq_f, eq_i = equality_arrays(model, f)
    wrap_i = np.zeros((_rows(nwrap), L.NWRAP_I), i32)
    wrap_f = np.zeros((_rows(nwrap), L.NWRAP_F), f)
    if nwrap:
        wrap_i[:nwrap, L.WRAP_TYPE] = model.wrap_type
        wrap_i[:nwrap, L.WRAP_OBJID] = model.wrap_objid
        site = np.asarray(model.wrap_type) == M.WRAP_SITE
        wrap_i[:nwrap, L.WRAP_BODYID] = -1
        wrap_i[:nwrap][site, L.WRAP_BODYID] = np.asarray(model.site_bodyid)[np.asarray(model.wrap_objid)[site]]
        wrap_f[:nwrap, L.WRAP_PRM] = model.wrap_prm

    gcol_f = np.zeros((_rows(ngeom), L.NGCOL_F), f)
    gcol_f[:ngeom, L.GEOM_SIZE:L.GEOM_SIZE + 3] = model.geom_size
    gcol_f[:ngeom, L.GEOM_RBOUND] = model.geom_rbound
    gcol_i = np.zeros((_rows(ngeom), L.NGCOL_I), i32)
    gcol_i[:ngeom, L.GEOM_TYPE] = model.geom_type

    pairs, explicit = CP.collision_pairs(model, {**CP.PAIR_OPTIONS, **(pair_options or {})})
    npair = len(pairs)
    tab = CPRM.pair_table(model, pairs, explicit)
    pair_i = np.zeros((_rows(npair), L.NPAIR_I), i32)
    pair_i[:npair, L.PAIR_GEOM1:L.PAIR_GEOM2 + 1] = tab["geom"]
    pair_i[:npair, L.PAIR_EXPLICIT] = explicit
    pair_i[:npair, L.PAIR_COLLIDER] = [CPRM.COLLIDER_ID[c] if c in CPRM.BUILT else 0 for c in tab["collider"]]
    pair_i[:npair, L.PAIR_DIM] = tab["dim"]
    pair_f = np.zeros((_rows(npair), L.NPAIR_F), f)
    for col, key, w in ((L.PAIR_MARGIN, "margin", 1), (L.PAIR_GAP, "gap", 1), (L.PAIR_FRICTION, "friction", 5),
                        (L.PAIR_SOLREF, "solref", 2), (L.PAIR_SOLREFFRICTION, "solreffriction", 2),
                        (L.PAIR_SOLIMP, "solimp", 5)):
        pair_f[:npair, col:col + w] = tab[key].reshape(npair, w)
    # sweep-and-prune: each geom's rows of the (sorted) table, and its interval padding
    low = pairs[:, 0] if npair else np.zeros(0, np.int64)
    for g in range(ngeom):
        rows = np.flatnonzero(low == g)
        gcol_i[g, L.GEOM_PAIRADR] = rows[0] if rows.size else 0
        gcol_i[g, L.GEOM_PAIRNUM] = rows.size
        assert rows.size == 0 or rows[-1] - rows[0] + 1 == rows.size  # contiguous: the table is sorted
    pad = np.zeros(max(ngeom, 1))
    for (a, b), mg in zip(pairs.tolist(), (tab["margin"] + tab["gap"]).tolist()):
        pad[a], pad[b] = max(pad[a], mg), max(pad[b], mg)
    gcol_f[:ngeom, L.GEOM_SAPMARGIN] = pad[:ngeom]
    gcol_i[:ngeom, L.GEOM_SAP] = (np.asarray(model.geom_rbound) > 0) & (np.asarray(model.geom_type) != M.GEOM_PLANE)
    gcol_i[:ngeom, L.GEOM_VERTADR] = -1
    gcol_i[:ngeom, L.GEOM_GRAPHADR] = -1
    for g in range(ngeom):
        mesh = int(model.geom_dataid[g])
        if int(model.geom_type[g]) == M.GEOM_MESH and mesh >= 0:
            gcol_i[g, L.GEOM_VERTADR] = model.mesh_vertadr[mesh]
            gcol_i[g, L.GEOM_VERTNUM] = model.mesh_vertnum[mesh]
            gcol_i[g, L.GEOM_GRAPHADR] = model.mesh_graphadr[mesh]
            gcol_i[g, L.GEOM_POLYADR] = model.mesh_polyadr[mesh]
            gcol_i[g, L.GEOM_POLYNUM] = model.mesh_polynum[mesh]
            gcol_i[g, L.GEOM_EXTREMA] = mesh
    gcol_i[:ngeom, L.GEOM_HFIELDID] = np.where(np.asarray(model.geom_type) == M.GEOM_HFIELD, model.geom_dataid, -1)
    nhf = model.nhfield
    hfield_f = np.zeros((_rows(nhf), L.NHFIELD_F), f)
    hfield_f[:nhf, L.HFIELD_SIZE:L.HFIELD_SIZE + 4] = model.hfield_size
    hfield_i = np.zeros((_rows(nhf), L.NHFIELD_I), i32)
    hfield_i[:nhf, L.HFIELD_NROW] = model.hfield_nrow
    hfield_i[:nhf, L.HFIELD_NCOL] = model.hfield_ncol
    hfield_i[:nhf, L.HFIELD_ADR] = model.hfield_adr
    hfield_data = np.zeros((_rows(model.nhfielddata), 1), f)
    hfield_data[:model.nhfielddata, 0] = np.asarray(model.hfield_data, np.float64)
    mesh_vert = np.zeros((_rows(model.nmeshvert), 3), f)
    mesh_vert[:model.nmeshvert] = np.asarray(model.mesh_vert, np.float64)
    mesh_graph = np.zeros((_rows(model.nmeshgraph), 1), i32)
    mesh_graph[:model.nmeshgraph, 0] = model.mesh_graph
    nvert, npoly = model.nmeshvert, model.nmeshpoly
    mesh_vert_i = np.zeros((_rows(nvert), L.NMVERT_I), i32)
    mesh_vert_i[:nvert, L.MVERT_POLYMAPADR] = model.mesh_polymapadr
    mesh_vert_i[:nvert, L.MVERT_POLYMAPNUM] = model.mesh_polymapnum
    mesh_poly_f = np.zeros((_rows(npoly), L.NMPOLY_F), f)
    mesh_poly_f[:npoly, L.MPOLY_NORMAL:L.MPOLY_NORMAL + 3] = model.mesh_polynormal
    mesh_poly_i = np.zeros((_rows(npoly), L.NMPOLY_I), i32)
    mesh_poly_i[:npoly, L.MPOLY_VERTADR] = model.mesh_polyvertadr
    mesh_poly_i[:npoly, L.MPOLY_VERTNUM] = model.mesh_polyvertnum
    mesh_polyvert = np.zeros((_rows(model.nmeshpolyvert), 1), i32)
    mesh_polyvert[:model.nmeshpolyvert, 0] = model.mesh_polyvert
    mesh_polymap = np.zeros((_rows(model.nmeshpolymap), 1), i32)
    mesh_polymap[:model.nmeshpolymap, 0] = model.mesh_polymap
    mesh_extrema = np.zeros((_rows(model.nmesh), 27), i32)
    mesh_extrema[:model.nmesh] = np.asarray(model.mesh_extrema).reshape(model.nmesh, 27)
    if npair:
        pair_i[:npair, L.PAIR_SWEPT] = gcol_i[pairs[:, 0], L.GEOM_SAP] & gcol_i[pairs[:, 1], L.GEOM_SAP]
    # MuJoCo's midphase: which rows it takes, their walks through the bodies' trees, the boxes
    mid = BVH.midphase_tables(model, tab)
    pair_i[:npair, L.PAIR_BVHADR:L.PAIR_BVHNUM + 1] = mid["span"]
    bvh_f = np.zeros((_rows(len(mid["boxes"])), 7), f)
    bvh_f[:len(mid["boxes"])] = mid["boxes"]
    pair_bvh = np.zeros((_rows(len(mid["nodes"])), 2), i32)
    pair_bvh[:len(mid["nodes"])] = mid["nodes"]

    qpos_f = np.zeros((_rows(nq), L.NQPOS_F), f)
    qpos_f[:nq, L.QPOS0] = model.qpos0
    qpos_f[:nq, L.QPOS_SPRING] = model.qpos_spring

    opt = model.opt
    flags = int(opt.disableflags)
    opt_f = np.zeros(L.NOPT_F, f)
    opt_f[L.OPT_TIMESTEP] = opt.timestep
    opt_f[L.OPT_GRAVITY:L.OPT_GRAVITY + 3] = opt.gravity
    opt_f[L.OPT_WIND:L.OPT_WIND + 3] = opt.wind
    opt_f[L.OPT_DENSITY] = opt.density
    opt_f[L.OPT_VISCOSITY] = opt.viscosity
    opt_f[L.OPT_MAGNETIC:L.OPT_MAGNETIC + 3] = opt.magnetic
    opt_f[L.OPT_PRUNETOL] = (pair_options or {}).get("contact_pruning_tolerance") or 0.0
    opt_f[L.OPT_CCDTOL] = opt.ccd_tolerance
    opt_f[L.OPT_IMPRATIO] = opt.impratio
    opt_f[L.OPT_TOLERANCE] = opt.tolerance
    opt_f[L.OPT_LS_TOLERANCE] = opt.ls_tolerance
    opt_f[L.OPT_NOSLIP_TOLERANCE] = opt.noslip_tolerance
    opt_f[L.OPT_MEANINERTIA] = model.stat.meaninertia
    opt_i = np.zeros(L.NOPT_I, i32)
    opt_i[[L.SZ_NQ, L.SZ_NV, L.SZ_NU, L.SZ_NA, L.SZ_NBODY, L.SZ_NJNT, L.SZ_NGEOM, L.SZ_NSITE, L.SZ_NMOCAP,
           L.SZ_NM, L.SZ_NTENDON, L.SZ_NPAIR]] = [nq, nv, nu, model.na, nbody, njnt, ngeom, nsite, model.nmocap,
                                                 model.nM, nten, npair]
    opt_i[L.OPT_DISABLEFLAGS] = flags
    opt_i[L.OPT_EULERDAMP] = int(not (flags & L.DSBL_EULERDAMP) and not (flags & L.DSBL_DAMPER)
                                 and bool(np.any(model.dof_damping > 0)))
    opt_i[L.OPT_NGRAVCOMP] = int(np.count_nonzero(model.body_gravcomp))
    opt_i[L.OPT_NACTGRAVCOMP] = int(np.count_nonzero(model.jnt_actgravcomp)) if opt_i[L.OPT_NGRAVCOMP] else 0
    opt_i[L.OPT_JACROW] = jacrow
    opt_i[L.OPT_SAP] = int((pair_options or {}).get("broadphase_traversal", "sap") == "sap")
    opt_i[L.OPT_CCDITER] = opt.ccd_iterations
    opt_i[[L.OPT_CONE, L.OPT_SOLVER, L.OPT_ITERATIONS, L.OPT_LS_ITERATIONS, L.OPT_NOSLIP_ITERATIONS]] = [
        opt.cone, opt.solver, opt.iterations, opt.ls_iterations, opt.noslip_iterations]
    sizes = array_sizes(model, pair_options, tab, mid)
    opt_i[L.SZ_NEFCMAX] = sizes["nefcmax"]
    opt_i[L.SZ_NEFCWIDE] = sizes["nefcwide"]
    opt_i[L.SZ_EFCW] = sizes["efcw"]
    opt_i[L.SZ_NCONMAX] = sizes["nconmax"]
    opt_i[L.SZ_NEQ] = model.neq
    opt_i[L.SZ_NSENSOR], opt_i[L.SZ_NSENSORDATA] = model.nsensor, model.nsensordata
    sens_f, sens_i = sensor_arrays(model, f)
    opt_i[L.OPT_SOLVER_M] = L.QH if integrator_of(model) == L.INT_APPROX_IMPLICITFAST else L.QM
    assert sizes["npair"] == npair
    for name, rows, cols, *_ in L.DATA_ARRAYS:
        if rows is not None:  # as make_data allocates
            opt_i[L.STR[name]] = _size(sizes, rows) * _size(sizes, cols)
    out = dict(body_f=body_f, body_i=body_i, jnt_f=jnt_f, jnt_i=jnt_i, dof_f=dof_f, dof_i=dof_i, m_i=m_i,
               geom_f=geom_f, geom_i=geom_i, site_f=site_f, site_i=site_i, act_f=act_f, act_i=act_i, qpos_f=qpos_f,
               ten_f=ten_f, ten_i=ten_i, eq_f=eq_f, eq_i=eq_i, wrap_f=wrap_f, wrap_i=wrap_i, gcol_f=gcol_f,
               gcol_i=gcol_i, pair_f=pair_f, pair_i=pair_i, bvh_f=bvh_f, pair_bvh=pair_bvh, mesh_vert=mesh_vert,
               mesh_graph=mesh_graph, mesh_vert_i=mesh_vert_i,
               mesh_poly_f=mesh_poly_f, mesh_poly_i=mesh_poly_i, mesh_polyvert=mesh_polyvert,
               mesh_polymap=mesh_polymap, mesh_extrema=mesh_extrema, hfield_f=hfield_f, hfield_i=hfield_i,
               hfield_data=hfield_data, sens_f=sens_f, sens_i=sens_i, opt_f=opt_f, opt_i=opt_i)
    # the table in layout is the contract: every array present, with its rows and columns
    for name, rows, cols, kind in L.MODEL_ARRAYS:
        a = out[name]
        shape = (cols,) if rows is None else (_rows(sizes[rows]), cols)
        assert a.shape == shape and a.dtype == (f if kind == "f" else i32), (name, a.shape, shape)
    assert tuple(out) == L.MODEL_ARGS
    return out


def ray_visible(model: M.Model) -> np.ndarray:
    """Per geom, 1 when a ray sees it (mj_ray's test): its alpha, or its material's when it has one, is not 0."""
    matid = np.asarray(model.geom_matid, np.int64)
    alpha = np.asarray(model.geom_rgba, np.float64).reshape(-1, 4)[:, 3].copy()
    if model.nmat:
        mat_alpha = np.asarray(model.mat_rgba, np.float64).reshape(-1, 4)[:, 3]
        alpha = np.where(matid >= 0, mat_alpha[np.maximum(matid, 0)], alpha)
    return (alpha != 0).astype(np.int32)


DISTANCE_SENSORS = CPRM.DISTANCE_SENSORS  # their scratch rows (layout.SENSOR_CONTACTS) are allocated


def sensor_arrays(model: M.Model, fdtype) -> Tuple[np.ndarray, np.ndarray]:
    """sens_f, sens_i (`layout`'s sensor columns): MuJoCo's sensor arrays, with the bodies of each sensor's object
    and reference frame and a touch sensor's site zone."""
    n = model.nsensor
    sf = np.zeros((_rows(n), L.NSENS_F), fdtype)
    si = np.zeros((_rows(n), L.NSENS_I), np.int32)
    cols = ((L.SENS_TYPE, "sensor_type"), (L.SENS_DATATYPE, "sensor_datatype"), (L.SENS_OBJTYPE, "sensor_objtype"),
            (L.SENS_OBJID, "sensor_objid"), (L.SENS_REFTYPE, "sensor_reftype"), (L.SENS_REFID, "sensor_refid"),
            (L.SENS_DIM, "sensor_dim"), (L.SENS_ADR, "sensor_adr"))
    for col, name in cols:
        si[:n, col] = getattr(model, name)
    si[:n, L.SENS_INTPRM:L.SENS_INTPRM + 3] = model.sensor_intprm
    si[:n, L.SENS_NSAMPLE:L.SENS_NSAMPLE + 2] = model.sensor_history
    si[:n, L.SENS_HISTADR] = model.sensor_historyadr
    sf[:n, L.SENS_CUTOFF] = model.sensor_cutoff
    sf[:n, L.SENS_DELAY] = model.sensor_delay
    sf[:n, L.SENS_PERIOD] = model.sensor_interval[:, 0] if n else 0.0

    def body_of(objtype: int, objid: int) -> int:
        if objid < 0:
            return -1
        if objtype in (M.OBJ_BODY, M.OBJ_XBODY):
            return objid
        if objtype == M.OBJ_GEOM:
            return int(model.geom_bodyid[objid])
        if objtype == M.OBJ_SITE:
            return int(model.site_bodyid[objid])
        return -1

    for i in range(n):
        si[i, L.SENS_BODY] = body_of(int(model.sensor_objtype[i]), int(model.sensor_objid[i]))
        si[i, L.SENS_REFBODY] = body_of(int(model.sensor_reftype[i]), int(model.sensor_refid[i]))
        if int(model.sensor_type[i]) in DISTANCE_SENSORS:
            for k, (t, o) in enumerate(((model.sensor_objtype[i], model.sensor_objid[i]),
                                        (model.sensor_reftype[i], model.sensor_refid[i]))):
                adr, num = (int(model.body_geomadr[o]), int(model.body_geomnum[o])) if t == M.OBJ_BODY else (int(o), 1)
                si[i, L.SENS_GEOMADR1 + 2 * k] = adr
                si[i, L.SENS_GEOMNUM1 + 2 * k] = num
        s = -1
        if int(model.sensor_type[i]) == M.SENS_INSIDESITE:
            s = int(model.sensor_refid[i])
        elif int(model.sensor_objtype[i]) == M.OBJ_SITE:
            s = int(model.sensor_objid[i])
        if s >= 0:
            si[i, L.SENS_SITETYPE] = int(model.site_type[s])
            sf[i, L.SENS_SITESIZE:L.SENS_SITESIZE + 3] = model.site_size[s]
    return sf, si


def history_init(model: M.Model) -> np.ndarray:
    """[nhistory]: the history buffers as MuJoCo's mj_resetData leaves them. A sensor's buffer is its last
    compute time (interval mode: the phase, or -period for phase 0; else -timestep), the cursor (n - 1: the newest
    of the n samples, stored in a ring), the n sample times (a timestep apart up to -timestep, or a period apart
    up to that last compute time, rounded up to whole timesteps) and n zero values."""
    out = np.zeros(max(model.nhistory, 1))
    dt = model.opt.timestep
    for i in range(model.nsensor):
        n = int(model.sensor_history[i][0])
        if n <= 0:
            continue
        adr = int(model.sensor_historyadr[i])
        period, phase = (float(x) for x in model.sensor_interval[i])
        j = np.arange(n)
        if period > 0:
            t0 = -period if phase == 0 else phase
            out[adr] = t0
            out[adr + 2:adr + 2 + n] = np.ceil((t0 - (n - 1 - j) * period) / dt) * dt
        else:
            out[adr] = -dt
            out[adr + 2:adr + 2 + n] = -(n - j) * dt
        out[adr + 1] = n - 1
    return out


def equality_arrays(model: M.Model, fdtype) -> Tuple[np.ndarray, np.ndarray]:
    """eq_f, eq_i: the equality constraints' parameters, their bodies (connect and weld; a site's body) and the
    rows' diagA of mj_diagApprox, which reads the model alone: connect the bodies' translation invweight0,
    weld translation (rows 0-2) and rotation (rows 3-5), joint and tendon the objects' invweight0 summed."""
    neq = model.neq
    eq_f = np.zeros((_rows(neq), L.NEQ_F), fdtype)
    eq_i = np.zeros((_rows(neq), L.NEQ_I), np.int32)
    if not neq:
        return eq_f, eq_i
    eq_f[:neq, L.EQ_SOLREF:L.EQ_SOLREF + 2] = model.eq_solref
    eq_f[:neq, L.EQ_SOLIMP:L.EQ_SOLIMP + 5] = model.eq_solimp
    eq_f[:neq, L.EQ_DATA:L.EQ_DATA + 12] = model.eq_data
    for col, name in ((L.EQ_TYPE, "eq_type"), (L.EQ_OBJ1ID, "eq_obj1id"), (L.EQ_OBJ2ID, "eq_obj2id"),
                      (L.EQ_OBJTYPE, "eq_objtype")):
        eq_i[:neq, col] = getattr(model, name)
    bw = np.asarray(model.body_invweight0, np.float64).reshape(-1, 2)
    for e in range(neq):
        typ, o1, o2 = int(model.eq_type[e]), int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
        eq_i[e, L.EQ_BODY1:L.EQ_BODY2 + 1] = -1
        if typ in (M.EQ_CONNECT, M.EQ_WELD):
            if int(model.eq_objtype[e]) == M.OBJ_SITE:
                o1, o2 = int(model.site_bodyid[o1]), int(model.site_bodyid[o2])
            eq_i[e, L.EQ_BODY1], eq_i[e, L.EQ_BODY2] = o1, o2
            eq_f[e, L.EQ_INVWEIGHT] = bw[o1, 0] + bw[o2, 0]
            eq_f[e, L.EQ_INVWEIGHT + 1] = bw[o1, 1] + bw[o2, 1]
        elif typ in (M.EQ_JOINT, M.EQ_TENDON):
            w = (np.asarray(model.dof_invweight0, np.float64)[np.asarray(model.jnt_dofadr)] if typ == M.EQ_JOINT
                 else np.asarray(model.tendon_invweight0, np.float64))
            eq_f[e, L.EQ_INVWEIGHT] = w[o1] + w[o2] if o2 >= 0 else w[o1]
    return eq_f, eq_i


def wrap_period(model: M.Model, i: int) -> float:
    """MuJoCo 4's period of a rotational servo: a position-like actuator (fixed gain kp, affine bias with
    -kp on the length, no or integrator dynamics) on a ball joint sees its setpoint as the representative
    nearest its length, modulo 2 pi |gear|. 0 for every other actuator."""
    servo = (int(model.actuator_gaintype[i]) == M.GAIN_FIXED and int(model.actuator_biastype[i]) == M.BIAS_AFFINE
             and model.actuator_gainprm[i, 0] == -model.actuator_biasprm[i, 1]
             and int(model.actuator_dyntype[i]) in (M.DYN_NONE, M.DYN_INTEGRATOR))
    trn = int(model.actuator_trntype[i])
    if servo and trn in (M.TRN_JOINT, M.TRN_JOINTINPARENT) and \
            int(model.jnt_type[int(model.actuator_trnid[i, 0])]) == M.JNT_BALL:
        g = np.asarray(model.actuator_gear[i, :3], dtype=float)
        return 2 * np.pi * float(np.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]))
    return 0.0


def moment_rows(model: M.Model):
    """Rows of ten / ten_J: ({actuator: its moment row}, rows in all, first scratch row). The tendons come
    first (a tendon actuator uses its tendon's row), then one row per slider-crank and per ball or free joint
    transmission, then 6 scratch rows when spatial tendons or slider-cranks need point Jacobians."""
    rows = {}
    n = int(model.ntendon)
    crank = False
    for i in range(model.nu):
        trn = int(model.actuator_trntype[i])
        if trn == M.TRN_TENDON:
            rows[i] = int(model.actuator_trnid[i, 0])
        elif trn == M.TRN_SLIDERCRANK or (trn in (M.TRN_JOINT, M.TRN_JOINTINPARENT) and
                                          int(model.jnt_type[int(model.actuator_trnid[i, 0])]) in
                                          (M.JNT_BALL, M.JNT_FREE)):
            rows[i] = n
            n += 1
            crank = crank or trn == M.TRN_SLIDERCRANK
    spatial = any(int(model.wrap_type[int(model.tendon_adr[t])]) != M.WRAP_JOINT for t in range(model.ntendon))
    jacrow = n
    if spatial or crank:
        n += 6
    return rows, n, jacrow


def rk_width(model: M.Model) -> int:
    nq, nv, na = model.nq, model.nv, model.na
    return 4 * (nq + nv + na) + 4 * (nv + na) + 2 * nv + na


def pair_sizes(model: M.Model, r: Optional[Mapping[str, Any]] = None, tab=None, mid=None) -> Dict[str, int]:
    """npair: the candidate pairs; nconmax: the contact rows per env, the option max_contacts or (null, the
    default) the most the candidate pairs can produce together (mj_maxContact per pair), so that nothing
    overflows; nconall: that most; nccdf, nccdi: the GJK/EPA colliders' scratch per env (0 without convex, mesh or
    height-field pairs); nbvh, npairbvh: the midphase's boxes and walk steps. `tab`: the candidate pairs'
    `params.pair_table`, `mid`: their `bvh.midphase_tables`, when the caller has them already."""
    r = {**CP.PAIR_OPTIONS, "max_contacts": None, **(r or {})}
    if tab is None:
        tab = CPRM.pair_table(model, *CP.collision_pairs(model, r))
    nconmax = int(r["max_contacts"]) if r["max_contacts"] is not None else int(tab["maxcon"].sum())
    nccdf, nccdi = 0, 0
    if ({"convex", "convex_multi", "hfield", "mesh", "mesh_multi", "hfield_mesh"} & set(tab["collider"])
            or CPRM.distance_gjk(model)):  # GJK/EPA's scratch (the colliders', a distance sensor's)
        from rigidsim.engine.collision.support import scratch_size  # (imported only then: it is kernel code)

        npoly = int(np.max(model.mesh_polyvertnum)) if "mesh_multi" in set(tab["collider"]) and model.nmeshpoly else 0
        nccdf, nccdi = scratch_size(model.opt.ccd_iterations, npoly)  # npoly: the multi-contact clips mesh polygons
    nefcmax = efc_rows(model, nconmax, max((int(x) for x in tab["dim"]), default=1))
    nefcwide = efc_rows(model, 0, 1)  # room for every non-contact row
    efcw = min(contact_row_width(model, tab["geom"]), max(model.nv, 1))
    if mid is None:
        mid = BVH.midphase_tables(model, tab)
    return dict(npair=len(tab["geom"]), nbvh=len(mid["boxes"]), npairbvh=len(mid["nodes"]), nconmax=nconmax,
                nconall=int(tab["maxcon"].sum()),
                nccdf=nccdf, nccdi=nccdi, nefcmax=nefcmax, nefcwide=nefcwide, efcw=efcw,
                njsize=max(1, nefcwide * model.nv + (nefcmax - nefcwide) * efcw))


def body_chains(model: M.Model) -> Tuple[np.ndarray, np.ndarray]:
    """Per body, the last dof that moves it (of its weld root) and the first dof of that dof's kinematic tree
    (-1, -1 for a body fixed to the world): its Jacobian's nonzeros lie between the two."""
    weld = np.asarray(model.body_weldid, np.int64)
    welddofs = np.asarray(model.body_dofnum, np.int64)[weld]
    last = np.where(welddofs > 0, np.asarray(model.body_dofadr, np.int64)[weld] + welddofs - 1, -1)
    parent = np.asarray(model.dof_parentid, np.int64)
    top = np.arange(model.nv)
    for i in range(model.nv):  # dofs ascend down each tree: a dof's parent has its top already
        if parent[i] >= 0:
            top[i] = top[parent[i]]
    first = np.where(last >= 0, top[np.maximum(last, 0)] if model.nv else -1, -1)
    return last, first


def contact_row_width(model: M.Model, geom_pairs: np.ndarray) -> int:
    """The most efc_J entries a contact row of these geom pairs stores: its two bodies' spans as
    `constraint.rows.chain_span` makes them (one range when the trees coincide; 1 when both are fixed)."""
    if len(geom_pairs) == 0:
        return 1
    last, first = body_chains(model)
    body = np.asarray(model.geom_bodyid, np.int64)[np.asarray(geom_pairs, np.int64)]
    lo, hi = first[body], last[body] + 1  # [npair, 2]
    same = (lo[:, 0] == lo[:, 1]) & (lo[:, 0] >= 0)
    width = np.where(lo >= 0, hi - lo, 0)
    merged = np.maximum(hi[:, 0], hi[:, 1]) - lo[:, 0]
    return int(max(1, np.max(np.where(same, merged, width.sum(axis=1)))))


def dense_efc_J(J: np.ndarray, efc_i: np.ndarray, nefc: int, nv: int) -> np.ndarray:
    """One env's efc_J as MuJoCo's dense [nefc, nv] matrix, from its stored entries J (that env's row of the
    efc_J array) and its rows' EFC_SPAN and EFC_JADR (layout.EFC_JADR)."""
    out = np.zeros((nefc, nv), J.dtype)
    for r in range(nefc):
        lo1, hi1, lo2, hi2 = (int(x) for x in efc_i[r, L.EFC_SPAN:L.EFC_SPAN + 4])
        adr = int(efc_i[r, L.EFC_JADR])
        if hi1 <= lo1:
            out[r] = J[adr:adr + nv]
        else:
            out[r, lo1:hi1] = J[adr:adr + hi1 - lo1]
            out[r, lo2:hi2] = J[adr + hi1 - lo1:adr + hi1 - lo1 + hi2 - lo2]
    return out


def efc_rows(model: M.Model, nconmax: int, maxdim: int) -> int:
    """The most constraint rows an env can have: every equality (connect 3, weld 6, joint and tendon 1),
    every dof and tendon with friction loss, two per limited hinge, slide or tendon (both sides can be within
    the margin), one per limited ball joint, and nconmax contacts of the largest condim (pyramidal: 2 (dim - 1)
    rows, elliptic: dim); MuJoCo's disable flags drop what they switch off."""
    flags = int(model.opt.disableflags)
    if flags & M.DSBL_CONSTRAINT:
        return 0
    n = 0
    if not flags & M.DSBL_EQUALITY:
        n += sum({M.EQ_CONNECT: 3, M.EQ_WELD: 6}.get(int(t), 1) for t in model.eq_type)
    if not flags & M.DSBL_FRICTIONLOSS:
        n += int(np.count_nonzero(model.dof_frictionloss > 0)) + int(np.count_nonzero(model.tendon_frictionloss > 0))
    if not flags & M.DSBL_LIMIT:
        lim = np.asarray(model.jnt_limited, bool)
        ball = np.asarray(model.jnt_type) == M.JNT_BALL
        n += 2 * int(np.count_nonzero(lim & ~ball)) + int(np.count_nonzero(lim & ball))
        n += 2 * int(np.count_nonzero(model.tendon_limited))
    if not flags & M.DSBL_CONTACT:
        per = maxdim if model.opt.cone == M.CONE_ELLIPTIC else max(2 * (maxdim - 1), 1)
        n += nconmax * per
    return n


def array_sizes(model: M.Model, r: Optional[Mapping[str, Any]] = None, tab=None, mid=None) -> Dict[str, int]:
    """The sizes that `layout.DATA_ARRAYS` and `layout.MODEL_ARRAYS` name: element counts of the model, and
    rk (RK4's stage storage per env), nrow (rows of ten / ten_J: tendons, moment rows, scratch) and nconmax
    (contact rows per env) and npair (rows of the collision pair table), both from the resolved options `r`
    (`tab`, `mid`: their pair table and midphase tables, when the caller has them)."""
    return dict(nq=model.nq, nv=model.nv, na=model.na, nu=model.nu, nmocap=model.nmocap, nbody=model.nbody,
                njnt=model.njnt, neq=model.neq, nM=model.nM, ngeom=model.ngeom, nsite=model.nsite,
                ntendon=model.ntendon,
                nwrap=model.nwrap, nrk=rk_width(model), nrow=moment_rows(model)[1], nmeshvert=model.nmeshvert,
                nmeshgraph=model.nmeshgraph, nhfield=model.nhfield, nhfielddata=model.nhfielddata,
                nmesh=model.nmesh, nmeshpoly=model.nmeshpoly, nmeshpolyvert=model.nmeshpolyvert,
                nmeshpolymap=model.nmeshpolymap, nsensor=model.nsensor, nhistory=model.nhistory,
                nsenscon=L.SENSOR_CONTACTS if np.isin(model.sensor_type[:model.nsensor], DISTANCE_SENSORS).any() else 0,
                **pair_sizes(model, r, tab, mid))


def make_data(model: M.Model, n_envs: int, fdtype, r: Optional[Mapping[str, Any]] = None,
              sizes: Optional[Mapping[str, int]] = None) -> Dict[str, np.ndarray]:
    """Zeroed batched Data arrays as `layout.DATA_ARRAYS` lists them, keyed by the kernels' argument names:
    [B] for one value per env, [B, rows] for one column, else [B, rows, columns]; `r`: the resolved options
    (the contact capacity), or `sizes`: their `array_sizes`, computed once by the caller. eq_active starts as
    the model's eq_active0 (MuJoCo's mj_resetData)."""
    B = int(n_envs)
    sizes = array_sizes(model, r) if sizes is None else sizes
    out = {}
    # Small pages: numpy advises the kernel to back large arrays with 2 MB pages, and the first touch of each
    # then clears all of it; an env uses only the head of its contact and row capacity, so with 4 KB pages
    # most of that capacity is never touched at all (27 boxes, B = 1024: 4.5 GB reserved, the first steps
    # 2-6x slower with huge pages).
    hugepage = _madvise_hugepage(False)
    try:
        for name, rows, cols, *_ in L.DATA_ARRAYS:
            if rows is None:
                shape = (B,)
            elif cols == 1:
                shape = (B, _size(sizes, rows))
            else:
                shape = (B, _size(sizes, rows), _size(sizes, cols))
            out[name] = np.zeros(shape, np.int32 if L.DATA_KIND[name] == "i" else fdtype)
    finally:
        _madvise_hugepage(hugepage)
    out["eq_active"][:, :model.neq] = np.asarray(model.eq_active0, np.int32)
    return out


def _madvise_hugepage(enabled: bool) -> bool:
    """Turn numpy's huge-page advice for new large arrays on or off; returns the previous setting (True where
    this numpy has no such switch)."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return True
    return bool(_set_madvise_hugepage(enabled))


# name -> (data array, first column or None for a plain array, width, size name, trailing shape)
DATA_FIELDS: Dict[str, Tuple[str, object, int, str, Tuple[int, ...]]] = {
    "qpos": ("qpos", None, 0, "nq", ()), "qvel": ("qvel", None, 0, "nv", ()), "act": ("act", None, 0, "na", ()),
    "ctrl": ("ctrl", None, 0, "nu", ()), "qacc": ("qacc", None, 0, "nv", ()), "act_dot": ("act_dot", None, 0, "na", ()),
    "mocap_pos": ("mocap_pos", None, 0, "nmocap", (3,)), "mocap_quat": ("mocap_quat", None, 0, "nmocap", (4,)),
    "xpos": ("body", L.XPOS, 3, "nbody", (3,)), "xquat": ("body", L.XQUAT, 4, "nbody", (4,)),
    "xmat": ("body", L.XMAT, 9, "nbody", (3, 3)), "xipos": ("body", L.XIPOS, 3, "nbody", (3,)),
    "ximat": ("body", L.XIMAT, 9, "nbody", (3, 3)), "subtree_com": ("body", L.SUBTREE_COM, 3, "nbody", (3,)),
    "cinert": ("body", L.CINERT, 10, "nbody", (10,)), "cvel": ("body", L.CVEL, 6, "nbody", (6,)),
    "crb": ("body", L.CRB, 10, "nbody", (10,)),
    "xanchor": ("jnt", L.XANCHOR, 3, "njnt", (3,)), "xaxis": ("jnt", L.XAXIS, 3, "njnt", (3,)),
    "cdof": ("dof", L.CDOF, 6, "nv", (6,)), "cdof_dot": ("dof", L.CDOF_DOT, 6, "nv", (6,)),
    "qfrc_bias": ("dof", L.QFRC_BIAS, 1, "nv", ()), "qfrc_passive": ("dof", L.QFRC_PASSIVE, 1, "nv", ()),
    "qfrc_actuator": ("dof", L.QFRC_ACTUATOR, 1, "nv", ()), "qfrc_smooth": ("dof", L.QFRC_SMOOTH, 1, "nv", ()),
    "qacc_smooth": ("dof", L.QACC_SMOOTH, 1, "nv", ()), "qLDiagInv": ("dof", L.QLDIAGINV, 1, "nv", ()),
    "qfrc_gravcomp": ("dof", L.QFRC_GRAVCOMP, 1, "nv", ()), "qfrc_spring": ("dof", L.QFRC_SPRING, 1, "nv", ()),
    "qfrc_damper": ("dof", L.QFRC_DAMPER, 1, "nv", ()), "qfrc_fluid": ("dof", L.QFRC_FLUID, 1, "nv", ()),
    "ten_length": ("ten", L.TEN_LENGTH, 1, "ntendon", ()), "ten_velocity": ("ten", L.TEN_VELOCITY, 1, "ntendon", ()),
    "eq_active": ("eq_active", None, 0, "neq", ()),
    "qLD": ("M", L.QLD, 1, "nM", ()), "qM_sparse": ("M", L.QM, 1, "nM", ()),
    "geom_xpos": ("geom", L.FXPOS, 3, "ngeom", (3,)), "geom_xmat": ("geom", L.FXMAT, 9, "ngeom", (3, 3)),
    "site_xpos": ("site", L.FXPOS, 3, "nsite", (3,)), "site_xmat": ("site", L.FXMAT, 9, "nsite", (3, 3)),
    "actuator_length": ("actu", L.ACTUATOR_LENGTH, 1, "nu", ()),
    "actuator_velocity": ("actu", L.ACTUATOR_VELOCITY, 1, "nu", ()),
    "actuator_force": ("actu", L.ACTUATOR_FORCE, 1, "nu", ()),
}


def extract(model: M.Model, arrays: Dict[str, np.ndarray], name: str) -> np.ndarray:
    """Field `name` of every env as a new numpy array [B, ...] (qM: the dense [B, nv, nv] matrix)."""
    if name == "time":
        return np.array(arrays["time"], copy=True)
    if name == "qM":
        return dense_m(model, extract(model, arrays, "qM_sparse"))
    if name == "ten_J":
        return np.array(arrays["ten_J"][:, :model.ntendon, :model.nv], copy=True)
    if name not in DATA_FIELDS:
        raise KeyError(f"unknown Data field {name!r}; known: time, qM, " + ", ".join(sorted(DATA_FIELDS)))
    arr, col, width, size, tail = DATA_FIELDS[name]
    a = arrays[arr]
    n = getattr(model, size)
    B = a.shape[0]
    if col is None:
        out = a[:, :n]
    else:
        out = a[:, :n, col:col + width] if width > 1 else a[:, :n, col]
    return np.array(out, copy=True).reshape((B, n) + tail)


def dense_m(model: M.Model, qm: np.ndarray) -> np.ndarray:
    """Dense symmetric [B, nv, nv] matrices from the legacy sparse layout (mj_fullM)."""
    nv = model.nv
    out = np.zeros((qm.shape[0], nv, nv), dtype=qm.dtype)
    for i in range(nv):
        adr = int(model.dof_Madr[i])
        j = i
        while j >= 0:
            out[:, i, j] = qm[:, adr]
            out[:, j, i] = qm[:, adr]
            adr += 1
            j = int(model.dof_parentid[j])
    return out
