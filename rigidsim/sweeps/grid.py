"""A sweep's grid file (docs/SPEC.md, "Sweeps"): read, checked whole, and expanded into jobs.

Every job is one `rigidsim run`: a scene, a seed, the options file's values with one set of overrides (a
point of `grid`'s cross product merged with one of `cases`), and the run settings every job shares (envs,
steps, record, ...). Everything wrong in the file, an unknown scene included, is an InputError naming the
key before any job starts. A job's id is the first 12 hex digits of the SHA-256 of its canonical JSON (the
scene file's SHA-256, the seed, the overrides, the run settings), so it does
not change between runs, machines or rigidsim versions, and names the job's file `<scene stem>-<id>.h5`.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import yaml

from rigidsim import options as opts
from rigidsim.errors import InputError

# run settings: the keys `rigidsim run` takes as flags, with their defaults there
RUN_KEYS = {"envs": 1, "steps": 1000, "record": None, "every": 1, "keyframe": None, "init": None, "ctrl": None,
            "precision": None, "compression": "none"}
KEYS = ("scenes", "seeds", "options", "grid", "cases") + tuple(RUN_KEYS)


@dataclasses.dataclass
class Scene:
    """One scene of the grid: as the grid file names it, the file it resolves to, its SHA-256, the compiled
    Model (shipped to the workers by value: they need no copy of the file or its assets)."""
    name: str
    path: Path
    sha256: str
    model: Any
    stem: str


@dataclasses.dataclass
class Job:
    id: str
    scene: Scene
    seed: int
    overrides: Dict[str, Any]
    file: str  # the job's file name in the sweep's folder

    def label(self) -> str:
        over = overrides_text(self.overrides)
        return f"{self.scene.name} seed {self.seed}" + (f" ({over})" if over else "")


@dataclasses.dataclass
class Grid:
    """A grid file, read and checked: its jobs and what they share."""
    path: Optional[Path]
    scenes: List[Scene]
    seeds: List[int]
    options: Dict[str, Any]  # the options file's values (checked), {} without one
    options_path: Optional[str]
    run: Dict[str, Any]  # envs, steps, record, every, keyframe, init, ctrl, precision, compression
    init_array: Optional[np.ndarray]
    ctrl_array: Optional[np.ndarray]
    jobs: List[Job]


_show = opts._fmt  # a value as the grid file would write it


def overrides_text(o: Mapping[str, Any]) -> str:
    """'dt=0.004, friction_cone=elliptic'."""
    return ", ".join(f"{k}={_show(v)}" for k, v in o.items())


def _where(src: str, key: str) -> str:
    return f"{src}: key '{key}'"


def _int(v: Any, key: str, src: str, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise InputError(f"'{key}' must be an integer of at least {low}, got {_show(v)}", where=_where(src, key))
    return int(v)


def _str_list(v: Any, key: str, src: str) -> List[Any]:
    if not isinstance(v, list) or not v:
        raise InputError(f"'{key}' must be a non-empty list, got {_show(v)}", where=_where(src, key))
    return v


def _relative(base: Path, name: str) -> Path:
    p = Path(name).expanduser()
    return p if p.is_absolute() else base / p


def read_file(path: str | Path) -> Tuple[Dict[str, Any], Path]:
    """The grid file's mapping and the folder its relative paths are taken from."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"grid file not found: {p}", where="GRID")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"malformed YAML: {getattr(e, 'problem', None) or e}",
                         where=f"{p}:{mark.line + 1}" if mark else str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the grid file {p}: {e}", where="GRID") from None
    if not isinstance(data, dict):
        raise InputError(f"a grid file must be a YAML mapping (scenes:, seeds:, grid:, ...), got "
                         f"{type(data).__name__}", where=str(p))
    return data, p.resolve().parent


def load(grid: str | Path | Mapping[str, Any], base: Optional[Path] = None) -> Grid:
    """Read and check a grid (a file's path, or its mapping with paths relative to `base`, default the
    current folder), load its scenes and expand its jobs; InputError naming the key for anything wrong."""
    if isinstance(grid, Mapping):
        data, path, src = dict(grid), None, "grid"
        base = Path(base or ".").resolve()
    else:
        data, base = read_file(grid)
        path, src = Path(grid), str(grid)
    for k in data:
        if k not in KEYS:
            close = difflib.get_close_matches(str(k), KEYS, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else f" Keys: {', '.join(KEYS)}."
            raise InputError(f"unknown key '{k}'.{hint}", where=src)
    if "scenes" not in data:
        raise InputError("the grid names no scenes: add 'scenes: [NAME or FILE, ...]'", where=src)

    run = dict(RUN_KEYS)
    for k in RUN_KEYS:
        if k in data and data[k] is not None:
            run[k] = data[k]
    run["envs"] = _int(run["envs"], "envs", src, 1)
    run["steps"] = _int(run["steps"], "steps", src, 0)
    run["every"] = _int(run["every"], "every", src, 1)
    if run["precision"] is not None and run["precision"] not in (32, 64):
        raise InputError(f"'precision' must be 32 or 64, got {_show(run['precision'])}", where=_where(src, "precision"))
    from rigidsim.trajectory import COMPRESSIONS

    if run["compression"] not in COMPRESSIONS:
        raise InputError(f"'compression' must be one of {', '.join(COMPRESSIONS)}, got {_show(run['compression'])}",
                         where=_where(src, "compression"))
    if isinstance(run["record"], list):
        run["record"] = ",".join(str(x) for x in run["record"])
    if run["record"] is not None:
        from rigidsim.runner import parse_record

        try:
            run["record"] = ",".join(parse_record(str(run["record"])))
        except InputError as e:
            raise InputError(e.message, where=_where(src, "record")) from None
    if run["keyframe"] is not None:
        run["keyframe"] = str(run["keyframe"])

    seeds = [_int(s, "seeds", src, 0) for s in _str_list(data.get("seeds", [0]), "seeds", src)]
    if len(set(seeds)) != len(seeds):
        raise InputError(f"'seeds' lists a seed twice: {_show(seeds)}", where=_where(src, "seeds"))

    options, options_path = {}, None
    if data.get("options") is not None:
        if not isinstance(data["options"], str):
            raise InputError(f"'options' must be the path of an options file, got {_show(data['options'])}",
                             where=_where(src, "options"))
        options_path = str(data["options"])
        options = opts.load_yaml(_relative(base, options_path))

    points = _grid_points(data.get("grid"), src)
    cases = _cases(data.get("cases"), src)
    overrides = []
    for point, (ci, case) in itertools.product(points, enumerate(cases)):
        both = sorted(set(point) & set(case))
        if both:
            raise InputError(f"option '{both[0]}' is set both by 'grid' and by case {ci} of 'cases': the job's value "
                             f"would be ambiguous", where=_where(src, "cases"))
        overrides.append({**point, **case})

    init_array = _npy(run["init"], base, "init", src)
    ctrl_array = _npy(run["ctrl"], base, "ctrl", src)
    scenes = [_scene(s, base, src) for s in _str_list(data["scenes"], "scenes", src)]
    names = [s.name for s in scenes]
    if len(set(names)) != len(names):
        raise InputError(f"'scenes' lists a scene twice: {_show(names)}", where=_where(src, "scenes"))
    g = Grid(path=path, scenes=scenes, seeds=seeds, options=options, options_path=options_path, run=run,
             init_array=init_array, ctrl_array=ctrl_array, jobs=[])
    for sc in scenes:
        _check_scene(g, sc, overrides, src)
    seen: Dict[str, Job] = {}
    for sc, seed, over in itertools.product(scenes, seeds, overrides):
        jid = job_id(g, sc, seed, over)
        job = Job(id=jid, scene=sc, seed=seed, overrides=over, file=f"{sc.stem}-{jid}.h5")
        if jid in seen:
            raise InputError(f"two jobs of the grid are the same run: {seen[jid].label()} and {job.label()}",
                             where=src)
        seen[jid] = job
        g.jobs.append(job)
    return g


def _grid_points(grid: Any, src: str) -> List[Dict[str, Any]]:
    if grid is None:
        return [{}]
    if not isinstance(grid, dict):
        raise InputError(f"'grid' must be a mapping of option: [values], got {_show(grid)}", where=_where(src, "grid"))
    axes = []
    for k, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(f"'grid' option '{k}' must list its values ([a, b, ...]), got {_show(values)}",
                             where=_where(src, f"grid.{k}"))
        checked = [opts.check_value(str(k), v, where=_where(src, f"grid.{k}")) for v in values]
        if len({json.dumps(v) for v in checked}) != len(checked):
            raise InputError(f"'grid' option '{k}' lists a value twice: {_show(values)}", where=_where(src, f"grid.{k}"))
        axes.append([(str(k), v) for v in checked])
    return [dict(p) for p in itertools.product(*axes)]


def _cases(cases: Any, src: str) -> List[Dict[str, Any]]:
    if cases is None:
        return [{}]
    if not isinstance(cases, list) or not cases:
        raise InputError(f"'cases' must be a non-empty list of option mappings ({{}} for none), got {_show(cases)}",
                         where=_where(src, "cases"))
    out = []
    for i, c in enumerate(cases):
        if c is None:
            c = {}
        if not isinstance(c, dict):
            raise InputError(f"case {i} of 'cases' must be a mapping of option: value, got {_show(c)}",
                             where=_where(src, "cases"))
        out.append({str(k): opts.check_value(str(k), v, where=_where(src, f"cases[{i}].{k}")) for k, v in c.items()})
    return out


def _npy(name: Any, base: Path, key: str, src: str) -> Optional[np.ndarray]:
    if name is None:
        return None
    from rigidsim.reset import load_npy

    what = "initial-state" if key == "init" else "control"
    try:
        return load_npy(_relative(base, str(name)), what, key)
    except InputError as e:
        raise InputError(e.message, where=_where(src, key)) from None


def _scene(name: Any, base: Path, src: str) -> Scene:
    from rigidsim.loaders import load_scene, resolve_scene
    from rigidsim.trajectory import sha256_of

    if not isinstance(name, str) or not name.strip():
        raise InputError(f"'scenes' must list scene files or bundled scene names, got {_show(name)}",
                         where=_where(src, "scenes"))
    rel = _relative(base, name)
    target = str(rel) if rel.exists() else name  # a file next to the grid file, else a bundled scene's name
    try:
        path = resolve_scene(target)
        model = load_scene(target)
    except InputError as e:
        where = f" ({e.where})" if e.where and e.where != "GRID" else ""
        raise InputError(f"scene '{name}'{where}: {e.message}", where=_where(src, "scenes")) from None
    return Scene(name=name, path=path, sha256=sha256_of(path), model=model, stem=Path(name).stem)


def _check_scene(g: Grid, sc: Scene, overrides: List[Dict[str, Any]], src: str) -> None:
    """What `rigidsim run` checks before its first step, for each set of overrides of this scene, so that no
    job fails for bad input after the sweep started."""
    from rigidsim import runner
    from rigidsim.reset import check_init, keyframe_state

    precision = runner.resolve_precision(g.run["precision"], "cpu", where=_where(src, "precision"))
    m0 = sc.model
    for over in overrides:
        try:
            r = opts.resolve(m0, g.options, over, precision=precision, backend="cpu")
            kinematics_only = g.run["steps"] == 0 and bool(runner.unsupported(m0, r))
            if not kinematics_only:
                runner.check_supported(m0, r)
            m = opts.apply(m0, r)
        except InputError as e:
            over_s = f" with {_show(over)}" if over else ""
            raise InputError(f"scene '{sc.name}'{over_s}: {e.message}", where=_where(src, "scenes")) from None
    try:
        if g.run["keyframe"] is not None:
            keyframe_state(m, g.run["keyframe"])
        if g.init_array is not None:
            check_init(g.init_array, m, g.run["envs"], where=f"init {g.run['init']}")
        if g.ctrl_array is not None:
            runner.load_ctrl(str(g.run["ctrl"]), m.nu, g.run["steps"], g.run["envs"], g.ctrl_array)
    except InputError as e:
        raise InputError(f"scene '{sc.name}': {e.message}", where=src) from None


def _digest(a: Optional[np.ndarray]) -> Optional[str]:
    if a is None:
        return None
    return hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes()).hexdigest()


def canonical(g: Grid, sc: Scene, seed: int, overrides: Mapping[str, Any]) -> str:
    """The job's canonical JSON, in a fixed key order: the scene file's SHA-256, the seed, the overrides and the
    run settings. The options file's values are not part of it (SPEC): a sweep whose options file changed
    keeps its ids, so its files are compared with the baseline's of the same ids, where the options that
    differ are named."""
    run = {k: g.run[k] for k in RUN_KEYS if k not in ("init", "ctrl")}
    run["init"], run["ctrl"] = _digest(g.init_array), _digest(g.ctrl_array)
    doc = {"scene_sha256": sc.sha256, "seed": seed, "overrides": dict(overrides), "run": run}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def job_id(g: Grid, sc: Scene, seed: int, overrides: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(g, sc, seed, overrides).encode()).hexdigest()[:12]
