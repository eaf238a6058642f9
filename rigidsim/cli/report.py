"""Rich tables for `rigidsim inspect`, `rigidsim options` and `rigidsim scenes`."""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np
from rich.table import Table

from rigidsim import options as opts
from rigidsim.bundled import describe, scene_files
from rigidsim.loaders import load_scene
from rigidsim import model as M

_JNT = {M.JNT_FREE: "free", M.JNT_BALL: "ball", M.JNT_SLIDE: "slide", M.JNT_HINGE: "hinge"}
_GEOM = {M.GEOM_PLANE: "plane", M.GEOM_HFIELD: "hfield", M.GEOM_SPHERE: "sphere", M.GEOM_CAPSULE: "capsule",
         M.GEOM_ELLIPSOID: "ellipsoid", M.GEOM_CYLINDER: "cylinder", M.GEOM_BOX: "box", M.GEOM_MESH: "mesh"}
_EQ = {M.EQ_CONNECT: "connect", M.EQ_WELD: "weld", M.EQ_JOINT: "joint", M.EQ_TENDON: "tendon"}


def _count_by(codes, names) -> str:
    if len(codes) == 0:
        return "0"
    vals, counts = np.unique(np.asarray(codes), return_counts=True)
    parts = ", ".join(f"{c} {names.get(int(v), str(int(v)))}" for v, c in zip(vals, counts))
    return f"{len(codes)} ({parts})"


def inspect_tables(scene: str, options_file: Optional[str], sets: Sequence[str]) -> List[Table]:
    m = load_scene(scene)
    file_opts = opts.load_yaml(options_file) if options_file else {}
    r = opts.resolve(m, file_opts, opts.parse_set(sets))
    from rigidsim.engine.collision_pairs import collision_pairs
    from rigidsim.runner import unsupported

    t = Table(title=f"{scene}", show_header=True)
    t.add_column("element")
    t.add_column("count", justify="left")
    t.add_row("bodies", f"{m.nbody} (world included), {int(m.nmocap)} mocap")
    t.add_row("joints", _count_by(m.jnt_type, _JNT))
    t.add_row("dofs (nv) / qpos (nq)", f"{m.nv} / {m.nq}")
    t.add_row("geoms", _count_by(m.geom_type, _GEOM))
    t.add_row("sites", str(m.nsite))
    t.add_row("actuators (nu) / activations (na)", f"{m.nu} / {m.na}")
    t.add_row("equality constraints", _count_by(m.eq_type, _EQ))
    t.add_row("limited joints", str(int(np.count_nonzero(m.jnt_limited))))
    t.add_row("dofs with friction loss", str(int(np.count_nonzero(m.dof_frictionloss > 0))))
    t.add_row("tendons", str(m.ntendon))
    table, explicit = collision_pairs(m, r)
    t.add_row("candidate collision pairs", f"{len(table)} ({int(explicit.sum())} explicit <pair>)")
    if len(table):
        from collections import Counter

        from rigidsim.engine.collision.params import BUILT, pair_table

        kinds = Counter(pair_table(m, table, explicit)["collider"])
        t.add_row("pairs per collider", ", ".join(f"{k} {n}" + ("" if k in BUILT else " (not built yet)")
                                                  for k, n in sorted(kinds.items())))
    t.add_row("keyframes", ", ".join(n or f"#{i}" for i, n in enumerate(m.names["key"])) or "0")
    t.add_row("total mass (kg)", f"{float(m.body_mass.sum()):.6g}")
    missing = unsupported(m, r)
    t.add_row("not supported yet", "; ".join(missing) if missing else "nothing: this scene runs")

    o = Table(title="options in force", show_header=True)
    o.add_column("option")
    o.add_column("value")
    o.add_column("from")
    scene_set = opts.scene_options(m)
    for k in opts.SPECS:
        src = ("--set" if k in dict(opts.parse_set(sets)) else "options file" if k in file_opts
               else "scene <option>" if k in scene_set else "default")
        o.add_row(k, opts._fmt(r[k]), src)
    out = [t, o]
    if len(table) and not missing:
        warn = penetrating_warning(m, r)
        if warn:
            out.append(warn)
    return out


def _geom_label(m, g: int) -> str:
    name = m.names["geom"][g] or f"geom {g}"
    return f"{name} (body {m.names['body'][int(m.geom_bodyid[g])] or int(m.geom_bodyid[g])})"


def penetrating_warning(m, r) -> str:
    """A warning naming the candidate geom pairs that already penetrate at qpos0, or '' when none do."""
    import numpy as np

    from rigidsim.engine.simulator import Simulator

    sim = Simulator(opts.apply(m, r), 1, kinematics_only=True, pair_options=r)
    sim.reset()
    sim.collide()
    c = sim.contacts()
    deep = {}
    for (a, b), dist in zip(c["geom"].tolist(), c["dist"].tolist()):
        if dist < 0:
            key = (min(a, b), max(a, b))
            deep[key] = min(deep.get(key, 0.0), dist)
    if not deep:
        return ""
    rows = [f"  {_geom_label(m, a)} and {_geom_label(m, b)}: {-d * 1000:.3g} mm" for (a, b), d in sorted(deep.items())]
    return ("warning: these geom pairs already penetrate in the initial state (qpos0), so the first steps push "
            "them apart with large contact forces:\n" + "\n".join(rows) + "\n" + "fix the geometry or the initial "
            "pose, or keep them from colliding (contype/conaffinity, <exclude>; for a child of a fixed base, "
            "enable_adjacent_collision: false without enable_mujoco_compatibility)")


TABLE_MIN_WIDTH = 140  # below this many columns `rigidsim options` lists the options instead of a table


def _option_rows(cfg: Optional[str]):
    """(name, type, default, value in the file or None, meaning) of every option."""
    values = opts.load_yaml(cfg) if cfg else {}
    for k, s in opts.SPECS.items():
        kind = " | ".join(s.choices) if s.kind == "enum" else s.kind
        yield (k, kind + (" | null" if s.nullable else ""), opts._fmt(s.default),
               opts._fmt(values[k]) if k in values else None, s.help)


def options_table(cfg: Optional[str], width: int = TABLE_MIN_WIDTH):
    """Every option with its type, default, meaning (and with `cfg`, its value in that file): a table on a
    console `width` columns wide or wider than TABLE_MIN_WIDTH (20 more with `cfg`); below, a list that
    gives each meaning the whole width, indented under a line with the option's name, type and default (a
    four-column table there squeezes the meanings into a column a dozen characters wide)."""
    title = "RigidOptions" + (f" ({cfg})" if cfg else "")
    rows = list(_option_rows(cfg))
    if width < TABLE_MIN_WIDTH + (20 if cfg else 0):  # the file's values take a column more
        import textwrap

        from rich.text import Text

        def wrapped(text: str, first: str) -> str:
            return "\n".join(textwrap.wrap(text, max(width - 1, 20), initial_indent=first, subsequent_indent=" " * 4,
                                            break_long_words=False, break_on_hyphens=False))

        out = Text(title, style="bold")
        for k, kind, default, value, meaning in rows:
            head = f"{kind}; default {default}" + (f"; in the file: {value}" if value is not None else "")
            out.append("\n")
            out.append(k, style="bold cyan")
            out.append(wrapped(head, " " * (len(k) + 2))[len(k):])
            out.append("\n" + wrapped(meaning, " " * 4))
        return out
    t = Table(title=title, show_lines=False)
    t.add_column("option", no_wrap=True)
    t.add_column("type", max_width=24)  # the longest enums wrap at their " | "
    t.add_column("default")
    if cfg:
        t.add_column("in file")
    t.add_column("meaning", min_width=50)
    for k, kind, default, value, meaning in rows:
        t.add_row(k, kind, default, *([value or ""] if cfg else []), meaning)
    return t


def scenes_table() -> Table:
    t = Table(title="bundled scenes (rigidsim run NAME)")
    t.add_column("name", no_wrap=True)
    t.add_column("description")
    for p in scene_files():
        name, desc = describe(p)
        t.add_row(name, desc)
    return t
