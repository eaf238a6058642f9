"""The packed model's per-dof subtree ranges (layout.DOF_SUBTREEEND), which the solver's sums over a dof's
descendants read (`linalg.mul_m`, `linalg.solve_ld`, `lowrank.lowrank_setup`): for every dof, the dofs in
[i + 1, end) are exactly its descendants, found here by walking MuJoCo's dof_parentid from every dof."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigidsim.engine import data as D
from rigidsim.engine import layout as L
from tests.mjref import model_from_mujoco, mujoco
from tests.test_engine_helpers import FEATURES_XML

SCENES = Path(__file__).resolve().parents[1] / "scenes"
# several trees (a free body with a ball, hinges and a slide below it beside a pendulum; the humanoid: one
# tree with legs and arms side by side; 27 free boxes), and a URDF arm
CASES = ["features", "third_party/dm_control/humanoid.xml", "boxes27.xml", "arm.urdf"]


def _mjmodel(case):
    if case == "features":
        return mujoco.MjModel.from_xml_string(FEATURES_XML)
    return mujoco.MjModel.from_xml_path(str(SCENES / case))


@pytest.mark.parametrize("case", CASES)
def test_subtree_end_is_the_descendants(case):
    mjm = _mjmodel(case)
    nv = mjm.nv
    end = D.put_model(model_from_mujoco(mjm), np.float64)["dof_i"][:nv, L.DOF_SUBTREEEND]
    parent = mjm.dof_parentid
    for i in range(nv):
        desc = []
        for k in range(i + 1, nv):
            j = k
            while j > i:
                j = parent[j]
            if j == i:
                desc.append(k)
        assert list(range(i + 1, int(end[i]))) == desc, (case, i)


def test_dofs_not_depth_first_refused():
    """A dof numbering that is not depth first (dof 3's parent is dof 0, but dof 2 before it starts another
    tree) is refused by name rather than solved with wrong sums; a depth-first one gives its ranges."""
    assert list(D.subtree_end([-1, 0, 1, 0, -1, 4])) == [4, 3, 3, 4, 6, 6]
    with pytest.raises(RuntimeError, match="depth first"):
        D.subtree_end([-1, 0, -1, 0])
