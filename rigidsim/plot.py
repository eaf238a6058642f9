"""`rigidsim plot`: the figures of a trajectory file a user would otherwise write by hand.

One axes (panel) per quantity the file holds, stacked over a shared time axis (s, from `/time`):
- `qpos`: a line per generalized position, named from `/model` (coordinates.py) with its unit;
- `qvel`: a line per generalized velocity, likewise;
- `energy`: potential energy (gravity, exact), kinetic energy and their sum, in J; needs `xpos` and
  `xquat`. The kinetic energy is MuJoCo's 1/2 qvel' M qvel, exact, when the file holds qpos and qvel too
  (energy.joint_kinetic_energy), else from finite differences of the recorded body poses (approximate);
  the legend says which;
- `contacts`: two panels, the number of contacts of each frame, and the total normal force (N): each
  contact's force projected on its normal, summed over the env's contacts of the frame (drawn by default
  only when the file holds a contact);
- `solver`: `solver_niter` (iterations of the constraint solve), `ncon` and `nefc`, as recorded;
- a sensor's name (from `/model/sensor_names`): one panel of its values (a line per component), from
  `/sensordata`; `sensordata`: one panel per sensor of the file. Sensor panels are drawn when asked for
  with --fields only (a humanoid has 35 sensors).

One env is drawn as lines (`env` given, or a file of one env). Several envs without `env`: each line is
the mean over the envs, with the band between their minimum and maximum (`fill_between`, in the line's
colour, drawn right after the line: `ax.lines[i]` goes with `ax.collections[i]`).

Every axes carries its field's name as its artist label (`ax.get_label()`: "qpos", "qvel", "energy",
"contacts", "normal_force", "solver"), so a script or a test can find it. A legend lists at most
`MAX_LEGEND` entries (the first ones; its title says how many more there are); every line keeps its label.

matplotlib is an optional dependency (`pip install 'rigidsim[plot]'`); the figure is made without pyplot,
so no display and no global backend are involved (PNG through Agg).
"""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import numpy as np

from rigidsim.coordinates import qpos_coordinates, qvel_coordinates
from rigidsim.energy import joint_kinetic_energy, kinetic_energy, potential_energy
from rigidsim.errors import InputError

if TYPE_CHECKING:
    import h5py
    from matplotlib.figure import Figure

FIELDS = ("qpos", "qvel", "energy", "contacts", "solver")
SENSORDATA = "sensordata"
# units of the sensors' values by MuJoCo's sensor type (mjtSensor); others are unitless or mixed
SENSOR_UNITS = {0: "N", 1: "m/s²", 2: "m/s", 3: "rad/s", 4: "N", 5: "N m", 6: "T", 7: "m", 26: "m", 31: "m/s",
                32: "rad/s", 33: "m/s²", 34: "rad/s²", 35: "m", 36: "m/s", 37: "kg m²/s", 43: "J", 44: "J", 45: "s"}
FORMATS = ("png", "svg", "pdf")
MAX_LEGEND = 48  # legend entries shown (three columns of 16); a humanoid's 28 qpos all fit
SOLVER_SERIES = (("solver_niter", "solver_niter (iterations)"), ("ncon", "ncon (contacts)"),
                 ("nefc", "nefc (constraint rows)"))
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
_STYLES = ("-", "--", "-.", ":")
INSTALL_HINT = "pip install 'rigidsim[plot]'"


def require_matplotlib() -> None:
    """InputError (exit 2) naming the extra to install when matplotlib is absent."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(f"plotting needs matplotlib, which is not installed: {INSTALL_HINT} "
                         f"(or pip install 'matplotlib>=3.7')") from None


def parse_fields(text: Optional[str]) -> Optional[Tuple[str, ...]]:
    """The --fields comma list (None: every field the file holds). A name that is not one of FIELDS is taken
    for a sensor's name: `panels` checks it against the file's sensors."""
    if text is None:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise InputError(f"expected a comma list out of {','.join(FIELDS)}, got '{text}'", where="--fields")
    return tuple(dict.fromkeys(names))


def _check_names(f: "h5py.File", names: Sequence[str]) -> None:
    """Every name of --fields is a field of FIELDS, `sensordata` or one of the file's sensors."""
    sensors = _sensor_names(f)
    known = FIELDS + (SENSORDATA,) + tuple(sensors)
    for n in names:
        if n not in known:
            close = difflib.get_close_matches(n, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            also = f", sensordata or a sensor's name ({', '.join(sensors[:4])}{'...' if len(sensors) > 4 else ''})" \
                if sensors else ""
            raise InputError(f"unknown field '{n}'{hint}; choose out of {','.join(FIELDS)}{also}", where="--fields")


def _sensor_names(f: "h5py.File") -> List[str]:
    m = f["model"] if "model" in f else {}
    return [n or f"#{i}" for i, n in enumerate(_strings(m["sensor_names"]))] if "sensor_names" in m else []


def _sensor_panel(r: "_Reader", i: int, name: str) -> Panel:
    """Sensor i's values (`/sensordata` columns sensor_adr[i] : + sensor_dim[i]), a line per component."""
    adr, dim = int(r.model("sensor_adr")[i]), int(r.model("sensor_dim")[i])
    typ = int(r.model("sensor_type")[i])
    values = r("sensordata")[:, :, adr:adr + dim]
    comps = ("w", "x", "y", "z") if dim == 4 else ("x", "y", "z") if dim == 3 else tuple(str(k) for k in range(dim))
    unit = SENSOR_UNITS.get(typ, "")
    series = [Series(name if dim == 1 else f"{name} {c}", values[:, :, k]) for k, c in enumerate(comps)]
    return Panel(name, f"{name}{f' ({unit})' if unit else ''}", series)


def out_format(out: Path) -> str:
    """The figure format of an output path, from its extension (png, svg or pdf)."""
    ext = out.suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise InputError(f"cannot tell the figure format of {out}: expected a name ending in "
                         f"{', '.join('.' + f for f in FORMATS)}", where="--out")
    return ext


def open_trajectory(path: str | Path) -> "h5py.File":
    """Open a trajectory file for reading; InputError when it is missing, not HDF5, or not a rigidsim trajectory."""
    import h5py

    p = Path(path)
    if not p.exists():
        raise InputError(f"{p} does not exist; expected a trajectory file written by `rigidsim run`")
    if p.is_dir():
        raise InputError(f"{p} is a directory; expected a trajectory file written by `rigidsim run`")
    try:
        f = h5py.File(p, "r")
    except OSError as e:
        raise InputError(f"{p} is not a readable HDF5 file ({e}); expected a trajectory file written by "
                         f"`rigidsim run`") from None
    fmt = f.attrs.get("format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt != "rigidsim-trajectory" or "time" not in f or "model" not in f:
        f.close()
        raise InputError(f"{p} is an HDF5 file but not a rigidsim trajectory (expected the root attribute "
                         f"format = 'rigidsim-trajectory', /time and /model)")
    return f


def _strings(ds) -> List[str]:
    return [x.decode() if isinstance(x, bytes) else str(x) for x in ds[()]]


def gravity_of(f: "h5py.File") -> Tuple[Tuple[float, float, float], bool]:
    """The gravity vector the run used (from options_yaml) and whether it was found there."""
    import yaml

    text = f.attrs.get("options_yaml", "")
    text = text.decode() if isinstance(text, bytes) else str(text)
    try:
        g = (yaml.safe_load(text) or {}).get("gravity")
        g = tuple(float(x) for x in g)
        if len(g) == 3 and all(np.isfinite(g)):
            return g, True
    except Exception:  # absent, null or malformed: the default, and the caller says so
        pass
    return DEFAULT_GRAVITY, False


@dataclasses.dataclass
class Series:
    """One line of a panel: values [T, E] (E = 1 env, or every env for a band)."""

    label: str
    values: np.ndarray


@dataclasses.dataclass
class Panel:
    field: str
    ylabel: str
    series: List[Series]


class _Reader:
    """The file's frames of one env ([T, 1, ...]) or of every env ([T, B, ...]), as float64."""

    def __init__(self, f: "h5py.File", env: Optional[int]):
        self.f = f
        self.B = int(f.attrs.get("n_envs", f["qpos"].shape[1] if "qpos" in f else 1))
        self.env = env
        lengths = [f["time"].shape[0]]
        for name in ("qpos", "qvel", "xpos", "xquat", SENSORDATA) + tuple(n for n, _ in SOLVER_SERIES):
            if name in f:
                lengths.append(f[name].shape[0])
        if "contacts/offsets" in f:
            lengths.append((f["contacts/offsets"].shape[0] - 1) // max(self.B, 1))
        self.T = int(min(lengths))
        self.time = np.asarray(f["time"][: self.T], np.float64)

    def __call__(self, name: str) -> np.ndarray:
        ds = self.f[name]
        rows = ds[: self.T] if self.env is None else ds[: self.T, self.env: self.env + 1]
        return np.asarray(rows, np.float64)

    def model(self, name: str) -> np.ndarray:
        return np.asarray(self.f["model"][name][()])


def _units(units: Sequence[str]) -> str:
    seen = [u for u in dict.fromkeys(units) if u]
    return f" ({', '.join(seen)})" if seen else ""


def _coordinate_panel(r: _Reader, field: str) -> Optional[Panel]:
    m = r.f["model"]
    names = _strings(m["joint_names"]) if "joint_names" in m else []
    values = r(field)
    n = values.shape[2]
    if n == 0:
        return None
    if field == "qpos":
        labels, units = qpos_coordinates(n, names, r.model("jnt_type"), r.model("jnt_qposadr"))
        what = "generalized positions qpos"
    else:
        labels, units = qvel_coordinates(n, names, r.model("jnt_type"), r.model("jnt_dofadr"))
        what = "generalized velocities qvel"
    series = [Series(f"{lab} ({u})" if u else lab, values[:, :, i]) for i, (lab, u) in enumerate(zip(labels, units))]
    return Panel(field, f"{what}{_units(units)}", series)


def _energy_panel(r: _Reader, notes: List[str]) -> Panel:
    xpos, xquat = r("xpos"), r("xquat")
    ipos, mass = r.model("body_ipos"), r.model("body_mass")
    g, found = gravity_of(r.f)
    if not found:
        notes.append(f"energy: no gravity in the file's options_yaml; the potential energy takes {DEFAULT_GRAVITY}")
    pe = potential_energy(xpos, xquat, ipos, mass, g)
    gtxt = ", ".join(f"{x:g}" for x in g)
    series = [Series(f"potential (gravity ({gtxt}) m/s²)", pe)]
    if "qpos" in r.f and "qvel" in r.f:  # exact: MuJoCo's mj_energyVel of the recorded state
        ke = joint_kinetic_energy(r("qpos"), r("qvel"), xpos, xquat, r.f["model"])
        how = "1/2 qvel' M qvel"
    else:
        ke = kinetic_energy(r.time, xpos, xquat, ipos, r.model("body_iquat"), mass, r.model("body_inertia"))
        every = int(r.f.attrs.get("record_every", 1))
        how = "finite differences of " + (f"poses {every} steps apart" if every > 1 else "the recorded poses")
    if ke is None:
        notes.append("energy: the kinetic energy needs two frames or more at increasing times; drawn without it")
    else:
        series += [Series(f"kinetic ({how})", ke), Series("total (potential + kinetic)", pe + ke)]
    return Panel("energy", "energy (J)", series)


def _contact_panels(r: _Reader) -> List[Panel]:
    f, T, B = r.f, r.T, r.B
    off = np.asarray(f["contacts/offsets"][: T * B + 1], np.int64)
    counts = np.diff(off)
    lo, hi = int(off[0]), int(off[-1])
    force = np.asarray(f["contacts/force"][lo:hi], np.float64)
    normal = np.asarray(f["contacts/normal"][lo:hi], np.float64)
    normal_force = np.einsum("ki,ki->k", force, normal)  # a's force on b along the normal from a to b: push > 0
    owner = np.repeat(np.arange(T * B), counts)
    total = np.bincount(owner, weights=normal_force, minlength=T * B).reshape(T, B)
    counts = counts.reshape(T, B).astype(np.float64)
    if r.env is not None:
        counts, total = counts[:, r.env: r.env + 1], total[:, r.env: r.env + 1]
    return [Panel("contacts", "contacts per frame (count)", [Series("contacts", counts)]),
            Panel("normal_force", "total normal force (N)", [Series("normal force (sum over contacts)", total)])]


def _solver_panel(r: _Reader) -> Panel:
    series = [Series(label, r(name)) for name, label in SOLVER_SERIES if name in r.f]
    return Panel("solver", "constraint solve (count)", series)


def _available(f: "h5py.File", field: str) -> Tuple[bool, str]:
    """Whether the file holds what `field` draws, and what to record when it does not."""
    need = {"qpos": ("qpos",), "qvel": ("qvel",), "energy": ("xpos", "xquat"), "contacts": ("contacts",)}
    if field == "solver":
        return any(n in f for n, _ in SOLVER_SERIES), "solver_niter,ncon,nefc"
    missing = [n for n in need[field] if n not in f]
    return not missing, ",".join(need[field])


def panels(f: "h5py.File", env: Optional[int] = None, fields: Optional[Sequence[str]] = None,
           notes: Optional[List[str]] = None) -> Tuple[List[Panel], "_Reader"]:
    """The panels to draw, in FIELDS order. `fields` None: every one the file holds (a missing one is noted in
    `notes`); a field asked for and not recorded is an InputError naming what `rigidsim run --record` needs."""
    notes = notes if notes is not None else []
    r = _Reader(f, env)
    if r.T == 0:
        raise InputError(f"{f.filename} holds no frame (n_frames = 0): nothing to plot")
    B = r.B
    if env is not None and not 0 <= env < B:
        raise InputError(f"env {env} is out of range: {f.filename} holds {B} env{'s' if B != 1 else ''} "
                         f"(0 to {B - 1})", where="--env")
    out: List[Panel] = []
    if fields is not None:
        _check_names(f, fields)
    sensors = _sensor_names(f)
    for field in (fields or FIELDS):
        if field == SENSORDATA or field in sensors and field not in FIELDS:
            if SENSORDATA not in f:
                raise InputError(f"{f.filename} does not hold sensordata; record it with `rigidsim run ... "
                                 f"--record {SENSORDATA}` (the default for a scene with sensors)", where="--fields")
            picked = range(len(sensors)) if field == SENSORDATA else (sensors.index(field),)
            out.extend(_sensor_panel(r, i, sensors[i]) for i in picked)
            continue
        ok, need = _available(f, field)
        if not ok:
            if fields is not None:
                raise InputError(f"{f.filename} does not hold what '{field}' draws; record it with "
                                 f"`rigidsim run ... --record {need}`", where="--fields")
            if field == "energy":
                notes.append(f"energy: not drawn, {f.filename} does not hold the body poses (record xpos,xquat)")
            continue
        if field == "contacts" and fields is None and f["contacts/force"].shape[0] == 0:
            notes.append(f"contacts: not drawn, {f.filename} holds no contact in any frame")
            continue
        if field in ("qpos", "qvel"):
            p = _coordinate_panel(r, field)
            if p is not None:
                out.append(p)
        elif field == "energy":
            out.append(_energy_panel(r, notes))
        elif field == "contacts":
            out.extend(_contact_panels(r))
        else:
            out.append(_solver_panel(r))
    if not out:
        raise InputError(f"{f.filename} holds nothing to plot (no qpos, qvel, body poses, contacts or solver "
                         f"counts); record some with `rigidsim run ... --record`, or name sensors with --fields")
    return out, r


def _legend(ax) -> None:
    handles, labels = ax.get_legend_handles_labels()
    shown = min(len(handles), MAX_LEGEND)
    title = f"first {shown} of {len(handles)}" if shown < len(handles) else None
    ncol = -(-shown // 16)
    ax.legend(handles[:shown], labels[:shown], loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small" if shown <= 8 else "x-small", ncol=ncol, title=title, title_fontsize="x-small",
              frameon=False)


def build_figure(f: "h5py.File", env: Optional[int] = None, fields: Optional[Sequence[str]] = None,
                 notes: Optional[List[str]] = None) -> "Figure":
    """The matplotlib Figure of an open trajectory file: one axes per panel (see the module's docstring).
    `env`: one env alone; None: env 0 of a one-env file, else the mean and min-max band over every env."""
    require_matplotlib()
    from matplotlib.figure import Figure

    ps, r = panels(f, env, fields, notes)
    band = env is None and r.B > 1
    fig = Figure(figsize=(11.0, 1.2 + 2.4 * len(ps)), layout="constrained")
    axes = fig.subplots(len(ps), 1, sharex=True, squeeze=False)[:, 0]
    colors = [f"C{i}" for i in range(10)]
    for ax, p in zip(axes, ps):
        ax.set_label(p.field)
        for i, s in enumerate(p.series):
            style = dict(color=colors[i % 10], linestyle=_STYLES[(i // 10) % len(_STYLES)], linewidth=1.2)
            if band:
                ax.plot(r.time, s.values.mean(axis=1), label=s.label, **style)
                ax.fill_between(r.time, s.values.min(axis=1), s.values.max(axis=1), color=style["color"],
                                alpha=0.2, linewidth=0, label=f"_min-max {s.label}")
            else:
                ax.plot(r.time, s.values[:, 0], label=s.label, **style)
        ax.set_ylabel(p.ylabel, fontsize="small")
        ax.grid(True, alpha=0.3)
        if len(p.series) > 1 or band or p.field in ("qpos", "qvel"):
            _legend(ax)
    axes[-1].set_xlabel("time (s)")
    name = Path(f.filename).name
    scene = f.attrs.get("scene", "")
    scene = scene.decode() if isinstance(scene, bytes) else scene
    who = (f"mean over {r.B} envs, band: min-max over envs" if band else
           f"env {env if env is not None else 0} of {r.B}")
    title = f"{name}: scene {scene}, {r.T} frames, {who}"
    if not bool(f.attrs.get("complete", True)):
        title += " (incomplete run: complete = false)"
    fig.suptitle(title, fontsize="medium")
    return fig


def save_figure(fig: "Figure", out: str | Path) -> Path:
    """Write the figure; its format (png, svg, pdf) is the extension's."""
    out = Path(out)
    fmt = out_format(out)
    try:
        fig.savefig(out, format=fmt, dpi=100)
    except OSError as e:
        raise InputError(f"cannot write {out} ({e})", where="--out") from None
    return out


@dataclasses.dataclass
class PlotResult:
    out: Path
    panels: List[str]
    notes: List[str]


def plot_file(path: str | Path, out: Optional[str | Path] = None, env: Optional[int] = None,
              fields: Optional[str] = None) -> PlotResult:
    """The command: check the arguments, draw the file's figure, write it to `out` (default: the input's name
    with .png, beside it)."""
    from rigidsim.trajectory import check_out

    wanted = parse_fields(fields)
    out = Path(out) if out is not None else Path(path).with_suffix(".png")
    out_format(out)
    require_matplotlib()
    notes: List[str] = []
    with open_trajectory(path) as f:
        check_out(out)
        fig = build_figure(f, env, wanted, notes)
    save_figure(fig, out)
    return PlotResult(out, [ax.get_label() for ax in fig.axes], notes)
