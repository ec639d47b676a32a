"""`jaxnet-plot DIR... [--out DIR]`: merge the results of any runs and sweeps into one
results.csv, comparison figures (a panel per traffic pattern or network, a line per
configuration, seeds as a band) and, for experiments, the "paper vs jaxnet" claims table.

    jaxnet-plot outputs/multirun/2026-11-23_10-00-00 outputs/sim/2026-11-23_11-00-00 --out merged
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxnet.results import collect


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxnet-plot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="run or sweep directories (or results.csv files)")
    parser.add_argument("--out", type=Path, default=Path("."), help="where to write (default: here)")
    args = parser.parse_args(argv)
    missing = [str(d) for d in args.dirs if not d.exists()]
    if missing:
        print(f"error: dirs={missing} is invalid: no such file or directory", file=sys.stderr)
        return 2
    rows, damaged = collect.load(args.dirs)
    if not rows:
        print(f"error: dirs={[str(d) for d in args.dirs]} is invalid: no results.csv rows found", file=sys.stderr)
        return 2
    written = collect.write_outputs(rows, args.out)
    if damaged:
        print(f"warning: {damaged} damaged row(s) left out", file=sys.stderr)
    print(f"{len(rows)} row(s) merged: " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
