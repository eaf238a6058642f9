"""Energies of recorded frames, from the body poses of a trajectory file (numpy only).

Potential energy (gravity, as MuJoCo's `mj_energyPos` without springs):
PE = -sum_i body_mass[i] * dot(gravity, com_i), with body i's centre of mass
com_i = xpos_i + R(xquat_i) @ body_ipos_i in the world frame. It is exact:
it needs the poses of the frame alone.

Kinetic energy, KE = sum_i 1/2 m_i |v_i|^2 + 1/2 w_i' I_i w_i, needs the
velocities of the bodies, which the file does not hold; they are taken from
finite differences of the recorded poses between frames:
- v_i: the centre of mass's position differentiated in time to second order
  (central differences inside, one-sided second-order ones at both ends, on
  the frames' own times, so a last frame closer than `--every` steps is
  right): exact when the centre of mass moves on a parabola (free fall).
- w_i (world frame): the rotation from frame t-1 to frame t+1,
  log(q_{t+1} q_{t-1}^*), over the time between them (one-sided at both ends):
  exact for a constant angular velocity.
- I_i = R diag(body_inertia_i) R' with R = R(xquat_i) R(body_iquat_i), the
  principal axes of the body's inertia in the world frame.
The result approximates MuJoCo's `mj_energyVel` (1/2 qvel' M qvel, armature
left out): exactly for the motions above; for a run, the differences of
poses integrated with a semi-implicit step (q_{t+1} = q_t + h v_{t+1}) give
the mean of the velocities at t and t+1, off by about h a / 2 for an
acceleration a and a time h between frames: the more steps between
recorded frames (`--every`), the rougher.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np


def quat_mat(q: np.ndarray) -> np.ndarray:
    """Rotation matrices [..., 3, 3] of quaternions [..., 4] (w, x, y, z; normalised here)."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a b of quaternions [..., 4] (w, x, y, z)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, np.float64), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


def quat_rotvec(q: np.ndarray) -> np.ndarray:
    """The rotation vector (angle times unit axis, the shorter way round) [..., 3] of quaternions [..., 4]."""
    q = np.asarray(q, np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(q[..., :1] < 0, -q, q)  # q and -q are one rotation: take the angle in [0, pi]
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2 * np.arctan2(s, q[..., :1])
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(s > 0, angle / np.where(s > 0, s, 1.0), 2.0)  # small angles: 2 v
    return v * scale


def com_positions(xpos: np.ndarray, xquat: np.ndarray, body_ipos: np.ndarray) -> np.ndarray:
    """Centres of mass [..., nbody, 3] in the world frame of body poses xpos [..., nbody, 3], xquat [..., nbody, 4]."""
    return np.asarray(xpos, np.float64) + np.einsum("...ij,...j->...i", quat_mat(xquat), np.asarray(body_ipos, np.float64))


def potential_energy(xpos: np.ndarray, xquat: np.ndarray, body_ipos: np.ndarray, body_mass: np.ndarray,
                     gravity: Sequence[float]) -> np.ndarray:
    """Gravitational potential energy [...] (J) of body poses [..., nbody, 3|4]."""
    com = com_positions(xpos, xquat, body_ipos)
    return -np.einsum("b,...bi,i->...", np.asarray(body_mass, np.float64), com, np.asarray(gravity, np.float64))


def angular_velocity(time: np.ndarray, xquat: np.ndarray) -> np.ndarray:
    """World-frame angular velocities [T, ..., 3] of orientations xquat [T, ..., 4] recorded at `time` [T]: the
    rotation between the neighbouring frames over the time between them (one-sided at both ends)."""
    time = np.asarray(time, np.float64)
    T = time.shape[0]
    idx = np.arange(T)
    lo, hi = np.maximum(idx - 1, 0), np.minimum(idx + 1, T - 1)
    q = np.asarray(xquat, np.float64)
    conj = q[lo] * np.array([1.0, -1.0, -1.0, -1.0])
    dt = (time[hi] - time[lo]).reshape((T,) + (1,) * (q.ndim - 1))
    return quat_rotvec(quat_mul(q[hi], conj)) / dt


def kinetic_energy(time: np.ndarray, xpos: np.ndarray, xquat: np.ndarray, body_ipos: np.ndarray,
                   body_iquat: np.ndarray, body_mass: np.ndarray, body_inertia: np.ndarray) -> Optional[np.ndarray]:
    """Kinetic energy [T, ...] (J) of body poses xpos [T, ..., nbody, 3], xquat [T, ..., nbody, 4] recorded at
    `time` [T], from finite differences of the poses (see the module's docstring); None with fewer than two
    frames or times that do not increase."""
    time = np.asarray(time, np.float64)
    T = time.shape[0]
    if T < 2 or not np.all(np.diff(time) > 0):
        return None
    com = com_positions(xpos, xquat, body_ipos)
    v = np.gradient(com, time, axis=0, edge_order=2 if T >= 3 else 1)
    w = angular_velocity(time, xquat)
    R = quat_mat(quat_mul(np.asarray(xquat, np.float64), np.asarray(body_iquat, np.float64)))
    w_principal = np.einsum("...ji,...j->...i", R, w)  # R' w: the angular velocity in the principal axes
    mass, inertia = np.asarray(body_mass, np.float64), np.asarray(body_inertia, np.float64)
    return 0.5 * (np.einsum("b,...bi,...bi->...", mass, v, v) +
                  np.einsum("bi,...bi,...bi->...", inertia, w_principal, w_principal))


def _axis_angle_mat(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices [..., 3, 3] about the unit `axis` [3] by `angle` [...] (Rodrigues)."""
    a = np.asarray(axis, np.float64)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def joint_kinetic_energy(qpos: np.ndarray, qvel: np.ndarray, xpos: np.ndarray, xquat: np.ndarray,
                         model) -> np.ndarray:
    """MuJoCo's mj_energyVel, 1/2 qvel' M(qpos) qvel with the armature, of frames [...] from the recorded
    qpos [..., nq], qvel [..., nv] and body poses xpos [..., nbody, 3], xquat [..., nbody, 4]; `model` maps
    MuJoCo's names to arrays (the file's /model group).

    Each body's velocity is its parent's plus its joints' (a twist: angular velocity w and the velocity v0 of
    the world point at the origin, so that a point x moves at v0 + w x x), with the joint axes and anchors
    where MuJoCo's kinematics puts them: a body's joints are undone from its recorded pose last to first
    (a hinge turns by qpos - qpos0 about its axis through its anchor, a slide moves by qpos - qpos0, a ball
    turns by its quaternion), so a body with several joints gets each axis at its own place in the chain.
    A ball's (and a free joint's) three rotational dofs turn about the body's final axes, a free joint's
    three translational ones move along the world axes: MuJoCo's cdof. KE = sum over bodies of
    1/2 m |v(com)|^2 + 1/2 w' I w, plus 1/2 armature qvel^2 per dof."""
    g = lambda name: np.asarray(model[name][()])  # noqa: E731
    qpos, qvel = np.asarray(qpos, np.float64), np.asarray(qvel, np.float64)
    xpos, xquat = np.asarray(xpos, np.float64), np.asarray(xquat, np.float64)
    parent, jtype, jbody = g("body_parentid"), g("jnt_type"), g("jnt_bodyid")
    qadr, dadr, jaxis, jpos = g("jnt_qposadr"), g("jnt_dofadr"), g("jnt_axis"), g("jnt_pos")
    qpos0, mass, inertia = g("qpos0"), g("body_mass"), g("body_inertia")
    R = quat_mat(xquat)  # [..., nbody, 3, 3]
    Ri = quat_mat(quat_mul(xquat, g("body_iquat")))  # principal axes of each body's inertia
    com = com_positions(xpos, xquat, g("body_ipos"))
    lead = xpos.shape[:-2]
    nbody = xpos.shape[-2]
    w = np.zeros(lead + (nbody, 3))
    v0 = np.zeros(lead + (nbody, 3))
    ke = 0.5 * np.einsum("d,...d->...", g("dof_armature"), qvel * qvel)
    for b in range(1, nbody):
        w[..., b, :], v0[..., b, :] = w[..., parent[b], :], v0[..., parent[b], :]
        rot, org = R[..., b, :, :], xpos[..., b, :]  # the frame after the body's joints, undone below
        for j in np.flatnonzero(jbody == b)[::-1]:
            t, qa, da = int(jtype[j]), int(qadr[j]), int(dadr[j])
            anchor = org + np.einsum("...ij,j->...i", rot, jpos[j])
            if t == 0:  # free: origin velocity in world axes, then the body's final axes (as a ball)
                v0[..., b, :] += qvel[..., da:da + 3]
                wj = np.einsum("...ij,...j->...i", R[..., b, :, :], qvel[..., da + 3:da + 6])
                w[..., b, :] += wj
                v0[..., b, :] -= np.cross(wj, org)
            elif t == 1:  # ball: the body's final axes through the anchor
                wj = np.einsum("...ij,...j->...i", R[..., b, :, :], qvel[..., da:da + 3])
                w[..., b, :] += wj
                v0[..., b, :] -= np.cross(wj, anchor)
                rot = rot @ np.swapaxes(quat_mat(qpos[..., qa:qa + 4]), -1, -2)
                org = anchor - np.einsum("...ij,j->...i", rot, jpos[j])
            elif t == 2:  # slide
                a = np.einsum("...ij,j->...i", rot, jaxis[j])
                v0[..., b, :] += a * qvel[..., da, None]
                org = org - a * (qpos[..., qa] - qpos0[qa])[..., None]
            else:  # hinge
                a = np.einsum("...ij,j->...i", rot, jaxis[j])
                wj = a * qvel[..., da, None]
                w[..., b, :] += wj
                v0[..., b, :] -= np.cross(wj, anchor)
                rot = rot @ _axis_angle_mat(jaxis[j], -(qpos[..., qa] - qpos0[qa]))
                org = anchor - np.einsum("...ij,j->...i", rot, jpos[j])
        vc = v0[..., b, :] + np.cross(w[..., b, :], com[..., b, :])
        wp = np.einsum("...ji,...j->...i", Ri[..., b, :, :], w[..., b, :])
        ke = ke + 0.5 * (mass[b] * np.sum(vc * vc, axis=-1) + np.sum(inertia[b] * wp * wp, axis=-1))
    return ke
