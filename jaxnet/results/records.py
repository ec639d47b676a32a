"""What `sim.record` keeps beside the rows: one compressed array file per point in the run
directory's `records/` (`records/<pattern>_load<load>_seed<seed>.npz`, named in the row's
`record_file` column), and the figures drawn from them: `series` (accepted load and mean
latency per window against the cycle) and `links_<pattern>` (link utilisation per router
and port, a panel per offered load). The arrays' names and units are those of
`jaxnet.sim.stats.recordings` (docs/experiments.md)."""
from __future__ import annotations

import io
import re
from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from jaxnet.core.files import write_atomic_bytes
from jaxnet.results import plots

DIRECTORY = "records"


def file_name(label: str, point: tuple[float, int]) -> str:
    """The record file of a point, relative to its run directory."""
    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", str(label))
    return f"{DIRECTORY}/{safe}_load{float(point[0]):g}_seed{int(point[1])}.npz"


def save(out_dir: Path, label: str, point: tuple[float, int], arrays: Mapping[str, np.ndarray],
         **scalars) -> str:
    """Write a point's recorded arrays (and scalars such as its warm-up) atomically; return the
    file's path relative to `out_dir`."""
    name = file_name(label, point)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays, **{k: np.asarray(v) for k, v in scalars.items()})
    (Path(out_dir) / DIRECTORY).mkdir(parents=True, exist_ok=True)
    write_atomic_bytes(Path(out_dir) / name, buffer.getvalue())
    return name


def load(out_dir: Path, rows: Sequence[Mapping]) -> list[tuple[Mapping, dict]]:
    """(row, its arrays) for every row whose record file is there."""
    out = []
    for row in rows:
        name = row.get("record_file")
        if name and (Path(out_dir) / name).is_file():
            with np.load(Path(out_dir) / name) as f:
                out.append((row, {k: f[k] for k in f.files}))
    return out


def figures(out_dir: Path, rows: Sequence[Mapping], title: str,
            formats: Sequence[str] = plots.DEFAULT_FORMATS) -> list[Path]:
    """The series and links figures of the rows' records (those a row has); returns the files."""
    recorded = load(out_dir, rows)
    written = []
    series = [(row, arrays) for row, arrays in recorded if "accepted_load" in arrays]
    if series:
        written += plots.save(plots.build_series(series, title), Path(out_dir) / "series.png", formats)
    by_pattern = defaultdict(list)
    for row, arrays in recorded:
        if "link_utilisation" in arrays:
            by_pattern[row["traffic"]].append((row, arrays))
    for label, members in by_pattern.items():
        safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", str(label))
        written += plots.save(plots.build_links(members, f"{title}\n{label}"), Path(out_dir) / f"links_{safe}.png",
                              formats)
    return written
