"""Frame and inertia arithmetic of MuJoCo's compiler, on plain Python floats.

The compiler's results (body_iquat, geom_quat, ...) depend on the exact
operation order of its helpers: normalizing a quaternion only when its norm
is off by more than 1e-14, the Jacobi sweep that finds principal axes, the
quaternion built from a frame. These are re-derived here so our compile
reproduces MuJoCo's numbers to rounding.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

EPS = 1e-14  # mjEPS
MINVAL = 1e-15  # mjMINVAL
Vec = List[float]


def normvec(v: Vec) -> float:
    """Normalize in place unless (nearly) zero or already unit; return the old norm."""
    n2 = sum(x * x for x in v)
    if n2 < EPS:
        return 0.0
    n = math.sqrt(n2)
    if abs(n - 1) > EPS:
        for i in range(len(v)):
            v[i] /= n
    return n


def quat2mat(q: Sequence[float]) -> Vec:
    if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
        return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    q00, q01, q02, q03 = q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]
    q11, q12, q13 = q[1] * q[1], q[1] * q[2], q[1] * q[3]
    q22, q23, q33 = q[2] * q[2], q[2] * q[3], q[3] * q[3]
    return [q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02),
            2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01),
            2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33]


def mulquat(a: Sequence[float], b: Sequence[float]) -> Vec:
    r = [a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
         a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
         a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
         a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]]
    normvec(r)
    return r


def mulmatvec(m: Sequence[float], v: Sequence[float]) -> Vec:
    return [m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
            m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2]]


def mulmatTvec(m: Sequence[float], v: Sequence[float]) -> Vec:
    return [m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
            m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2]]


def rot_vec_quat(v: Sequence[float], q: Sequence[float]) -> Vec:
    """Rotate v by q (the compiler's cross-product form)."""
    if v[0] == 0 and v[1] == 0 and v[2] == 0:
        return [0.0, 0.0, 0.0]
    if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
        return list(v)
    t = [q[0] * v[0] + q[2] * v[2] - q[3] * v[1],
         q[0] * v[1] + q[3] * v[0] - q[1] * v[2],
         q[0] * v[2] + q[1] * v[1] - q[2] * v[0]]
    return [v[0] + 2 * (q[2] * t[2] - q[3] * t[1]),
            v[1] + 2 * (q[3] * t[0] - q[1] * t[2]),
            v[2] + 2 * (q[1] * t[1] - q[2] * t[0])]


def frameaccum(pos: Sequence[float], quat: Sequence[float], cpos: Sequence[float],
               cquat: Sequence[float]) -> Tuple[Vec, Vec]:
    """Pose of a child frame (cpos, cquat) given in the frame (pos, quat)."""
    m = quat2mat(quat)
    v = mulmatvec(m, cpos)
    return [pos[0] + v[0], pos[1] + v[1], pos[2] + v[2]], mulquat(quat, cquat)


def frameinvert(pos: Sequence[float], quat: Sequence[float]) -> Tuple[Vec, Vec]:
    qneg = [quat[0], -quat[1], -quat[2], -quat[3]]
    p = mulmatvec(quat2mat(qneg), pos)
    return [-p[0], -p[1], -p[2]], qneg


def cross(a: Sequence[float], b: Sequence[float]) -> Vec:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def z2quat(vec: Sequence[float]) -> Vec:
    """Minimal rotation taking +z to vec."""
    q = [0.0] + cross([0.0, 0.0, 1.0], vec)
    axis = q[1:]
    s = normvec(axis)
    if s < 1e-10:
        axis = [1.0, 0.0, 0.0]
    ang = math.atan2(s, vec[2])
    sa = math.sin(ang / 2)
    return [math.cos(ang / 2), axis[0] * sa, axis[1] * sa, axis[2] * sa]


def frame2quat(x: Sequence[float], y: Sequence[float], z: Sequence[float]) -> Vec:
    """Quaternion of the frame whose axes are x, y, z (matrix columns)."""
    mat = (x, y, z)  # mat[c][r]
    if mat[0][0] + mat[1][1] + mat[2][2] > 0:
        q0 = 0.5 * math.sqrt(1 + mat[0][0] + mat[1][1] + mat[2][2])
        q = [q0, 0.25 * (mat[1][2] - mat[2][1]) / q0, 0.25 * (mat[2][0] - mat[0][2]) / q0,
             0.25 * (mat[0][1] - mat[1][0]) / q0]
    elif mat[0][0] > mat[1][1] and mat[0][0] > mat[2][2]:
        q1 = 0.5 * math.sqrt(1 + mat[0][0] - mat[1][1] - mat[2][2])
        q = [0.25 * (mat[1][2] - mat[2][1]) / q1, q1, 0.25 * (mat[1][0] + mat[0][1]) / q1,
             0.25 * (mat[2][0] + mat[0][2]) / q1]
    elif mat[1][1] > mat[2][2]:
        q2 = 0.5 * math.sqrt(1 - mat[0][0] + mat[1][1] - mat[2][2])
        q = [0.25 * (mat[2][0] - mat[0][2]) / q2, 0.25 * (mat[1][0] + mat[0][1]) / q2, q2,
             0.25 * (mat[2][1] + mat[1][2]) / q2]
    else:
        q3 = 0.5 * math.sqrt(1 - mat[0][0] - mat[1][1] + mat[2][2])
        q = [0.25 * (mat[0][1] - mat[1][0]) / q3, 0.25 * (mat[2][0] + mat[0][2]) / q3,
             0.25 * (mat[2][1] + mat[1][2]) / q3, q3]
    normvec(q)
    return q


def resolve_orientation(alt, degree: bool, seq: str) -> Tuple[Optional[Vec], Optional[str]]:
    """Quaternion of an orientation alternative ('axisangle'|'xyaxes'|'zaxis'|'euler', values).

    Returns (quat, None) or (None, error message)."""
    kind, vals = alt
    v = list(vals)
    if kind == "axisangle":
        axis, ang = v[:3], v[3]
        if degree:
            ang = ang / 180.0 * math.pi
        if normvec(axis) < EPS:
            return None, "axisangle too small"
        s = math.sin(ang / 2)
        return [math.cos(ang / 2), s * axis[0], s * axis[1], s * axis[2]], None
    if kind == "xyaxes":
        x, y = v[:3], v[3:]
        if normvec(x) < EPS:
            return None, "xaxis too small"
        d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
        y = [y[0] - x[0] * d, y[1] - x[1] * d, y[2] - x[2] * d]
        if normvec(y) < EPS:
            return None, "yaxis too small"
        z = cross(x, y)
        if normvec(z) < EPS:
            return None, "cross(xaxis, yaxis) too small"
        return frame2quat(x, y, z), None
    if kind == "zaxis":
        if normvec(v) < EPS:
            return None, "zaxis too small"
        return z2quat(v), None
    if kind == "euler":
        q = [1.0, 0.0, 0.0, 0.0]
        for i in range(3):
            a = v[i] / 180.0 * math.pi if degree else v[i]
            r = [math.cos(a / 2), 0.0, 0.0, 0.0]
            c = seq[i]
            r["xyz".index(c.lower()) + 1] = math.sin(a / 2)
            q = mulquat(q, r) if c.islower() else mulquat(r, q)
        normvec(q)
        return q, None
    raise ValueError(kind)


def global_inertia(local: Sequence[float], quat: Sequence[float]) -> Vec:
    """Diagonal inertia in a rotated frame -> full inertia (xx, yy, zz, xy, xz, yz)."""
    m = quat2mat(quat)
    t = [m[0] * local[0], m[3] * local[0], m[6] * local[0],
         m[1] * local[1], m[4] * local[1], m[7] * local[1],
         m[2] * local[2], m[5] * local[2], m[8] * local[2]]
    return [m[0] * t[0] + m[1] * t[3] + m[2] * t[6],
            m[3] * t[1] + m[4] * t[4] + m[5] * t[7],
            m[6] * t[2] + m[7] * t[5] + m[8] * t[8],
            m[0] * t[1] + m[1] * t[4] + m[2] * t[7],
            m[0] * t[2] + m[1] * t[5] + m[2] * t[8],
            m[3] * t[2] + m[4] * t[5] + m[5] * t[8]]


def offcenter(mass: float, d: Sequence[float]) -> Vec:
    return [mass * (d[1] * d[1] + d[2] * d[2]), mass * (d[0] * d[0] + d[2] * d[2]),
            mass * (d[0] * d[0] + d[1] * d[1]), -mass * d[0] * d[1], -mass * d[0] * d[2],
            -mass * d[1] * d[2]]


# --- principal axes: MuJoCo 4.0's mju_eig3 (engine), reproduced to the last bit ---------------
#
# MuJoCo 4.0 routes the compiler's principal-axes computation through the
# engine's eig3, which differs from older releases: the stopping rule is
# relative (largest |off-diagonal| <= 4e-15 * largest |entry|, no separate
# cosine test), the Jacobi rotation's half-angle quaternion is built from
# tan(theta/2), and the shipped library groups the sums of its quaternion
# helpers pairwise.  Every grouping below was checked bit for bit against
# mujoco.mju_eig3 on random symmetric matrices.

_EIG_RELTOL = 4e-15  # stopping rule, relative to the largest |entry|
_EIG_SORTTOL = 1e-12  # eigenvalues closer than this (relative) are not swapped
_MESH_EIG_RELTOL = 1e-7  # the mesh compiler's stopping and sorting margin, relative to the largest |entry|
_SQRT_HALF = 0.707106781186548  # the literal MuJoCo uses for the 90-degree swap rotations


def _eig_quat2mat(q):
    if q[0] == 1 and q[1] == 0 and q[2] == 0 and q[3] == 0:
        return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    w, x, y, z = q
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    return [(ww - yy) + (xx - zz), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), (ww + yy) - (xx + zz), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), (ww - yy) - (xx - zz)]


def _eig_mulquat(q, h):
    return [(q[0] * h[0] - q[1] * h[1]) + (-(q[2] * h[2]) - q[3] * h[3]),
            (q[0] * h[1] + q[1] * h[0]) + (q[2] * h[3] - q[3] * h[2]),
            (q[0] * h[2] - q[1] * h[3]) + (q[2] * h[0] + q[3] * h[1]),
            (q[0] * h[3] + q[1] * h[2]) + (-(q[2] * h[1]) + q[3] * h[0])]


def _eig_normalize(q):
    n = math.sqrt((q[0] * q[0] + q[1] * q[1]) + (q[2] * q[2] + q[3] * q[3]))
    if n < MINVAL:
        return [1.0, 0.0, 0.0, 0.0]
    if abs(n - 1.0) > MINVAL:
        s = 1.0 / n
        return [x * s for x in q]
    return q


def eig3(mat: Sequence[float]) -> Tuple[Vec, Vec]:
    """Eigenvalues (decreasing) and frame quaternion of a symmetric 3x3 (row-major), as mju_eig3."""
    scale = 0.0
    for x in mat:
        scale = max(abs(x), scale)
    tol = _EIG_RELTOL * scale
    quat = [1.0, 0.0, 0.0, 0.0]
    for it in range(501):
        # D = R' * mat * R, products summed left to right
        e = _eig_quat2mat(quat)
        t = [e[r] * mat[c] + e[3 + r] * mat[3 + c] + e[6 + r] * mat[6 + c] for r in range(3) for c in range(3)]
        D = [t[3 * r] * e[c] + t[3 * r + 1] * e[3 + c] + t[3 * r + 2] * e[6 + c]
             for r in range(3) for c in range(3)]
        eigval = [D[0], D[4], D[8]]
        if it == 500:
            break
        if abs(D[1]) > abs(D[2]) and abs(D[1]) > abs(D[5]):
            rk, ck, rotk = 0, 1, 2
        elif abs(D[2]) > abs(D[5]):
            rk, ck, rotk = 0, 2, 1
        else:
            rk, ck, rotk = 1, 2, 0
        off = D[3 * rk + ck]
        if tol >= abs(off):
            break
        # 2x2 symmetric Schur step: tangent of the angle, then of the half angle
        tau = (D[4 * ck] - D[4 * rk]) / (off + off)
        if tau >= 0:
            tan = 1.0 / (tau + math.sqrt(tau * tau + 1.0))
        else:
            tan = -1.0 / (math.sqrt(tau * tau + 1.0) - tau)
        half = tan / (math.sqrt(tan * tan + 1.0) + 1.0)
        cos_half = 1.0 / math.sqrt(half * half + 1.0)
        if rotk != 1:
            half = -half
        rot = [cos_half, 0.0, 0.0, 0.0]
        rot[rotk + 1] = half * cos_half
        quat = _eig_normalize(_eig_mulquat(quat, rot))
    # decreasing order: swaps (0,1), (1,2), (0,1), each a 90-degree turn of the frame
    stol = _EIG_SORTTOL * scale
    for j in range(3):
        j1 = j % 2
        if eigval[j1 + 1] > eigval[j1] + stol:
            eigval[j1], eigval[j1 + 1] = eigval[j1 + 1], eigval[j1]
            rot = [_SQRT_HALF, 0.0, 0.0, 0.0]
            rot[(j1 + 2) % 3 + 1] = _SQRT_HALF
            quat = _eig_normalize(_eig_mulquat(quat, rot))
    return eigval, quat


def eig3_mesh(mat: Sequence[float]) -> Tuple[Vec, Vec]:
    """Eigenvalues (decreasing) and frame quaternion, as MuJoCo 4.0's mesh compiler computes them.

    The mesh compiler runs the compiler's own Jacobi sweep (not the engine's
    ``eig3`` above) with a loose relative tolerance: the same pivot choice and
    tan(theta/2) rotation, but it stops as soon as the largest |off-diagonal|
    is at most 1e-7 times the largest |entry|, sorts with the same margin, and
    builds its rotations with the compiler's plain helpers (``quat2mat``,
    ``mulquat``, ``normvec``).  So a mesh frame keeps off-diagonal inertia of up
    to 1e-7 relative: the tolerance was bracketed at (9.09e-8, 1.01e-7] by
    replaying the sweep on all 75 Panda meshes, and the result matches
    mesh_quat bit for bit there and on the inline test meshes.
    """
    scale = 0.0
    for x in mat:
        scale = max(abs(x), scale)
    tol = _MESH_EIG_RELTOL * scale
    quat = [1.0, 0.0, 0.0, 0.0]
    eigval = [mat[0], mat[4], mat[8]]
    for _ in range(500):
        e = quat2mat(quat)
        t = [e[r] * mat[c] + e[3 + r] * mat[3 + c] + e[6 + r] * mat[6 + c] for r in range(3) for c in range(3)]
        D = [t[3 * r] * e[c] + t[3 * r + 1] * e[3 + c] + t[3 * r + 2] * e[6 + c]
             for r in range(3) for c in range(3)]
        eigval = [D[0], D[4], D[8]]
        if abs(D[1]) > abs(D[2]) and abs(D[1]) > abs(D[5]):
            rk, ck, rotk = 0, 1, 2
        elif abs(D[2]) > abs(D[5]):
            rk, ck, rotk = 0, 2, 1
        else:
            rk, ck, rotk = 1, 2, 0
        off = D[3 * rk + ck]
        if abs(off) <= tol:
            break
        tau = (D[4 * ck] - D[4 * rk]) / (off + off)
        if tau >= 0:
            tan = 1.0 / (tau + math.sqrt(tau * tau + 1.0))
        else:
            tan = -1.0 / (math.sqrt(tau * tau + 1.0) - tau)
        half = tan / (math.sqrt(tan * tan + 1.0) + 1.0)
        cos_half = 1.0 / math.sqrt(half * half + 1.0)
        if rotk != 1:
            half = -half
        rot = [cos_half, 0.0, 0.0, 0.0]
        rot[rotk + 1] = half * cos_half
        quat = mulquat(quat, rot)
    for j in range(3):
        j1 = j % 2
        if eigval[j1] + tol < eigval[j1 + 1]:
            eigval[j1], eigval[j1 + 1] = eigval[j1 + 1], eigval[j1]
            rot = [_SQRT_HALF, 0.0, 0.0, 0.0]
            rot[(j1 + 2) % 3 + 1] = _SQRT_HALF
            quat = mulquat(quat, rot)
    return eigval, quat


def full_inertia(full: Sequence[float]) -> Tuple[Optional[Vec], Optional[Vec]]:
    """(xx, yy, zz, xy, xz, yz) -> (principal inertia, frame quat); (None, None) if not positive."""
    mat = [full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]]
    val, quat = eig3(mat)
    if val[2] < EPS:
        return None, None
    return val, quat


def is_null_pos(p) -> bool:
    return abs(p[0]) < 1e-6 and abs(p[1]) < 1e-6 and abs(p[2]) < 1e-6


def is_null_quat(q) -> bool:
    return (abs(q[0] - 1) < 1e-6 or abs(q[0] + 1) < 1e-6) and abs(q[1]) < 1e-6 and abs(q[2]) < 1e-6 \
        and abs(q[3]) < 1e-6


def same_quat(a, b) -> bool:
    return all(abs(a[i] - b[i]) < 1e-6 for i in range(4)) or all(abs(a[i] + b[i]) < 1e-6 for i in range(4))


def same_pos(a, b) -> bool:
    return all(abs(a[i] - b[i]) < 1e-6 for i in range(3))


def sameframe(pos, quat, ipos=None, iquat=None) -> int:
    """MuJoCo's mjtSameFrame code of a frame relative to the body (and its inertial) frame."""
    if is_null_pos(pos) and is_null_quat(quat):
        return 1
    if is_null_quat(quat):
        return 3
    if ipos is None:
        return 0
    if same_pos(pos, ipos) and same_quat(quat, iquat):
        return 2
    if same_quat(quat, iquat):
        return 4
    return 0
