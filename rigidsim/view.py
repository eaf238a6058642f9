"""`rigidsim view`: a 3D replay of a trajectory file in the Rerun viewer (the `viz` extra, `rerun-sdk`).

Everything comes from the file (no scene is read): the geoms from `/model` (type, size, local pose, colour,
meshes, height fields), the body poses per frame from `/xpos` and `/xquat`, the contacts from `/contacts`,
the time series from `/qpos` and `/qvel` (names and units from coordinates.py).

The recording's entity tree (Rerun entity paths), for each env `b` shown:

- `world/env{b}`: a static translation placing the env on the grid (zero for a single env);
- `world/env{b}/body{i}`: body i's pose in the world frame, a `Transform3D` per frame equal to
  `xpos[t, b, i]` and `xquat[t, b, i]` (Rerun stores them as float32, quaternions as x, y, z, w); the world
  body (0) has none (it is the env's frame);
- `world/env{b}/body{i}/geom{g}`: geom g of body i, static: its local pose (`geom_pos`, `geom_quat`) as a
  `Transform3D` and its shape in its colour (`geom_color`: its material's when it has one and no rgba of
  its own): `Ellipsoids3D` (sphere, ellipsoid), `Capsules3D`,
  `Cylinders3D`, `Boxes3D` (box; a plane as a 1 cm thick box whose top face is the plane), `Mesh3D` (mesh,
  height field);
- `world/env{b}/contacts`: the contact points of each frame (`Points3D`), and `world/env{b}/contacts/force`
  the force on geom b of each contact as an arrow from its point (`Arrows3D`), `force_scale` metres per
  newton (by default the largest force of the shown envs is drawn a quarter of the grid spacing long);
- `plots/env{b}/qpos/{name}` and `plots/env{b}/qvel/{name}`: one scalar series per coordinate, and
  `plots/env{b}/ncon` the number of contacts per frame when contacts are recorded.

Two timelines index every frame: `time` (seconds, from `/time`) and `frame` (the frame index). The
layout puts the 3D view and the time series side by side.

Several envs are laid out on a grid in x and y: env k of the list (in list order) sits at
(k mod C, k div C) times the spacing, C = ceil(sqrt(n)); the spacing is 1.25 times the larger of the x and
y spans of every body position of the shown envs over all frames plus twice the largest geom size, at
least 1 m. A plane of size 0 (infinite in MuJoCo) is drawn half a spacing wide on each side of its origin.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

from rigidsim.coordinates import qpos_coordinates, qvel_coordinates
from rigidsim.errors import InputError

INSTALL_HINT = "rigidsim view needs the Rerun SDK: pip install 'rigidsim[viz]'"
APP_ID = "rigidsim"
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)  # MuJoCo's mjtGeom
PLANE_THICKNESS = 0.01  # m
FORCE_FRACTION = 0.25  # default arrow length of the largest force, in grid spacings


def require_rerun():
    """The rerun module, or InputError (exit 2) naming the extra to install."""
    try:
        import rerun
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return rerun


def parse_envs(env: Optional[int], envs: Optional[str], n_envs: int) -> List[int]:
    """The envs to show: --env B (default 0) or --envs a comma list; each in [0, n_envs)."""
    if env is not None and envs is not None:
        raise InputError("give --env or --envs, not both", where="--envs")
    if envs is not None:
        try:
            out = [int(s) for s in envs.split(",") if s.strip()]
        except ValueError:
            raise InputError(f"expected a comma list of env indices such as 0,1,2, got '{envs}'",
                             where="--envs") from None
        if not out:
            raise InputError(f"expected a comma list of env indices such as 0,1,2, got '{envs}'", where="--envs")
        if len(set(out)) != len(out):
            raise InputError(f"an env appears twice in '{envs}'", where="--envs")
        opt = "--envs"
    else:
        out, opt = [0 if env is None else int(env)], "--env"
    for b in out:
        if not 0 <= b < n_envs:
            raise InputError(f"env {b} does not exist: the file holds {n_envs} env(s), 0 to {n_envs - 1}",
                             where=opt)
    return out


def body_path(b: int, i: int) -> str:
    return f"world/env{b}" if i == 0 else f"world/env{b}/body{i}"


def geom_path(b: int, body: int, g: int) -> str:
    return f"{body_path(b, body)}/geom{g}"


def _part(name: str) -> str:
    """A coordinate name as one entity-path part (Rerun separates parts with '/')."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "_"


@dataclasses.dataclass
class Replay:
    """What the recording is made of, read from the file."""

    path: Path
    envs: List[int]
    time: np.ndarray  # [T]
    xpos: np.ndarray  # [T, n, nbody, 3] for the shown envs
    xquat: np.ndarray  # [T, n, nbody, 4]
    model: dict  # /model arrays
    qpos: Optional[np.ndarray]  # [T, n, nq]
    qvel: Optional[np.ndarray]
    qpos_names: List[str]
    qvel_names: List[str]
    contacts: Optional[List[List[tuple]]]  # per env, per frame: (position [k, 3], force [k, 3])
    complete: bool
    spacing: float
    force_scale: float


def read_replay(path: str | Path, env: Optional[int] = None, envs: Optional[str] = None,
                force_scale: Optional[float] = None) -> Replay:
    from rigidsim.plot import open_trajectory

    f = open_trajectory(path)
    try:
        B = int(f.attrs.get("n_envs", 1))
        shown = parse_envs(env, envs, B)
        for k in ("xpos", "xquat"):
            if k not in f:
                raise InputError(f"{path} holds no /{k}: the replay poses bodies from xpos and xquat; run again "
                                 f"with --record including xpos,xquat")
        g = f["model"]
        need = ("geom_type", "geom_bodyid", "geom_size", "geom_pos", "geom_quat")
        missing = [k for k in need if k not in g]
        if missing:
            raise InputError(f"{path} has no /model/{missing[0]}: it was written by an older rigidsim; run the "
                             f"scene again to replay it")
        model = {k: g[k][()] for k in g.keys() if not k.endswith("_names")}
        names = {k: [x.decode() if isinstance(x, bytes) else str(x) for x in g[k][()]]
                 for k in g.keys() if k.endswith("_names")}
        for k in ("nq", "nv", "nbody"):
            model[k] = int(g.attrs[k])
        time = f["time"][()]
        T = len(time)
        idx = np.asarray(shown)
        xpos = f["xpos"][()][:, idx]
        xquat = f["xquat"][()][:, idx]
        qpos = f["qpos"][()][:, idx] if "qpos" in f else None
        qvel = f["qvel"][()][:, idx] if "qvel" in f else None
        jt = model.get("jnt_type", np.zeros(0, int))
        jn = names.get("joint_names", [])
        qpos_names = qpos_coordinates(model["nq"], jn, jt, model.get("jnt_qposadr", np.zeros(0, int)))[0]
        qvel_names = qvel_coordinates(model["nv"], jn, jt, model.get("jnt_dofadr", np.zeros(0, int)))[0]
        contacts = None
        if "contacts" in f:
            c = f["contacts"]
            off = c["offsets"][()]
            pos, frc = c["position"][()], c["force"][()]
            contacts = []
            for b in shown:
                rows = []
                for t in range(T):
                    lo, hi = int(off[t * B + b]), int(off[t * B + b + 1])
                    rows.append((pos[lo:hi], frc[lo:hi]))
                contacts.append(rows)
        complete = bool(f.attrs.get("complete", True))
    finally:
        f.close()
    spacing = grid_spacing(xpos, model)
    if force_scale is None:
        fmax = max((float(np.linalg.norm(fr, axis=1).max()) for env_rows in contacts or [] for _, fr in env_rows
                    if len(fr)), default=0.0)
        force_scale = FORCE_FRACTION * spacing / fmax if fmax > 0 else 0.0
    elif not (force_scale >= 0 and math.isfinite(force_scale)):
        raise InputError(f"expected a finite scale >= 0 in m/N, got {force_scale}", where="--force-scale")
    return Replay(Path(path), shown, time, xpos, xquat, model, qpos, qvel, qpos_names, qvel_names, contacts,
                  complete, spacing, float(force_scale))


def grid_spacing(xpos: np.ndarray, model: dict) -> float:
    """Distance between neighbouring envs on the grid (module docstring)."""
    pts = xpos[:, :, 1:, :2].reshape(-1, 2)
    span = float((pts.max(0) - pts.min(0)).max()) if len(pts) else 0.0
    types, sizes = np.asarray(model["geom_type"]), np.asarray(model["geom_size"])
    solid = sizes[types != PLANE]
    size = float(np.abs(solid).max()) if solid.size else 0.0
    if not math.isfinite(span + size):
        span, size = 0.0, 0.0
    return max(1.0, 1.25 * (span + 2 * size))


def env_offsets(n: int, spacing: float) -> np.ndarray:
    cols = max(1, math.ceil(math.sqrt(n)))
    return np.array([[(k % cols) * spacing, (k // cols) * spacing, 0.0] for k in range(n)])


def _xyzw(q) -> np.ndarray:
    """MuJoCo's w, x, y, z quaternions (last axis) as Rerun's x, y, z, w."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def _rgba(c) -> np.ndarray:
    return np.clip(np.round(np.asarray(c, dtype=np.float64) * 255), 0, 255).astype(np.uint8)


def _hfield_mesh(model: dict, h: int):
    """A height field as a triangle grid (MuJoCo's layout: ncol samples along x over [-rx, rx], nrow along y
    over [-ry, ry], row-major, height = data * elevation z; the base below is not drawn)."""
    rx, ry, rz, _ = (float(x) for x in model["hfield_size"][h])
    nr, nc = int(model["hfield_nrow"][h]), int(model["hfield_ncol"][h])
    adr = int(model["hfield_adr"][h])
    z = np.asarray(model["hfield_data"][adr:adr + nr * nc], dtype=np.float64).reshape(nr, nc) * rz
    xs, ys = np.linspace(-rx, rx, nc), np.linspace(-ry, ry, nr)
    X, Y = np.meshgrid(xs, ys)
    vert = np.stack([X, Y, z], -1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(nr - 1), np.arange(nc - 1), indexing="ij")
    a = (i * nc + j).ravel()
    face = np.concatenate([np.stack([a, a + 1, a + nc + 1], 1), np.stack([a, a + nc + 1, a + nc], 1)])
    return vert, face


DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)


def geom_color(model: dict, g: int) -> np.ndarray:
    """Geom g's colour, RGBA in [0, 1], as MuJoCo's renderer picks it: its material's `mat_rgba` when it has a
    material and its own `geom_rgba` is left at the default, else its `geom_rgba` (textures are not drawn)."""
    own = np.asarray(model["geom_rgba"][g], dtype=np.float64) if "geom_rgba" in model else np.array(DEFAULT_RGBA)
    mat = int(model["geom_matid"][g]) if "geom_matid" in model else -1
    if mat >= 0 and np.array_equal(np.float32(own), np.float32(DEFAULT_RGBA)):
        return np.asarray(model["mat_rgba"][mat], dtype=np.float64)
    return own


def geom_archetype(rr, model: dict, g: int, plane_half: float):
    """The Rerun archetype drawing geom g in its own frame, or None for a type it cannot draw."""
    typ = int(model["geom_type"][g])
    size = np.asarray(model["geom_size"][g], dtype=np.float64)
    color = [_rgba(geom_color(model, g))]
    if typ == SPHERE:
        return rr.Ellipsoids3D(half_sizes=[[size[0]] * 3], colors=color, fill_mode="solid")
    if typ == ELLIPSOID:
        return rr.Ellipsoids3D(half_sizes=[size], colors=color, fill_mode="solid")
    if typ == CAPSULE:  # Rerun's capsule runs from its origin along +z: shift it by minus the half length
        return rr.Capsules3D(lengths=[2 * size[1]], radii=[size[0]], translations=[[0, 0, -size[1]]], colors=color,
                             fill_mode="solid")
    if typ == CYLINDER:
        return rr.Cylinders3D(lengths=[2 * size[1]], radii=[size[0]], colors=color, fill_mode="solid")
    if typ == BOX:
        return rr.Boxes3D(half_sizes=[size], colors=color, fill_mode="solid")
    if typ == PLANE:
        hx = size[0] if size[0] > 0 else plane_half
        hy = size[1] if size[1] > 0 else plane_half
        return rr.Boxes3D(half_sizes=[[hx, hy, PLANE_THICKNESS / 2]], centers=[[0, 0, -PLANE_THICKNESS / 2]],
                          colors=color, fill_mode="solid")
    dataid = int(model["geom_dataid"][g]) if "geom_dataid" in model else -1
    if typ == MESH and dataid >= 0 and "mesh_vert" in model:
        va, vn = int(model["mesh_vertadr"][dataid]), int(model["mesh_vertnum"][dataid])
        fa, fn = int(model["mesh_faceadr"][dataid]), int(model["mesh_facenum"][dataid])
        return rr.Mesh3D(vertex_positions=model["mesh_vert"][va:va + vn], triangle_indices=model["mesh_face"][fa:fa + fn],
                         albedo_factor=color[0])
    if typ == HFIELD and dataid >= 0 and "hfield_data" in model:
        vert, face = _hfield_mesh(model, dataid)
        return rr.Mesh3D(vertex_positions=vert, triangle_indices=face, albedo_factor=color[0])
    return None


def camera(rp: Replay):
    """(eye position, look target) of the 3D view: the target is the centre of the shown envs' bodies at frame 0
    (on the grid), the eye stands off it diagonally, above, by the larger of 3 m and 1.5 grid widths."""
    offsets = env_offsets(len(rp.envs), rp.spacing)
    if len(rp.time) and rp.model["nbody"] > 1:
        pts = rp.xpos[0, :, 1:] + offsets[:, None, :]
        target = pts.reshape(-1, 3).mean(0)
    else:
        target = offsets.mean(0)
    if not np.all(np.isfinite(target)):
        target = np.zeros(3)
    width = float(np.ptp(offsets[:, :2], axis=0).max()) + rp.spacing
    d = max(3.0, 1.5 * width)
    return target + d * np.array([0.6, -0.7, 0.4]), target


def blueprint(rr, rp: Replay):
    """The viewer's layout: the 3D replay (z up, the camera of `camera`, a slate background) beside the time
    series (legend off: a humanoid has 55 series); the side panels start collapsed."""
    import rerun.blueprint as rrb

    eye, target = camera(rp)
    view3d = rrb.Spatial3DView(origin="world", name="replay", background=[70, 78, 92],  # a white floor shows
                               eye_controls=rrb.EyeControls3D(position=eye, look_target=target, eye_up=[0, 0, 1]))
    plots = rrb.TimeSeriesView(origin="plots", name="time series", plot_legend=rrb.PlotLegend(visible=False))
    return rrb.Blueprint(rrb.Horizontal(view3d, plots, column_shares=[3, 2]), rrb.TimePanel(state="collapsed"),
                         rrb.SelectionPanel(state="collapsed"), rrb.BlueprintPanel(state="collapsed"))


def log_replay(rr, rec, rp: Replay) -> List[str]:
    """Send the whole replay to the recording stream `rec`; returns notes for the user (geoms not drawn)."""
    notes: List[str] = []
    m = rp.model
    T = len(rp.time)
    times = [rr.TimeColumn("time", duration=np.asarray(rp.time, dtype=np.float64)),
             rr.TimeColumn("frame", sequence=np.arange(T))]
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    offsets = env_offsets(len(rp.envs), rp.spacing)
    plane_half = rp.spacing / 2
    skipped = set()
    for k, b in enumerate(rp.envs):
        rec.log(body_path(b, 0), rr.Transform3D(translation=offsets[k]), static=True)
        for i in range(1, m["nbody"]):
            if T:
                rec.send_columns(body_path(b, i), indexes=times,
                                 columns=rr.Transform3D.columns(translation=rp.xpos[:, k, i],
                                                                quaternion=_xyzw(rp.xquat[:, k, i])))
        for g in range(len(m["geom_type"])):
            arch = geom_archetype(rr, m, g, plane_half)
            if arch is None:
                skipped.add(int(m["geom_type"][g]))
                continue
            p = geom_path(b, int(m["geom_bodyid"][g]), g)
            rec.log(p, rr.Transform3D(translation=m["geom_pos"][g], quaternion=_xyzw(m["geom_quat"][g])), static=True)
            rec.log(p, arch, static=True)
        if rp.contacts is not None and T:
            rows = rp.contacts[k]
            counts = np.array([len(pos) for pos, _ in rows])
            pos = np.concatenate([p_ for p_, _ in rows]).reshape(-1, 3)
            frc = np.concatenate([f_ for _, f_ in rows]).reshape(-1, 3)
            cp = f"world/env{b}/contacts"
            rec.send_columns(cp, indexes=times, columns=rr.Points3D.columns(positions=pos).partition(counts))
            rec.log(cp, rr.Points3D.from_fields(radii=[-3.0], colors=[[230, 40, 40, 255]]), static=True)
            rec.send_columns(f"{cp}/force", indexes=times,
                             columns=rr.Arrows3D.columns(origins=pos, vectors=frc * rp.force_scale).partition(counts))
            rec.log(f"{cp}/force", rr.Arrows3D.from_fields(colors=[[240, 160, 20, 255]]), static=True)
            rec.send_columns(f"plots/env{b}/ncon", indexes=times, columns=rr.Scalars.columns(scalars=counts))
        for field, data, names in (("qpos", rp.qpos, rp.qpos_names), ("qvel", rp.qvel, rp.qvel_names)):
            if data is None or not T:
                continue
            for j, name in enumerate(names):
                rec.send_columns(f"plots/env{b}/{field}/{_part(name)}", indexes=times,
                                 columns=rr.Scalars.columns(scalars=data[:, k, j]))
    for t in sorted(skipped):
        notes.append(f"geoms of type {t} are not drawn (no shape data in the file)")
    if not rp.complete:
        notes.append(f"{rp.path} is incomplete (complete = false): replaying its {T} recorded frames")
    return notes


@dataclasses.dataclass
class ViewResult:
    message: str
    notes: List[str]


def _has_display() -> bool:
    import os
    import sys

    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view_file(path: str, save: Optional[str] = None, web: bool = False, env: Optional[int] = None,
              envs: Optional[str] = None, force_scale: Optional[float] = None, web_port: Optional[int] = None,
              wait=None) -> ViewResult:
    """Build the replay of `path` and write it to `save`, serve it (`web`) or open the native viewer."""
    rr = require_rerun()
    if save is not None and web:
        raise InputError("give --save or --web, not both", where="--web")
    if save is not None:
        from rigidsim.trajectory import check_out

        if not str(save).endswith(".rrd"):
            raise InputError(f"--save {save}: expected a file name ending in .rrd", where="--save")
        check_out(save, "--save")
    elif not web and not _has_display():
        raise InputError("no display to open the native Rerun viewer on (DISPLAY and WAYLAND_DISPLAY are unset): "
                         "write a recording with --save OUT.rrd (open it later with `rerun OUT.rrd`) or serve the "
                         "web viewer with --web", where="view")
    rp = read_replay(path, env, envs, force_scale)
    rec = rr.RecordingStream(APP_ID, recording_id=None)
    bp = blueprint(rr, rp)
    if save is not None:
        rec.save(save, default_blueprint=bp)
        notes = log_replay(rr, rec, rp)
        rec.flush()
        rec.disconnect()
        return ViewResult(f"wrote {save}: {len(rp.time)} frames of env(s) {','.join(map(str, rp.envs))}; force "
                          f"arrows {rp.force_scale:.3g} m/N", notes)
    if web:
        url = rec.serve_grpc(default_blueprint=bp)
        notes = log_replay(rr, rec, rp)
        rr.serve_web_viewer(web_port=web_port, open_browser=False, connect_to=url)
        port = web_port or 9090
        if wait is not None:
            wait(f"serving the Rerun web viewer at http://localhost:{port}/?url={url} (Ctrl-C to stop)", notes)
        rec.disconnect()
        return ViewResult("stopped the web viewer", notes)
    try:
        rec.spawn(default_blueprint=bp)
    except Exception as e:  # the viewer binary failed to start
        raise InputError(f"could not start the Rerun viewer ({e}); use --save OUT.rrd or --web instead",
                         where="view") from None
    notes = log_replay(rr, rec, rp)
    rec.flush()
    return ViewResult(f"sent {len(rp.time)} frames to the Rerun viewer", notes)
