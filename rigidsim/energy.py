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
