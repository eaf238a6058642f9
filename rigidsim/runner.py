"""`rigidsim run`: loader -> Model -> options -> engine -> streaming trajectory writer.

The command line only parses arguments and calls `run`; everything a run
checks before the first step (scene, options, keyframe, controls, features
not built yet) fails with an InputError before any output file is touched.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from rigidsim import options as opts
from rigidsim.engine.collision_pairs import collision_pairs
from rigidsim.errors import InputError, OutputError, SimulationError
from rigidsim.loaders import load_scene, resolve_scene
from rigidsim.reset import initial_states, load_init, load_npy
from rigidsim import model as M
from rigidsim.trajectory import (COMPRESSIONS, DEFAULT_COMPRESSION, DEFAULT_RECORD, RECORDABLE, TrajectoryWriter,
                                 TrajectoryWriteError, check_out, expected_frames, recovered_name)


@dataclasses.dataclass
class RunArgs:
    scene: str
    options: Optional[str] = None
    steps: int = 1000
    envs: int = 1
    out: str = "trajectory.h5"
    keyframe: Optional[str] = None
    init: Optional[str] = None
    ctrl: Optional[str] = None
    record: Optional[str] = None
    every: int = 1
    sets: Sequence[str] = ()
    precision: Optional[int] = None
    backend: str = "cpu"
    seed: int = 0
    quiet: bool = False
    compression: str = DEFAULT_COMPRESSION
    # what a sweep's worker is handed by value instead of reading files (rigidsim.sweep): the compiled scene
    # and its file's SHA-256, the options file's and the overrides' values (each checked), the --init and
    # --ctrl arrays (`init` and `ctrl` are then only the names /init's `source` shows); `signals` False: the
    # caller, not this run, handles SIGINT and SIGTERM
    scene_model: Optional[M.Model] = None
    scene_sha256: Optional[str] = None
    file_options: Optional[Dict[str, Any]] = None
    set_options: Optional[Dict[str, Any]] = None
    init_array: Optional[np.ndarray] = None
    ctrl_array: Optional[np.ndarray] = None
    signals: bool = True


@dataclasses.dataclass
class RunResult:
    out: Path
    frames: int
    steps_done: int
    complete: bool
    seconds: float
    build_seconds: float = 0.0
    compile_seconds: Optional[float] = None  # None: every kernel came from the offline cache
    message: str = ""
    exit_code: int = 0  # 130 after SIGINT, 143 after SIGTERM (the run stopped early, the file is complete=false)
    notes: List[str] = dataclasses.field(default_factory=list)  # leftovers of killed runs recovered beside --out


def parse_record(text: Optional[str]) -> tuple:
    if text is None:
        return DEFAULT_RECORD
    fields = [t.strip() for t in text.split(",") if t.strip()]
    for f in fields:
        if f not in RECORDABLE:
            import difflib

            close = difflib.get_close_matches(f, RECORDABLE, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise InputError(f"cannot record '{f}'.{hint} Recordable fields: {','.join(RECORDABLE)}.", where="--record")
    if not fields:
        raise InputError("--record needs at least one field", where="--record")
    return tuple(dict.fromkeys(fields))


def with_sensors(record: tuple, default: bool, model: M.Model, note: Callable[[str], None]) -> tuple:
    """`record` for `model`: the default set gains sensordata when the scene has sensors and the engine computes
    them all (else a note says why not); an explicit sensordata is an InputError for a scene without sensors or
    with sensors the engine does not compute."""
    from rigidsim.engine.sensor import not_computed, why_not_computed

    missing = not_computed(model)
    names = [model.names["sensor"][i] or f"#{i}" for i in missing]
    why = (f"rigidsim does not compute {why_not_computed(model, missing)} yet: "
           f"{', '.join(names[:3])}{'...' if len(names) > 3 else ''}")
    if default:
        if model.nsensor and not missing:
            return record + ("sensordata",)
        if missing:
            note(f"sensordata not recorded: {why}")
        return record
    if "sensordata" in record:
        if not model.nsensor:
            raise InputError("cannot record 'sensordata': the scene declares no <sensor>", where="--record")
        if missing:
            rest = ",".join(f for f in record if f != "sensordata") or "qpos,qvel,xpos,xquat"
            raise InputError(f"cannot record 'sensordata': {why}. Record without it (--record {rest}).",
                             where="--record")
    return record


def cuda_available() -> bool:
    """Whether a CUDA driver with at least one device is present (asked of libcuda, without Taichi)."""
    import ctypes

    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        try:
            return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
        except AttributeError:
            return False
    return False


def vulkan_available() -> bool:
    """Whether a Vulkan loader (libvulkan) with at least one physical device is present: an instance made and
    its devices counted through the loader's C API, without the kernel language (milliseconds)."""
    import ctypes

    for name in ("libvulkan.so.1", "libvulkan.so", "libvulkan.1.dylib", "vulkan-1.dll"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        break
    else:
        return False

    class InstanceCreateInfo(ctypes.Structure):  # VkInstanceCreateInfo, nothing enabled
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                    ("pApplicationInfo", ctypes.c_void_p), ("enabledLayerCount", ctypes.c_uint32),
                    ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", ctypes.c_uint32),
                    ("ppEnabledExtensionNames", ctypes.c_void_p)]

    try:
        info = InstanceCreateInfo(sType=1)  # VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
        instance = ctypes.c_void_p()
        if lib.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance)) != 0:
            return False
        count = ctypes.c_uint32(0)
        ok = lib.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None) == 0 and count.value > 0
        lib.vkDestroyInstance(instance, None)
        return ok
    except (AttributeError, OSError):
        return False


BACKENDS = ("cpu", "gpu", "vulkan", "auto")
VULKAN_HINT = ("a Vulkan driver: a GPU vendor's, or Mesa's software one on Linux (Debian and Ubuntu: "
               "apt-get install mesa-vulkan-drivers libvulkan1)")


def resolve_precision(precision: Optional[int], backend: str, where: str = "--precision") -> int:
    """The precision a run on `backend` (resolved) takes: `precision`, or 64 on the CPU and 32 on a device when
    None. Vulkan has no float64 transcendentals: the kernel language compiles sin, cos, exp and the like to
    GLSL's, which are 32-bit (a float64 kernel failed to compile: "Instruction Sin does not 64bits operation")."""
    if precision is None:
        return 64 if backend == "cpu" else 32
    if precision not in (32, 64):
        raise InputError(f"{where} must be 32 or 64, got {precision}", where=where)
    if precision == 64 and backend == "vulkan":
        raise InputError(f"{where} 64 is not available on Vulkan: the kernel language compiles sin, cos, exp and the "
                         f"like to Vulkan's GLSL functions, which are 32-bit. Use {where} 32 (the default there), or "
                         f"--backend cpu for float64", where=where)
    return int(precision)


def resolve_backend(backend: str, say: Optional[Callable[[str], None]] = None) -> str:
    """The backend `backend` (--backend) runs on: 'cpu', 'gpu' (CUDA) or 'vulkan'. 'auto' takes CUDA, then
    Vulkan, then the CPU, and tells `say` which it took and why."""
    b = backend.lower()
    if b not in BACKENDS:
        raise InputError(f"--backend must be one of {', '.join(BACKENDS)}, got '{backend}'", where="--backend")
    if b == "cpu":
        return "cpu"
    if b == "gpu":
        if not cuda_available():
            raise InputError("--backend gpu was asked for, but no CUDA GPU is available on this machine; use "
                             "--backend vulkan for another GPU, or --backend cpu", where="--backend")
        return "gpu"
    if b == "vulkan":
        if not vulkan_available():
            raise InputError(f"--backend vulkan was asked for, but no Vulkan device is available on this machine; "
                             f"it needs {VULKAN_HINT}. Or use --backend cpu", where="--backend")
        return "vulkan"
    took = "gpu" if cuda_available() else "vulkan" if vulkan_available() else "cpu"
    if say is not None:
        say({"gpu": "--backend auto: a CUDA GPU found, running on it (gpu)",
             "vulkan": "--backend auto: no CUDA GPU; a Vulkan device found, running on it (vulkan)",
             "cpu": "--backend auto: no CUDA GPU and no Vulkan device; running on the CPU (cpu)"}[took])
    return took


def collidable_pairs(model: M.Model, r: Dict[str, Any]) -> int:
    """How many geom pairs could ever produce a contact (the pair table of `engine.collision_pairs`)."""
    return len(collision_pairs(model, r)[0])


def _listed(model: M.Model, kind: str, ids: np.ndarray, noun: str) -> str:
    """' (joint a)', ' (joints a, b, c...)': the first three names of `ids`, '...' when there are more."""
    names = [model.names[kind][k] or f"#{k}" for k in ids[:3]]
    return f" ({noun}{'s' if len(ids) > 1 else ''} {', '.join(names)}{'...' if len(ids) > 3 else ''})" if names else ""


def unsupported(model: M.Model, r: Dict[str, Any]) -> List[str]:
    """Features this scene and these options would need that are not built yet."""
    out = []
    if not r["disable_constraint"] and r["enable_collision"]:
        out += unbuilt_colliders(model, r)
    out.extend(opts.not_honoured(r))
    from rigidsim.engine.data import unsupported_features

    # what the engine itself does not build yet (tendons, transmissions, integrators, ...), as feature names
    out += unsupported_features(opts.apply(model, r))
    return out


def constraint_free_sets(model: M.Model, r: Dict[str, Any]) -> List[Dict[str, bool]]:
    """The --set overrides that make this scene run without what it needs that is not built, each checked
    against `unsupported`: enable_collision=false first (the unbuilt colliders), then
    disable_constraint=true. Empty when none suffices."""
    out = []
    for c in ({"enable_collision": False}, {"disable_constraint": True}):
        if any(r[k] != v for k, v in c.items()) and not unsupported(model, {**r, **c}):
            out.append(c)
    return out


def unbuilt_colliders(model: M.Model, r: Dict[str, Any]) -> List[str]:
    """'contacts between ellipsoid and box geoms (a/b, c/d)' for each kind of candidate pair whose collider is
    not built yet."""
    from rigidsim.engine.collision.params import unbuilt

    out = []
    for kind, labels in unbuilt(model, *collision_pairs(model, r)).items():
        t1, t2 = kind.split("-")
        out.append(f"contacts between {t1} and {t2} geoms ({', '.join(labels[:3])}{'...' if len(labels) > 3 else ''})")
    return out


def check_colliders(model: M.Model, r: Dict[str, Any]) -> None:
    """InputError naming the geom pairs whose collider is not built yet (frame 0's contacts need them)."""
    missing = unbuilt_colliders(model, r)
    if missing:
        raise InputError("not supported yet: " + "; ".join(missing) + ". Record without contacts "
                         "(--record qpos,qvel,xpos,xquat) or set enable_collision=false.", where=model.source or None)


def check_supported(model: M.Model, r: Dict[str, Any], model_only_hint: bool = False) -> None:
    missing = unsupported(model, r)
    if missing:
        sets = [" ".join(f"--set {k}={str(v).lower()}" for k, v in c.items()) for c in constraint_free_sets(model, r)]
        hint = ""
        if sets:
            hint = (" To simulate this scene without them, run with "
                    f"{sets[0]}" + (f" (or {sets[1]})" if len(sets) > 1 else "") + ".")
        if model_only_hint:
            hint += " With --steps 0, '--record qpos,qvel,xpos,xquat' writes the model and frame 0 without them."
        raise InputError("not supported yet: " + "; ".join(missing) + "." + hint, where=model.source or None)


def contact_rows(model: M.Model, c: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The trajectory file's contact rows (docs/SPEC.md) of one frame from `Simulator.contacts`: geoms,
    bodies, position, normal (geom a to geom b), penetration (-dist) and force (NaN: collision detection alone,
    for frame 0 of a scene the engine does not step)."""
    geom = c["geom"].astype(np.int32)
    return {"count": c["count"][None, :], "geom": geom, "body": np.asarray(model.geom_bodyid, np.int32)[geom],
            "position": c["pos"], "normal": c["frame"][:, 0, :], "penetration": -c["dist"],
            "force": np.full((len(geom), 3), np.nan)}


def recorded(f: Dict[str, np.ndarray], key: str, nv: int) -> np.ndarray:
    """Field `key` of a block of frames; the constraint fields of a scene without constraints are zeros."""
    if key in f:
        return f[key]
    n, B = f["time"].shape
    return np.zeros((n, B, nv) if key == "qfrc_constraint" else (n, B))


def frame_contact_rows(model: M.Model, c: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The trajectory file's contact rows of a block of frames from `Simulator.contact_rows`, forces included
    (the force geom a exerts on geom b, world frame, as MuJoCo's mj_contactForce gives it after the solve)."""
    geom = c["geom"]
    return {"count": c["count"], "geom": geom, "body": np.asarray(model.geom_bodyid, np.int32)[geom],
            "position": c["pos"], "normal": c["normal"], "penetration": -c["dist"], "force": c["force"]}


def load_ctrl(path: str, nu: int, steps: int, envs: int, array: Optional[np.ndarray] = None) -> np.ndarray:
    """Controls from .npy: [nu] held, [N, nu] per step, [N, B, nu] per step and env -> [N|1, B|1, nu].
    `array`: the file's array, already read (a sweep's job); `path` then only names it in messages."""
    p = Path(path)
    a = load_npy(p, "control", "--ctrl", f"[nu], [N, nu] or [N, B, nu] with nu={nu}") if array is None else array
    if not np.issubdtype(a.dtype, np.number):
        raise InputError(f"{p} holds {a.dtype} values, expected numbers", where="--ctrl")
    a = a.astype(np.float64)
    shape = a.shape  # the file's own shape, for the messages (a is reshaped to 3 axes below)
    per_step = a.ndim >= 2
    if a.ndim == 1:
        a = a[None, None, :]
    elif a.ndim == 2:
        a = a[:, None, :]
    elif a.ndim != 3:
        raise InputError(f"{p} has shape {shape}, expected [nu], [N, nu] or [N, B, nu] with nu={nu}", where="--ctrl")
    if a.shape[-1] != nu:
        raise InputError(f"{p} has shape {shape}: its last axis is {a.shape[-1]}, but the scene has nu={nu} actuators", where="--ctrl")
    if a.ndim == 3 and a.shape[1] not in (1, envs):
        raise InputError(f"{p} has shape {shape}: its env axis is {a.shape[1]}, expected {envs} (--envs)", where="--ctrl")
    if per_step and a.shape[0] < steps:
        raise InputError(f"{p} has {a.shape[0]} rows of controls, fewer than --steps {steps}", where="--ctrl")
    if not np.isfinite(a).all():
        raise InputError(f"{p} contains NaN or infinite controls", where="--ctrl")
    return np.ascontiguousarray(a[: max(steps, 1)] if a.shape[0] > 1 else a)


class _Interrupt:
    """Turns SIGINT (Ctrl-C) and SIGTERM (kill, a cluster scheduler) into a flag checked between blocks of
    frames, so the file is closed cleanly with every finished frame. A second Ctrl-C stops at once (the
    file is still closed); once `closing` is set, signals only set the flag."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, install: bool = True):
        self.install = install
        self.hit = False
        self.signum = 0
        self.closing = False
        self.writing = False  # a block is being written: a second Ctrl-C waits for it, so the file stays whole
        self._old = {}

    def __enter__(self):
        for sig in self.SIGNALS if self.install else ():
            try:
                self._old[sig] = signal.signal(sig, self._handler)
            except ValueError:  # not the main thread
                pass
        return self

    def _handler(self, signum, frame):
        if self.hit and signum == signal.SIGINT and not (self.closing or self.writing):  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        if not self.hit:
            self.hit, self.signum = True, signum

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum)

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}
        return False


def run(a: RunArgs, progress: Optional[Callable[[int, int, float], None]] = None,
        compiling: Optional[Callable[[Optional[float]], None]] = None) -> RunResult:
    """Validate, build, simulate and write one run. No Python warning reaches the user: numpy's floating-point
    warnings (a scene of huge numbers) are silenced, and a NaN is reported as a SimulationError instead.
    `progress(steps_done, steps, seconds)` after each block of frames; `compiling(None)` when the engine
    starts compiling a kernel the offline cache does not hold (first use of this scene's kernels), then
    `compiling(seconds)` once the engine is built, with the seconds since then. A build from the cache
    calls neither."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(a, progress, compiling)


def _divergence_hint(e: SimulationError, resolved) -> str:
    """What may keep a state that became NaN or Inf during the run (not one that started so) stable."""
    text = str(e)
    if not e.step or not (" is NaN at step" in text or " is Inf at step" in text):
        return ""
    if resolved.get("integrator") in ("euler", "approximate_implicitfast"):
        return (f" (the state diverged under the {resolved['integrator']} integrator: the implicitfast integrator, "
                f"--set integrator=implicitfast, or a smaller timestep, --set dt=..., may keep it stable)")
    return " (the state diverged: a smaller timestep, --set dt=..., may keep it stable)"


def frame_blocks(sim, model: M.Model, steps: int, every: int, ctrl, record: Sequence[str], rec_contacts: bool,
                 contacts0=None):
    """Simulate `steps` steps from the engine's current state and yield, one engine launch at a time, what the
    trajectory file records: (the step of each frame [n], env 0's time [n], {field: [n, B, ...]} of the
    recorded fields, the frames' contact rows or None). `rec_contacts`: the engine records contacts with
    their forces; else `contacts0` (frame 0's, from collision detection alone) for a run of 0 steps."""
    fields = [k for k in record if k != "contacts"]
    for st, block in sim.rollout_blocks(steps, every=every, ctrl=ctrl, contacts=rec_contacts,
                                        sensors="sensordata" in record):
        f = sim.fields(block)
        crows = frame_contact_rows(model, sim.contact_rows(f)) if rec_contacts else (contacts0 if steps == 0 else None)
        yield st, f["time"][:, 0], {k: recorded(f, k, model.nv) for k in fields}, crows


def open_writer(out: Path, scene_model: M.Model, model: M.Model, scene: str, resolved: Dict[str, Any], envs: int,
                steps: int, every: int, record: Sequence[str], precision: int, backend: str, seed: int,
                compression: str, scene_sha256: Optional[str] = None) -> TrajectoryWriter:
    """The trajectory file of a run (`rigidsim run` and the Python API's `Batch.run`): /model from the compiled
    scene, the options in force, and the run's attributes. `scene_sha256`: the scene file's, when this
    process has no copy of it (a sweep's job on a cluster node)."""
    return TrajectoryWriter(
        out, scene_model, scene=scene, scene_path=None if scene_sha256 else resolve_scene(scene),
        scene_sha256=scene_sha256, options_yaml=opts.to_yaml(resolved),
        dt=float(model.opt.timestep), n_envs=envs, n_steps=steps, every=every, record=record,
        float_dtype=np.float64 if precision == 64 else np.float32, compression=compression,
        extra_attrs={"seed": np.int64(seed), "precision": np.int64(precision), "backend": backend})


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000.0
    return ""


def write_failed(writer: TrajectoryWriter, e: TrajectoryWriteError, step: int, n_steps: int,
                 every: int) -> OutputError:
    """The one-paragraph error of a run whose trajectory file could not be written further (the writer is
    closed): the file, the frame reached, what was kept, and for a full disk the room the rest needs."""
    import shutil

    out, T = writer.out, expected_frames(n_steps, every)
    what = "the file system is full" if e.disk_full else "a write failed"
    msg = (f"cannot write {out}: {what} ({e.reason}) after {writer.frames_tried} of its {T} "
           f"frames (step {step} of {n_steps}).")
    if writer.salvaged:
        msg += f" Kept the {writer.flushed} frames written before its last flush in {out} (complete=false)."
    else:
        msg += (f" Closing the file failed too: the frames up to its last flush are in {writer.tmp}; the next "
                f"`rigidsim run` with --out {out} recovers them into {recovered_name(out, os.getpid())}.")
    if e.disk_full:
        per_frame = writer.bytes_written / max(1, writer.frames_tried)
        try:
            free = shutil.disk_usage(out.parent).free
        except OSError:
            free = 0
        left = T - writer.flushed
        msg += (f" The {left} frames not written need about {_size(per_frame * left)} more "
                f"({_size(per_frame)} per frame); {_size(free)} is free in {out.parent}. Free space, write to another "
                f"file system (--out), or record less (--every, --record).")
    return OutputError(msg)


def init_source(a: RunArgs, resolved: Dict[str, Any]) -> str:
    """What the envs' initial states were made from, as the file's /init `source` says it."""
    parts = [f"keyframe {a.keyframe}" if a.keyframe is not None else "qpos0"]
    if a.init:
        parts.append(f"--init {a.init}")
    scales = [f"{k}={resolved[k]:g}" for k in ("init_qpos_noise", "init_qvel_noise") if resolved[k]]
    if scales:
        parts.append(f"{resolved['init_noise_distribution']} noise ({', '.join(scales)}, seed {a.seed})")
    return ", then ".join(parts)


def _run(a: RunArgs, progress: Optional[Callable[[int, int, float], None]] = None,
         compiling: Optional[Callable[[Optional[float]], None]] = None) -> RunResult:
    # -- validate everything before touching the output ---------------------
    if a.steps < 0:
        raise InputError(f"--steps must be 0 or more, got {a.steps}", where="--steps")
    if a.envs < 1:
        raise InputError(f"--envs must be at least 1, got {a.envs}", where="--envs")
    if a.every < 1:
        raise InputError(f"--every must be at least 1, got {a.every}", where="--every")
    record = parse_record(a.record)
    said: List[str] = []  # --backend auto's choice, a note of the run's
    backend = resolve_backend(a.backend, said.append)
    precision = resolve_precision(a.precision, backend)
    if a.compression not in COMPRESSIONS:
        raise InputError(f"--compression must be one of {', '.join(COMPRESSIONS)}, got '{a.compression}'",
                         where="--compression")
    out = Path(a.out)
    check_out(out)  # before the engine is built: an unwritable path is known in a second, not after compiling
    model = a.scene_model if a.scene_model is not None else load_scene(a.scene)
    file_opts = dict(a.file_options) if a.file_options is not None else opts.load_yaml(a.options) if a.options else {}
    set_opts = {**opts.parse_set(a.sets), **(a.set_options or {})}
    resolved = opts.resolve(model, file_opts, set_opts, precision=precision, backend=backend)
    record = with_sensors(record, a.record is None, model, said.append)
    # frame 0 alone needs only kinematics (and collision detection for its contacts), unless its accelerations
    # are recorded: they need the forward dynamics with every constraint
    kinematics_only = (a.steps == 0 and "qacc" not in record and "sensordata" not in record
                       and bool(unsupported(model, resolved)))
    if not kinematics_only:
        check_supported(model, resolved, model_only_hint=a.steps == 0)
    elif "contacts" in record:
        check_colliders(model, resolved)
    scene_model = model  # the compiled scene, as the file's /model holds it (the options are in options_yaml)
    model = opts.apply(model, resolved)
    init = (load_init(a.init, model, a.envs, a.init_array) if a.init_array is not None or a.init else None)
    state = initial_states(model, resolved, a.envs, a.keyframe, init, a.seed)
    ctrl = load_ctrl(a.ctrl, model.nu, a.steps, a.envs, a.ctrl_array) if a.ctrl_array is not None or a.ctrl else None
    if ctrl is not None:
        state["ctrl"] = ctrl[0]  # --ctrl overrides a keyframe's

    from rigidsim.engine.lang import watch_compiles
    from rigidsim.engine.simulator import Simulator

    t_build = time.perf_counter()
    t_compile = None  # when the first kernel missing from the offline cache began compiling

    def compile_started(kernel_name: str) -> None:
        nonlocal t_compile
        if t_compile is None:
            t_compile = time.perf_counter()
            if compiling is not None:
                compiling(None)

    contacts0 = None
    with watch_compiles(compile_started):
        sim = Simulator(model, a.envs, precision=precision, backend=backend, kinematics_only=kinematics_only,
                        pair_options=resolved)
        sim.reset(**{k: np.asarray(v) for k, v in state.items()})
        # contacts with their forces come with every frame of a scene with constraints; frame 0 of a scene the
        # engine cannot step (kinematics only) has its contacts from collision detection alone, forces NaN
        rec_contacts = "contacts" in record and bool(sim.npair) and bool(sim.nefcmax) and not kinematics_only
        # compile before the output file exists, so an early Ctrl-C leaves nothing half-made; with the run's
        # own frame buffer and controls, so that its first launch finds its arguments ready
        sim.prepare(a.steps, a.every, ctrl, rec_contacts, "sensordata" in record)
        if "contacts" in record and a.steps == 0 and sim.npair and not rec_contacts:
            sim.collide()
            contacts0 = contact_rows(model, sim.contacts())
    t0 = time.perf_counter()
    build_seconds = t0 - t_build
    compile_seconds = None if t_compile is None else t0 - t_compile
    if compile_seconds is not None and compiling is not None:
        compiling(compile_seconds)

    frames, steps_done, complete, message = 0, 0, False, ""
    with _Interrupt(a.signals) as intr:  # from before the file exists: a signal never leaves a hidden temporary file
        writer = open_writer(out, scene_model, model, a.scene, resolved, a.envs, a.steps, a.every, record, precision,
                             backend, a.seed, a.compression, a.scene_sha256)
        writer.write_init(state["qpos"], state["qvel"], init_source(a, resolved))
        try:
            # one block per engine launch, written with one dataset write per field: no Python per frame
            for steps, t, fv, crows in frame_blocks(sim, model, a.steps, a.every, ctrl, record, rec_contacts, contacts0):
                intr.writing = True
                writer.add_block(t, fv, crows)
                intr.writing = False
                frames += len(steps)
                steps_done = int(steps[-1])
                if progress is not None:
                    progress(steps_done, a.steps, time.perf_counter() - t0)
                if intr.hit and steps_done < a.steps:  # a signal during the last launch: the run is complete
                    what = "interrupted" if intr.signum == signal.SIGINT else f"stopped by {signal.Signals(intr.signum).name}"
                    message = f"{what} after step {steps_done}: wrote {frames} frames to {out} (complete=false)"
                    break
            else:
                complete = True
        except TrajectoryWriteError as e:
            intr.closing = True
            writer.close(False)
            raise write_failed(writer, e, steps_done, a.steps, a.every) from None
        except SimulationError as e:
            intr.closing = True
            msg = str(e).rstrip(".") + _divergence_hint(e, resolved)
            writer.close(False)
            if frames == 0:  # nothing finished: the file holds the model alone, so the scene can be inspected
                raise SimulationError(f"{msg}. No frame was finished: wrote the model alone, with 0 frames, to "
                                      f"{out} (complete=false).", step=e.step, env=e.env) from None
            raise SimulationError(f"{msg}. Wrote the {frames} frames before it to {out} (complete=false).",
                                  step=e.step, env=e.env) from None
        except BaseException:
            intr.closing = True
            writer.close(False)
            raise
        intr.closing = True
        writer.close(complete)
        if writer.failure is not None:  # the last flush, when closing, failed
            raise write_failed(writer, TrajectoryWriteError(writer.failure), steps_done, a.steps, a.every)
    return RunResult(out=out, frames=frames, steps_done=steps_done, complete=complete,
                     seconds=time.perf_counter() - t0, build_seconds=build_seconds, compile_seconds=compile_seconds,
                     message=message,
                     exit_code=intr.exit_code if message else 0, notes=said + list(writer.notes))
