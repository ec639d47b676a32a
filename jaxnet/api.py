"""The Python API: `jaxnet.run`, the `jaxnet` command as a function (docs/python.md).

    import jaxnet
    rows = jaxnet.run(["topology=hamming", "routing=minimal,polarized", "sim.loads=[0.2,0.6]"])
    rows = jaxnet.run({"topology": "torus", "topology.sides": [4, 4], "routing": "dor"})
    rows = jaxnet.run(["+experiment=polarized/fig4"], out_dir="outputs/fig4")

The overrides are the command line's, composed from the same conf/ with the same defaults;
comma lists and an experiment's lines and networks are swept as `jaxnet -m` sweeps them,
and jobs that share a network run as one batch. The building blocks (networks, traffic,
`simulate`) are `jaxnet.build` and `jaxnet.sim.run.simulate`.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

from jaxnet.cli.common import hydra_error_line
from jaxnet.cli.experiment import compose_jobs
from jaxnet.cli.sweep import run_jobs, structure_key
from jaxnet.results import collect, plots


def run(overrides: Sequence[str] | Mapping = (), out_dir: str | Path | None = None,
        progress: bool = False) -> list[dict]:
    """Simulate what `jaxnet -m <overrides>` simulates and return its rows (a dict per
    point: the results columns of results.csv), jobs in sweep order.

    overrides: a list of override strings, exactly as on the command line, or a mapping
      {key: value} (one override each; a group's option as {"routing": "polarized"}, any
      value as YAML would write it; use strings such as "routing=minimal,valiant" to sweep).
    out_dir: None writes nothing; a directory receives each job's results.csv in <out_dir>/<n>/
      (rerunning skips finished points, as the command does) and the merged results.csv,
      figures and claims at its root.
    Bad input raises ValueError with the command line's one-line message."""
    arguments = _override_strings(overrides)
    try:
        jobs = compose_jobs(arguments)
    except Exception as err:  # noqa: BLE001 (Hydra's errors become the command line's one line)
        if isinstance(err, ValueError):
            raise
        raise ValueError(hydra_error_line(err, arguments)[0]) from None
    outs = [None if out_dir is None else Path(out_dir) / str(n) for n in range(len(jobs))]
    groups = defaultdict(list)
    for n, job in enumerate(jobs):
        groups[structure_key(job)].append(n)
    rows: list[list[dict]] = [[] for _ in jobs]
    for members in groups.values():
        for n, job_rows in zip(members, run_jobs([(jobs[n], outs[n]) for n in members], progress)):
            rows[n] = job_rows
    flat = [row for job_rows in rows for row in job_rows]
    if out_dir is not None and flat:
        formats = plots.check_formats((jobs[0].get("plot") or {}).get("formats", plots.DEFAULT_FORMATS))
        collect.write_outputs([dict(row) for row in flat], Path(out_dir), formats=formats)
    return flat


def _override_strings(overrides: Sequence[str] | Mapping) -> list[str]:
    """Command-line override strings: a list as it is, a mapping one `key=value` each (values
    as JSON, which Hydra's grammar reads: lists, numbers, strings, null)."""
    if isinstance(overrides, str):
        raise ValueError(f"overrides={overrides!r} is invalid: a list of override strings or a mapping")
    if not isinstance(overrides, Mapping):
        return [str(o) for o in overrides]
    out = []
    for key, value in overrides.items():
        text = value if isinstance(value, str) else json.dumps(value)
        out.append(f"{key}={text}")
    return out
