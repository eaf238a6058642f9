"""The fields `rigidsim run --record` can write to a trajectory file (docs/SPEC.md), and the default set.

Kept apart from the writer (`trajectory`, which imports h5py and numpy) so that the command line can list
them in its help without loading either.
"""

RECORDABLE = ("qpos", "qvel", "qacc", "xpos", "xquat", "ctrl", "contacts", "qfrc_constraint", "ncon", "nefc",
              "solver_niter", "solver_converged", "sensordata")
# and sensordata, for a scene with sensors (`runner.with_sensors`)
DEFAULT_RECORD = ("qpos", "qvel", "xpos", "xquat", "contacts")
