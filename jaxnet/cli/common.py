"""What every Hydra app shares: where the configs live, the entry point (`hydra_app`) with its
help and its checks of the command line, how errors are reported (`friendly_errors`), and
how a console script ends (`console_script`)."""
from __future__ import annotations

import atexit
import ctypes
import difflib
import functools
import json
import logging
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

from jaxnet.core.configs import CONF_DIR

DEBUG = "JAXNET_DEBUG"  # set to 1 for the traceback of an unexpected error
FAILED = "FAILED"  # marker file a failed job of a sweep leaves in its directory
# Launchers that need a package an extra installs: the extra.
LAUNCHER_PLUGINS = {"slurm": "slurm"}
INTERRUPT_GRACE_S = 0.3  # after Ctrl-C, how long the task may take to stop before the process exits


class RunFailed(RuntimeError):
    """A run that ended in an outcome the user asked to fail on (e.g. a deadlock): one line
    on stderr, exit 3, no debug hint (nothing is wrong with jaxnet)."""


def hydra_app(name: str, config_name: str, experiments: bool = False):
    """Make the decorated task the entry point `main()` of the Hydra app `name` on
    conf/<config_name>.yaml. Before Hydra runs: `--help` prints the app's module docstring,
    its config groups and (`experiments`) the paper experiments, one line each; a key set on
    a config group swept by `-m` is checked against the swept options (`checked_overrides`).
    Hydra's own errors (an unknown key or option, a missing launcher plugin, a malformed
    override, an unwritable run directory) become one line and exit 2 (`hydra_error_line`);
    the task's errors are reported by `friendly_errors`."""
    import hydra

    def decorate(task):
        hydra_main = hydra.main(config_path=CONF_DIR, config_name=config_name, version_base=None)(
            friendly_errors(task))

        @functools.wraps(task)
        def main() -> None:
            args = sys.argv[1:]
            if "--help" in args or "-h" in args:
                print(app_help(name, sys.modules[task.__module__].__doc__ or "", config_name, experiments,
                               config_dirs(args)))
                sys.exit(0)
            argv, full_error = sys.argv, os.environ.get("HYDRA_FULL_ERROR")
            os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra raises its errors instead of printing them
            try:
                sys.argv = [argv[0], *checked_overrides(args)]
                hydra_main()
            except Exception as err:  # noqa: BLE001 (every error becomes one line)
                if os.environ.get(DEBUG) == "1":
                    traceback.print_exception(err)
                    sys.exit(1)
                line, code = hydra_error_line(err, args)
                print(f"error: {' '.join(line.split())}", file=sys.stderr)
                sys.exit(code)
            finally:
                sys.argv = argv
                if full_error is None:
                    os.environ.pop("HYDRA_FULL_ERROR", None)
                else:
                    os.environ["HYDRA_FULL_ERROR"] = full_error

        return main

    return decorate


def console_script(main):
    """The console script of app `main`: runs it, then ends the process as soon as Python's
    exit handlers have run (logs flushed and closed, worker processes ended), without
    unloading every module: JAX's native libraries take longer to unload than a small job
    takes to draw its figures. Exits with `main`'s return value (or as `main` exits); with 1
    and no traceback when whoever reads the output stops reading (`jaxnet --help | head`)."""

    @functools.wraps(main)
    def run() -> None:
        try:
            code = main()
        except BrokenPipeError:
            code = _reader_gone()
        atexit._run_exitfuncs()  # noqa: SLF001 (what a normal exit runs first)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            code = _reader_gone()
        os._exit(code or 0)

    return run


def _reader_gone() -> int:
    """Standard output's reader has gone: later writes go nowhere; exit code 1."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


# ----- the command line, checked against the config files --------------------------------

def group_options(group: str, dirs: list[Path]) -> list[str]:
    """The options of a config group: its YAML files under `<dir>/<group>` for each config
    directory (`config_dirs`), nested ones as `sub/name` (experiments); Hydra's own `basic`
    launcher for hydra/launcher."""
    roots = [d / group for d in dirs]
    options = sorted({str(p.relative_to(root).with_suffix("")) for root in roots if root.is_dir()
                      for p in root.rglob("*.yaml")})
    return ["basic", *options] if group == "hydra/launcher" else options


def config_dirs(args: list[str]) -> list[Path]:
    """Where Hydra looks for config files, in its order: jaxnet's conf/, then the `file://`
    directories of a `hydra.searchpath=[...]` among `args` (docs/experiments.md)."""
    dirs = [Path(CONF_DIR)]
    for override in _parsed(args):
        if override.key_or_group == "hydra.searchpath" and not override.is_sweep_override():
            value = override.value()
            for entry in map(str, value if isinstance(value, list) else [value]):
                if entry.startswith("file://") or "://" not in entry:  # not `pkg://`
                    dirs.append(Path(entry.removeprefix("file://")))
    return dirs


def _config_file(dirs: list[Path], name: str) -> Path | None:
    """`name`.yaml (`experiment/polarized/fig4`) in the first of `dirs` that has it."""
    return next((path for d in dirs if (path := d / f"{name}.yaml").is_file()), None)


def _parsed(args: list[str]) -> list:
    """Hydra's parse of the overrides among `args` (flags and their values left out);
    overrides it cannot parse are left for Hydra to report."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    parsed = []
    for arg in args:
        if "=" in arg and not arg.startswith("-"):
            try:
                parsed.append(parser.parse_override(arg))
            except HydraException:
                continue
    return parsed


def _global_keys(path: Path | None, dirs: list[Path]) -> set[str]:
    """Top-level keys a `# @package _global_` option sets, with the options its defaults list
    names (`/experiment/antmill/rrgs`); none for an option of its group's own package."""
    from omegaconf import OmegaConf

    if path is None or not path.read_text().startswith("# @package _global_"):
        return set()
    config = OmegaConf.load(path)
    keys = {str(k) for k in config if k != "defaults"}
    for entry in config.get("defaults", []):
        if isinstance(entry, str) and entry != "_self_":
            where = dirs if entry.startswith("/") else [path.parent]  # absolute, or relative to this file
            keys |= _global_keys(_config_file(where, entry.lstrip("/")), dirs)
    return keys


def checked_overrides(args: list[str]) -> list[str]:
    """`args` as Hydra should read them. In a multirun, a key set on a config group that the
    sweep also sets (`routing=valiant,rval routing.base=dragonfly_minimal`) belongs to the
    swept options, not to the group's default that Hydra composes the sweep itself from, so
    it is passed as `++key` (set or add); it must be a key of at least one swept option. So is
    a top-level key that swept options of the global package set (`+experiment=a,b
    scale=paper`: `scale` exists only once an experiment is composed)."""
    from omegaconf import OmegaConf

    if "-m" not in args and "--multirun" not in args:
        return args
    parsed, dirs = _parsed(args), config_dirs(args)
    swept = {o.key_or_group: list(o.sweep_string_iterator()) for o in parsed
             if o.is_sweep_override() and group_options(o.key_or_group, dirs)}
    global_keys = {key for group, options in swept.items() for option in options
                   for key in _global_keys(_config_file(dirs, f"{group}/{option}"), dirs)}
    rewritten = {}
    for override in parsed:
        group, _, key = override.key_or_group.partition(".")
        if override.is_hydra_override():  # Hydra's own node, in every config
            continue
        if override.type.name == "CHANGE" and group in global_keys:
            rewritten[override.input_line] = "++" + override.input_line
            continue
        if override.type.name != "CHANGE" or group not in swept or not key:
            continue
        configs = [OmegaConf.load(path) for option in swept[group] if (path := _config_file(dirs, f"{group}/{option}"))]
        if not any(OmegaConf.select(c, key, default=KeyError) is not KeyError for c in configs):
            keys = sorted({k for c in configs for k in c})
            raise ValueError(f"{override.input_line} is invalid: no option of the sweep {group}="
                             f"{','.join(swept[group])} has the key {key}{_closest(key, keys)}")
        rewritten[override.input_line] = "++" + override.input_line
    return [rewritten.get(arg, arg) for arg in args]


def _closest(name: str, names, prefix: str = "") -> str:
    """'; closest: ...' (or '; valid: ...' when nothing is close) for an unknown name."""
    names = [str(n) for n in names]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    if close:
        return "; closest: " + ", ".join(prefix + c for c in close)
    return "; valid: " + (", ".join(prefix + n for n in names) if names else "none")


def hydra_error_line(err: Exception, args: list[str]) -> tuple[str, int]:
    """(one line, exit code) for an error raised before the task ran."""
    from hydra.errors import HydraException, MissingConfigException, OverrideParseException

    if isinstance(err, MissingConfigException) and err.missing_cfg_file:
        missing = err.missing_cfg_file
        for override in _parsed(args):
            group = override.key_or_group
            values = list(override.sweep_string_iterator()) if override.is_sweep_override() else [
                str(override.value())]
            for value in values:
                if missing == f"{group}/{value}":
                    return f"{group}={value} is invalid: no such {group} option" + _closest(
                        value, group_options(group, config_dirs(args))), 2
        return str(err).split("\n")[0], 2
    cause = err.__cause__
    if isinstance(cause, ValueError):  # raised by jaxnet code Hydra called (e.g. the launcher)
        return str(cause), 2
    full_key = getattr(cause, "full_key", None)
    if full_key and "not in struct" in str(cause):
        parent, _, key = full_key.rpartition(".")
        node = getattr(cause, "parent_node", None)
        keys = list(node.keys()) if node is not None and hasattr(node, "keys") else []
        where = parent or "the config"
        return f"{full_key} is not a key of {where}" + _closest(key, keys, f"{parent}." if parent else ""), 2
    if isinstance(err, OverrideParseException):
        bad = next((a for a in args if "=" in a and not a.startswith("-") and not _parsed([a])), None)
        reason = str(err).split("\n")[0]
        return (f"{bad or 'an override'} is not a valid override ({reason}): see "
                "https://hydra.cc/docs/advanced/override_grammar/basic/", 2)
    if isinstance(err, OSError):
        return (f"the run directory cannot be written ({type(err).__name__}: {err}); choose another with "
                "hydra.run.dir=DIR (multirun: hydra.sweep.dir=DIR)", 2)
    if isinstance(err, (HydraException, ValueError)):
        return str(err), 2
    return f"{type(err).__name__}: {err} (rerun with {DEBUG}=1 for the traceback)", 1


def app_help(name: str, doc: str, config_name: str, experiments: bool, dirs: list[Path]) -> str:
    """`--help`: what the app does (its module docstring), how to call it, its config groups
    with their options in `dirs` (`config_dirs`) and (experiments) the experiments, one line
    each."""
    from omegaconf import OmegaConf

    defaults = {}
    for entry in OmegaConf.load(Path(CONF_DIR) / f"{config_name}.yaml").get("defaults", []):
        if not isinstance(entry, str):
            (group, option), = entry.items()
            if not group.startswith("override "):
                defaults[group] = option
    groups = {group: group_options(group, dirs) for group in defaults}
    if experiments:
        groups["hydra/launcher"] = group_options("hydra/launcher", dirs)
    width = max(len(g) for g in groups) + 2
    lines = [doc.strip(), "",
             f"usage: {name} [-m] [GROUP=OPTION ...] [KEY=VALUE ...]",
             "  GROUP=OPTION    a file of a config group below, e.g. topology=dragonfly",
             "  KEY=VALUE       any key of the composed config, e.g. topology.servers_per_router=4",
             "  -m              multirun: each comma list is swept, one job per value (routing=minimal,valiant)",
             f"  --cfg job       print the composed config, every key with its value ({name} --cfg job topology=torus)",
             "", "config groups (GROUP=OPTION; the default in brackets):"]
    for group, options in groups.items():
        shown = [f"[{o}]" if o == defaults.get(group, "basic") else o for o in options]
        extra = LAUNCHER_PLUGINS.get("slurm") if group == "hydra/launcher" else None
        note = f"  (slurm: pip install -e \".[{extra}]\")" if extra else ""
        lines.append(f"  {group:<{width}}{' '.join(shown)}{note}")
    if experiments:
        lines += ["", f"experiments ({name} -m +experiment=NAME [scale=paper]; docs/experiments.md):"]
        titles = {option: OmegaConf.select(OmegaConf.load(_config_file(dirs, f"experiment/{option}")),
                                           "experiment.title", default=None)
                  for option in group_options("experiment", dirs)}
        titles = {option: title for option, title in titles.items() if title}  # not the files they share
        width = max(len(option) for option in titles) + 2
        lines += [f"  {option:<{width}}{title}" for option, title in titles.items()]
    return "\n".join(lines)


# ----- the task: errors, interrupts, failure markers -----------------------------------

def _interrupted(*_):
    raise KeyboardInterrupt


class _Task(threading.Thread):
    """The app's task in a thread of its own, so that the main thread stays free to act on
    Ctrl-C and SIGTERM at once: Python runs signal handlers only in the main thread and only
    between bytecodes, which a long XLA call or compilation would hold off for its whole
    length."""

    def __init__(self, run):
        super().__init__(name="jaxnet-task", daemon=True)
        self._run, self.value, self.error = run, None, None

    def run(self) -> None:
        try:
            self.value = self._run()
        except BaseException as err:  # noqa: BLE001 (re-raised in the main thread)
            self.error = err

    def outcome(self):
        self.start()
        while self.is_alive():
            self.join(0.1)
        if self.error is not None:
            raise self.error
        return self.value

    def interrupt(self, grace_s: float) -> None:
        """Raise KeyboardInterrupt in the task (it acts when the task next runs Python code,
        e.g. in a pool's wait) and give it `grace_s` to clean up (stop its worker pool)."""
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident), ctypes.py_object(KeyboardInterrupt))
        self.join(grace_s)


def friendly_errors(task):
    """The one place the apps report errors. A bad parameter (ValueError) is one line on
    stderr and exit 2; a run that failed as asked (`RunFailed`: a deadlock) one line and
    exit 3; an unexpected error one line, a hint to rerun with JAXNET_DEBUG=1 for the
    traceback, and exit 1; Ctrl-C or SIGTERM stops within a second (exit 130) saying how to
    resume: the task gets INTERRUPT_GRACE_S to stop, then the process exits at once, even
    during a device call (results and checkpoints are written atomically, and worker
    processes exit with their parent). In
    a multirun sweep a failed job leaves a FAILED file in its directory and the other jobs
    still run (the sweep exits 1 at its end); a job that succeeds removes its FAILED file."""

    @functools.wraps(task)
    def wrapped(cfg):
        logging.getLogger("jax").setLevel(logging.WARNING)  # Hydra sets the root to INFO
        return interruptible(lambda: _reported(task, cfg), f"{run_dir()}; run the same command with "
                             f"hydra.run.dir={run_dir()} (or the same hydra.sweep.dir) to resume")

    return wrapped


def interruptible(run, resume: str):
    """`run()` in a thread of its own (`_Task`), so that Ctrl-C or SIGTERM stops it within a
    second: the task gets INTERRUPT_GRACE_S to stop, then the process exits 130 at once, even
    during a device call, printing 'interrupted: finished points are kept in <resume>'."""
    previous = signal.signal(signal.SIGTERM, _interrupted)
    job = _Task(run)
    try:
        return job.outcome()
    except KeyboardInterrupt:
        job.interrupt(INTERRUPT_GRACE_S)
        print(f"interrupted: finished points are kept in {resume}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)  # a normal exit would wait for a device call still running
    finally:
        signal.signal(signal.SIGTERM, previous)


def _reported(task, cfg):
    try:
        value = task(cfg)
    except Exception as err:  # noqa: BLE001 (every error becomes one line)
        if os.environ.get(DEBUG) == "1":
            raise
        expected = isinstance(err, (ValueError, RunFailed))
        line = f"error: {err}" if expected else (
            f"error: {type(err).__name__}: {err} (rerun with {DEBUG}=1 for the traceback)")
        line = " ".join(line.split())
        if _in_multirun():
            (run_dir() / FAILED).write_text(line + "\n")
            logging.getLogger("jaxnet").error(line)
            return None
        print(line, file=sys.stderr)
        sys.exit(3 if isinstance(err, RunFailed) else 2 if expected else 1)
    marker = run_dir() / FAILED
    if marker.exists():  # this job failed before and has now succeeded
        marker.unlink()
    return value


def _in_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def command_line_keys() -> tuple[str, ...]:
    """The dotted config keys this job's command line sets (`sim.loads=...` -> sim.loads)."""
    from hydra.core.hydra_config import HydraConfig

    return keys_of(HydraConfig.get().overrides.task)


def keys_of(overrides) -> tuple[str, ...]:
    """The dotted config keys a job's overrides set, Hydra's own left out."""
    keys = []
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if "=" in override and not key.startswith("hydra"):
            keys.append(key)
    return tuple(keys)


def run_dir() -> Path:
    """The Hydra run directory of the current app (outputs/... unless overridden)."""
    from hydra.core.hydra_config import HydraConfig

    return Path(HydraConfig.get().runtime.output_dir)


OUTPUT_FORMATS = ("text", "json")


def require_format(cfg) -> None:
    """`format` must be text or json (json: exactly one JSON object on stdout)."""
    from jaxnet.core.validate import require

    require(cfg.format in OUTPUT_FORMATS, "format", cfg.format, f"one of {OUTPUT_FORMATS}")


def print_report(report: dict, output_format: str) -> None:
    """One JSON object, or aligned `key  value` lines."""
    if output_format == "json":
        print_json(report)
    else:
        width = max(len(key) for key in report)
        print("\n".join(f"{key:<{width}}  {value}" for key, value in report.items()))


def print_json(obj) -> None:
    print(json.dumps(obj, sort_keys=True, default=_jsonable))


def _jsonable(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x)}")
