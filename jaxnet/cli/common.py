"""What every Hydra app shares: where the configs live and how errors are reported."""
from __future__ import annotations

import functools
import json
import logging
import sys
from pathlib import Path

CONF_DIR = str(Path(__file__).resolve().parents[2] / "conf")


def friendly_errors(task):
    """Print a bad parameter as one line on stderr and exit 2, never a traceback."""

    @functools.wraps(task)
    def wrapped(cfg):
        logging.getLogger("jax").setLevel(logging.WARNING)  # Hydra sets the root to INFO
        try:
            return task(cfg)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)

    return wrapped


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
