"""Smooth dynamics of one env, as ti.funcs: MuJoCo's engine_core_smooth.

``kinematics`` (mj_kinematics), ``com_pos`` (mj_comPos), ``crb`` (mj_crb,
the composite inertias and the joint-space inertia qM in MuJoCo's legacy
sparse layout addressed by dof_Madr), ``factor_m`` (mj_factorI, L'DL in the
same layout), ``solve_m`` (mj_solveLD), ``com_vel`` (mj_comVel), ``rne``
(mj_rne without acceleration: qfrc_bias).

Every function works on one env ``b`` and walks bodies and dofs serially;
kernels parallelise over envs. ``m`` groups the packed model arrays and
``d`` the data arrays (see `kernels`); columns are named in `layout`.

Array elements are never updated with ``+=`` and friends: Taichi compiles
an augmented assignment to a global array element into a sequentially
consistent atomic read-modify-write (a compare-and-swap loop for doubles),
which cost the humanoid 2.5x per step. ``a[i] = a[i] + x`` is the same
arithmetic without the atomic (tests/test_engine_source.py checks).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine import math as sm
from rigidsim.engine.layout import (
    BODY_DOFADR, BODY_DOFNUM, BODY_INERTIA, BODY_IPOS, BODY_IQUAT, BODY_JNTADR, BODY_JNTNUM, BODY_MASS,
    BODY_MOCAPID, BODY_PARENTID, BODY_POS, BODY_QUAT, BODY_ROOTID, BODY_SAMEFRAME, CACC, CDOF, CDOF_DOT, CFRC_BODY,
    CINERT, CRB, CVEL, DOF_ARMATURE, DOF_BODYID, DOF_JNTID, DOF_M0, DOF_MADR, DOF_MROWNNZ, DOF_SIMPLENUM,
    DSBL_GRAVITY, FRAME_BODYID, FRAME_POS, FRAME_QUAT, FRAME_SAMEFRAME, FXMAT, FXPOS, JNT_AXIS, JNT_BALL,
    JNT_DOFADR, JNT_FREE, JNT_HINGE, JNT_POS, JNT_QPOSADR, JNT_SLIDE, JNT_TYPE, MINVAL, OPT_DISABLEFLAGS,
    OPT_GRAVITY, QFRC_BIAS, QPOS0, SAMEFRAME_BODY, SAMEFRAME_BODYROT, SAMEFRAME_INERTIA, SAMEFRAME_NONE,
    SUBTREE_COM, SUBTREE_MASS, SZ_NBODY, SZ_NGEOM, SZ_NJNT, SZ_NM, SZ_NSITE, SZ_NV, XANCHOR, XAXIS, XIMAT, XIPOS,
    XMAT, XPOS, XQUAT, JNT_BODYID, M_COLADR, M_COLIND, NDDOF, NDM, QLD, QM,
)

# ----------------------------------------------------------------------------- position


@ti.func
def local_to_global(d: ti.template(), b, body, pos, quat, sameframe):
    """Pose (pos, quat) on `body` to world: (xpos, xmat) (mj_local2Global)."""
    xpos = sm.zero3()
    if sameframe == SAMEFRAME_BODY:
        xpos = sm.getv(d.body, b, body, XPOS, 3)
    elif sameframe == SAMEFRAME_INERTIA:
        xpos = sm.getv(d.body, b, body, XIPOS, 3)
    else:
        xpos = sm.rot_vec_mat(pos, sm.getv(d.body, b, body, XMAT, 9)) + sm.getv(d.body, b, body, XPOS, 3)
    xmat = ti.Vector([0.0] * 9)
    if sameframe == SAMEFRAME_NONE:
        xmat = sm.quat2mat(sm.mul_quat(sm.getv(d.body, b, body, XQUAT, 4), quat))
    elif sameframe == SAMEFRAME_BODY or sameframe == SAMEFRAME_BODYROT:
        xmat = sm.getv(d.body, b, body, XMAT, 9)
    else:
        xmat = sm.getv(d.body, b, body, XIMAT, 9)
    return xpos, xmat


@ti.func
def kinematics(m: ti.template(), d: ti.template(), b, with_sites: ti.template()):
    """mj_kinematics: body, inertial-frame, geom (and site) poses. Quaternions in qpos and mocap_quat are
    normalized where they are used, and left as given (MuJoCo 4)."""
    one9 = ti.Vector([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    sm.setv(d.body, b, 0, XPOS, sm.zero3())
    sm.setv(d.body, b, 0, XQUAT, ti.Vector([1.0, 0.0, 0.0, 0.0]))
    sm.setv(d.body, b, 0, XIPOS, sm.zero3())
    sm.setv(d.body, b, 0, XMAT, one9)
    sm.setv(d.body, b, 0, XIMAT, one9)

    for i in range(1, m.opt_i[SZ_NBODY]):
        jntnum = m.body_i[i, BODY_JNTNUM]
        jntadr = m.body_i[i, BODY_JNTADR]
        pos = sm.zero3()
        quat = ti.Vector([1.0, 0.0, 0.0, 0.0])
        if jntnum == 1 and m.jnt_i[jntadr, JNT_TYPE] == JNT_FREE:
            qa = m.jnt_i[jntadr, JNT_QPOSADR]
            pos = ti.Vector([d.qpos[b, qa], d.qpos[b, qa + 1], d.qpos[b, qa + 2]])
            quat = ti.Vector([d.qpos[b, qa + 3], d.qpos[b, qa + 4], d.qpos[b, qa + 5], d.qpos[b, qa + 6]])
            sm.setv(d.jnt, b, jntadr, XANCHOR, pos)
            sm.setv(d.jnt, b, jntadr, XAXIS, ti.Vector([0.0, 0.0, 1.0]))
        else:
            pid = m.body_i[i, BODY_PARENTID]
            mid = m.body_i[i, BODY_MOCAPID]
            bpos = sm.getm(m.body_f, i, BODY_POS, 3)
            bquat = sm.getm(m.body_f, i, BODY_QUAT, 4)
            if mid >= 0:
                bpos = sm.get2(d.mocap_pos, b, mid, 3)
                bquat = sm.normalize4(sm.get2(d.mocap_quat, b, mid, 4))
            pos = sm.getv(d.body, b, pid, XPOS, 3) + sm.rot_vec_mat(bpos, sm.getv(d.body, b, pid, XMAT, 9))
            quat = sm.mul_quat(sm.getv(d.body, b, pid, XQUAT, 4), bquat)
            for jj in range(jntnum):
                jid = jntadr + jj
                qa = m.jnt_i[jid, JNT_QPOSADR]
                jt = m.jnt_i[jid, JNT_TYPE]
                jaxis = sm.getm(m.jnt_f, jid, JNT_AXIS, 3)
                jpos = sm.getm(m.jnt_f, jid, JNT_POS, 3)
                xaxis = sm.rot_vec_quat(jaxis, quat)
                xanchor = sm.rot_vec_quat(jpos, quat) + pos
                if jt == JNT_SLIDE:
                    pos = pos + xaxis * (d.qpos[b, qa] - m.qpos_f[qa, QPOS0])
                else:
                    qloc = ti.Vector([1.0, 0.0, 0.0, 0.0])
                    if jt == JNT_BALL:
                        qloc = sm.normalize4(ti.Vector([d.qpos[b, qa], d.qpos[b, qa + 1], d.qpos[b, qa + 2],
                                                        d.qpos[b, qa + 3]]))
                    else:
                        qloc = sm.axis_angle2quat(jaxis, d.qpos[b, qa] - m.qpos_f[qa, QPOS0])
                    quat = sm.mul_quat(quat, qloc)
                    vec1 = sm.rot_vec_quat(jpos, quat)
                    pos = xanchor - vec1  # mj_kinematics' arithmetic (bit for bit)
                sm.setv(d.jnt, b, jid, XANCHOR, xanchor)
                sm.setv(d.jnt, b, jid, XAXIS, xaxis)
        quat = sm.normalize4(quat)
        sm.setv(d.body, b, i, XQUAT, quat)
        sm.setv(d.body, b, i, XPOS, pos)
        sm.setv(d.body, b, i, XMAT, sm.quat2mat(quat))

    # the inertial frames of bodies 1.., then the geoms, then the sites: one loop, so that the pose arithmetic
    # is compiled once (a third of this stage's code otherwise)
    nb = m.opt_i[SZ_NBODY] - 1
    ng = m.opt_i[SZ_NGEOM]
    nframes = nb + ng
    if ti.static(with_sites):
        nframes = nframes + m.opt_i[SZ_NSITE]
    for k in range(nframes):
        body = 0
        pos = sm.zero3()
        quat = ti.Vector([1.0, 0.0, 0.0, 0.0])
        sameframe = 0
        if k < nb:
            body = k + 1
            pos = sm.getm(m.body_f, body, BODY_IPOS, 3)
            quat = sm.getm(m.body_f, body, BODY_IQUAT, 4)
            sameframe = m.body_i[body, BODY_SAMEFRAME]
        elif k < nb + ng:
            g = k - nb
            body = m.geom_i[g, FRAME_BODYID]
            pos = sm.getm(m.geom_f, g, FRAME_POS, 3)
            quat = sm.getm(m.geom_f, g, FRAME_QUAT, 4)
            sameframe = m.geom_i[g, FRAME_SAMEFRAME]
        else:
            st = k - nb - ng
            body = m.site_i[st, FRAME_BODYID]
            pos = sm.getm(m.site_f, st, FRAME_POS, 3)
            quat = sm.getm(m.site_f, st, FRAME_QUAT, 4)
            sameframe = m.site_i[st, FRAME_SAMEFRAME]
        xpos, xmat = local_to_global(d, b, body, pos, quat, sameframe)
        if k < nb:
            sm.setv(d.body, b, k + 1, XIPOS, xpos)
            sm.setv(d.body, b, k + 1, XIMAT, xmat)
        elif k < nb + ng:
            sm.setv(d.geom, b, k - nb, FXPOS, xpos)
            sm.setv(d.geom, b, k - nb, FXMAT, xmat)
        else:
            sm.setv(d.site, b, k - nb - ng, FXPOS, xpos)
            sm.setv(d.site, b, k - nb - ng, FXMAT, xmat)


@ti.func
def com_pos(m: ti.template(), d: ti.template(), b):
    """mj_comPos: subtree_com, cinert, cdof."""
    nbody = m.opt_i[SZ_NBODY]
    for i in range(nbody):
        sm.setv(d.body, b, i, SUBTREE_COM, sm.zero3())
        d.body[b, i, SUBTREE_MASS] = 0.0
    for ii in range(nbody):
        i = nbody - 1 - ii
        mass = m.body_f[i, BODY_MASS]
        xipos = sm.getv(d.body, b, i, XIPOS, 3)
        sc = sm.getv(d.body, b, i, SUBTREE_COM, 3) + xipos * mass
        ms = d.body[b, i, SUBTREE_MASS] + mass
        d.body[b, i, SUBTREE_MASS] = ms
        if i > 0:
            j = m.body_i[i, BODY_PARENTID]
            sm.setv(d.body, b, j, SUBTREE_COM, sm.getv(d.body, b, j, SUBTREE_COM, 3) + sc)
            d.body[b, j, SUBTREE_MASS] = d.body[b, j, SUBTREE_MASS] + ms
        if ms < MINVAL:
            sc = xipos
        else:
            sc = sc * (1.0 / ti.max(MINVAL, ms))
        sm.setv(d.body, b, i, SUBTREE_COM, sc)

    for c in ti.static(range(10)):
        d.body[b, 0, CINERT + c] = 0.0
    for i in range(1, nbody):
        offset = sm.getv(d.body, b, i, XIPOS, 3) - sm.getv(d.body, b, m.body_i[i, BODY_ROOTID], SUBTREE_COM, 3)
        sm.setv(d.body, b, i, CINERT,
                sm.inert_com(sm.getm(m.body_f, i, BODY_INERTIA, 3), sm.getv(d.body, b, i, XIMAT, 9), offset,
                             m.body_f[i, BODY_MASS]))

    for j in range(m.opt_i[SZ_NJNT]):
        da = m.jnt_i[j, JNT_DOFADR]
        bi = m.jnt_i[j, JNT_BODYID]
        jt = m.jnt_i[j, JNT_TYPE]
        offset = sm.getv(d.body, b, m.body_i[bi, BODY_ROOTID], SUBTREE_COM, 3) - sm.getv(d.jnt, b, j, XANCHOR, 3)
        if jt == JNT_SLIDE:
            ax = sm.getv(d.jnt, b, j, XAXIS, 3)
            sm.setv(d.dof, b, da, CDOF, ti.Vector([0.0, 0.0, 0.0, ax[0], ax[1], ax[2]]))
        elif jt == JNT_HINGE:
            sm.setv(d.dof, b, da, CDOF, sm.dof_com(sm.getv(d.jnt, b, j, XAXIS, 3), offset))
        else:
            skip = 0
            if jt == JNT_FREE:
                for k in ti.static(range(3)):
                    v = ti.Vector([0.0] * 6)
                    v[3 + k] = 1.0
                    sm.setv(d.dof, b, da + k, CDOF, v)
                skip = 3
            for k in ti.static(range(3)):
                axis = ti.Vector([d.body[b, bi, XMAT + k], d.body[b, bi, XMAT + k + 3], d.body[b, bi, XMAT + k + 6]])
                sm.setv(d.dof, b, da + skip + k, CDOF, sm.dof_com(axis, offset))


# ----------------------------------------------------------------------------- inertia


@ti.func
def crb(m: ti.template(), d: ti.template(), b):
    """mj_crb: composite inertias crb and the joint-space inertia qM (legacy sparse layout), copied to qLD."""
    nbody = m.opt_i[SZ_NBODY]
    nv = m.opt_i[SZ_NV]
    for i in range(nbody):
        for c in ti.static(range(10)):
            d.body[b, i, CRB + c] = d.body[b, i, CINERT + c]
    for ii in range(nbody - 1):
        i = nbody - 1 - ii
        p = m.body_i[i, BODY_PARENTID]
        if p > 0:
            for c in ti.static(range(10)):
                d.body[b, p, CRB + c] = d.body[b, p, CRB + c] + d.body[b, i, CRB + c]
    # qM, written once per entry, and the same values into QLD for factor_m to work on in place; flat indices
    # from a per-env base computed once (not reloaded after every store)
    mb = b * d.M.strides[0]
    for i in range(nv):
        adr = m.dof_i[i, DOF_MADR]
        nnz = m.dof_i[i, DOF_MROWNNZ]
        if m.dof_i[i, DOF_SIMPLENUM] != 0:
            # a simple dof: M0 on the diagonal, zeros to the left of it
            d.M.arr[mb + adr * NDM + QM] = m.dof_f[i, DOF_M0]
            d.M.arr[mb + adr * NDM + QLD] = m.dof_f[i, DOF_M0]
            for p in range(1, nnz):
                d.M.arr[mb + (adr + p) * NDM + QM] = 0.0
                d.M.arr[mb + (adr + p) * NDM + QLD] = 0.0
        else:
            buf = sm.mul_inert_vec(sm.getv(d.body, b, m.dof_i[i, DOF_BODYID], CRB, 10), sm.getv(d.dof, b, i, CDOF, 6))
            # row i: armature + dot on the diagonal, 0.0 + dot for each ancestor column
            v = m.dof_f[i, DOF_ARMATURE] + sm.dot6(sm.getv(d.dof, b, i, CDOF, 6), buf)
            d.M.arr[mb + adr * NDM + QM] = v
            d.M.arr[mb + adr * NDM + QLD] = v
            for p in range(1, nnz):
                j = m.m_i[adr + p, M_COLIND]
                v = 0.0 + sm.dot6(sm.getv(d.dof, b, j, CDOF, 6), buf)
                d.M.arr[mb + (adr + p) * NDM + QM] = v
                d.M.arr[mb + (adr + p) * NDM + QLD] = v


@ti.func
def factor_m(m: ti.template(), d: ti.template(), b, src, dst, diaginv, simple: ti.template()):
    """mj_factorI: L'DL of the matrix in column `src` of d.M into column `dst`; 1/D into d.dof[:, diaginv].

    With `simple`, rows of simple dofs (dof_simplenum: their off-diagonal entries in qM are zero) are not
    eliminated; a matrix with entries there (qM - h qDeriv with tendon or actuator couplings on a
    standalone body) is factored with simple=False."""
    nv = m.opt_i[SZ_NV]
    nM = m.opt_i[SZ_NM]
    # flat indices: d.M[b, k, dst] is d.M.arr[md + k * NDM]; the per-env bases are computed once here
    mb = b * d.M.strides[0]
    md = mb + dst
    db = b * d.dof.strides[0] + diaginv
    if src != dst:
        ms = mb + src
        for k in range(nM):
            d.M.arr[md + k * NDM] = d.M.arr[ms + k * NDM]
    for kk in range(nv):
        k = nv - 1 - kk
        adr_kk = m.dof_i[k, DOF_MADR]
        dkk = d.M.arr[md + adr_kk * NDM]
        if dkk < MINVAL:
            dkk = MINVAL
            d.M.arr[md + adr_kk * NDM] = MINVAL
        inv_d = 1.0 / dkk
        d.dof.arr[db + k * NDDOF] = inv_d
        if not ti.static(simple) or m.dof_i[k, DOF_SIMPLENUM] == 0:
            # entry p of row k is column i = k's p-th ancestor; k's row from there on lists i's own row's columns
            # (i and its ancestors), so row i -= tmp * that tail. Rows of ancestors are stored before row k.
            # tmp = M(k,i) * (1/D(k,k)), as MuJoCo 4's mj_factorI (a multiply, not a division, per entry).
            nnz = m.dof_i[k, DOF_MROWNNZ]
            for p in range(1, nnz):
                pk = md + (adr_kk + p) * NDM
                tmp = d.M.arr[pk] * inv_d
                pi = md + m.m_i[adr_kk + p, M_COLADR] * NDM
                # row i -= tmp * the tail, two entries per iteration (the loops are short: less loop overhead)
                cnt = nnz - p
                c = 0
                while c + 1 < cnt:
                    a0 = d.M.arr[pi + c * NDM] + (d.M.arr[pk + c * NDM] * (-tmp))
                    a1 = d.M.arr[pi + (c + 1) * NDM] + (d.M.arr[pk + (c + 1) * NDM] * (-tmp))
                    d.M.arr[pi + c * NDM] = a0
                    d.M.arr[pi + (c + 1) * NDM] = a1
                    c += 2
                if c < cnt:
                    d.M.arr[pi + c * NDM] = d.M.arr[pi + c * NDM] + (d.M.arr[pk + c * NDM] * (-tmp))
                d.M.arr[pk] = tmp


@ti.func
def solve_m(m: ti.template(), d: ti.template(), b, ld, diaginv, x, simple: ti.template()):
    """mj_solveLD, in place on column `x` of d.dof, with the factor in column `ld` of d.M (`simple` as
    factor_m was given)."""
    nv = m.opt_i[SZ_NV]
    # flat indices: d.dof[b, i, x] is d.dof.arr[dx + i * NDDOF], d.M[b, k, ld] is d.M.arr[ml + k * NDM]
    db = b * d.dof.strides[0]
    dx = db + x
    ml = b * d.M.strides[0] + ld
    for ii in range(nv):
        i = nv - 1 - ii
        xi = d.dof.arr[dx + i * NDDOF]
        if (not ti.static(simple) or m.dof_i[i, DOF_SIMPLENUM] == 0) and xi != 0.0:
            adr = m.dof_i[i, DOF_MADR]
            for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
                pj = dx + m.m_i[adr + p, M_COLIND] * NDDOF
                d.dof.arr[pj] = d.dof.arr[pj] - (d.M.arr[ml + (adr + p) * NDM] * xi)
    dd = db + diaginv
    for i in range(nv):
        d.dof.arr[dx + i * NDDOF] = d.dof.arr[dx + i * NDDOF] * d.dof.arr[dd + i * NDDOF]
    for i in range(nv):
        if not ti.static(simple) or m.dof_i[i, DOF_SIMPLENUM] == 0:
            adr = m.dof_i[i, DOF_MADR]
            xi = d.dof.arr[dx + i * NDDOF]
            for p in range(1, m.dof_i[i, DOF_MROWNNZ]):
                xi -= d.M.arr[ml + (adr + p) * NDM] * d.dof.arr[dx + m.m_i[adr + p, M_COLIND] * NDDOF]
            d.dof.arr[dx + i * NDDOF] = xi


# ----------------------------------------------------------------------------- velocity


@ti.func
def mul_dof_vec(d: ti.template(), b, col, adr, n, vel: ti.template(), vadr):
    """sum_k d.dof[b, adr+k, col:col+6] * vel[b, vadr+k], k < n (mju_mulDofVec)."""
    res = ti.Vector([0.0] * 6)
    if n == 1:
        res = sm.getv(d.dof, b, adr, col, 6) * vel[b, vadr]
    elif n > 1:
        for k in range(n):
            res = res + sm.getv(d.dof, b, adr + k, col, 6) * vel[b, vadr + k]
    return res


@ti.func
def com_vel(m: ti.template(), d: ti.template(), b):
    """mj_comVel: cvel, cdof_dot."""
    for c in ti.static(range(6)):
        d.body[b, 0, CVEL + c] = 0.0
    for i in range(1, m.opt_i[SZ_NBODY]):
        bda = m.body_i[i, BODY_DOFADR]
        cvel = sm.getv(d.body, b, m.body_i[i, BODY_PARENTID], CVEL, 6)
        j = 0
        while j < m.body_i[i, BODY_DOFNUM]:
            jt = m.jnt_i[m.dof_i[bda + j, DOF_JNTID], JNT_TYPE]
            if jt == JNT_FREE or jt == JNT_BALL:
                if jt == JNT_FREE:
                    for k in ti.static(range(3)):
                        sm.setv(d.dof, b, bda + j + k, CDOF_DOT, ti.Vector([0.0] * 6))
                    cvel = cvel + mul_dof_vec(d, b, CDOF, bda + j, 3, d.qvel, bda + j)
                    j += 3
                for k in ti.static(range(3)):
                    sm.setv(d.dof, b, bda + j + k, CDOF_DOT,
                            sm.cross_motion(cvel, sm.getv(d.dof, b, bda + j + k, CDOF, 6)))
                cvel = cvel + mul_dof_vec(d, b, CDOF, bda + j, 3, d.qvel, bda + j)
                j += 3
            else:
                sm.setv(d.dof, b, bda + j, CDOF_DOT, sm.cross_motion(cvel, sm.getv(d.dof, b, bda + j, CDOF, 6)))
                cvel = cvel + sm.getv(d.dof, b, bda + j, CDOF, 6) * d.qvel[b, bda + j]
                j += 1
        sm.setv(d.body, b, i, CVEL, cvel)


@ti.func
def rne(m: ti.template(), d: ti.template(), b):
    """mj_rne with flg_acc=0: qfrc_bias = C(qpos, qvel) + gravity terms."""
    nbody = m.opt_i[SZ_NBODY]
    cacc0 = ti.Vector([0.0] * 6)
    if (m.opt_i[OPT_DISABLEFLAGS] & DSBL_GRAVITY) == 0:
        cacc0 = ti.Vector([0.0, 0.0, 0.0, -m.opt_f[OPT_GRAVITY], -m.opt_f[OPT_GRAVITY + 1],
                           -m.opt_f[OPT_GRAVITY + 2]])
    sm.setv(d.body, b, 0, CACC, cacc0)
    for i in range(1, nbody):
        bda = m.body_i[i, BODY_DOFADR]
        tmp = mul_dof_vec(d, b, CDOF_DOT, bda, m.body_i[i, BODY_DOFNUM], d.qvel, bda)
        cacc = sm.getv(d.body, b, m.body_i[i, BODY_PARENTID], CACC, 6) + tmp
        sm.setv(d.body, b, i, CACC, cacc)
        cinert = sm.getv(d.body, b, i, CINERT, 10)
        cvel = sm.getv(d.body, b, i, CVEL, 6)
        f = sm.mul_inert_vec(cinert, cacc) + sm.cross_force(cvel, sm.mul_inert_vec(cinert, cvel))
        sm.setv(d.body, b, i, CFRC_BODY, f)
    for c in ti.static(range(6)):
        d.body[b, 0, CFRC_BODY + c] = 0.0
    for ii in range(nbody - 1):
        i = nbody - 1 - ii
        p = m.body_i[i, BODY_PARENTID]
        if p > 0:
            for c in ti.static(range(6)):
                d.body[b, p, CFRC_BODY + c] = d.body[b, p, CFRC_BODY + c] + d.body[b, i, CFRC_BODY + c]
    for i in range(m.opt_i[SZ_NV]):
        d.dof[b, i, QFRC_BIAS] = sm.dot6(sm.getv(d.dof, b, i, CDOF, 6),
                                         sm.getv(d.body, b, m.dof_i[i, DOF_BODYID], CFRC_BODY, 6))
