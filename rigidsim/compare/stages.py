"""Run a scene in rigidsim and in MuJoCo from the same state and measure, stage by stage, how far they differ.

MuJoCo runs the scene `steps` times from the start state (--keyframe; by default keyframe 0 when the scene has
one, as the parity tests do, since qpos0 is often an equilibrium where nothing moves; else qpos0), its
options set to ours
(`model.set_mujoco_options`), its controls held. Its states s_0 .. s_N are the reference. Our side is checked:

1. model: our compile, options applied, against MuJoCo's (`model.compare_models`; the count of fields that
   differ, tolerance 0).
2. kinematics: xpos, xquat (up to sign) at s_0 .. s_N-1, each state set on our side: max |difference|,
   scaled by max(1, max |MuJoCo's value|), at 1e-9.
3. contacts at the same states: per state the same count and geom pairs; each of MuJoCo's contacts matched to
   our nearest contact of its geom pair (order-free); dist, pos and normal at 1e-9 (absolute).
4. constraint forces: qacc and qfrc_constraint after the forward pass (mj_forward) at the same states, at
   rtol 1e-6 relative to max(1, max |MuJoCo's value|): the solver's own tolerance bounds how close two
   converged solves agree.
5. one step, re-synchronised: at each state s_t our env steps once; max |qpos - MuJoCo's s_t+1 qpos| and the
   same for qvel, at 1e-8 (one step moves qpos by dt * qvel, so a 1e-6 relative acceleration error is far below).
6. free run: our env from s_0 for N steps on its own state; max |qpos - MuJoCo's| over the run at 1e-6 (the
   free-run tolerance of the parity tests: a chaotic scene, many bodies touching, legitimately grows past it
   over long runs).
7. and 8. sensors (a scene with sensors): sensordata after the forward pass at the same states, scaled as
   stage 2's, the position and velocity stages' sensors at 1e-9 (7), the acceleration stage's at 1e-6 (8).

With ``envs`` > 1 the free run is done in that many identical envs, and they must agree bit for bit (a check of
the batching). States 2-5 run as one batch (env t set to s_t, MuJoCo's warmstart included), in chunks that
bound the memory.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from rigidsim import options as opts
from rigidsim.compare.model import compare_models, model_from_mujoco, set_mujoco_options
from rigidsim.errors import InputError, SimulationError
from rigidsim.loaders import load_scene, resolve_scene
from rigidsim.reset import keyframe_state
from rigidsim.runner import check_supported

KIN_TOL = 1e-9
CONTACT_TOL = 1e-9
FORCE_RTOL = 1e-6
STEP_TOL = 1e-8
FREE_TOL = 1e-6
BATCH_BYTES = 1 << 28  # efc_J of one batch at most this large (a big scene runs its states in several launches)
MUJOCO_MISSING = "rigidsim compare needs the mujoco package: pip install 'rigidsim[mujoco]'"


@dataclasses.dataclass
class Stage:
    """One row of the report: `error` is the largest error measured (for `model`, the fields that differ)."""

    number: int
    name: str
    what: str
    error: float
    tol: float
    detail: str = ""  # where the largest error, or the first mismatch, is

    @property
    def ok(self) -> bool:
        return bool(self.error <= self.tol)  # NaN fails


@dataclasses.dataclass
class Comparison:
    scene: str
    steps: int
    envs: int
    compat: bool  # enable_mujoco_compatibility in force
    compat_default: bool  # compare set it (the user's options did not)
    start: str  # the start state, in words
    stages: List[Stage]
    notes: List[str]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)

    def first_failure(self) -> Optional[Stage]:
        return next((s for s in self.stages if not s.ok), None)


@dataclasses.dataclass
class CompareArgs:
    scene: str
    options: Optional[str] = None
    sets: Sequence[str] = ()
    steps: int = 100
    envs: int = 1
    keyframe: Optional[str] = None


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise InputError(MUJOCO_MISSING) from None
    return mujoco


def _scaled(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| / max(1, max |ref|): absolute for values of order one, relative for large ones."""
    return np.abs(got - ref) / max(1.0, float(np.abs(ref).max(initial=0.0)))


def _quat_err(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per quaternion (last axis 4) the max |difference| up to sign (q and -q are the same rotation)."""
    return np.minimum(np.abs(got - ref).max(-1), np.abs(got + ref).max(-1))


class _Worst:
    """The largest error seen and where."""

    def __init__(self):
        self.err, self.where = 0.0, ""

    def see(self, err: float, where: str) -> None:
        if not err <= self.err:  # NaN wins
            self.err, self.where = float(err), where


def mujoco_run(mujoco, mjm, start: Dict[str, np.ndarray], nstep: int):
    """MuJoCo from `start`: states s_0 .. s_nstep (each with the warmstart and time MuJoCo stepped from),
    mj_forward's results at s_0 .. s_nstep-1, and the warnings MuJoCo raised (`mujoco_warnings`). A MuJoCo
    error (mju_error) is a SimulationError naming the step."""
    d = mujoco.MjData(mjm)
    mujoco.mj_resetData(mjm, d)
    for k, v in start.items():
        getattr(d, k)[:] = v
    states, results = [], []

    def state():
        return {"qpos": d.qpos.copy(), "qvel": d.qvel.copy(), "act": d.act.copy(), "ctrl": d.ctrl.copy(),
                "mocap_pos": d.mocap_pos.copy(), "mocap_quat": d.mocap_quat.copy(), "eq_active": d.eq_active.copy(),
                "qacc_warmstart": d.qacc_warmstart.copy(), "time": float(d.time), "history": d.history.copy()}

    for t in range(nstep):
        states.append(state())
        try:
            _mujoco_step(mujoco, mjm, d, results)
        except mujoco.FatalError as e:  # mju_error: MuJoCo cannot go on (e.g. a buffer it cannot grow)
            raise SimulationError(f"MuJoCo stopped with an error at step {t}: {' '.join(str(e).split())}",
                                  step=t) from None
    states.append(state())
    return states, results, mujoco_warnings(mujoco, d)


def mujoco_warnings(mujoco, d) -> List[str]:
    """MuJoCo's warnings raised during its run ('mjWARN_BADQACC x3'): a run MuJoCo itself reset or clamped."""
    out = []
    for name, w in mujoco.mjtWarning.__members__.items():
        if int(w) < len(d.warning) and int(d.warning[int(w)].number) > 0:
            out.append(f"{name} x{int(d.warning[int(w)].number)}")
    return out


def _mujoco_step(mujoco, mjm, d, results) -> None:
    """mj_forward at the current state (its results appended), then mj_step."""
    mujoco.mj_forward(mjm, d)
    n = int(d.ncon)
    con = d.contact
    results.append({"xpos": d.xpos.copy(), "xquat": d.xquat.copy(), "qacc": d.qacc.copy(),
                    "qfrc_constraint": d.qfrc_constraint.copy(), "ncon": n, "sensordata": d.sensordata.copy(),
                    "geom": np.array(con.geom[:n]).reshape(-1, 2), "dist": np.array(con.dist[:n]),
                    "pos": np.array(con.pos[:n]).reshape(-1, 3),
                    "normal": np.array(con.frame[:n]).reshape(-1, 9)[:, :3]})
    mujoco.mj_step(mjm, d)


def set_states(sim, states: List[Dict[str, Any]]) -> None:
    """Env b of `sim` takes states[b]: MuJoCo's state, solver warmstart, time and history buffers included."""
    from rigidsim.engine import layout as L

    m = sim.model
    stack = {k: np.array([s[k] for s in states]) for k in states[0]}
    kw = {k: stack[k] for k in ("qpos", "qvel", "act", "ctrl")}
    if m.nmocap:
        kw["mocap_pos"], kw["mocap_quat"] = stack["mocap_pos"], stack["mocap_quat"]
    sim.reset(**kw)
    d = sim._d  # the CPU backend's host arrays, which the kernels read: reset has no argument for these
    d["dof"][:, :m.nv, L.QACC_WARMSTART] = stack["qacc_warmstart"]
    if m.neq:
        d["eq_active"][:, :m.neq] = stack["eq_active"]
    d["time"][:] = stack["time"]
    if m.nhistory and "history" in stack:  # the history sensors' buffers (MuJoCo's own, actuators' none)
        d["history"][:, :m.nhistory] = stack["history"]


def _match_contacts(ours: Dict[str, np.ndarray], ref: Dict[str, Any]) -> Optional[np.ndarray]:
    """For each of MuJoCo's contacts the index of our nearest contact of the same geom pair, or None when the
    geom pairs (as multisets) differ."""
    og, rg = ours["geom"], ref["geom"]
    if sorted(map(tuple, og.tolist())) != sorted(map(tuple, rg.tolist())):
        return None
    left = list(range(len(og)))
    out = np.empty(len(rg), np.int64)
    for j in range(len(rg)):
        cands = [k for k in left if og[k, 0] == rg[j, 0] and og[k, 1] == rg[j, 1]]
        k = min(cands, key=lambda k: float(np.linalg.norm(ours["pos"][k] - ref["pos"][j])))
        left.remove(k)
        out[j] = k
    return out


def _prepare(a: CompareArgs):
    if a.steps < 1:
        raise InputError(f"--steps must be at least 1, got {a.steps}", where="--steps")
    if a.envs < 1:
        raise InputError(f"--envs must be at least 1, got {a.envs}", where="--envs")
    mujoco = _mujoco()
    scene_model = load_scene(a.scene)
    path = resolve_scene(a.scene)
    try:
        mjm = mujoco.MjModel.from_xml_path(str(path))
    except Exception as e:  # mujoco raises ValueError with its compiler's message
        msg = " ".join(str(e).split())
        raise InputError(f"MuJoCo cannot load this scene, so there is nothing to compare with: {msg}",
                         where=str(path)) from None
    file_opts = opts.load_yaml(a.options) if a.options else {}
    set_opts = opts.parse_set(a.sets)
    compat_default = "enable_mujoco_compatibility" not in {**file_opts, **set_opts}
    if compat_default:
        set_opts["enable_mujoco_compatibility"] = True
    resolved = opts.resolve(scene_model, file_opts, set_opts)
    check_supported(scene_model, resolved)
    ours = opts.apply(scene_model, resolved)
    keyframe = a.keyframe if a.keyframe is not None else ("0" if ours.nkey else None)
    start = keyframe_state(ours, keyframe)
    if keyframe is None:
        where = "qpos0 (the scene has no keyframe)"
    else:
        k = ours.names["key"].index(keyframe) if keyframe in ours.names["key"] else int(keyframe)
        name = ours.names["key"][k]
        where = f"keyframe {k}" + (f" '{name}'" if name else "")
    return mujoco, mjm, ours, resolved, start, compat_default, where


def compare(a: CompareArgs) -> Comparison:
    """Every stage of the comparison (module docstring); InputError for bad arguments or a missing mujoco."""
    with np.errstate(all="ignore"):
        return _compare(a)


def _compare(a: CompareArgs) -> Comparison:
    mujoco, mjm, ours, resolved, start, compat_default, where = _prepare(a)
    notes = [f"not honoured by rigidsim: {n}" for n in opts.not_honoured(resolved)]
    notes += set_mujoco_options(mjm, ours.opt)
    stages = [_model_stage(ours, mjm)]

    from rigidsim.engine.simulator import Simulator

    states, results, warned = mujoco_run(mujoco, mjm, start, a.steps)
    if warned:
        notes.append("MuJoCo raised warnings during its run (" + ", ".join(warned) + "): it may have reset or "
                     "clamped its own state, which the stages then compare against")
    n = a.steps
    if all(np.array_equal(s["qpos"], states[0]["qpos"]) and not s["qvel"].any() for s in states):
        notes.append("MuJoCo's run stays at its start state (an equilibrium): the dynamics stages compare a "
                     "scene at rest; a keyframe (--keyframe) that moves checks more")
    probe = Simulator(ours, 1, pair_options=resolved)
    per_env = max(probe.nefcmax, 1) * max(ours.nv, 1) * 8
    B = int(max(1, min(n, BATCH_BYTES // per_env)))
    sim = probe if B == 1 else Simulator(ours, B, pair_options=resolved)
    kin, con, frc, one = _Worst(), _Worst(), _Worst(), _Worst()
    from rigidsim.engine.sensor import not_computed, why_not_computed

    missing = not_computed(ours)
    sensing = bool(ours.nsensor) and not missing
    if missing:
        notes.append(f"sensors not compared: rigidsim does not compute {why_not_computed(ours, missing)} yet: "
                     + ", ".join(ours.names["sensor"][i] or f"#{i}" for i in missing[:3])
                     + ("..." if len(missing) > 3 else ""))
    sens = {1: _Worst(), 3: _Worst()}  # position and velocity stages together, then acceleration
    has_contacts = bool(sim.npair) and bool(sim.nconmax)
    ncon_total = sum(r["ncon"] for r in results[:n])
    for t0 in range(0, n, B):
        batch = states[t0:min(t0 + B, n)]
        pad = batch + [batch[-1]] * (B - len(batch))  # the trailing envs repeat the last state
        set_states(sim, pad)
        sim.forward()
        got = {k: sim.get(k) for k in ("xpos", "xquat", "qacc")}
        sd = sim.sensordata() if sensing else None
        cons = sim.contacts() if has_contacts else None
        offs = np.concatenate([[0], np.cumsum(cons["count"])]) if has_contacts else None
        for b in range(len(batch)):
            t, ref = t0 + b, results[t0 + b]
            kin.see(float(_scaled(got["xpos"][b], ref["xpos"]).max(initial=0.0)), f"xpos at state {t}")
            kin.see(float(_quat_err(got["xquat"][b], ref["xquat"]).max(initial=0.0)), f"xquat at state {t}")
            _contact_errors(con, cons, offs, b, t, ref)
            frc.see(float(_scaled(got["qacc"][b], ref["qacc"]).max(initial=0.0)), f"qacc at state {t}")
            qfrc = np.zeros(ours.nv)
            if sim.nefcmax:
                c = sim.constraints(b)
                qfrc = c["efc_J"].T @ c["efc_force"]
            frc.see(float(_scaled(qfrc, ref["qfrc_constraint"]).max(initial=0.0)), f"qfrc_constraint at state {t}")
            if sensing:
                _sensor_errors(ours, sens, sd[b], ref["sensordata"], t)
        set_states(sim, pad)
        sim.step(1)
        qpos, qvel = sim.get("qpos"), sim.get("qvel")
        for b in range(len(batch)):
            t = t0 + b
            nxt = states[t + 1]
            one.see(float(np.abs(qpos[b] - nxt["qpos"]).max(initial=0.0)), f"qpos after step {t}")
            one.see(float(np.abs(qvel[b] - nxt["qvel"]).max(initial=0.0)), f"qvel after step {t}")
    stages.append(Stage(2, "kinematics", f"xpos, xquat at {n} states of MuJoCo's run", kin.err, KIN_TOL, kin.where))
    stages.append(Stage(3, "contacts", f"count, geom pairs, dist, pos, normal at {n} states, order-free "
                        f"({ncon_total} MuJoCo contacts)",
                        con.err, CONTACT_TOL, con.where if has_contacts else "the scene has no collision pairs"))
    stages.append(Stage(4, "constraint forces", f"qacc, qfrc_constraint after the forward pass, {n} states",
                        frc.err, FORCE_RTOL, frc.where))
    stages.append(Stage(5, "one step", f"qpos, qvel after one step from each of {n} states (re-synchronised)",
                        one.err, STEP_TOL, one.where))
    stages.append(_free_run(ours, resolved, start, states, a.envs))
    if sensing:
        stages.append(Stage(7, "sensors: position, velocity", f"sensordata of those stages at {n} states",
                            sens[1].err, KIN_TOL, sens[1].where))
        stages.append(Stage(8, "sensors: acceleration", f"sensordata of the acceleration stage at {n} states",
                            sens[3].err, FORCE_RTOL, sens[3].where))
    return Comparison(scene=a.scene, steps=n, envs=a.envs, compat=bool(resolved["enable_mujoco_compatibility"]),
                      compat_default=compat_default, start=where, stages=stages, notes=notes)


def _sensor_errors(model, sens: Dict[int, _Worst], got: np.ndarray, ref: np.ndarray, t: int) -> None:
    """Fold each sensor's scaled error at state t into sens[1] (position, velocity stages) or sens[3]."""
    for i in range(model.nsensor):
        a, n = int(model.sensor_adr[i]), int(model.sensor_dim[i])
        stage = 3 if int(model.sensor_needstage[i]) == 3 else 1
        name = model.names["sensor"][i] or f"#{i}"
        sens[stage].see(float(_scaled(got[a:a + n], ref[a:a + n]).max(initial=0.0)), f"sensor {name} at state {t}")


def _model_stage(ours, mjm) -> Stage:
    bad = compare_models(ours, model_from_mujoco(mjm))
    detail = bad[0] + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "") if bad else ""
    return Stage(1, "model", "compiled model, field by field (options applied)", float(len(bad)), 0.0, detail)


def _contact_errors(w: _Worst, cons, offs, b: int, t: int, ref: Dict[str, Any]) -> None:
    """Fold env b's contacts (of the batch's `cons`) against MuJoCo's at state t into `w`."""
    n = int(cons["count"][b]) if cons is not None else 0
    if n != ref["ncon"]:
        w.see(float("inf"), f"state {t}: {n} contacts, MuJoCo {ref['ncon']}")
        return
    if n == 0:
        return
    sl = slice(offs[b], offs[b + 1])
    mine = {"geom": cons["geom"][sl], "pos": cons["pos"][sl], "dist": cons["dist"][sl],
            "normal": cons["frame"][sl][:, 0, :]}
    k = _match_contacts(mine, ref)
    if k is None:
        w.see(float("inf"), f"state {t}: the contacts' geom pairs differ")
        return
    for name in ("dist", "pos", "normal"):
        w.see(float(np.abs(mine[name][k] - ref[name]).max(initial=0.0)), f"contact {name} at state {t}")


def _free_run(ours, resolved, start, states, envs: int) -> Stage:
    from rigidsim.engine.simulator import Simulator

    n = len(states) - 1
    sim = Simulator(ours, envs, pair_options=resolved)
    sim.reset(**{k: np.asarray(v) for k, v in start.items()})
    qpos = []
    for _, block in sim.rollout_blocks(n):
        qpos.append(sim.fields(block)["qpos"].copy())  # the block is a view, reused by the next launch
    q = np.concatenate(qpos)  # [frames, B, nq], frame 0 the start
    ref = np.array([s["qpos"] for s in states])
    w = _Worst()
    diff = np.abs(q[:, 0] - ref).max(axis=1, initial=0.0)
    t = int(np.argmax(diff))
    w.see(float(diff[t]), f"qpos at step {t}")
    what = f"qpos over {n} steps, each side on its own state"
    if envs > 1:
        what += f"; {envs} envs bit-identical"
        same = np.array_equal(q, np.broadcast_to(q[:, :1], q.shape))
        if not same:
            w.see(float("inf"), f"the {envs} envs differ from each other (they started from the same state)")
    return Stage(6, "free run", what, w.err, FREE_TOL, w.where)
