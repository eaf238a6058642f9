"""The two kinds of failure a user sees, and the exit status each gives.

`InputError` (exit 2): a bad scene, a bad option, a missing file. Its message
is one paragraph naming the file and line, or the key, and what was expected.
`SimulationError` (exit 1): the run itself failed (a NaN, a buffer overflow);
it names the step and the env. `OutputError` (exit 1): the trajectory file
could not be written any further (a full disk); it names the file and frame.
"""

from __future__ import annotations

from typing import Optional


class RigidsimError(Exception):
    exit_code = 1


class InputError(RigidsimError):
    """Bad input. ``where`` is 'file:line' or the option key, when known."""

    exit_code = 2

    def __init__(self, message: str, where: Optional[str] = None):
        self.where, self.message = where, message
        super().__init__(f"{where}: {message}" if where else message)


class SimulationError(RigidsimError):
    exit_code = 1

    def __init__(self, message: str, step: Optional[int] = None, env: Optional[int] = None):
        self.step, self.env = step, env
        super().__init__(message)


class OutputError(RigidsimError):
    """Writing the trajectory file failed during the run (a full disk, an I/O error): exit 1."""

    exit_code = 1
