"""Quaternion, rotation and spatial-algebra ti.funcs, with MuJoCo's conventions.

Quaternions are (w, x, y, z); rotation matrices are 9-vectors, row-major;
spatial vectors are (rotation, translation); a com-frame inertia is the
10-vector (Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m*cx, m*cy, m*cz, m). The
arithmetic of each function follows MuJoCo's operation order, so float64
results agree with MuJoCo's to the last bits wherever possible.

Also here: small accessors that read and write fixed-width column groups of
the packed arrays (see `layout`).
"""


from rigidsim.engine.lang import ti

from rigidsim.engine.layout import MINVAL

# ----------------------------------------------------------------------------- packed-array access


@ti.func
def getv(a: ti.template(), b, i, c, n: ti.template()):
    """a[b, i, c:c+n] as a vector."""
    return ti.Vector([a[b, i, c + k] for k in ti.static(range(n))])


@ti.func
def setv(a: ti.template(), b, i, c, v: ti.template()):
    """a[b, i, c:c+len(v)] = v."""
    for k in ti.static(range(v.n)):
        a[b, i, c + k] = v[k]


@ti.func
def getm(a: ti.template(), i, c, n: ti.template()):
    """Model row a[i, c:c+n] as a vector."""
    return ti.Vector([a[i, c + k] for k in ti.static(range(n))])


@ti.func
def get2(a: ti.template(), b, i, n: ti.template()):
    """a[b, i, 0:n] of a [B, n, k] array (mocap_pos, mocap_quat)."""
    return ti.Vector([a[b, i, k] for k in ti.static(range(n))])


# ----------------------------------------------------------------------------- vectors


@ti.func
def clip(x, lo, hi):
    """mju_clip: x limited to [lo, hi]."""
    res = x
    if x < lo:
        res = lo
    elif x > hi:
        res = hi
    return res


@ti.func
def zero3():
    return ti.Vector([0.0, 0.0, 0.0])


@ti.func
def cross3(a, b):
    return ti.Vector([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@ti.func
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@ti.func
def dot6(a, b):
    # MuJoCo's mju_dot: 4-way unrolled partial sums, then the tail
    r = (a[0] * b[0] + a[2] * b[2]) + (a[1] * b[1] + a[3] * b[3])
    r += a[4] * b[4]
    r += a[5] * b[5]
    return r


@ti.func
def normalize3(v):
    """(v / |v|, |v|); (1, 0, 0) when |v| is below MINVAL."""
    norm = ti.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    res = ti.Vector([1.0, 0.0, 0.0])
    if norm >= MINVAL:
        inv = 1.0 / norm
        res = ti.Vector([v[0] * inv, v[1] * inv, v[2] * inv])
    return res, norm


@ti.func
def normalize4(q):
    """q / |q|; the identity when |q| is below MINVAL; q itself when |q| is 1 within MINVAL."""
    # summed in pairs, as the compiled mju_normalize4 of MuJoCo 4.0.0 sums (bit for bit)
    norm = ti.sqrt((q[0] * q[0] + q[1] * q[1]) + (q[2] * q[2] + q[3] * q[3]))
    res = q
    if norm < MINVAL:
        res = ti.Vector([1.0, 0.0, 0.0, 0.0])
    elif ti.abs(norm - 1.0) > MINVAL:
        inv = 1.0 / norm
        res = ti.Vector([q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv])
    return res


# ----------------------------------------------------------------------------- quaternions


@ti.func
def mul_quat(a, b):
    return ti.Vector([
        # summed in pairs, as the compiled mju_mulQuat of MuJoCo 4.0.0 sums (bit for bit)
        (a[0] * b[0] - a[1] * b[1]) - (a[2] * b[2] + a[3] * b[3]),
        (a[0] * b[1] + a[1] * b[0]) + (a[2] * b[3] - a[3] * b[2]),
        (a[0] * b[2] - a[1] * b[3]) + (a[2] * b[0] + a[3] * b[1]),
        (a[0] * b[3] + a[1] * b[2]) + (a[3] * b[0] - a[2] * b[1]),
    ])


@ti.func
def neg_quat(q):
    return ti.Vector([q[0], -q[1], -q[2], -q[3]])


@ti.func
def rot_vec_quat(v, q):
    """Rotate v by q (zero v and identity q short-cut, as MuJoCo)."""
    res = v
    if v[0] == 0.0 and v[1] == 0.0 and v[2] == 0.0:
        res = ti.Vector([0.0, 0.0, 0.0])
    elif q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0:
        res = v
    else:
        t0 = q[0] * v[0] + q[2] * v[2] - q[3] * v[1]
        t1 = q[0] * v[1] + q[3] * v[0] - q[1] * v[2]
        t2 = q[0] * v[2] + q[1] * v[1] - q[2] * v[0]
        res = ti.Vector([v[0] + 2.0 * (q[2] * t2 - q[3] * t1),
                         v[1] + 2.0 * (q[3] * t0 - q[1] * t2),
                         v[2] + 2.0 * (q[1] * t1 - q[2] * t0)])
    return res


@ti.func
def axis_angle2quat(axis, angle):
    res = ti.Vector([1.0, 0.0, 0.0, 0.0])
    if angle != 0.0:
        s = ti.sin(angle * 0.5)
        res = ti.Vector([ti.cos(angle * 0.5), axis[0] * s, axis[1] * s, axis[2] * s])
    return res


@ti.func
def quat2mat(q):
    """Row-major 3x3 rotation of q, as a 9-vector."""
    res = ti.Vector([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    if not (q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0):
        q00 = q[0] * q[0]
        q01 = q[0] * q[1]
        q02 = q[0] * q[2]
        q03 = q[0] * q[3]
        q11 = q[1] * q[1]
        q12 = q[1] * q[2]
        q13 = q[1] * q[3]
        q22 = q[2] * q[2]
        q23 = q[2] * q[3]
        q33 = q[3] * q[3]
        # the diagonal grouped as mujoco 4.0.0's compiled mju_quat2Mat groups it (its C source reads
        # q00+q11-q22-q33, which rounds differently in the last bit; GJK runs amplify that bit to 1e-5)
        res = ti.Vector([(q00 - q22) + (q11 - q33), 2.0 * (q12 - q03), 2.0 * (q13 + q02),
                         2.0 * (q12 + q03), (q00 + q22) - (q11 + q33), 2.0 * (q23 - q01),
                         2.0 * (q13 - q02), 2.0 * (q23 + q01), (q00 - q22) - (q11 - q33)])
    return res


@ti.func
def quat2vel(q, dt):
    """Angular velocity (axis * angle / dt) of the rotation q, angle wrapped to (-pi, pi]."""
    axis, sin_a_2 = normalize3(ti.Vector([q[1], q[2], q[3]]))
    speed = 2.0 * ti.atan2(sin_a_2, q[0])
    if speed > 3.141592653589793:
        speed -= 2.0 * 3.141592653589793
    speed /= dt
    return axis * speed


@ti.func
def sub_quat(qa, qb):
    """3-D velocity res with qb * quat(res) = qa."""
    return quat2vel(mul_quat(neg_quat(qb), qa), 1.0)


@ti.func
def quat_integrate(q, vel, scale):
    """Rotate q by the angular velocity vel over time scale (local frame), normalizing q first."""
    axis, norm = normalize3(vel)
    qrot = axis_angle2quat(axis, scale * norm)
    return mul_quat(normalize4(q), qrot)


# ----------------------------------------------------------------------------- rotation matrices


@ti.func
def rot_vec_mat(v, mat):
    """mat @ v, mat a row-major 9-vector."""
    return ti.Vector([mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2],
                      mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2],
                      mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2]])


@ti.func
def rot_vec_mat_t(v, mat):
    """mat' @ v, mat a row-major 9-vector."""
    return ti.Vector([mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2],
                      mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2],
                      mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2]])


# ----------------------------------------------------------------------------- spatial algebra


@ti.func
def inert_com(inert, mat, dif, mass):
    """Body inertia (diagonal `inert` in frame `mat`) expressed at offset `dif`, as a 10-vector."""
    t0 = mat[0] * inert[0]
    t1 = mat[3] * inert[0]
    t2 = mat[6] * inert[0]
    t3 = mat[1] * inert[1]
    t4 = mat[4] * inert[1]
    t5 = mat[7] * inert[1]
    t6 = mat[2] * inert[2]
    t7 = mat[5] * inert[2]
    t8 = mat[8] * inert[2]
    r0 = mat[0] * t0 + mat[1] * t3 + mat[2] * t6
    r1 = mat[3] * t1 + mat[4] * t4 + mat[5] * t7
    r2 = mat[6] * t2 + mat[7] * t5 + mat[8] * t8
    r3 = mat[0] * t1 + mat[1] * t4 + mat[2] * t7
    r4 = mat[0] * t2 + mat[1] * t5 + mat[2] * t8
    r5 = mat[3] * t2 + mat[4] * t5 + mat[5] * t8
    r0 += mass * (dif[1] * dif[1] + dif[2] * dif[2])
    r1 += mass * (dif[0] * dif[0] + dif[2] * dif[2])
    r2 += mass * (dif[0] * dif[0] + dif[1] * dif[1])
    r3 -= mass * dif[0] * dif[1]
    r4 -= mass * dif[0] * dif[2]
    r5 -= mass * dif[1] * dif[2]
    return ti.Vector([r0, r1, r2, r3, r4, r5, mass * dif[0], mass * dif[1], mass * dif[2], mass])


@ti.func
def mul_inert_vec(i, v):
    """10-vector inertia times spatial motion vector v."""
    return ti.Vector([
        i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5],
        i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5],
        i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4],
        i[8] * v[1] - i[7] * v[2] + i[9] * v[3],
        i[6] * v[2] - i[8] * v[0] + i[9] * v[4],
        i[7] * v[0] - i[6] * v[1] + i[9] * v[5],
    ])


@ti.func
def cross_motion(vel, v):
    """Spatial cross product vel x v for motion vectors."""
    r3 = -vel[2] * v[4] + vel[1] * v[5]
    r4 = vel[2] * v[3] - vel[0] * v[5]
    r5 = -vel[1] * v[3] + vel[0] * v[4]
    r3 += -vel[5] * v[1] + vel[4] * v[2]
    r4 += vel[5] * v[0] - vel[3] * v[2]
    r5 += -vel[4] * v[0] + vel[3] * v[1]
    return ti.Vector([-vel[2] * v[1] + vel[1] * v[2], vel[2] * v[0] - vel[0] * v[2],
                      -vel[1] * v[0] + vel[0] * v[1], r3, r4, r5])


@ti.func
def cross_force(vel, f):
    """Spatial cross product vel x* f for force vectors."""
    r0 = -vel[2] * f[1] + vel[1] * f[2]
    r1 = vel[2] * f[0] - vel[0] * f[2]
    r2 = -vel[1] * f[0] + vel[0] * f[1]
    r0 += -vel[5] * f[4] + vel[4] * f[5]
    r1 += vel[5] * f[3] - vel[3] * f[5]
    r2 += -vel[4] * f[3] + vel[3] * f[4]
    return ti.Vector([r0, r1, r2, -vel[2] * f[4] + vel[1] * f[5], vel[2] * f[3] - vel[0] * f[5],
                      -vel[1] * f[3] + vel[0] * f[4]])


@ti.func
def dof_com(axis, offset):
    """Motion axis of a rotational dof about `axis`, expressed at the com frame offset."""
    c = cross3(axis, offset)
    return ti.Vector([axis[0], axis[1], axis[2], c[0], c[1], c[2]])


@ti.func
def is_finite(x):
    """x is neither NaN nor +-Inf: x - x is 0 for every finite x and NaN otherwise (no fast-math here)."""
    return x - x == 0.0
