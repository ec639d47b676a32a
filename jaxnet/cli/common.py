"""What every Hydra app shares: where the configs live and how errors are reported."""
from __future__ import annotations

import functools
import json
import logging
import os
import sys
from pathlib import Path

CONF_DIR = str(Path(__file__).resolve().parents[2] / "conf")


DEBUG = "JAXNET_DEBUG"  # set to 1 for the traceback of an unexpected error


class RunFailed(RuntimeError):
    """A run that ended in an outcome the user asked to fail on (e.g. a deadlock): one line
    on stderr, exit 3, no debug hint (nothing is wrong with jaxnet)."""


def _interrupted(*_):
    raise KeyboardInterrupt


def friendly_errors(task):
    """The one place the apps report errors. A bad parameter (ValueError) is one line on
    stderr and exit 2; a run that failed as asked (`RunFailed`: a deadlock) one line and
    exit 3; an unexpected error one line, a hint to rerun with JAXNET_DEBUG=1 for the
    traceback, and exit 1; Ctrl-C or SIGTERM stops cleanly (exit 130) saying how to
    resume. In a multirun sweep a failed job leaves a FAILED file in its directory and the
    other jobs still run (the sweep exits 1 at its end)."""

    @functools.wraps(task)
    def wrapped(cfg):
        import signal

        logging.getLogger("jax").setLevel(logging.WARNING)  # Hydra sets the root to INFO
        previous = signal.signal(signal.SIGTERM, _interrupted)
        try:
            return task(cfg)
        except KeyboardInterrupt:
            print(f"interrupted: finished points are kept in {run_dir()}; run the same command with "
                  f"hydra.run.dir={run_dir()} (or the same hydra.sweep.dir) to resume", file=sys.stderr)
            sys.exit(130)
        except Exception as err:  # noqa: BLE001 (every error becomes one line)
            if os.environ.get(DEBUG) == "1":
                raise
            expected = isinstance(err, (ValueError, RunFailed))
            line = f"error: {err}" if expected else (
                f"error: {type(err).__name__}: {err} (rerun with {DEBUG}=1 for the traceback)")
            line = " ".join(line.split())
            if _in_multirun():
                (run_dir() / "FAILED").write_text(line + "\n")
                logging.getLogger("jaxnet").error(line)
                return None
            print(line, file=sys.stderr)
            sys.exit(3 if isinstance(err, RunFailed) else 2 if expected else 1)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapped


def _in_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def command_line_keys() -> tuple[str, ...]:
    """The dotted config keys this job's command line sets (`sim.loads=...` -> sim.loads)."""
    from hydra.core.hydra_config import HydraConfig

    keys = []
    for override in HydraConfig.get().overrides.task:
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
