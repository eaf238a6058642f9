"""The initial state of each env: MuJoCo's reset (qpos0 or a keyframe), a per-env `--init` file, reset noise.

`initial_states` gives the [B, ...] arrays a run starts from, in this order:
1. the model's reference configuration (qpos0, zero velocity, zero control), or an MJCF `<key>`
   (`--keyframe`: its qpos, qvel, act, ctrl and mocap pose, as mj_resetDataKeyframe);
2. an `--init` file replaces qpos, or qpos and qvel, env by env (`load_init`);
3. reset noise (options `init_qpos_noise`, `init_qvel_noise`, `init_noise_distribution`) is added on top,
   drawn from numpy's default generator seeded with `--seed` (`perturb`): the same seed gives the same
   states, so the same file.

The noise is drawn per degree of freedom, [B, nv] for positions then [B, nv] for velocities, whatever the
scales (so that changing one scale leaves the other's draws as they were). A hinge or slide coordinate gets
its dof's sample added; a free joint's position its three; a ball or free joint's quaternion is turned by
its three samples read as a rotation vector in the joint's local frame (the frame of MuJoCo's qvel for
these joints, as mj_integratePos turns it) and normalised, so it stays a unit quaternion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Mapping, Optional

import numpy as np

from rigidsim import model as M
from rigidsim.errors import InputError

NOISE_DISTRIBUTIONS = ("uniform", "normal")


def keyframe_state(model: M.Model, keyframe: Optional[str]) -> Dict[str, np.ndarray]:
    """The state of MJCF `<key>` `keyframe` (a name or an index) as unbatched arrays; {} for None."""
    if keyframe is None:
        return {}
    names = model.names.get("key", [])
    if keyframe in names:
        k = names.index(keyframe)
    elif keyframe.isdigit() and int(keyframe) < model.nkey:
        k = int(keyframe)
    else:
        import difflib

        close = difflib.get_close_matches(keyframe, [n for n in names if n], n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        avail = ", ".join(n or f"#{i}" for i, n in enumerate(names)) or "none"
        raise InputError(f"no keyframe '{keyframe}' in the scene.{hint} Keyframes: {avail}.", where="--keyframe")
    st = dict(qpos=model.key_qpos[k], qvel=model.key_qvel[k], act=model.key_act[k], ctrl=model.key_ctrl[k])
    if model.nmocap:
        st.update(mocap_pos=model.key_mpos[k], mocap_quat=model.key_mquat[k])
    bad = [f for f, v in st.items() if not np.isfinite(v).all()]
    if bad:  # MuJoCo accepts inf and nan in a keyframe; a run from one would fail at its first step
        raise InputError(f"keyframe '{keyframe}' has non-finite values (inf or nan) in {', '.join(bad)}; "
                         f"rigidsim does not start from a non-finite state", where="--keyframe")
    return st


def check_init(a: Any, model: M.Model, envs: int, where: str = "--init") -> Dict[str, np.ndarray]:
    """Per-env qpos (and qvel) from an array: [B, nq] or [B, nq + nv] (or [nq] / [nq + nv], the same for
    every env). InputError for another shape, a non-number or a non-finite value."""
    a = np.asarray(a)
    if not (np.issubdtype(a.dtype, np.number) and not np.issubdtype(a.dtype, np.complexfloating)):
        raise InputError(f"the initial states are {a.dtype} values, expected real numbers", where=where)
    nq, nv = model.nq, model.nv
    widths = f"nq={nq}" + (f" or nq+nv={nq + nv}" if nv else "")
    expect = f"[{envs}, {nq}]" + (f" or [{envs}, {nq + nv}]" if nv else "")
    if a.ndim not in (1, 2) or a.shape[-1] not in (nq, nq + nv):
        raise InputError(f"the initial states have shape {list(a.shape)}, expected {expect} (--envs {envs}, "
                         f"the scene's {widths}; qpos then qvel per row)", where=where)
    if a.ndim == 2 and a.shape[0] != envs:
        raise InputError(f"the initial states have {a.shape[0]} rows, but the run has --envs {envs}: give one row "
                         f"per env, {expect}", where=where)
    a = np.broadcast_to(a.astype(np.float64), (envs, a.shape[-1]))
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        b, c = (int(x) for x in bad[0])
        what = f"qpos[{c}]" if c < nq else f"qvel[{c - nq}]"
        raise InputError(f"the initial state of env {b} has a non-finite {what} ({a[b, c]}); rigidsim does not "
                         f"start from a non-finite state", where=where)
    out = {"qpos": np.array(a[:, :nq])}
    if a.shape[1] == nq + nv and nv:
        out["qvel"] = np.array(a[:, nq:])
    return out


def _npy_kind(p: Path) -> str:
    """What a file that numpy cannot load as a .npy array holds instead, from its first bytes: '' when it
    starts as a .npy file does."""
    with open(p, "rb") as f:
        head = f.read(512)
    if head.startswith(b"\x93NUMPY"):
        return ""
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "a zip archive (an .npz file of numpy.savez holds several arrays, not one)"
    if head.startswith(b"\x80"):  # pickle protocols 2 and above
        return "a Python pickle, not a NumPy array file"
    if not head:
        return "empty"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "not a NumPy .npy file (unrecognised binary data)"
    if b"," in head or b"\t" in head:
        return "text (a CSV or other delimited table), not a NumPy .npy file"
    return "text, not a NumPy .npy file"


def load_npy(path: str | Path, what: str, where: str, shape: str = "") -> np.ndarray:
    """The array of a .npy file given by a command-line flag (`where`), or an InputError in one paragraph
    naming the flag and the file: missing (`what` says what it should hold), or not a .npy array of numbers
    (a CSV, a pickle, an .npz, an object array, a damaged file), saying what the file must be: a NumPy .npy
    array saved with numpy.save, of `shape` (e.g. '[nu], [N, nu] or [N, B, nu] with nu=2')."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} file not found: {p}", where=where)
    must = "it must be a NumPy .npy array of numbers saved with numpy.save(FILE, array)" + (
        f", of shape {shape}" if shape else "")
    try:
        kind = _npy_kind(p)
    except OSError as e:
        raise InputError(f"cannot read {p}: {e.strerror}", where=where) from None
    if kind:
        delim = ", delimiter=','" if "CSV" in kind else ""
        to = f"{p.stem}.npy" if p.suffix != ".npy" else "OUT.npy"
        convert = (f" (a table of numbers in text converts with numpy.save('{to}', numpy.loadtxt('{p}'"
                   f"{delim})))" if kind.startswith("text") else "")
        raise InputError(f"{p} is {kind}; {must}{convert}.", where=where)
    try:
        a = np.load(p, allow_pickle=False)
    except ValueError as e:
        if "allow_pickle" in str(e) or "pickle" in str(e):  # an object array: Python objects, not numbers
            raise InputError(f"{p} holds an array of Python objects (dtype object), not numbers; {must}.",
                             where=where) from None
        raise InputError(f"{p} is a damaged .npy file ({e}); {must}.", where=where) from None
    except Exception as e:  # numpy raises OSError/EOFError and others for a truncated or damaged file
        raise InputError(f"{p} is a damaged .npy file ({e}); {must}.", where=where) from None
    if not isinstance(a, np.ndarray):
        raise InputError(f"{p} is not a single NumPy array; {must}.", where=where)
    return a


def load_init(path: str | Path, model: M.Model, envs: int,
              array: Optional[np.ndarray] = None) -> Dict[str, np.ndarray]:
    """`--init FILE.npy`: per-env qpos, or qpos and qvel (`check_init`). `array`: the file's array, already
    read (a sweep's job); `path` then only names it in messages."""
    shape = f"[{envs}, {model.nq}]" + (f" or [{envs}, {model.nq + model.nv}]" if model.nv else "")
    if array is None:
        array = load_npy(path, "initial-state", "--init", f"{shape} (qpos, or qpos then qvel, per env)")
    return check_init(array, model, envs, where=f"--init {path}")


def quat_turn(q: np.ndarray, rotvec: np.ndarray) -> np.ndarray:
    """Unit quaternions (wxyz, [..., 4]) q * exp(rotvec / 2): q turned by the rotation vector `rotvec`
    ([..., 3]) in its own frame, normalised."""
    angle = np.linalg.norm(rotvec, axis=-1, keepdims=True)
    half = 0.5 * angle
    # sin(a/2)/a -> 1/2 as a -> 0
    s = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    dw, dv = np.cos(half)[..., 0], rotvec * s
    w, v = q[..., 0], q[..., 1:]
    ow = w * dw - np.sum(v * dv, axis=-1)
    ov = w[..., None] * dv + dw[..., None] * v + np.cross(v, dv)
    out = np.concatenate([ow[..., None], ov], axis=-1)
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def noise(rng: np.random.Generator, scale: float, shape, distribution: str) -> np.ndarray:
    """Samples of the reset noise: uniform on [-scale, scale] or normal with standard deviation scale."""
    if distribution == "normal":
        return rng.normal(0.0, 1.0, shape) * scale
    return rng.uniform(-1.0, 1.0, shape) * scale


def perturb(model: M.Model, qpos: np.ndarray, qvel: np.ndarray, qpos_noise: float, qvel_noise: float,
            distribution: str, seed) -> tuple:
    """(qpos, qvel) [B, nq], [B, nv] with the reset noise added (module docstring); the inputs are unchanged.
    `seed`: an int, or a numpy Generator to draw from (the Python API's, one per batch)."""
    qpos, qvel = np.array(qpos, dtype=np.float64), np.array(qvel, dtype=np.float64)
    if not (qpos_noise or qvel_noise):
        return qpos, qvel
    B, nv = qpos.shape[0], model.nv
    rng = np.random.default_rng(seed)  # a seed, or a Generator to draw on from
    dq = noise(rng, float(qpos_noise), (B, nv), distribution)
    dv = noise(rng, float(qvel_noise), (B, nv), distribution)
    for j in range(model.njnt):
        t, qa, da = int(model.jnt_type[j]), int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        if t in (M.JNT_HINGE, M.JNT_SLIDE):
            qpos[:, qa] += dq[:, da]
        elif t == M.JNT_BALL:
            qpos[:, qa:qa + 4] = quat_turn(qpos[:, qa:qa + 4], dq[:, da:da + 3])
        elif t == M.JNT_FREE:
            qpos[:, qa:qa + 3] += dq[:, da:da + 3]
            qpos[:, qa + 3:qa + 7] = quat_turn(qpos[:, qa + 3:qa + 7], dq[:, da + 3:da + 6])
    return qpos, qvel + dv


def initial_states(model: M.Model, options: Mapping[str, Any], envs: int, keyframe: Optional[str] = None,
                   init: Optional[Mapping[str, np.ndarray]] = None, seed=0) -> Dict[str, np.ndarray]:
    """Every env's initial state as [B, ...] arrays: qpos, qvel, act, ctrl (and mocap_pos, mocap_quat with
    mocap bodies), from the model or `keyframe`, then `init` (`check_init`'s dict), then the reset noise of
    the resolved `options` seeded with `seed`."""
    st = keyframe_state(model, keyframe)
    B = int(envs)
    qpos = np.broadcast_to(np.asarray(st.get("qpos", model.qpos0), np.float64), (B, model.nq))
    qvel = np.broadcast_to(np.asarray(st.get("qvel", np.zeros(model.nv)), np.float64), (B, model.nv))
    if init is not None:
        qpos = init["qpos"]
        if "qvel" in init:
            qvel = init["qvel"]
    qpos, qvel = perturb(model, qpos, qvel, options.get("init_qpos_noise", 0.0) or 0.0,
                         options.get("init_qvel_noise", 0.0) or 0.0,
                         options.get("init_noise_distribution", "uniform") or "uniform", seed)
    out = {"qpos": qpos, "qvel": qvel,
           "act": np.broadcast_to(np.asarray(st.get("act", np.zeros(model.na)), np.float64), (B, model.na)).copy(),
           "ctrl": np.broadcast_to(np.asarray(st.get("ctrl", np.zeros(model.nu)), np.float64), (B, model.nu)).copy()}
    for k in ("mocap_pos", "mocap_quat"):
        if k in st:
            out[k] = np.broadcast_to(st[k], (B,) + np.shape(st[k])).copy()
    return out
