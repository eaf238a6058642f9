"""The Python API: a batch of B environments of one scene, the engine `rigidsim run` uses, driven from a script.

    import rigidsim
    batch = rigidsim.Batch("cartpole", envs=64, options={"dt": 0.005, "init_qpos_noise": 0.1}, seed=1)
    for t in range(100):
        batch.step(ctrl=policy(batch.qpos, batch.qvel))   # numpy in, numpy out: [B, nu] -> [B, nq], [B, nv]
    frame = batch.frame()                                  # xpos, xquat, contacts... at the current state
    batch.reset(qpos=qpos_per_env)                         # every env, or some: reset(envs=[3, 7])
    batch.run(200, out="rollout.h5")                       # a trajectory file, as `rigidsim run` writes it
    batch.sensor("torso_subtreelinvel")                    # [B, 3]: a sensor by name, at the current state

Options are the options file's keys (`rigidsim options`), checked as the file's are; `options` may also be
the path of an options file, and `sets` takes `--set` strings. Errors are rigidsim's own: an InputError for
bad input (its message is the one the command line prints), a SimulationError when a step fails.

The state arrays (`qpos`, `qvel`, `act`, `ctrl`, `time`) are copies read from the engine. Position-dependent
quantities are read with `frame()`, which runs one forward pass at the current state (MuJoCo's mj_forward,
without advancing time) and returns what a frame of the trajectory file holds: body poses, accelerations,
the contacts of the current positions with the forces of the solve made there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence

import warnings

import numpy as np

from rigidsim import options as opts
from rigidsim.errors import InputError
from rigidsim.loaders import load_scene
from rigidsim.reset import check_init, initial_states, keyframe_state


_CONSTRAINT_FIELDS = ("qfrc_constraint", "ncon", "nefc", "solver_niter", "solver_converged")


class Batch:
    """B environments of `scene` (a path or a bundled scene's name), every env at its initial state
    (`reset`); see the module docstring."""

    def __init__(self, scene: str | Path, envs: int = 1, options: Optional[Mapping[str, Any] | str | Path] = None,
                 sets: Sequence[str] = (), keyframe: Optional[str] = None, seed: int = 0,
                 precision: Optional[int] = None,
                 backend: str = "cpu"):
        from rigidsim import runner

        if int(envs) < 1:
            raise InputError(f"envs must be at least 1, got {envs}", where="envs")
        self.scene = str(scene)
        self.n_envs = int(envs)
        self.backend = runner.resolve_backend(backend)
        self.precision = runner.resolve_precision(precision, self.backend, where="precision")
        from rigidsim.engine import runtime

        held = runtime.settings()
        if held is not None and held != (self.precision, self.backend):
            raise InputError(f"this process already runs the engine in precision {held[0]} on {held[1]}; a batch in "
                             f"precision {self.precision} on {self.backend} needs a new Python process (the kernel "
                             f"language holds one precision and backend per process)", where="precision")
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)  # the reset noise: each reset draws on from here
        self.keyframe = keyframe
        self.scene_model = load_scene(self.scene)  # the compiled scene, as a file's /model holds it
        if isinstance(options, (str, Path)):
            file_opts = opts.load_yaml(options)
        else:
            file_opts = {str(k): opts.check_value(str(k), v, where=f"options['{k}']") for k, v in (options or {}).items()}
        self.options = opts.resolve(self.scene_model, file_opts, opts.parse_set(sets), precision=self.precision,
                                    backend=self.backend)
        runner.check_supported(self.scene_model, self.options)
        self.model = opts.apply(self.scene_model, self.options)  # with the options in its mjOption
        from rigidsim.engine.simulator import Simulator

        self._sim = Simulator(self.model, self.n_envs, precision=self.precision, backend=self.backend,
                              pair_options=self.options)
        self._contacts = bool(self._sim.npair) and bool(self._sim.nefcmax)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self, qpos=None, qvel=None, envs: Optional[Sequence[int]] = None, seed: Optional[int] = None) -> None:
        """Reset to the initial state: the model's qpos0 or the keyframe, then `qpos` ([B, nq] or [nq]) and
        `qvel` ([B, nv] or [nv]) when given, then the options' reset noise (init_qpos_noise, init_qvel_noise),
        drawn on from the batch's generator (seeded with the batch's `seed`: its first reset draws what
        `rigidsim run --seed` draws), or from a new one seeded with `seed`. `envs`: reset only these envs
        (their rows of `qpos`/`qvel` when those are [B, ...]); the others keep their state. Time restarts
        at 0 for the envs reset. A wrong shape or a non-finite value is an InputError."""
        m = self.model
        init = None
        if qpos is not None or qvel is not None:
            base = keyframe_state(m, self.keyframe)
            q = self._rows("qpos", base.get("qpos", m.qpos0) if qpos is None else qpos, m.nq)
            rows = q if qvel is None else np.concatenate([q, self._rows("qvel", qvel, m.nv)], axis=1)
            init = check_init(rows, m, self.n_envs, where="reset")
        if seed is not None:
            self._rng = np.random.default_rng(int(seed))
        st = initial_states(m, self.options, self.n_envs, self.keyframe, init, self._rng)
        if envs is not None:
            idx = np.asarray(envs, dtype=np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= self.n_envs):
                raise InputError(f"envs {idx.tolist()} out of range for a batch of {self.n_envs}", where="reset")
            cur = {k: self._sim.get(k) for k in st}
            for k in st:
                cur[k][idx] = st[k][idx]
            time = self.time
            time[idx] = 0.0
            st = dict(cur, time=time)
        self._sim.reset(**st)

    def _rows(self, name: str, a, n: int) -> np.ndarray:
        """`a` as [B, n] rows: one row for every env, or one per env; InputError for another shape."""
        a = np.asarray(a)
        if a.shape not in ((n,), (self.n_envs, n)):
            raise InputError(f"{name} has shape {list(a.shape)}, expected [{n}] or [{self.n_envs}, {n}]", where="reset")
        if not np.issubdtype(a.dtype, np.number):
            raise InputError(f"{name} holds {a.dtype} values, expected numbers", where="reset")
        return np.broadcast_to(a.astype(np.float64), (self.n_envs, n))

    @property
    def qpos(self) -> np.ndarray:
        """[B, nq] generalized positions (a copy)."""
        return self._sim.get("qpos")

    @property
    def qvel(self) -> np.ndarray:
        """[B, nv] generalized velocities (a copy)."""
        return self._sim.get("qvel")

    @property
    def act(self) -> np.ndarray:
        return self._sim.get("act")

    @property
    def ctrl(self) -> np.ndarray:
        """[B, nu] the controls in force."""
        return self._sim.get("ctrl")

    @property
    def time(self) -> np.ndarray:
        """[B] simulation time of each env."""
        return self._sim.get("time").reshape(-1)

    # ------------------------------------------------------------------ stepping
    def step(self, ctrl=None, n: int = 1) -> None:
        """Advance every env `n` steps. `ctrl`: None keeps the controls in force; [nu] or [B, nu] held for the
        n steps; [n, B, nu] one row per step. A NaN or an overflow raises SimulationError (step and env)."""
        c = None
        if ctrl is not None:
            c = np.asarray(ctrl, np.float64)
            if c.ndim == 2:
                c = c[None]  # [B, nu]: one row for every step
            if not np.isfinite(c).all():
                raise InputError("ctrl contains NaN or infinite values", where="ctrl")
        try:
            self._sim.step(int(n), ctrl=c)
        except ValueError as e:  # a ctrl of the wrong shape, refused before any step
            raise InputError(str(e), where="ctrl") from None

    def frame(self, contacts: bool = True) -> Dict[str, Any]:
        """What a trajectory frame holds at the current state, after one forward pass (time not advanced):
        'time' [B], 'qpos', 'qvel', 'qacc', 'ctrl', 'xpos' [B, nbody, 3], 'xquat' [B, nbody, 4], for a
        scene with constraints 'qfrc_constraint', 'ncon', 'nefc', 'solver_niter', 'solver_converged', for a
        scene with sensors 'sensordata' [B, nsensordata] (when the engine computes them all), and with
        `contacts` 'contacts': a list of B dicts of the env's contacts ('geom', 'body', 'position', 'normal',
        'penetration', 'force': the force geom a exerts on geom b, world frame)."""
        from rigidsim.engine.sensor import not_computed
        from rigidsim.runner import frame_blocks

        rec = self._contacts and contacts
        record = ["qpos", "qvel", "qacc", "ctrl", "xpos", "xquat"] + (list(_CONSTRAINT_FIELDS) if self._sim.nefcmax else [])
        record += ["contacts"] if rec else []
        record += ["sensordata"] if self.model.nsensor and not not_computed(self.model) else []
        out: Dict[str, Any] = {}
        for _, t, fv, crows in frame_blocks(self._sim, self.model, 0, 1, None, record, rec):
            out = {k: np.array(v[0]) for k, v in fv.items()}
            for k in _CONSTRAINT_FIELDS[1:]:
                if k in out:
                    out[k] = out[k].astype(np.int32)
            out["time"] = self.time
            if rec:
                out["contacts"] = _per_env(crows, self.n_envs)
            elif contacts:
                out["contacts"] = [_empty_contacts(self._sim.dtype) for _ in range(self.n_envs)]
        return out

    @property
    def sensordata(self) -> np.ndarray:
        """[B, nsensordata] every sensor of every env at the current state (one forward pass, as `frame`);
        InputError for a scene with sensors the engine does not compute yet."""
        from rigidsim import runner

        runner.with_sensors(("sensordata",), False, self.model, lambda _: None)
        return self.frame(contacts=False)["sensordata"]

    def sensor(self, name: str, data: Optional[np.ndarray] = None) -> np.ndarray:
        """Sensor `name`'s values [..., dim]: sliced from `data` (any sensordata array [..., nsensordata], e.g. a
        frame's or a file's), or at the current state ([B, dim])."""
        a, n = sensor_slice(self.model, name)
        return (self.sensordata if data is None else np.asarray(data))[..., a:a + n]

    def run(self, steps: int, out: str | Path, every: int = 1, record: Optional[Sequence[str] | str] = None,
            ctrl=None, compression: str = "none") -> Path:
        """Simulate `steps` steps from the current state and write them to `out` as `rigidsim run` does
        (frame 0 the current state; `record` a list or comma string of fields, default SPEC's; `ctrl` as
        `--ctrl`'s arrays: [nu], [steps, nu] or [steps, B, nu]). Returns the file's path; a failed step
        leaves the frames before it (complete=false) and raises SimulationError."""
        from rigidsim import runner
        from rigidsim.trajectory import TrajectoryWriteError, check_out

        rec = runner.parse_record(",".join(record) if isinstance(record, (list, tuple)) else record)
        rec = runner.with_sensors(rec, record is None, self.model, lambda note: warnings.warn(note, stacklevel=3))
        out = Path(out)
        check_out(out, "out")
        if int(steps) < 0 or int(every) < 1:
            raise InputError(f"steps must be >= 0 and every >= 1, got {steps} and {every}", where="run")
        c = None
        if ctrl is not None:
            c = np.asarray(ctrl, np.float64)
            c = c[None, None] if c.ndim == 1 else (c[:, None] if c.ndim == 2 else c)
        rec_contacts = "contacts" in rec and self._contacts
        writer = runner.open_writer(out, self.scene_model, self.model, self.scene, self.options, self.n_envs,
                                    int(steps), int(every), rec, self.precision, self.backend, self.seed, compression)
        for note in writer.notes:  # leftovers of killed runs to `out`, recovered beside it
            warnings.warn(note, stacklevel=2)
        complete = False
        try:
            writer.write_init(self.qpos, self.qvel, "the Python API's state when run() was called")
            for _, t, fv, crows in runner.frame_blocks(self._sim, self.model, int(steps), int(every), c, rec,
                                                        rec_contacts):
                writer.add_block(t, fv, crows)
            complete = True
        except TrajectoryWriteError as e:  # a full disk: the frames of the last flush are kept
            writer.close(False)
            raise runner.write_failed(writer, e, writer.frames_tried * int(every), int(steps), int(every)) from None
        finally:
            writer.close(complete)
        if writer.failure is not None:
            raise runner.write_failed(writer, TrajectoryWriteError(writer.failure), int(steps), int(steps), int(every))
        return out


def sensor_slice(model, name: str):
    """(address, dim) of sensor `name` in a sensordata row of `model`; InputError naming the sensors when it
    has no sensor of that name."""
    names = list(model.names.get("sensor", []))
    if name not in names:
        import difflib

        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        shown = ", ".join(n for n in names[:6] if n) + ("..." if len(names) > 6 else "")
        raise InputError(f"no sensor named '{name}'.{hint} The scene's sensors: {shown or 'none'}.", where="sensor")
    i = names.index(name)
    return int(model.sensor_adr[i]), int(model.sensor_dim[i])


def _per_env(c: Optional[Mapping[str, np.ndarray]], B: int):
    """The contact rows of one frame, split env by env."""
    if c is None:
        return [_empty_contacts(np.float64) for _ in range(B)]
    off = np.concatenate([[0], np.cumsum(np.asarray(c["count"]).reshape(-1))])
    return [{k: np.array(c[k][off[b]:off[b + 1]]) for k in ("geom", "body", "position", "normal", "penetration", "force")}
            for b in range(B)]


def _empty_contacts(dtype):
    z = lambda *s: np.zeros((0,) + s, dtype)  # noqa: E731
    return {"geom": np.zeros((0, 2), np.int32), "body": np.zeros((0, 2), np.int32), "position": z(3),
            "normal": z(3), "penetration": z(), "force": z(3)}
