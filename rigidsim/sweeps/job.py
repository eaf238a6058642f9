"""One job of a sweep, as a worker runs it: `rigidsim run`'s own code (`runner.run`) on what the driver
sends by value (the compiled scene, the options' values, the --init and --ctrl arrays), so the file is what
`rigidsim run` with the same settings writes, wherever the worker is.

A worker process runs many jobs: the kernel language keeps every kernel it compiled, so a job of a scene
this process ran before starts in milliseconds.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict

from rigidsim.errors import InputError, RigidsimError


def spec(g, job) -> Dict[str, Any]:
    """What a worker needs of a job, but the Model (sent once per scene and worker)."""
    return {"id": job.id, "file": job.file, "scene": job.scene.name, "scene_sha256": job.scene.sha256,
            "seed": job.seed, "overrides": job.overrides, "options": g.options, "run": g.run,
            "init_array": g.init_array, "ctrl_array": g.ctrl_array}


def set_threads(threads: int) -> None:
    """The engine of this process runs its CPU kernels on `threads` threads (read when it starts)."""
    os.environ["RIGIDSIM_CPU_THREADS"] = str(int(threads))


def execute(s: Dict[str, Any], model, out: Path) -> Dict[str, Any]:
    """Run the job `s` into `out`; its result as the manifest records it: status ('ok', 'failed': the run's
    exit 1 with its file, 'error': it could not run), exit, seconds, env_steps_per_s, message."""
    from rigidsim.runner import RunArgs, run

    r = s["run"]
    args = RunArgs(scene=s["scene"], steps=r["steps"], envs=r["envs"], out=str(out), keyframe=r["keyframe"],
                   init=r["init"], ctrl=r["ctrl"], record=r["record"], every=r["every"], precision=r["precision"],
                   backend="cpu", seed=s["seed"], quiet=True, compression=r["compression"], scene_model=model,
                   scene_sha256=s["scene_sha256"], file_options=s["options"], set_options=s["overrides"],
                   init_array=s["init_array"], ctrl_array=s["ctrl_array"], signals=False)
    t0 = time.perf_counter()
    res = {"status": "ok", "exit": 0, "message": "", "env_steps_per_s": None}
    try:
        done = run(args)  # numpy's floating-point warnings silenced inside
        if done.seconds > 0:
            res["env_steps_per_s"] = round(done.steps_done * r["envs"] / done.seconds, 1)
    except InputError as e:
        res.update(status="error", exit=2, message=str(e))
    except RigidsimError as e:
        res.update(status="failed", exit=1, message=str(e))
    except MemoryError as e:
        res.update(status="error", exit=1, message=f"out of memory: {e}")
    except Exception as e:  # an internal error: the job is an error, the sweep goes on
        res.update(status="error", exit=1, message=f"internal error: {type(e).__name__}: {e}")
    res["seconds"] = round(time.perf_counter() - t0, 3)
    res["has_file"] = Path(out).is_file()
    return res
