"""rigidsim: a batched rigid-body simulator with MuJoCo's physics, in Taichi.

The Python API is `rigidsim.Batch` (rigidsim/batch.py) and `rigidsim.sweep` (rigidsim/sweeps), imported on
first use so that the command line does not pay for them.
"""

from rigidsim.version import __version__

__all__ = ["Batch", "InputError", "SimulationError", "read_sensor", "sweep", "__version__"]


def __getattr__(name):
    if name == "Batch":
        from rigidsim.batch import Batch

        return Batch
    if name == "sweep":  # the function; its package is rigidsim.sweeps
        from rigidsim.sweeps import sweep

        return sweep
    if name == "read_sensor":  # a sensor's values [T, B, dim] from a trajectory file, by name
        from rigidsim.trajectory import read_sensor

        return read_sensor
    if name in ("InputError", "SimulationError"):
        from rigidsim import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'rigidsim' has no attribute {name!r}")
