"""Run the constraint solver on MuJoCo's own constraint rows, for the solver tests.

The solver is tested apart from the row builder: `sample` runs MuJoCo (a scene with ``jacobian="dense"``, so
that its efc_J is dense) and keeps, at some of its steps, everything mj_forward's constraint stage started
from (the rows, qM, qacc_smooth, qfrc_smooth, qacc_warmstart) and what it produced (qacc, efc_force,
efc_state, solver_niter per island). `run` writes a batch of such snapshots into our data arrays, one env
each, factors qM with our L'DL and runs our solver (tests/solver_kernel.py); `primal_cost` is the cost the
primal solvers minimize, in numpy, for comparing CG by cost.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Dict, List

import numpy as np

from rigidsim.engine import runtime

if runtime.settings() is None:  # float64 unless the process chose (tests/test_solver_f32.py runs float32)
    runtime.init(64, "cpu")

from rigidsim.engine import data as D  # noqa: E402
from rigidsim.engine import kernel_args  # noqa: E402
from rigidsim.engine import layout as L  # noqa: E402
from rigidsim.engine.solver import variant as SV  # noqa: E402
from tests.mjref import model_from_mujoco, mujoco  # noqa: E402

_KERNEL_FILE = Path(__file__).with_name("solver_kernel.py")


def _kernel():
    """The test kernel; its argument lists must be up to date with the layout (the tests never rewrite a
    tracked file: a stale one fails, naming the command that renders it)."""
    text = _KERNEL_FILE.read_text()
    assert kernel_args.render(text) == text, (
        f"{_KERNEL_FILE}'s generated argument lists are out of date with rigidsim/engine/layout.py: run python -c "
        "\"from pathlib import Path; from rigidsim.engine.kernel_args import render; "
        "p = Path('tests/solver_kernel.py'); p.write_text(render(p.read_text()))\"")
    mod = importlib.import_module("tests.solver_kernel")
    return mod.solver_kernel


def snapshot(mjm, d) -> Dict[str, np.ndarray]:
    """What mj_forward's constraint stage read and wrote at the current state (call after mj_forward)."""
    nv, nefc = mjm.nv, d.nefc
    full = np.zeros((nv, nv))
    mujoco.mj_fullM(mjm, d, full)
    # the L'DL factor, from MuJoCo's CSR rows (ancestors ascending, diagonal last) to the legacy layout
    # (diagonal first, ancestors nearest first)
    ld = np.zeros(max(mjm.nM, 1))
    for i in range(nv):
        adr, nnz = int(mjm.M_rowadr[i]), int(mjm.M_rownnz[i])
        ld[mjm.dof_Madr[i]:mjm.dof_Madr[i] + nnz] = d.qLD[adr:adr + nnz][::-1]
    s = dict(nefc=nefc, ne=d.ne, nf=d.nf, nl=d.nl, ncon=d.ncon, qM=full, qLD=ld,
             qLDiagInv=np.array(d.qLDiagInv).copy(),
             J=np.array(d.efc_J).reshape(nefc, nv).copy() if nefc else np.zeros((0, nv)))
    for k in ("efc_D", "efc_R", "efc_aref", "efc_frictionloss", "efc_diagA", "efc_pos", "efc_margin", "efc_vel",
              "efc_type", "efc_id", "efc_force", "efc_state", "efc_KBIP", "qacc", "qacc_smooth", "qfrc_smooth",
              "qacc_warmstart", "qfrc_constraint"):
        s[k] = np.array(getattr(d, k)).copy()
    s["solver_niter"] = np.array(d.solver_niter).copy()
    s["nisland"] = int(d.nisland)
    s["con_mu"] = np.array(d.contact.mu).copy()
    s["con_friction"] = np.array(d.contact.friction).reshape(-1, 5).copy()
    s["con_dim"] = np.array(d.contact.dim).copy()
    s["con_geom"] = np.array(d.contact.geom).reshape(-1, 2).copy()
    s["con_efcadr"] = np.array(d.contact.efc_address).copy()
    return s


def sample(mjm, nsteps: int, every: int, init=None, ctrl=None, keep=lambda s: s["nefc"] > 0) -> List[dict]:
    """Step MuJoCo nsteps times from `init(d)` (default: the model's initial state) with `ctrl(i, d)`
    setting the controls, and keep the snapshot (`snapshot`) of every `every`-th step for which `keep` holds."""
    d = mujoco.MjData(mjm)
    if init is not None:
        init(d)
    out = []
    for i in range(nsteps):
        if ctrl is not None:
            ctrl(i, d)
        if i % every == 0:
            mujoco.mj_forward(mjm, d)
            s = snapshot(mjm, d)
            if keep(s):
                out.append(s)
        mujoco.mj_step(mjm, d)
    return out


def _legacy_m(model, full: np.ndarray) -> np.ndarray:
    """qM in the legacy sparse layout from the dense matrix (the inverse of data.dense_m)."""
    out = np.zeros(max(model.nM, 1))
    for i in range(model.nv):
        adr, j = int(model.dof_Madr[i]), i
        while j >= 0:
            out[adr] = full[i, j]
            adr += 1
            j = int(model.dof_parentid[j])
    return out


def arrays(model, B: int, fdtype, sizes: Dict[str, int]):
    """The packed model (its opt_i holding the row sizes and the data's per-env strides) and B envs' data
    arrays, for the test kernel."""
    mp = D.put_model(model, fdtype)
    opt_i = mp["opt_i"]
    opt_i[L.SZ_NEFCMAX] = sizes["nefcmax"]
    opt_i[L.SZ_NEFCWIDE] = sizes["nefcwide"]
    opt_i[L.SZ_EFCW] = sizes["efcw"]
    for name, rows, cols, *_ in L.DATA_ARRAYS:
        if rows is not None:
            opt_i[L.STR[name]] = D._size(sizes, rows) * D._size(sizes, cols)
    return mp, D.make_data(model, B, fdtype, sizes=sizes)


def profile_factor(h: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The dense factor in h (n x n, `linalg.chol_factor`'s) as a matrix: each row from its first nonzero
    (SVI_FIRST) to the diagonal; left of that the factor is zero by definition and solver_H is not cleared."""
    cols = np.arange(len(h))
    return np.where((cols[None, :] >= np.asarray(first)[:, None]) & (cols[None, :] <= cols[:, None]), h, 0.0)


def launch(mp, dd, mode: int, variant: int = SV.ALL) -> None:
    """The test kernel on the packed model and data (tests/solver_kernel.py's modes)."""
    _kernel()(*(np.ascontiguousarray(mp[k]).reshape(-1) for k in L.MODEL_ARGS),
              *(dd[k].reshape(-1) for k in L.DATA_ARGS), mode, variant)


def run(mjm, snaps: List[dict], noslip: bool = True, factor: bool = False, model=None,
        variant: int = SV.ALL) -> Dict[str, np.ndarray]:
    """Our solver on each snapshot (one env each): the whole constraint stage (with noslip when the model
    asks; `noslip` False: the primal solve alone), from MuJoCo's L'DL factor of qM or (`factor`) ours,
    compiled for `variant` (rigidsim.engine.solver.variant; ALL: every option, read at run time).
    Returns the data arrays as numpy [B, ...] after the kernel."""
    mode = (0 if noslip else 1) | (2 if factor else 0)
    model = model_from_mujoco(mjm) if model is None else model
    fdtype = np.float64 if runtime.settings()[0] == 64 else np.float32
    B = len(snaps)
    sizes = D.array_sizes(model)
    sizes["nefcmax"] = max(sizes["nefcmax"], max(s["nefc"] for s in snaps))
    sizes["nconmax"] = max(sizes["nconmax"], max(s["ncon"] for s in snaps))
    # every row stored whole (MuJoCo's dense rows): nv entries of room each
    sizes.update(nefcwide=sizes["nefcmax"], efcw=max(model.nv, 1), njsize=max(1, sizes["nefcmax"] * model.nv))
    mp, dd = arrays(model, B, fdtype, sizes)
    nv = model.nv
    for b, s in enumerate(snaps):
        n = s["nefc"]
        dd["M"][b, :, L.QM] = _legacy_m(model, s["qM"])
        dd["M"][b, :, L.QLD] = s["qLD"]
        dd["dof"][b, :nv, L.QLDIAGINV] = s["qLDiagInv"]
        dd["dof"][b, :nv, L.QACC_SMOOTH] = s["qacc_smooth"]
        dd["dof"][b, :nv, L.QFRC_SMOOTH] = s["qfrc_smooth"]
        dd["dof"][b, :nv, L.QACC_WARMSTART] = s["qacc_warmstart"]
        dd["efc_n"][b, [L.EFCN_NE, L.EFCN_NF, L.EFCN_NL, L.EFCN_NEFC]] = [s["ne"], s["nf"], s["nl"], n]
        if not n:
            continue
        dd["efc_J"][b, :n * nv] = np.asarray(s["J"]).reshape(-1)
        e = dd["efc"][b]
        for col, k in ((L.EFC_D, "efc_D"), (L.EFC_R, "efc_R"), (L.EFC_AREF, "efc_aref"),
                       (L.EFC_FRICTIONLOSS, "efc_frictionloss"), (L.EFC_DIAGA, "efc_diagA"), (L.EFC_POS, "efc_pos"),
                       (L.EFC_MARGIN, "efc_margin"), (L.EFC_VEL, "efc_vel")):
            e[:n, col] = s[k]
        e[:n, L.EFC_K] = s["efc_KBIP"][:, 0]
        e[:n, L.EFC_B] = s["efc_KBIP"][:, 1]
        e[:n, L.EFC_IMP] = s["efc_KBIP"][:, 2]
        ei = dd["efc_i"][b]
        ei[:n, L.EFC_TYPE] = s["efc_type"]
        ei[:n, L.EFC_ID] = s["efc_id"]
        ei[:n, L.EFC_JADR] = np.arange(n) * nv  # EFC_SPAN zeros: whole rows
        for c in range(s["ncon"]):
            dd["contact_i"][b, c, L.CON_GEOM1:L.CON_GEOM2 + 1] = s["con_geom"][c]
            dd["contact_i"][b, c, L.CON_EFCADR] = s["con_efcadr"][c]
        for r in range(n):
            t = int(s["efc_type"][r])
            if t in (L.CNSTR_CONTACT_FRICTIONLESS, L.CNSTR_CONTACT_PYRAMIDAL, L.CNSTR_CONTACT_ELLIPTIC):
                c = int(s["efc_id"][r])
                k = r - int(s["con_efcadr"][c])
                fr = s["con_friction"][c]
                e[r, L.EFC_MU] = s["con_mu"][c]
                ei[r, L.EFC_DIM] = s["con_dim"][c]
                ei[r, L.EFC_BLOCK] = k
                if t == L.CNSTR_CONTACT_PYRAMIDAL:
                    e[r, L.EFC_FRICTION] = fr[k // 2]
                elif t == L.CNSTR_CONTACT_ELLIPTIC and k >= 1:
                    e[r, L.EFC_FRICTION] = fr[k - 1]
    launch(mp, dd, mode, variant)
    return dd


def results(dd: Dict[str, np.ndarray], b: int, nv: int, nefc: int) -> dict:
    """Env b's solver outputs."""
    nisland = int(dd["solver_n"][b, L.SN_NISLAND])
    return dict(qacc=dd["qacc"][b, :nv].copy(), efc_force=dd["efc"][b, :nefc, L.EFC_FORCE].copy(),
                efc_state=dd["efc_i"][b, :nefc, L.EFC_STATE].copy(),
                qfrc_constraint=dd["dof"][b, :nv, L.QFRC_CONSTRAINT].copy(),
                niter=int(dd["efc_n"][b, L.EFCN_NITER]), converged=int(dd["efc_n"][b, L.EFCN_CONVERGED]),
                nisland=nisland, island_niter=dd["solver_vi"][b, :max(nisland, 1), L.SVI_NITER].copy())


def primal_cost(s: dict, qacc: np.ndarray) -> float:
    """The primal solvers' cost at qacc for snapshot s: (M qacc - qfrc_smooth)'(qacc - qacc_smooth) / 2 plus
    the constraint cost s(J qacc - aref) (quadratic, Huber, one-sided and elliptic-cone rows)."""
    M = s["qM"]
    gauss = 0.5 * float((M @ qacc - s["qfrc_smooth"]) @ (qacc - s["qacc_smooth"]))
    n = s["nefc"]
    jar = s["J"] @ qacc - s["efc_aref"] if n else np.zeros(0)
    D, R, fl, typ = s["efc_D"], s["efc_R"], s["efc_frictionloss"], s["efc_type"]
    cost, r = 0.0, 0
    while r < n:
        t = int(typ[r])
        if t == L.CNSTR_EQUALITY:
            cost += 0.5 * D[r] * jar[r] ** 2
        elif t in (L.CNSTR_FRICTION_DOF, L.CNSTR_FRICTION_TENDON):
            if jar[r] <= -R[r] * fl[r]:
                cost += -0.5 * R[r] * fl[r] ** 2 - fl[r] * jar[r]
            elif jar[r] >= R[r] * fl[r]:
                cost += -0.5 * R[r] * fl[r] ** 2 + fl[r] * jar[r]
            else:
                cost += 0.5 * D[r] * jar[r] ** 2
        elif t != L.CNSTR_CONTACT_ELLIPTIC:
            if jar[r] < 0:
                cost += 0.5 * D[r] * jar[r] ** 2
        else:
            c = int(s["efc_id"][r])
            dim, mu, fr = int(s["con_dim"][c]), float(s["con_mu"][c]), s["con_friction"][c]
            u = np.concatenate([[jar[r] * mu], jar[r + 1:r + dim] * fr[:dim - 1]])
            N, T = u[0], float(np.linalg.norm(u[1:]))
            if N >= mu * T or (T <= 0 and N >= 0):
                pass
            elif mu * N + T <= 0 or (T <= 0 and N < 0):
                cost += 0.5 * float(np.sum(D[r:r + dim] * jar[r:r + dim] ** 2))
            else:
                Dm = D[r] / (mu * mu * (1 + mu * mu))
                cost += 0.5 * Dm * (N - mu * T) ** 2
            r += dim
            continue
        r += 1
    return gauss + cost


def close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-6) -> float:
    """The largest error of got relative to the size of want (its largest entry, at least 1e-9): entries
    near zero are held to the vector's scale, not to their own."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    if want.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(want))), 1e-9)
    return float(np.max(np.abs(got - want))) / scale


def noslip_state_mismatches(s: dict, state: np.ndarray, rtol: float = 1e-9) -> List[int]:
    """Rows whose state differs from MuJoCo's after noslip, less those whose MuJoCo force lies on the state
    boundary to within rounding (rtol of the force scale): noslip clamps friction-loss forces to +-loss, pyramid
    edges to 0 and projects elliptic friction onto the cone's surface, so such a force is on the boundary by
    construction and its state is decided by the last bit of a force that matches to ~1e-12."""
    f, typ = s["efc_force"], s["efc_type"]
    fscale = max(float(np.max(np.abs(f))) if f.size else 0.0, 1e-9)
    out = []
    for r in np.flatnonzero(state[:s["nefc"]] != s["efc_state"]):
        t = int(typ[r])
        if t in (L.CNSTR_FRICTION_DOF, L.CNSTR_FRICTION_TENDON):
            on_edge = abs(abs(f[r]) - s["efc_frictionloss"][r]) <= rtol * fscale
        elif t == L.CNSTR_CONTACT_ELLIPTIC:
            c = int(s["efc_id"][r])
            a, dim, mu = int(s["con_efcadr"][c]), int(s["con_dim"][c]), float(s["con_mu"][c])
            n = f[a] / mu
            tn = float(np.linalg.norm(f[a + 1:a + dim] / s["con_friction"][c][:dim - 1]))
            on_edge = abs(mu * n - tn) <= rtol * (abs(mu * n) + tn) or abs(n + mu * tn) <= rtol * (abs(n) + mu * tn)
        else:
            on_edge = t != L.CNSTR_EQUALITY and abs(f[r]) <= rtol * fscale
        if not on_edge:
            out.append(int(r))
    return out


# ----------------------------------------------------------------------------- scenes (dense Jacobians)
# {solver}, {cone}, {ns} (noslip iterations) are filled by the tests; PILE also {condim} and {impratio}

PILE = """<mujoco><option jacobian="dense" solver="{solver}" cone="{cone}"
noslip_iterations="{ns}" impratio="{impratio}"/>
<default><geom condim="{condim}"/></default>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 .2" euler="10 20 5"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
<body pos="0.05 0.02 .5" euler="40 20 5"><freejoint/>
<geom type="box" size=".1 .08 .05" friction="0.7 0.01 0.002"/></body>
<body pos="1 0 .3"><freejoint/><geom type="sphere" size=".1" friction="0.5 0.02 0.001"/></body>
<body pos="-1 0 .3" euler="30 0 0"><freejoint/><geom type="capsule" size=".05" fromto="0 -.2 0 0 .2 0"/></body>
<body pos="0 1 .3" euler="10 30 0"><freejoint/><geom type="ellipsoid" size=".1 .07 .05"/></body>
<body pos="0 -1 .15"><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 0 1"/>
<geom type="box" size=".1 .1 .1"/></body>
</worldbody></mujoco>"""

JOINTS = """<mujoco><option jacobian="dense" solver="{solver}" cone="{cone}" noslip_iterations="{ns}"/>
<worldbody>
<body pos="0 0 1"><joint type="hinge" axis="0 1 0" range="-30 45" limited="true" frictionloss="0.3"
armature="0.01" damping="0.1"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
<body pos="0.5 0 0"><joint type="hinge" axis="0 1 0" range="-20 20" frictionloss="0.1"/>
<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
<body pos="0.4 0 0"><joint type="slide" axis="1 0 0" range="-0.1 0.1" frictionloss="0.05"/>
<geom type="sphere" size="0.06"/></body></body></body>
<body pos="1 0 1"><joint type="ball" range="0 40" frictionloss="0.02"/>
<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/></body>
</worldbody></mujoco>"""

EQUALITY = """<mujoco><option jacobian="dense" solver="{solver}" cone="{cone}" noslip_iterations="{ns}"/>
<worldbody><geom type="plane" size="5 5 .1"/>
<body name="a" pos="0 0 1"><joint type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
<body name="b" pos="0.5 0 0"><joint type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body></body>
<body name="c" pos="1 0 1"><joint type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 -0.1 0 0" size="0.05"/></body>
<body name="d" pos="0 0.5 0.6"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
<body name="e" pos="0 0.5 0.9"><freejoint/><geom type="box" size="0.1 0.1 0.05"/></body>
<body name="f" pos="0.5 1 1"><joint name="j1" type="hinge" axis="1 0 0"/>
<geom type="capsule" fromto="0 0 0 0 0 -.3" size="0.03"/></body>
<body name="g" pos="0.8 1 1"><joint name="j2" type="hinge" axis="1 0 0"/>
<geom type="capsule" fromto="0 0 0 0 0 -.3" size="0.03"/></body>
</worldbody>
<equality><connect body1="b" body2="c" anchor="0.5 0 0"/><weld body1="d" body2="e" relpose="0 0 0.2 1 0 0 0"/>
<joint joint1="j1" joint2="j2" polycoef="0 1 0 0 0"/></equality></mujoco>"""

TENDON = """<mujoco><option jacobian="dense" solver="{solver}" cone="{cone}" noslip_iterations="{ns}"/>
<worldbody>
<body pos="0 0 1"><joint name="t1" type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body>
<body pos="1 0 1"><joint name="t2" type="hinge" axis="0 1 0"/>
<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body>
<body pos="2 0 1"><joint name="t3" type="slide" axis="0 0 1"/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody>
<tendon><fixed limited="true" range="-0.3 0.4" frictionloss="0.4"><joint joint="t1" coef="1"/>
<joint joint="t2" coef="-0.5"/></fixed>
<fixed limited="true" range="-0.2 0.2"><joint joint="t3" coef="1"/></fixed></tendon></mujoco>"""

INLINE = {"joints": JOINTS, "equality": EQUALITY, "tendon": TENDON}

# dm_control scenes with constraints (contacts, limits, tendons, equalities) at states of a MuJoCo run
MODELS = ("hopper", "walker", "cheetah", "humanoid", "quadruped", "manipulator", "finger", "stacker",
          "ball_in_cup")


def inline_model(xml: str, solver: str, cone: str = "pyramidal", ns: int = 0, **kw):
    return mujoco.MjModel.from_xml_string(xml.format(solver=solver, cone=cone, ns=ns, **kw))


def random_velocity(mjm, seed: int, scale: float = 3.0):
    """An `init` for `sample`: random joint velocities."""
    def init(d):
        d.qvel[:] = np.random.default_rng(seed).normal(size=mjm.nv) * scale
    return init


def shared_model(name: str, solver):
    """A dm_control scene of ../shared/models with dense Jacobians and the given solver (mjtSolver)."""
    from tests.cli_util import MODELS as ROOT

    mjm = mujoco.MjModel.from_xml_path(str(ROOT / "dm_control" / f"{name}.xml"))
    mjm.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    mjm.opt.solver = solver
    return mjm


def shared_snapshots(mjm, seed: int = 1, nsteps: int = 400, every: int = 13) -> List[dict]:
    """States of a MuJoCo run of a shared scene from random velocities under random controls."""
    rng = np.random.default_rng(seed)

    def init(d):
        d.qvel[:] = rng.normal(size=mjm.nv)

    def ctrl(i, d):
        if mjm.nu:
            d.ctrl[:] = rng.uniform(-1, 1, mjm.nu)

    return sample(mjm, nsteps, every, init=init, ctrl=ctrl)
