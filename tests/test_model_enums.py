"""MuJoCo's enums are defined once, in `rigidsim.model`, with MuJoCo's values; the engine layout re-exports them."""

from __future__ import annotations

import pytest

from rigidsim import model as M
from rigidsim.engine import layout as L

mujoco = pytest.importorskip("mujoco")

# our prefix -> (mujoco enum, its prefix); names after the prefix are MuJoCo's
ENUMS = {
    "JNT_": (mujoco.mjtJoint, "mjJNT_"), "GEOM_": (mujoco.mjtGeom, "mjGEOM_"),
    "WRAP_": (mujoco.mjtWrap, "mjWRAP_"), "CONE_": (mujoco.mjtCone, "mjCONE_"),
    "SOLVER_": (mujoco.mjtSolver, "mjSOL_"), "TRN_": (mujoco.mjtTrn, "mjTRN_"),
    "DYN_": (mujoco.mjtDyn, "mjDYN_"), "GAIN_": (mujoco.mjtGain, "mjGAIN_"), "BIAS_": (mujoco.mjtBias, "mjBIAS_"),
    "EQ_": (mujoco.mjtEq, "mjEQ_"), "OBJ_": (mujoco.mjtObj, "mjOBJ_"), "DSBL_": (mujoco.mjtDisableBit, "mjDSBL_"),
    "ENBL_": (mujoco.mjtEnableBit, "mjENBL_"),
    "SAMEFRAME_": (mujoco.mjtSameFrame, "mjSAMEFRAME_"),
}


def _ours(prefix):
    return {k: v for k, v in vars(M).items() if k.startswith(prefix) and isinstance(v, int)}


@pytest.mark.parametrize("prefix", sorted(ENUMS))
def test_enum_values_are_mujocos(prefix):
    enum, mj_prefix = ENUMS[prefix]
    ours = _ours(prefix)
    assert ours, prefix
    for name, value in ours.items():
        assert value == int(getattr(enum, mj_prefix + name[len(prefix):])), name


def test_integrators_are_mujocos_and_ours_is_apart():
    for name in ("EULER", "RK4", "IMPLICIT", "IMPLICITFAST"):
        assert getattr(M, "INT_" + name) == int(getattr(mujoco.mjtIntegrator, "mjINT_" + name))
    assert M.INT_APPROX_IMPLICITFAST not in {int(v) for v in mujoco.mjtIntegrator.__members__.values()}


def test_layout_reexports_the_model_enums_as_plain_ints():
    """Every enum name the engine layout holds is the model's own value, a plain int (Taichi reads it at compile time)."""
    prefixes = tuple(ENUMS) + ("INT_",)
    shared = [k for k in vars(L) if k.startswith(prefixes) and hasattr(M, k)]
    assert {"JNT_FREE", "DSBL_EULERDAMP", "SAMEFRAME_INERTIAROT", "WRAP_SITE", "INT_APPROX_IMPLICITFAST"} <= set(shared)
    for k in shared:
        assert type(getattr(L, k)) is int and getattr(L, k) == getattr(M, k), k
    # layout's own column constants that share a prefix are not enum values (JNT_POS is a column)
    assert L.JNT_POS == 0 and L.WRAP_TYPE == 0
