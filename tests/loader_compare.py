"""Field-by-field comparison of our compiled Model with MuJoCo's compile of the same file.

`compare_models` lives in `rigidsim.compare.model` (the `rigidsim compare` command uses it too); its docstring
gives the tolerances. Re-exported here for the loader tests.
"""

from __future__ import annotations

from rigidsim.compare.model import ATOL_POS, RTOL_MASS, compare_models  # noqa: F401
