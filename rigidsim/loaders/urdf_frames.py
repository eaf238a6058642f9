"""Frames of the URDF translation (`loaders.urdf`): URDF's roll-pitch-yaw and axis conventions as unit
quaternions (w, x, y, z), a pose composed with its child's, and numbers written back into MJCF text at full
precision (17 significant digits, so the MJCF reads back the same doubles)."""

from __future__ import annotations

import math

import numpy as np


def _quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _quat_mat(q):
    q = np.asarray(q, float) / np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _axis_quat(axis: int, angle: float):
    q = np.zeros(4)
    q[0] = math.cos(angle / 2)
    q[1 + axis] = math.sin(angle / 2)
    return q


def _rpy_quat(rpy):
    """URDF roll-pitch-yaw: rotations about the fixed x, y, z axes, in that order."""
    r, p, y = rpy
    return _quat_mul(_axis_quat(2, y), _quat_mul(_axis_quat(1, p), _axis_quat(0, r)))


def _z_to(v):
    """The shortest rotation taking +z onto the direction v."""
    v = np.asarray(v, float)
    ax = np.cross([0.0, 0.0, 1.0], v)
    s = np.linalg.norm(ax)
    ax = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else ax / s
    ang = math.atan2(s, v[2])
    return np.concatenate([[math.cos(ang / 2)], ax * math.sin(ang / 2)])


class _Pose:
    """A frame: position and unit quaternion (w, x, y, z) in its parent frame."""

    def __init__(self, pos=(0, 0, 0), quat=(1, 0, 0, 0)):
        self.pos = np.asarray(pos, float)
        self.quat = np.asarray(quat, float)

    def then(self, child: "_Pose") -> "_Pose":
        """The child frame expressed in this frame's parent."""
        return _Pose(self.pos + _quat_mat(self.quat) @ child.pos, _quat_mul(self.quat, child.quat))


def _fmt(v) -> str:
    return " ".join(format(float(x), ".17g") for x in np.atleast_1d(v))
