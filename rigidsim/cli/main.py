"""The `rigidsim` command line (docs/SPEC.md): run, inspect, options, scenes, plot, diff, compare, sweep, view.

This module only parses arguments, prints and maps errors to exit codes:
2 for bad input, 1 for a failed simulation, 130 for Ctrl-C, 143 for SIGTERM. It never shows a
Python traceback unless RIGIDSIM_DEBUG=1 is set.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from rigidsim.version import __version__
from rigidsim.errors import InputError, OutputError, RigidsimError

def _flags_shown_as_flags() -> None:
    """typer 0.29's help shows each option's value type, a flag's as `<bool>`, as though it took a value
    (`--quiet <bool>`); a flag takes none, so its type column is left empty. Another typer is left as it is."""
    try:
        from typer.core import TyperOption
    except ImportError:
        return
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_rigidsim", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and getattr(self, "metavar", None) is None:
            return None
        return shown(self, ctx)

    display_type_rich._rigidsim = True
    TyperOption.display_type_rich = display_type_rich


_flags_shown_as_flags()

# help is rendered with rich markup (explicit: older typer defaults differ), so a literal "[" in help is "\\["
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode="rich",
                  help="rigidsim: batched rigid-body simulation with MuJoCo's physics, in Taichi.",
                  context_settings={"help_option_names": ["-h", "--help"]})


class _LazyConsole:
    """A rich Console made on first use: a `--quiet` run that succeeds never imports rich (~20 ms of a
    0.8 s warm start)."""

    def __init__(self, **kw):
        self._kw = kw
        self._made = None

    def console(self):
        if self._made is None:
            from rich.console import Console

            self._made = Console(**self._kw)
        return self._made

    def __getattr__(self, name):
        return getattr(self.console(), name)


out = _LazyConsole(highlight=False)
err = _LazyConsole(stderr=True, highlight=False)


def _fail(e: BaseException) -> None:
    if isinstance(e, RigidsimError):
        from rich.text import Text

        kind = ("error" if isinstance(e, InputError) else "write failed" if isinstance(e, OutputError)
                else "simulation failed")
        err.print(Text.assemble((f"rigidsim: {kind}: ", "bold red"), str(e)), soft_wrap=True)
        raise typer.Exit(e.exit_code)
    raise e


def _version(value: bool):
    if value:
        out.print(f"rigidsim {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version.")):
    pass


COMPILING = "compiling kernels for this scene (first use only)"
COMPILED = "compiled the kernels in {seconds:.1f} s (cached for the next runs)"


def _plain_compiling(seconds: Optional[float]) -> None:
    """The compile notice of a run whose stderr is not a terminal (a log, a pipe): one line before, one after."""
    from rich.text import Text

    text = f"{COMPILING}..." if seconds is None else COMPILED.format(seconds=seconds)
    err.print(Text(f"rigidsim: {text}"), soft_wrap=True)


def _record_help() -> str:
    """--record's help, from the list of recordable fields itself."""
    from rigidsim.recordable import DEFAULT_RECORD, RECORDABLE

    return (f"Comma list of fields to record, any of: {', '.join(RECORDABLE)} "
            f"(default {','.join(DEFAULT_RECORD)}).")


@app.command()
def run(
    scene: str = typer.Argument(..., help="MJCF (.xml) or URDF (.urdf) file, or the name of a bundled scene."),
    options: Optional[str] = typer.Option(None, "--options", help="YAML options file (RigidOptions)."),
    steps: int = typer.Option(1000, "--steps", help="Number of steps."),
    envs: int = typer.Option(1, "--envs", help="Number of environments B."),
    out_path: str = typer.Option("trajectory.h5", "--out", help="Output HDF5 file."),
    keyframe: Optional[str] = typer.Option(None, "--keyframe", help="Start from this MJCF <key> (name or index)."),
    init: Optional[str] = typer.Option(None, "--init", help=".npy initial states per env: \\[B, nq] (qpos) or \\[B, nq+nv] "
                                       "(qpos and qvel)."),
    ctrl: Optional[str] = typer.Option(None, "--ctrl", help=".npy controls: \\[nu], \\[N, nu] or \\[N, B, nu]."),
    record: Optional[str] = typer.Option(None, "--record", help=_record_help()),
    every: int = typer.Option(1, "--every", help="Record every K-th step (frame 0 is the initial state)."),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="Override one option: KEY=VALUE (repeatable)."),
    precision: Optional[int] = typer.Option(None, "--precision", help="32 or 64 (default 64 on CPU, 32 on a GPU)."),
    backend: str = typer.Option("cpu", "--backend", help="cpu, gpu (CUDA), vulkan or auto (CUDA, else Vulkan, else the CPU)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the reset noise (init_qpos_noise, init_qvel_noise); recorded in the file."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
    compression: str = typer.Option("none", "--compression", help="HDF5 compression of the trajectory: none, lzf or gzip."),
):
    """Simulate SCENE for --steps steps in --envs environments and write the trajectory to --out."""
    from rigidsim.runner import RunArgs, run as do_run

    args = RunArgs(scene=scene, options=options, steps=steps, envs=envs, out=out_path, keyframe=keyframe, init=init,
                   ctrl=ctrl, record=record, every=every, sets=sets or (), precision=precision, backend=backend,
                   seed=seed, quiet=quiet, compression=compression)
    show = (not quiet) and err.is_terminal
    try:
        if show:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeRemainingColumn

            # no stdout/stderr redirection: Taichi must see the real streams when it starts
            with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                          TextColumn("{task.completed}/{task.total} steps"),
                          TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=err.console(), transient=True,
                          redirect_stdout=False, redirect_stderr=False) as bar:
                task = bar.add_task("building the engine", total=max(steps, 1), rate="")

                def progress(done: int, total: int, seconds: float) -> None:
                    rate = f"{done * envs / seconds:,.0f} env-steps/s" if seconds > 0 and done else ""
                    bar.update(task, completed=done, rate=rate, description="simulating")

                def compiling(seconds: Optional[float]) -> None:
                    if seconds is None:  # drawn now: the compiler may hold the interpreter until it is done
                        bar.update(task, description=f"{COMPILING}…")
                        bar.refresh()
                    else:
                        bar.console.print(f"rigidsim: {COMPILED.format(seconds=seconds)}", highlight=False)
                        bar.update(task, description="building the engine")

                res = do_run(args, progress, compiling)
        else:
            res = do_run(args, compiling=None if quiet else _plain_compiling)
    except KeyboardInterrupt:
        err.print("rigidsim: interrupted")
        raise typer.Exit(130)
    except RigidsimError as e:
        _fail(e)
    if res.notes:
        from rich.text import Text

        for note in res.notes:  # shown with --quiet too: they are about data of the user's
            err.print(Text(f"rigidsim: note: {note}"), soft_wrap=True)
    if res.message:
        from rich.text import Text

        err.print(Text(f"rigidsim: {res.message}"), soft_wrap=True)
        raise typer.Exit(res.exit_code or 130)  # 130 after Ctrl-C, 143 after SIGTERM
    if not quiet:
        rate = res.steps_done * envs / res.seconds if res.seconds > 0 else 0.0
        err.print(f"wrote {res.out}: {res.frames} frames, {steps} steps x {envs} envs in {res.seconds:.2f} s "
                  f"({rate:,.0f} env-steps/s; engine build {res.build_seconds:.1f} s)", soft_wrap=True)


@app.command()
def inspect(
    scene: str = typer.Argument(..., help="MJCF or URDF file, or a bundled scene name."),
    options: Optional[str] = typer.Option(None, "--options", help="YAML options file."),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="Override one option: KEY=VALUE."),
):
    """Summarize a scene: bodies, joints, dofs, geoms, actuators, constraints, options in force."""
    from rigidsim.cli.report import inspect_tables

    try:
        for t in inspect_tables(scene, options, sets or ()):
            out.print(t)
    except RigidsimError as e:
        _fail(e)


@app.command("options")
def options_cmd(cfg: Optional[str] = typer.Argument(None, help="An options file to validate and show.")):
    """Print every option with its default and meaning; with CFG, validate it and show its values."""
    from rigidsim.cli.report import options_table

    try:
        out.print(options_table(cfg, out.width))
    except RigidsimError as e:
        _fail(e)
    if cfg:
        err.print(f"{cfg}: valid")


@app.command()
def scenes():
    """List the bundled scenes (run one with `rigidsim run NAME`)."""
    from rigidsim.cli.report import scenes_table

    out.print(scenes_table())


@app.command()
def plot(
    trajectory: str = typer.Argument(..., help="A trajectory file written by `rigidsim run`."),
    out_path: Optional[str] = typer.Option(None, "--out", help="Figure file, .png, .svg or .pdf (default: the "
                                           "input's name with .png, beside it)."),
    env: Optional[int] = typer.Option(None, "--env", help="Plot env B alone (default: the mean and min-max band "
                                      "over every env; env 0 of a one-env file)."),
    fields: Optional[str] = typer.Option(None, "--fields", help="Comma list of qpos,qvel,energy,contacts,solver "
                                         "(default: every one the file holds), sensordata (a panel per sensor) "
                                         "or sensors' names."),
):
    """Plot a trajectory file: qpos and qvel per joint, energy, contacts and normal force, solver counts, sensors.

    Needs matplotlib: pip install 'rigidsim\\[plot]'."""
    from rigidsim.plot import plot_file

    try:
        res = plot_file(trajectory, out_path, env, fields)
    except RigidsimError as e:
        _fail(e)
    from rich.text import Text

    for note in res.notes:
        err.print(Text(f"rigidsim: note: {note}"), soft_wrap=True)
    err.print(Text(f"wrote {res.out}: {len(res.panels)} panels ({', '.join(res.panels)})"), soft_wrap=True)


@app.command()
def diff(
    a: str = typer.Argument(..., metavar="A.h5", help="First trajectory file (A)."),
    b: str = typer.Argument(..., metavar="B.h5", help="Second trajectory file (B)."),
    rtol: Optional[List[str]] = typer.Option(None, "--rtol", help="Relative tolerance: R for every field, or "
                                             "FIELD=R for one (repeatable). Default 0."),
    atol: Optional[List[str]] = typer.Option(None, "--atol", help="Absolute tolerance: A for every field, or "
                                             "FIELD=A for one, e.g. qpos=1e-9 or contacts.force=1e-6 (repeatable). "
                                             "Default 0."),
    fields: Optional[str] = typer.Option(None, "--fields", help="Comma list of fields to compare, e.g. "
                                         "qpos,xpos,contacts,model (default: every field of either file)."),
    json_path: Optional[str] = typer.Option(None, "--json", help="Also write the report as JSON to this file "
                                            "('-': to stdout, instead of the table)."),
):
    """Compare two trajectory files field by field, the contacts by geom pair, and the attributes.

    A value differs when |a - b| > atol + rtol*|b| (b: B's value). Exit 0 when equal within tolerance, 1 when they differ, 2 for bad input.
    """
    from rigidsim.diff import diff_files, write_json

    try:
        report = diff_files(a, b, rtol=rtol or (), atol=atol or (), fields=fields)
        if json_path:
            write_json(report, json_path)
    except RigidsimError as e:
        _fail(e)
    if json_path != "-":
        from rigidsim.cli.diff_view import render

        render(report, out)
    raise typer.Exit(report.exit_code)


@app.command()
def compare(
    scene: str = typer.Argument(..., help="MJCF (.xml) or URDF (.urdf) file, or the name of a bundled scene."),
    steps: int = typer.Option(100, "--steps", help="Steps of the trajectory compared."),
    envs: int = typer.Option(1, "--envs", help="Environments of our free run; they must agree bit for bit."),
    keyframe: Optional[str] = typer.Option(None, "--keyframe", help="Start from this MJCF <key> (default: key 0 "
                                           "when the scene has one, else qpos0)."),
    options: Optional[str] = typer.Option(None, "--options", help="YAML options file (RigidOptions)."),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="Override one option: KEY=VALUE (repeatable)."),
    json_path: Optional[str] = typer.Option(None, "--json", help="Also write the report as JSON to this file."),
):
    """Run SCENE in rigidsim and in MuJoCo from the same state and compare them stage by stage: the compiled
    model, kinematics, contacts, constraint forces, one re-synchronised step and the free run. Exit 0 when every
    stage is within its tolerance, 1 when one is not. Needs the mujoco package (pip install 'rigidsim\\[mujoco]')."""
    from rigidsim.compare import report
    from rigidsim.compare.stages import CompareArgs, compare as do_compare

    try:
        if json_path is not None and not os.path.isdir(os.path.dirname(os.path.abspath(json_path))):
            raise InputError(f"cannot write {json_path}: its folder does not exist", where="--json")
        c = do_compare(CompareArgs(scene=scene, options=options, sets=sets or (), steps=steps, envs=envs,
                                   keyframe=keyframe))
        if json_path is not None:
            try:
                report.write_json(c, json_path)
            except OSError as e:
                raise InputError(f"cannot write {json_path}: {e.strerror}", where="--json") from None
    except KeyboardInterrupt:
        err.print("rigidsim: interrupted")
        raise typer.Exit(130)
    except RigidsimError as e:
        _fail(e)
    if out.is_terminal:
        out.print(report.table(c))
    else:
        out.print(report.plain(c), markup=False, soft_wrap=True)
    for note in c.notes:
        out.print(f"note: {note}", markup=False, soft_wrap=True)
    out.print(report.verdict(c), markup=False, soft_wrap=True)
    if not c.ok:
        raise typer.Exit(1)


@app.command()
def sweep(
    grid: str = typer.Argument(..., metavar="GRID.yaml", help="The grid file: scenes, seeds, options, grid, cases, and "
                               "run settings (docs/SPEC.md, Sweeps)."),
    out_dir: str = typer.Option(..., "--out", help="Folder of the jobs' files and manifest.jsonl (made if missing)."),
    backend: str = typer.Option("local", "--backend", help="local (worker processes on this machine) or ray (a Ray "
                                "cluster: pip install 'rigidsim\\[ray]')."),
    address: Optional[str] = typer.Option(None, "--address", help="The Ray cluster's address, HOST:PORT (default: "
                                          "$RAY_ADDRESS)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", help="Jobs at once (default: cores / T locally, the cluster's "
                                       "CPUs / T on Ray)."),
    threads_per_job: int = typer.Option(1, "--threads-per-job", help="T: engine threads (and Ray CPUs) of each job."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Compare each job's file with this folder's file "
                                           "of the same id (rigidsim diff); exit 1 when any differs."),
    rtol: Optional[List[str]] = typer.Option(None, "--rtol", help="The baseline comparison's relative tolerance: R, "
                                             "or FIELD=R (repeatable). Default 0."),
    atol: Optional[List[str]] = typer.Option(None, "--atol", help="Its absolute tolerance: A, or FIELD=A "
                                             "(repeatable). Default 0."),
    resume: bool = typer.Option(False, "--resume", help="Skip the jobs the folder's manifest lists as done."),
    retries: int = typer.Option(2, "--retries", help="Runs again of a job whose worker or node was lost (a job that "
                                "fails is not retried)."),
    json_path: Optional[str] = typer.Option(None, "--json", help="Also write the report as JSON to this file "
                                            "('-': to stdout, instead of the table)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no table: only the jobs that failed "
                               "or differ, and the verdict."),
):
    """Run every job of GRID (scenes x seeds x option overrides) into --out, on worker processes that keep their
    compiled kernels between jobs, or on a Ray cluster. Exit 0 when every job ran (and equals --baseline), 1 when
    one failed or differs, 2 for bad input, 130 after Ctrl-C (--resume runs what is missing)."""
    from rich.text import Text

    from rigidsim.cli import sweep_view as sv
    from rigidsim.sweeps import Terminated, sweep as do_sweep

    if json_path not in (None, "-") and not os.path.isdir(os.path.dirname(os.path.abspath(json_path))):
        _fail(InputError(f"cannot write {json_path}: its folder does not exist", where="--json"))
    done = [0]
    show_bar = (not quiet) and err.is_terminal
    bar = task = None

    def started(workers: str, to_run: int, skipped: int) -> None:
        nonlocal bar, task
        if quiet:
            return
        more = f" ({skipped} done before)" if skipped else ""
        err.print(Text(f"rigidsim: sweep of {to_run} jobs{more} on {workers}"), soft_wrap=True)
        if show_bar:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("jobs"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           console=err.console(), transient=True)
            bar.start()
            task = bar.add_task("jobs", total=to_run)

    def progress(n: int, total: int, entry) -> None:
        done[0] += 1
        if bar is not None:
            bar.update(task, advance=1)
            if entry["status"] != "ok":
                bar.console.print(Text(sv.job_line(entry)), soft_wrap=True)
        elif not quiet:
            err.print(Text(f"[{n}/{total}] {sv.job_line(entry)}"), soft_wrap=True)

    try:
        try:
            report = do_sweep(grid, out_dir, backend=backend.lower(), address=address, jobs=jobs,
                              threads_per_job=threads_per_job, baseline=baseline, rtol=rtol or (), atol=atol or (),
                              resume=resume, retries=retries, progress=progress, started=started)
        finally:
            if bar is not None:
                bar.stop()
    except (KeyboardInterrupt, Terminated) as e:
        code = 143 if isinstance(e, Terminated) else 130
        err.print(Text(f"rigidsim: {'interrupted' if code == 130 else 'stopped by SIGTERM'} after {done[0]} jobs of "
                       f"this sweep; their files and lines are in {out_dir} (no partial file is left). Run the "
                       f"same command with --resume to run the rest."), soft_wrap=True)
        raise typer.Exit(code)
    except RigidsimError as e:
        _fail(e)
    if json_path:
        import json

        text = json.dumps(report.to_json(), indent=1)
        if json_path == "-":
            print(text)
        else:
            try:
                with open(json_path, "w") as f:
                    f.write(text + "\n")
            except OSError as e:
                err.print(Text(f"rigidsim: cannot write {json_path}: {e.strerror}"), soft_wrap=True)
                raise typer.Exit(2)
    if json_path != "-":
        if quiet:
            for line in sv.problems(report):
                out.print(Text(line), soft_wrap=True)
        elif out.is_terminal:
            out.print(sv.table(report))
        else:
            for e in report.jobs:
                out.print(Text(sv.job_line(e)), soft_wrap=True)
        out.print(Text(sv.verdict(report)), soft_wrap=True)
    raise typer.Exit(report.exit_code)


@app.command()
def view(
    trajectory: str = typer.Argument(..., help="A trajectory file written by `rigidsim run` (needs xpos and xquat)."),
    save: Optional[str] = typer.Option(None, "--save", help="Write the replay to this Rerun recording (.rrd) and "
                                       "exit; open it later with `rerun OUT.rrd`."),
    web: bool = typer.Option(False, "--web", help="Serve the Rerun web viewer (http://localhost:9090) until Ctrl-C."),
    env: Optional[int] = typer.Option(None, "--env", help="Replay env B (default 0)."),
    envs: Optional[str] = typer.Option(None, "--envs", help="Replay these envs side by side on a grid: a comma list "
                                       "such as 0,1,2,3."),
    force_scale: Optional[float] = typer.Option(None, "--force-scale", help="Contact force arrows in m per N "
                                                "(default: the largest force a quarter of the grid spacing long)."),
):
    """Replay a trajectory file in 3D with the Rerun viewer: every geom posed per frame, contact points and
    force arrows, qpos and qvel series beside it, a time slider.

    Without --save or --web the native viewer opens. Needs the Rerun SDK: pip install 'rigidsim\\[viz]'."""
    from rich.text import Text

    from rigidsim.view import view_file

    def wait(message, notes):
        import time

        for note in notes:
            err.print(Text(f"rigidsim: note: {note}"), soft_wrap=True)
        notes.clear()
        err.print(Text(message), soft_wrap=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

    try:
        res = view_file(trajectory, save, web, env, envs, force_scale, wait=wait)
    except RigidsimError as e:
        _fail(e)
    for note in res.notes:
        err.print(Text(f"rigidsim: note: {note}"), soft_wrap=True)
    err.print(Text(res.message), soft_wrap=True)


def entry() -> None:
    """Console-script entry point: no traceback ever reaches the user unless RIGIDSIM_DEBUG=1."""
    try:
        app()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            err.print(str(e.code), markup=False)
    except KeyboardInterrupt:
        err.print("rigidsim: interrupted")
        code = 130
    except RigidsimError as e:
        err.print(f"rigidsim: error: {e}", markup=False)
        code = e.exit_code
    except Exception as e:  # an internal error: say so plainly
        if os.environ.get("RIGIDSIM_DEBUG"):
            raise
        err.print(f"rigidsim: internal error: {type(e).__name__}: {e}. Please report it "
                  f"(set RIGIDSIM_DEBUG=1 for the traceback).", markup=False)
        code = 1
    _exit(code)


def _exit(code: int) -> None:
    """Leave with `code`. After the engine ran, the kernel runtime is finalised (its offline cache written)
    and Python's exit handlers run, then the process ends without the interpreter's module teardown, which
    costs about 0.1 s with the kernel language loaded: a tenth of a warm start. Every file is closed by
    then (the writer closes and renames its file before `run` returns)."""
    from rigidsim.engine import runtime

    if runtime.settings() is None or os.environ.get("RIGIDSIM_SLOW_EXIT"):
        sys.exit(code)
    import atexit

    sys.stdout.flush()
    sys.stderr.flush()
    runtime.finalize()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

if __name__ == "__main__":
    entry()
