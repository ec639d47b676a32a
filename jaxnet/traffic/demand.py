"""Router-level demand matrix: M[r, t] is the relative traffic from router r to router t.

Every server of router r sends to a random server of router t with probability
M[r, t] / sum_t M[r, t] and generates at rate sum_t M[r, t] / max_r sum_t M[r, t] of the
offered load (the busiest router generates at the offered load; all-zero rows are silent).
The matrix is one of:
- `file`: a .npy array or a .csv of R rows of R numbers (comma separated);
- `matrix`: an inline list of R lists;
- neither: random integers 0..`max_value` per ordered pair, drawn with `seed` (or the
  simulation seed when null).
The diagonal must be zero: the pattern never picks the source's own switch. The table is
dense (one entry per destination router), so keep R moderate.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxnet.core.files import load_arrays
from jaxnet.core.validate import is_number_text, require, require_int
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import ANY_SERVER, TrafficTable, per_router_table


def demand(topo: Topology, rng, file: str | None = None, matrix=None, max_value: int = 7,
           seed: int | None = None) -> TrafficTable:
    """Traffic proportional to a router-level demand matrix (file, inline, or random)."""
    require(file is None or matrix is None, "traffic.file/matrix", (file, matrix),
            "give at most one of `file` or `matrix`")
    n = topo.n_routers
    if file is not None:
        rates = load_matrix(file, n)
    elif matrix is not None:
        try:
            rates = np.asarray([list(row) for row in matrix], np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"traffic.matrix is invalid: must be a list of {n} lists of "
                             f"{n} numbers ({err})") from err
    else:
        require_int(max_value, "traffic.max_value", 1)
        draw = rng if seed is None else np.random.default_rng(int(seed))
        rates = draw.integers(0, max_value + 1, size=(n, n)).astype(np.float64)
        np.fill_diagonal(rates, 0.0)
    source = "traffic.file" if file is not None else "traffic.matrix"
    require(rates.shape == (n, n), source, f"shape {rates.shape}",
            f"must be {n} x {n} (one row and column per router of {topo.name})")
    require(bool(np.all(np.isfinite(rates)) and np.all(rates >= 0)), source, "...",
            "entries must be finite and >= 0")
    require(bool(np.all(np.diag(rates) == 0)), source, "...",
            "the diagonal must be zero (a router never sends to itself)")
    row_total = rates.sum(axis=1)
    require(bool(row_total.max() > 0), source, "...", "at least one entry must be positive")
    return per_router_table(np.tile(np.arange(n), (n, 1)), np.full((n, n), ANY_SERVER), rates,
                            topo.servers_per_router, rate=row_total / row_total.max())


def load_matrix(file: str, routers: int) -> np.ndarray:
    """float64 matrix from a .npy file, or a .csv file of `routers` comma-separated numbers
    a row (blank lines and # comments skipped); a malformed row is a one-line ValueError
    naming the file and the row."""
    path = Path(file)
    require(path.suffix in (".npy", ".csv"), "traffic.file", file, "must end in .npy or .csv")
    require(path.is_file(), "traffic.file", file, "no such file")
    if path.suffix == ".npy":
        return np.asarray(load_arrays(path, "traffic.file", ("array",), "a .npy matrix")["array"], np.float64)
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"traffic.file={file!r} is invalid: not a text .csv file") from None
    rows = []
    for number, line in enumerate(lines, 1):
        fields = [x.strip() for x in line.split("#")[0].split(",")]
        if fields == [""]:
            continue
        require(len(fields) == routers, "traffic.file", file,
                f"row {number} has {len(fields)} value(s); every row must have {routers} (one per router), "
                "comma separated")
        try:
            rows.append([float(x) for x in fields])
        except ValueError:
            bad = next(x for x in fields if not is_number_text(x))
            raise ValueError(f"traffic.file={file!r} is invalid: row {number} holds {bad!r}, not a number") from None
    return np.asarray(rows, np.float64).reshape(len(rows), routers)
