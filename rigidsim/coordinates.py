"""A name and a unit for every scalar of qpos and qvel, from a model's joints.

MuJoCo's layout (`jnt_qposadr`, `jnt_dofadr`, `jnt_type`): a hinge holds one
angle (rad) and one angular rate (rad/s), a slide one length (m) and one
speed (m/s); a ball joint holds a unit quaternion w, x, y, z and an angular
velocity; a free joint holds its position x, y, z (m) and a unit quaternion,
then a linear velocity (m/s, world frame) and an angular velocity (rad/s,
local frame). A quaternion component has no unit (empty string).

The names read `joint`, `joint.x`, `joint.qw`, `joint.vx`, `joint.wx`; an
unnamed joint is called `joint<id>`, as MuJoCo's viewer does.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from rigidsim.model import JNT_BALL, JNT_FREE, JNT_HINGE, JNT_SLIDE

QUAT = (("qw", ""), ("qx", ""), ("qy", ""), ("qz", ""))
_QPOS = {JNT_FREE: (("x", "m"), ("y", "m"), ("z", "m")) + QUAT, JNT_BALL: QUAT,
         JNT_HINGE: (("", "rad"),), JNT_SLIDE: (("", "m"),)}
_QVEL = {JNT_FREE: (("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"), ("wx", "rad/s"), ("wy", "rad/s"), ("wz", "rad/s")),
         JNT_BALL: (("wx", "rad/s"), ("wy", "rad/s"), ("wz", "rad/s")),
         JNT_HINGE: (("", "rad/s"),), JNT_SLIDE: (("", "m/s"),)}


def joint_label(names: Sequence[str], j: int) -> str:
    """The joint's name, or `joint<j>` when it has none."""
    name = names[j] if j < len(names) else ""
    return name or f"joint{j}"


def _coordinates(n: int, names: Sequence[str], jnt_type, jnt_adr, table) -> Tuple[List[str], List[str]]:
    labels, units = [f"[{i}]" for i in range(n)], [""] * n
    for j, (typ, adr) in enumerate(zip(np.asarray(jnt_type).tolist(), np.asarray(jnt_adr).tolist())):
        base = joint_label(names, j)
        for k, (suffix, unit) in enumerate(table[int(typ)]):
            if 0 <= adr + k < n:
                labels[adr + k] = f"{base}.{suffix}" if suffix else base
                units[adr + k] = unit
    return labels, units


def qpos_coordinates(nq: int, joint_names: Sequence[str], jnt_type, jnt_qposadr) -> Tuple[List[str], List[str]]:
    """(name, unit) of each of the nq generalized positions."""
    return _coordinates(nq, joint_names, jnt_type, jnt_qposadr, _QPOS)


def qvel_coordinates(nv: int, joint_names: Sequence[str], jnt_type, jnt_dofadr) -> Tuple[List[str], List[str]]:
    """(name, unit) of each of the nv generalized velocities."""
    return _coordinates(nv, joint_names, jnt_type, jnt_dofadr, _QVEL)
