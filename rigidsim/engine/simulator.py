"""The public engine API: a batch of envs of one scene, stepped by Taichi kernels.

    sim = Simulator(model, n_envs, precision=64, backend="cpu")
    sim.reset(qpos=None, qvel=None, act=None, ctrl=None, mocap_pos=None, mocap_quat=None)
    sim.forward()
    sim.step(nstep=1, ctrl=None)
    sim.get("xpos")                      # [B, nbody, 3], a copy
    for frame in sim.rollout(nstep, every=1, ctrl=None): ...
    for steps, block in sim.rollout_blocks(nstep, every=1, ctrl=None): sim.fields(block)

Each env evolves exactly as a single-env run with the same start and
controls: envs share nothing, and each is advanced serially inside one
kernel thread. `rollout_blocks` runs chunks of steps per launch and hands
over the frames of each launch as one block of the in-kernel buffer
([frames, B, width], no per-frame Python); `rollout` splits them into
per-frame dicts. The last frame is the final state even when `every` does
not divide `nstep`; an env whose state turns non-finite stops, the
frames finished before the failure are yielded, then `SimulationError`
names the step and env.
"""

from __future__ import annotations

import time
from typing import Dict, Iterator, Optional, Tuple

import numpy as np

from rigidsim.engine import data as D
from rigidsim.engine import lang
from rigidsim.engine import layout as L
from rigidsim.engine import runtime
from rigidsim.errors import SimulationError
from rigidsim.model import Model

_KIND = {1: "qpos", 2: "qvel", 3: "qacc"}
FRAME_BUDGET_BYTES = 32 << 20  # in-kernel frame buffer per rollout chunk
CONTACT_BUDGET_BYTES = 64 << 20  # the contact pool a launch aims to fill at most (it grows past it when a
#                                  single frame needs more)
STEP_CHUNK = 4096
CONTACTS_START = 64  # max_contacts null: the contact capacity to start with (at least 2 per geom), then grown
# reset: a batch whose Data arrays take at most this many bytes is reset in place (zeroed and refilled), so
# that the arrays keep their identity and the next launch finds its argument context cached; rebuilding that
# context costs ~0.5 ms (cheetah, B = 1), about what clearing 2 MiB costs. Larger batches get new (lazily
# zeroed) arrays: clearing reserved capacity that an env never touches would cost more than the rebuild.
RESET_IN_PLACE_BYTES = 2 << 20
# a control sequence of at most this many bytes is copied into an array kept from call to call (same reason)
CTRL_KEPT_BYTES = 4 << 20
LAUNCH_SECONDS = 0.2  # rollout: aim for launches of about this long
# rollout: once a step's time is known, a launch window is at least STEPS_HOT steps, in slices of the batch
# (`_slices`) when the whole batch would take longer than LAUNCH_SECONDS. An env does all of a launch's steps
# one after another, and its arrays (hundreds of KB in a pile) stay in the core's cache from one step to the
# next; a whole batch of 1024 piles is ~0.15 s a step on 2 cores, so launches of the whole batch were 1-2
# steps long and every step began with its env's arrays out of cache
STEPS_HOT = 16
WINDOW_SECONDS = 2.0  # ... but no longer than this: a first Ctrl-C and the progress line wait for a window
SLICE_ENVS_PER_THREAD = 64  # a slice gives each thread at least this many envs (the idle tail of a slice,
#                             when threads run out of envs at different times, stays ~1% of it)


class Simulator:
    def __init__(self, model: Model, n_envs: int, precision: int = 64, backend: str = "cpu",
                 kinematics_only: bool = False, pair_options=None, stage: Optional[int] = None):
        # kinematics_only: the caller reads positions alone (xpos, xquat, ...), which every model supports;
        # forces and accelerations of features the engine refuses would be wrong, so they must not be read.
        # stage: parts of the constraint stage to compile in beyond the scene's own (a `constraint.stage`
        # mask, e.g. `wide_stage(kinds)`): scenes and options that fit it share one compiled kernel
        if not kinematics_only:
            D.check_supported(model)
        if int(n_envs) < 1:
            raise ValueError(f"n_envs must be at least 1, not {n_envs}")
        runtime.init(precision, backend)
        from rigidsim.engine import kernels  # after ti.init: kernels read default_fp when compiled

        self._k = kernels
        self.model = model
        self.n_envs = int(n_envs)
        self.precision = precision
        self.backend = backend
        self.integrator = D.integrator_of(model)
        self.dtype = np.float64 if precision == 64 else np.float32
        self._r = pair_options  # the resolved options (collision pairs, contact capacity), or None: defaults
        self._sizes = D.array_sizes(model, pair_options)  # reset() allocates from it
        # max_contacts null: the contact capacity starts at what a scene of this size usually needs and grows
        # when an env finds more (it pauses, the buffers grow, the step is done again: nothing is dropped), up to
        # what every candidate pair can produce together. RK4's stages carry state within a step: it gets
        # that most from the start.
        start = min(self._sizes["nconall"], max(CONTACTS_START, 2 * model.ngeom))
        self._grow = ((pair_options or {}).get("max_contacts") is None and self.integrator != L.INT_RK4
                      and start < self._sizes["nconall"])
        r = pair_options
        if self._grow:
            r = {**(pair_options or {}), "max_contacts": start}
            self._sizes = D.array_sizes(model, r)
        mp = D.put_model(model, self.dtype, r)
        self.npair = int(mp["opt_i"][L.SZ_NPAIR])
        from rigidsim.engine.collision.params import MIDPHASE_BIT, SAP_BIT, kinds_of

        # the colliders this scene's pairs use: the collision kernel is compiled with those alone
        self._kinds = kinds_of(mp["pair_i"][:self.npair, L.PAIR_COLLIDER])
        has_pairs = self._kinds != 0
        if self.npair and mp["opt_i"][L.OPT_SAP]:
            self._kinds |= SAP_BIT  # sweep-and-prune compiled in only when the options ask for it
        if has_pairs and (mp["pair_i"][:self.npair, L.PAIR_BVHNUM] >= 0).any():
            self._kinds |= MIDPHASE_BIT  # MuJoCo's midphase box test, for the scenes with rows it takes
        # a scene that can have constraint rows runs the constraint stage in its forward passes, compiled for
        # its colliders and the solver parts its options use
        self.nefcmax = int(mp["opt_i"][L.SZ_NEFCMAX])
        if self.nefcmax:
            from rigidsim.engine.constraint.instantiate import rows_of
            from rigidsim.engine.constraint.stage import stage_mask
            from rigidsim.engine.solver.variant import variant_of

            self._cfg = stage_mask(self._kinds, variant_of(model), rows_of(model, has_pairs))
            if stage is not None:
                # more than the scene needs compiled in: one kernel serves many scenes and options (colliders,
                # rows and solver parts are then chosen at run time)
                self._cfg |= int(stage)
        # kernels take every packed array flattened to 1-D (see `groups._Flat`)
        self._m = tuple(self._dev(np.ascontiguousarray(mp[k]).reshape(-1)) for k in L.MODEL_ARGS)
        self._opt_i = np.array(mp["opt_i"]).reshape(-1)  # the host's copy (`_grow_contacts` changes sizes in it)
        self._set_layout(False)
        self._nodata = self._dev(np.zeros((1, 1, 1), self.dtype))
        self._noctrl = self._dev(np.zeros((1, 1, max(model.nu, 1)), self.dtype))
        self._ctrl_row = self._ctrl_seq = None  # see _controls
        self._launch_host = np.zeros(L.NLAUNCH, np.int32)  # see _launch
        self._launch_host[L.LAUNCH_CANARY] = 2
        self._launch_steps = lang.LAUNCH_STEPS_MAX or STEP_CHUNK  # steps a launch takes at most
        # the env loop's compile-time length on a device, 0 on the CPU (`lang.env_begin`)
        self._nenv = 0 if backend == "cpu" else lang.device_envs(self.n_envs)
        self._launch_i = self._launch_host if backend == "cpu" else self._dev(self._launch_host)
        self._step_seconds = None  # a rollout step's wall time, as the last long enough launch timed it
        self._frames = []  # the rollouts' frame buffers, kept from call to call (`_frame_buffer`)
        self._crec = self._dev(np.zeros((1, L.NCREC), self.dtype))  # the contact pool (`_launch_recorded`)
        self._crec_host = self._host(self._crec)
        self.reset()

    def _set_layout(self, contacts: bool, sensors: bool = False) -> None:
        """The frame layout of rollouts: with the constraint fields in a scene with constraints, its contacts
        when `contacts`, and its sensordata when `sensors` (and it has sensors)."""
        m = self.model
        self._rec_contacts = bool(contacts and self.nefcmax and self.npair)
        from rigidsim.engine import sensor

        # recording sensordata: every group the sensors need; else those of the history sensors, whose buffers
        # advance every step whether recorded or not (none when one of them is not computed)
        if sensors and m.nsensor:
            self._sensing = self._sensor_mask() | sensor.G_RECORD
        else:
            self._sensing = sensor.mask_of(m, history_only=True) if m.nhistory and not sensor.not_computed(m) else 0
        self._layout, self._fwidth = L.frame_layout(m.nq, m.nv, m.nu, m.na, m.nbody, bool(self.nefcmax),
                                                    self._rec_contacts,
                                                    m.nsensordata if self._sensing & sensor.G_RECORD else 0)

    def _sensor_mask(self) -> int:
        """The sensor groups the scene's sensors need (`sensor.mask_of`); ValueError for a sensor the engine does
        not compute."""
        from rigidsim.engine import sensor

        missing = sensor.not_computed(self.model)
        if missing:
            names = [self.model.names["sensor"][i] or f"#{i}" for i in missing]
            raise ValueError(f"sensors not computed yet: {', '.join(names)}")
        return sensor.mask_of(self.model)

    def sensordata(self) -> np.ndarray:
        """[B, nsensordata]: every env's sensordata at the state its last forward pass (`forward`) left, as
        MuJoCo's mj_forward computes it."""
        n = max(self.model.nsensordata, 1)
        out = self._dev(np.zeros((1, self.n_envs, n), self.dtype))
        if self.model.nsensor:
            self._k.sensor_kernel(*self._m, *self._dargs(), self._sensor_mask(), out)
        return self._host(out)[0, :, :self.model.nsensordata].copy()

    # ------------------------------------------------------------------ device arrays
    def _dev(self, a: np.ndarray):
        a = np.ascontiguousarray(a)
        if self.backend == "cpu":
            return a
        from rigidsim.engine.lang import ti

        dt = {np.dtype(np.float64): ti.f64, np.dtype(np.float32): ti.f32, np.dtype(np.int32): ti.i32}[a.dtype]
        out = ti.ndarray(dt, a.shape)
        out.from_numpy(a)
        return out

    def _host(self, a) -> np.ndarray:
        return a if isinstance(a, np.ndarray) else a.to_numpy()

    def _dargs(self):
        return self._dflat

    def _host_data(self) -> Dict[str, np.ndarray]:
        return {k: self._host(v).reshape(self._dshape[k]) for k, v in self._d.items()}

    # ------------------------------------------------------------------ state
    def _bcast(self, x, n: int, tail=()) -> np.ndarray:
        a = np.asarray(x, dtype=self.dtype)
        shape = (self.n_envs, max(n, 1)) + tail
        out = np.zeros(shape, self.dtype)
        if n:
            out[:, :n] = np.broadcast_to(a, (self.n_envs, n) + tail)
        return out

    def reset(self, qpos=None, qvel=None, act=None, ctrl=None, mocap_pos=None, mocap_quat=None, time=None) -> None:
        """Set the state of every env (each argument broadcast to [B, ...]); time = 0, or `time` ([B] or one
        value)."""
        m = self.model
        d = D.make_data(m, self.n_envs, self.dtype, sizes=self._sizes)
        self.nconmax = d["contact"].shape[1] if m.nbody and self.npair else 0
        d["qpos"] = self._bcast(m.qpos0 if qpos is None else qpos, m.nq)
        d["qvel"] = self._bcast(0.0 if qvel is None else qvel, m.nv)
        d["act"] = self._bcast(0.0 if act is None else act, m.na)
        d["ctrl"] = self._bcast(0.0 if ctrl is None else ctrl, m.nu)
        mocap_bodies = np.flatnonzero(m.body_mocapid >= 0)
        order = mocap_bodies[np.argsort(m.body_mocapid[mocap_bodies])]
        d["mocap_pos"] = self._bcast(m.body_pos[order] if mocap_pos is None else mocap_pos, m.nmocap, (3,))
        d["mocap_quat"] = self._bcast(m.body_quat[order] if mocap_quat is None else mocap_quat, m.nmocap, (4,))
        if m.nhistory:
            d["history"] = self._bcast(D.history_init(m), m.nhistory)
        if time is not None:
            d["time"] = np.broadcast_to(np.asarray(time, self.dtype).reshape((-1,) + (1,) * (d["time"].ndim - 1)),
                                        d["time"].shape).copy()
        # the kernels take each array flattened to 1-D: on the CPU a view of the [B, ...] array held here
        self._dshape = {k: v.shape for k, v in d.items()}
        old = getattr(self, "_d", None)
        if (self.backend == "cpu" and old is not None and all(old[k].shape == v.shape for k, v in d.items())
                and sum(v.nbytes for v in old.values()) <= RESET_IN_PLACE_BYTES):
            for k, v in d.items():  # in place: the arrays (and the launches' cached contexts) are kept
                np.copyto(old[k], v)
            self._status[...] = 0
        elif self.backend == "cpu":
            self._d = {k: np.ascontiguousarray(v) for k, v in d.items()}
            self._dflat = tuple(self._d[k].reshape(-1) for k in L.DATA_ARGS)
            self._status = np.zeros((self.n_envs, L.NSTATUS), np.int32)
        else:
            self._d = {k: self._dev(v.reshape(-1)) for k, v in d.items()}
            self._dflat = tuple(self._d[k] for k in L.DATA_ARGS)
            self._status = self._dev(np.zeros((self.n_envs, L.NSTATUS), np.int32))

    # ------------------------------------------------------------------ stages
    def kinematics(self) -> None:
        """mj_kinematics at the current state (the stage tests' entry point)."""
        self._k.kinematics_kernel(*self._m, *self._dargs())

    def forward(self, reps: int = 1) -> None:
        """mj_forward at the current state, no integration (with `reps` > 1 the same pass that many times over in
        each env, for timing it: benchmarks/bench_stages.py)."""
        # only approximate_implicitfast changes the forward pass: one compiled variant for the others
        variant = self.integrator if self.integrator == L.INT_APPROX_IMPLICITFAST else L.INT_EULER
        if self.nefcmax:
            from rigidsim.engine.constraint.kernel import constraint_forward_kernel  # constraint scenes only

            constraint_forward_kernel(*self._m, *self._dargs(), variant, self._cfg, int(reps))
            while self._room():  # the capacity grew: the pass again, with room for every contact
                constraint_forward_kernel(*self._m, *self._dargs(), variant, self._cfg, int(reps))
            self._check_contacts()
        else:
            self._k.forward_kernel(*self._m, *self._dargs(), variant, int(reps))

    def collide(self) -> None:
        """mj_kinematics and mj_collision at the current state: the contacts of every env (`contacts`)."""
        self._collide_launch()
        while self._room():
            self._collide_launch()
        self._check_contacts()

    def _room(self) -> bool:
        """After a pass while the contact capacity grows: True when some env found more contacts than it holds
        (the capacity has grown for them; the pass must be done again), else False."""
        if not self._grow:
            return False
        h = self._d if self.backend == "cpu" else self._host_data()
        need = int(np.asarray(h["ncon"]).max(initial=0))
        if need <= self.nconmax:
            return False
        self._grow_contacts(need)
        return True

    def _collide_launch(self) -> None:
        from rigidsim.engine.collision.kernel import collision_kernel  # only scenes with contacts load it

        collision_kernel(*self._m, *self._dargs(), self.nconmax, self._kinds)

    def _check_contacts(self, step: int = 0) -> None:
        """SimulationError when an env found more contacts than the buffer holds, or more broadphase pairs
        than max_collision_pairs allows: nothing is dropped in silence."""
        h = self._d if self.backend == "cpu" else self._host_data()
        ncon, nbroad = np.asarray(h["ncon"]).reshape(-1), np.asarray(h["nbroad"]).reshape(-1)
        over = np.flatnonzero(ncon > self.nconmax)
        if over.size:
            b = int(over[0])
            raise SimulationError(
                f"env {b} found {int(ncon[b])} contacts at step {step}, more than max_contacts={self.nconmax} "
                f"holds; raise max_contacts (--set max_contacts=N, or null to let it grow as needed)",
                step=step, env=b)
        cap = (self._r or {}).get("max_collision_pairs")
        if cap is not None:
            over = np.flatnonzero(nbroad > int(cap))
            if over.size:
                b = int(over[0])
                raise SimulationError(
                    f"env {b} has {int(nbroad[b])} geom pairs in the broadphase at step {step}, more than "
                    f"max_collision_pairs={int(cap)}; raise max_collision_pairs (--set max_collision_pairs=N)",
                    step=step, env=b)

    def contacts(self) -> Dict[str, np.ndarray]:
        """The contacts found by the last `collide`, every env's in order: 'count' [B] and, over all of
        them, 'geom' [K, 2], 'pair' [K], 'dist' [K], 'pos' [K, 3], 'frame' [K, 3, 3] (row 0 the normal from
        geom 0 to geom 1)."""
        h = self._d if self.backend == "cpu" else self._host_data()
        count = np.minimum(np.asarray(h["ncon"]).reshape(-1), self.nconmax).astype(np.int64)
        rows = np.arange(max(self.nconmax, 1))[None, :] < count[:, None]  # [B, rows]: env by env, in order
        c = h["contact"].reshape(self.n_envs, -1, L.NDCON)[rows]
        ci = h["contact_i"].reshape(self.n_envs, -1, L.NDCON_I)[rows]
        return {"count": count, "geom": ci[:, L.CON_GEOM1:L.CON_GEOM2 + 1].copy(), "pair": ci[:, L.CON_PAIR].copy(),
                "dist": c[:, L.CON_DIST].copy(), "pos": c[:, L.CON_POS:L.CON_POS + 3].copy(),
                "frame": c[:, L.CON_FRAME:L.CON_FRAME + 9].reshape(-1, 3, 3).copy()}

    def constraints(self, env: int = 0) -> Dict[str, np.ndarray]:
        """The constraint rows of env `env` after `forward`: MuJoCo's efc_* by name ('efc_J' [nefc, nv],
        'efc_type', 'efc_id', 'efc_pos', 'efc_margin', 'efc_frictionloss', 'efc_diagA', 'efc_R', 'efc_D',
        'efc_vel', 'efc_aref', 'efc_force', 'efc_state', ...) and the counts 'ne', 'nf', 'nl', 'nefc'."""
        h = self._d if self.backend == "cpu" else self._host_data()
        n = h["efc_n"].reshape(self.n_envs, -1)[env]
        nefc = int(n[L.EFCN_NEFC])
        f = h["efc"].reshape(self.n_envs, -1, L.NDEFC)[env, :nefc]
        i = h["efc_i"].reshape(self.n_envs, -1, L.NDEFC_I)[env, :nefc]
        out = {"efc_J": D.dense_efc_J(h["efc_J"].reshape(self.n_envs, -1)[env], i, nefc, self.model.nv),
               "ne": int(n[L.EFCN_NE]), "nf": int(n[L.EFCN_NF]), "nl": int(n[L.EFCN_NL]), "nefc": nefc,
               "solver_niter": int(n[L.EFCN_NITER]), "converged": int(n[L.EFCN_CONVERGED])}
        for name in ("pos", "margin", "frictionloss", "diagA", "R", "D", "aref", "vel", "force", "mu", "friction"):
            out["efc_" + name] = f[:, getattr(L, "EFC_" + name.upper())].copy()
        for name in ("type", "id", "state"):
            out["efc_" + name] = i[:, getattr(L, "EFC_" + name.upper())].copy()
        return out

    def get(self, name: str) -> np.ndarray:
        """Data field `name` of every env as numpy [B, ...] (a copy); 'qM' is the dense [B, nv, nv] matrix."""
        return D.extract(self.model, self._host_data() if self.backend != "cpu" else self._d, name)

    # ------------------------------------------------------------------ stepping
    def _ctrl_rows(self, ctrl, nstep: int) -> Optional[np.ndarray]:
        """ctrl as a contiguous [N, B or 1, nu] array (N = nstep or 1), or None."""
        if ctrl is None:
            return None
        nu = self.model.nu
        c = np.asarray(ctrl, dtype=self.dtype)
        if c.ndim == 1:
            c = c[None, None, :]
        elif c.ndim == 2:
            c = c[:, None, :]
        if c.ndim != 3 or c.shape[2] != nu or c.shape[0] not in (1, nstep) or c.shape[1] not in (1, self.n_envs):
            raise ValueError(f"ctrl must have shape [{nstep} or 1, {self.n_envs} or 1, {nu}], not {np.shape(ctrl)}")
        if nu == 0:
            return None
        return np.ascontiguousarray(c)

    def _controls(self, ctrl):
        """(array, use) for the kernels' ctrl_seq from `_ctrl_rows`'s ctrl: the whole sequence of the call (the
        kernel reads row s0 + s), the same array object for every launch of the call."""
        if ctrl is None or ctrl.shape[0] == 0:
            return self._noctrl, 0
        if ctrl.shape[0] == 1 and self.backend == "cpu":
            # one control row (the step-at-a-time loop): copied into an array kept from call to call, so
            # that the launch reuses its cached argument context (`lang._cached_host_array_launches`)
            if self._ctrl_row is None or self._ctrl_row.shape != ctrl.shape:
                self._ctrl_row = np.empty(ctrl.shape, self.dtype)
            self._ctrl_row[...] = ctrl
            return self._ctrl_row, 1
        if self.backend == "cpu" and ctrl.nbytes <= CTRL_KEPT_BYTES:
            if self._ctrl_seq is None or self._ctrl_seq.shape != ctrl.shape:
                self._ctrl_seq = np.empty(ctrl.shape, self.dtype)
            self._ctrl_seq[...] = ctrl
            return self._ctrl_seq, 1
        return self._dev(ctrl), 1

    def _launch(self, controls, s0, n, every, frame0, final, record, frames, resume=False, envs=None):
        """One rollout launch: n steps from step s0 of the call (`resume`: the envs paused for room in the
        contact pool alone, from where they paused), of iterations `envs` = (i0, i1) of the env loop (all
        when None). The launch's numbers go in `_launch_i`, an array whose identity never changes, so that
        every launch of a rollout (and of the next) reuses its cached argument context instead of redoing the
        work for each of its ~90 arguments."""
        cs, use = controls
        assert n <= self._launch_steps, (n, self._launch_steps)  # Vulkan's contact rows (`_rollout_buffer`)
        li = self._launch_host
        li[L.LAUNCH_ENV0], li[L.LAUNCH_ENV1] = (0, self.n_envs) if envs is None else envs
        li[L.LAUNCH_S0], li[L.LAUNCH_NSTEPS], li[L.LAUNCH_EVERY], li[L.LAUNCH_FRAME0] = s0, n, every, frame0
        li[L.LAUNCH_FINAL], li[L.LAUNCH_USE_CTRL], li[L.LAUNCH_RECORD] = int(final), use, int(record)
        li[L.LAUNCH_CONTACTS] = int(self._rec_contacts and record)
        li[L.LAUNCH_RESUME] = int(resume)
        li[L.LAUNCH_GROW] = int(self._grow)
        # a staged kernel (a device's) does one pass a launch: the step, then the final pass (`kernels._staged`);
        # one launch at least: `prepare` compiles with a launch of no step
        for p in range(max(1, n + int(final))) if self._k.staged(self.integrator) else (0,):
            li[L.LAUNCH_PASS] = p
            if self.backend != "cpu":
                self._launch_i.from_numpy(li)
            if self.nefcmax:
                from rigidsim.engine.constraint.kernel import constraint_rollout_kernel  # constraint scenes only

                constraint_rollout_kernel(*self._m, *self._dargs(), cs, self._launch_i, self._nenv, self.integrator,
                                          self._cfg, self._sensing, frames, self._crec, self._status)
            else:
                self._k.rollout_kernel(*self._m, *self._dargs(), cs, self._launch_i, self._nenv, self.integrator,
                                       self._sensing, frames, self._crec, self._status)
        if self.backend != "cpu" and li[L.LAUNCH_CONTACTS] and not lang.LAUNCH_STEPS_MAX:
            # the pool's counter, as the kernel left it (Vulkan does not count: `record_constraint`)
            li[L.LAUNCH_POOL_N] = self._launch_i.to_numpy()[L.LAUNCH_POOL_N]

    def _pool(self, rows: int) -> None:
        """A contact pool of at least `rows` rows, keeping the rows already handed out (a launch's paused envs
        go on into the larger pool)."""
        old = self._crec_host
        if old.shape[0] >= rows:
            return
        new = np.zeros((max(int(rows), 2 * old.shape[0]), L.NCREC), self.dtype)
        used = min(int(self._launch_host[L.LAUNCH_POOL_N]), old.shape[0])
        new[:used] = old[:used]
        self._crec = self._dev(new)
        self._crec_host = new  # on a device, the host's copy: refreshed after each recording launch

    def _launch_all(self, controls, s0, n, every, frame0, final, record, frames, slices=1) -> None:
        """The launches of a window of n steps: the env loop cut into `slices` launches, one after another,
        each followed by the launches that resume its paused envs (`_resume_paused`), until every env has done
        the window's steps. The contact pool's count starts at 0 once: the slices' rows follow each other."""
        self._launch_host[L.LAUNCH_POOL_N] = 0
        B = self.n_envs
        for k in range(slices):
            envs = None if slices == 1 else (B * k // slices, B * (k + 1) // slices)
            self._launch(controls, s0, n, every, frame0, final, record, frames, envs=envs)
            self._resume_paused(controls, s0, n, every, frame0, final, record, frames, envs)
        if self.backend != "cpu" and self._rec_contacts and record:
            self._crec_host = self._host(self._crec)

    def _resume_paused(self, controls, s0, n, every, frame0, final, record, frames, envs) -> None:
        """When some envs of a launch paused (no room for their contacts in the pool, or more contacts than
        the contact capacity holds while it grows), the launches that resume them after the pool or the
        capacity grew, until each has done the launch's steps."""
        li = self._launch_host
        while self._rec_contacts or self._grow:
            st = self._host(self._status)
            pool, cap = st[:, 0] == L.ENV_PAUSED_POOL, st[:, 0] == L.ENV_PAUSED_CAPACITY
            if not (pool.any() or cap.any()):
                break
            if pool.any():
                handed = int(li[L.LAUNCH_POOL_N])  # the rows that fitted, and those asked for in vain
                rows = self._crec_host.shape[0]
                if self.backend != "cpu":
                    self._crec_host = self._host(self._crec)
                self._pool(max(2 * rows, handed + handed // 2))
                li[L.LAUNCH_POOL_N] = rows  # the rows past the old end were never written
            if cap.any():
                self._grow_contacts(int(st[cap, 3].max()))
                if pool.any():  # their forward pass was in the buffers just made anew: they do it again
                    st[pool, 0] = L.ENV_PAUSED_CAPACITY
                    if self.backend != "cpu":
                        self._status.from_numpy(st)
            self._launch(controls, s0, n, every, frame0, final, record, frames, resume=True, envs=envs)

    def _hot_steps(self) -> int:
        """The least steps of a rollout window once a step has been timed: STEPS_HOT, fewer when they would
        take longer than WINDOW_SECONDS (1 at least)."""
        return max(1, min(STEPS_HOT, int(WINDOW_SECONDS / max(self._step_seconds, 1e-12))))

    def _slices(self, n: int) -> int:
        """Launches to cut a window of n steps into: about one for each LAUNCH_SECONDS the window takes (from
        the last timed step), with at least SLICE_ENVS_PER_THREAD envs for each thread in each; 1 on a
        device, and while no step has been timed."""
        T = lang.ENV_LOOP_THREADS
        if not T or self._step_seconds is None:
            return 1
        by_time = int(n * self._step_seconds / LAUNCH_SECONDS)
        return max(1, min(by_time, self.n_envs // (SLICE_ENVS_PER_THREAD * T)))

    def _grow_contacts(self, need: int) -> None:
        """Contact capacity for `need` contacts an env found (a quarter more, at least twice the old, at most
        what every pair can produce): the buffers sized by it are made anew, and their sizes and strides in the
        model's opt_i. Nothing in them outlives a step, so the paused envs redo their step in the new ones."""
        full = self._sizes["nconall"]
        n = min(full, max(2 * self.nconmax, -(-5 * int(need) // 4)))
        sizes = D.array_sizes(self.model, {**(self._r or {}), "max_contacts": n})
        new = D.make_data(self.model, self.n_envs, self.dtype, sizes=sizes)
        oi = self._opt_i
        oi[L.SZ_NCONMAX], oi[L.SZ_NEFCMAX] = sizes["nconmax"], sizes["nefcmax"]
        for name, rows, cols, *_ in L.DATA_ARRAYS:
            if rows is None or new[name].shape == self._dshape[name]:
                continue
            oi[L.STR[name]] = D._size(sizes, rows) * D._size(sizes, cols)
            self._dshape[name] = new[name].shape
            self._d[name] = new[name] if self.backend == "cpu" else self._dev(new[name].reshape(-1))
        k = L.MODEL_ARGS.index("opt_i")
        if self.backend == "cpu":
            self._m[k][...] = oi
            self._dflat = tuple(self._d[x].reshape(-1) for x in L.DATA_ARGS)
        else:
            self._m[k].from_numpy(oi)
            self._dflat = tuple(self._d[x] for x in L.DATA_ARGS)
        self._sizes = sizes
        self.nconmax, self.nefcmax = sizes["nconmax"], sizes["nefcmax"]
        self._grow = n < full

    def _frame_buffer(self, shape):
        """The frame buffer of a rollout: one of the last two calls' when its shape fits (a launch then finds
        its argument context cached, and no new memory is touched), else a new one (the older is dropped)."""
        for k, f in enumerate(self._frames):
            if f.shape == shape:
                self._frames.insert(0, self._frames.pop(k))
                return f
        del self._frames[1:]
        self._frames.insert(0, self._dev(np.zeros(shape, self.dtype)))
        return self._frames[0]

    def _failure(self):
        st = self._host(self._status)
        bad = np.flatnonzero(st[:, 0] == L.ENV_FAILED)
        if bad.size == 0:
            return None
        env = int(bad[np.argmin(st[bad, 1])])
        step, kind, inf = int(st[env, 1]), int(st[env, 2]), int(st[env, 3])
        if kind == 4:
            return step, env, (f"env {env} found {inf} contacts at step {step}, more than max_contacts="
                               f"{self.nconmax} holds; raise max_contacts (--set max_contacts=N, or null to let it "
                               f"grow as needed)")
        if kind == L.FAIL_LOOP_LIMIT:
            what = f" ({L.STAGE_NAMES[inf]})" if 0 < inf < len(L.STAGE_NAMES) else ""
            return step, env, (f"the {self.backend} device stopped env {env}'s loops before their end in the launch "
                               f"from step {step}{what}. Mesa's software Vulkan driver (llvmpipe) ends every loop of a "
                               f"kernel after 65,535 iterations in all, and a step of this scene needs more; run it "
                               f"on a GPU's own driver, or with --backend cpu")
        what = "Inf" if inf else "NaN"
        return step, env, f"{_KIND.get(kind, 'state')} is {what} at step {step} in env {env}"

    def prepare(self, nstep: Optional[int] = None, every: int = 1, ctrl=None, contacts: bool = False,
                sensors: bool = False) -> None:
        """Compile (or load from the offline cache) the rollout kernel now, without stepping. Given the
        arguments of the `rollout_blocks` call to come, with the arrays that call will pass (its frame buffer
        and controls), so that its first launch finds its argument context ready."""
        if nstep is None:
            self._launch((self._noctrl, 0), 0, 0, 1, 0, False, False, self._nodata)
        else:
            c = self._controls(self._ctrl_rows(ctrl, int(nstep)))
            self._set_layout(contacts, sensors)
            _, buf = self._rollout_buffer(int(nstep), int(every))
            self._launch(c, 0, 0, int(every), 0, False, False, buf)
        if self.backend != "cpu":
            # a device's launch returns before it has run, and Mesa's software driver compiles a shader to machine
            # code when it first runs it: wait, so that the compile is done here (the cheetah's: 35 s on Vulkan),
            # not in the run's first step (which `rigidsim run` times and reports as the run's)
            from rigidsim.engine.lang import ti

            ti.sync()

    def _pool_budget_rows(self) -> int:
        """The contact pool rows CONTACT_BUDGET_BYTES holds."""
        return CONTACT_BUDGET_BYTES // (L.NCREC * np.dtype(self.dtype).itemsize)

    def _rollout_buffer(self, nstep: int, every: int):
        """(frames a launch may record at most but 2, the frame buffer) of a rollout of `nstep` steps."""
        per_frame = self.n_envs * self._fwidth * np.dtype(self.dtype).itemsize
        fc = max(1, min(FRAME_BUDGET_BYTES // max(per_frame, 1), nstep // every + 1))
        if self._rec_contacts:  # the contact pool: 8 rows a frame to start with, within its budget
            self._launch_host[L.LAUNCH_POOL_N] = 0
            self._pool(min(self._pool_budget_rows(), (fc + 2) * self.n_envs * 8))
            if lang.LAUNCH_STEPS_MAX:  # rows of their own for each frame of a launch and env (`record_constraint`)
                self._pool((lang.LAUNCH_STEPS_MAX + 1) * self.n_envs * max(self.nconmax, 1))
        # a launch records at most n // every + 2 frames (an unaligned start, and the final frame)
        return fc, self._frame_buffer((fc + 2, self.n_envs, self._fwidth))

    def step(self, nstep: int = 1, ctrl=None) -> None:
        """Advance every env `nstep` steps; ctrl None holds the current ctrl, else [nstep or 1, B or 1, nu]."""
        nstep = int(nstep)
        c = self._controls(self._ctrl_rows(ctrl, nstep))
        s0 = 0
        while s0 < nstep:
            n = min(self._launch_steps, nstep - s0)
            self._launch_all(c, s0, n, 1, 0, False, False, self._nodata)
            s0 += n
            f = self._failure()
            if f is not None:
                raise SimulationError(f[2], step=f[0], env=f[1])

    def rollout_blocks(self, nstep: int, every: int = 1, ctrl=None, contacts: bool = False,
                       sensors: bool = False) -> Iterator[Tuple[np.ndarray, np.ndarray]]:
        """Advance `nstep` steps, yielding the recorded frames a launch at a time as ``(steps, block)``:
        ``steps`` [n] (int64) the step of each frame, ``block`` [n, B, width] the frames (split it with
        `fields`). The frames are 0, every, 2*every, ..., and the final state at step `nstep` when every
        does not divide it: T = nstep // every + 1, plus one. ``block`` is a view of the engine's frame
        buffer, valid until the generator is resumed. A scene with constraints records its constraint fields
        too, and with `contacts` its contacts (`contact_rows`); with `sensors`, a scene's sensordata."""
        nstep, every = int(nstep), int(every)
        if nstep < 0 or every < 1:
            raise ValueError("nstep must be >= 0 and every >= 1")
        c = self._controls(self._ctrl_rows(ctrl, nstep))
        self._set_layout(contacts, sensors)
        B = self.n_envs
        fc, buf = self._rollout_buffer(nstep, every)
        span = fc * every  # at most this many steps per launch: the frames of a launch fit the buffer
        final_frame = -(-nstep // every)  # the kernel's index of the state after the last step
        pool_rows = self._pool_budget_rows()
        rows_per_frame = 0.0  # contact rows a recorded frame (of all B envs) took so far, at most
        s0 = 0
        # steps in the next launch: grows until a launch takes about LAUNCH_SECONDS; from one step, or when an
        # earlier rollout of this batch timed its steps, from what fills an eighth of that
        n_next = 1 if self._step_seconds is None else max(1, int(LAUNCH_SECONDS / 8 / self._step_seconds))
        while True:
            n = min(n_next, span, nstep - s0, self._launch_steps)
            if rows_per_frame > 0:  # as many frames as the contact pool's budget holds, one at least
                n = max(1, min(n, int(pool_rows // rows_per_frame) * every))
            last = s0 + n >= nstep
            frame0 = s0 // every
            t_launch = time.perf_counter()
            self._launch_all(c, s0, n, every, frame0, last, True, buf, self._slices(n))
            elapsed = time.perf_counter() - t_launch
            if n > 0 and (n >= 8 or elapsed > LAUNCH_SECONDS / 8):  # long enough for its launch overhead to be small
                self._step_seconds = elapsed / n
            # short launches amortize launch overhead badly, long ones delay Ctrl-C and progress (a long
            # window is cut into slices of about LAUNCH_SECONDS)
            if elapsed < LAUNCH_SECONDS:
                n_next = n * 8 if elapsed < LAUNCH_SECONDS / 8 else max(n + 1, int(n * LAUNCH_SECONDS / max(elapsed, 1e-9)))
            else:
                n_next = max(1, int(n * LAUNCH_SECONDS / elapsed))
            if self._step_seconds is not None:
                n_next = max(n_next, self._hot_steps())
            # frames recorded in this launch: steps in [s0, s0+n) that are multiples of every, and the final one
            first = -(-s0 // every)
            stop = (s0 + n - 1) // every if n > 0 else first - 1
            idx = list(range(first, stop + 1))
            steps = [t * every for t in idx]
            if last and (not idx or idx[-1] != final_frame):
                idx.append(final_frame)
                steps.append(nstep)
            if self._rec_contacts and idx:
                rows_per_frame = max(rows_per_frame, int(self._launch_host[L.LAUNCH_POOL_N]) / len(idx))
            fail = self._failure()
            if fail is not None:  # only the frames before the failing step are complete
                keep = sum(1 for st in steps if st < fail[0])
                idx, steps = idx[:keep], steps[:keep]
            if idx:
                host = self._host(buf)
                lo = idx[0] - frame0  # the frames of a launch are consecutive rows of the buffer
                yield np.asarray(steps, np.int64), host[lo:lo + len(idx)]
            if fail is not None:
                raise SimulationError(fail[2], step=fail[0], env=fail[1])
            if last:
                return
            s0 += n

    def fields(self, block: np.ndarray) -> Dict[str, np.ndarray]:
        """Split frames [n, B, width] into views: 'time' [n, B], and each field [n, B, ...]."""
        n = block.shape[0]
        out = {}
        for k, (off, w, shape) in self._layout.items():
            v = block[:, :, off:off + w]
            out[k] = v[:, :, 0] if k == "time" else v.reshape((n, self.n_envs) + shape)
        return out

    def contact_rows(self, f: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """The contacts of the frames `f` (from `fields` of a block recorded with contacts), frame by frame
        and env by env: 'count' [n, B], and over all rows 'geom' [K, 2], 'pos' [K, 3], 'normal' [K, 3],
        'dist' [K], 'force' [K, 3] (world frame, by geom 1 on geom 2)."""
        count = f["ncon"].astype(np.int64)
        k = count.reshape(-1)
        crec = f["crec"].reshape(-1, 2).astype(np.int64)
        start = crec[:, 0] * L.CREC_SPLIT + crec[:, 1]  # where each frame's rows start in the pool
        # the rows of frame t, env b, contact c in (t, b, c) order: their starts repeated, plus c
        first = np.repeat(np.cumsum(k) - k, k)
        rows = self._crec_host[np.repeat(start, k) + (np.arange(first.size) - first)]
        return {"count": count, "geom": rows[:, L.CREC_GEOM:L.CREC_GEOM + 2].astype(np.int32),
                "pos": rows[:, L.CREC_POS:L.CREC_POS + 3], "normal": rows[:, L.CREC_NORMAL:L.CREC_NORMAL + 3],
                "dist": rows[:, L.CREC_DIST], "force": rows[:, L.CREC_FORCE:L.CREC_FORCE + 3]}

    def rollout(self, nstep: int, every: int = 1, ctrl=None, sensors: bool = False) -> Iterator[Dict[str, np.ndarray]]:
        """`rollout_blocks` a frame at a time: each frame a dict of copies, 'time' [B] and fields [B, ...]."""
        for _, block in self.rollout_blocks(nstep, every, ctrl, sensors=sensors):
            f = self.fields(block)
            for t in range(block.shape[0]):
                yield {k: np.array(v[t], copy=True) for k, v in f.items()}
