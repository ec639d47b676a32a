"""`jaxnet-plot DIR... [--out DIR] [--formats png,pdf,svg]`: merge the results of any runs and
sweeps into one results.csv, comparison figures (a panel per traffic pattern or network, a
line per configuration, seeds as a band) and, for experiments, the "paper vs jaxnet" claims
table, written into the first directory given (or --out); prints the files it wrote.

    jaxnet-plot outputs/multirun/2026-11-23_10-00-00 outputs/sim/2026-11-23_11-00-00 --out merged

A results.csv that is not a jaxnet results table (binary, foreign columns) is named in a
warning and left out when other files have rows, and is an error (exit 2) when none has.
A results.csv already in the output directory is kept as it is: when it is one of several
inputs, the merged table needs --out.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxnet.cli.common import console_script
from jaxnet.results import collect, plots


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxnet-plot", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="run or sweep directories (or results.csv files)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write (default: the first directory given)")
    parser.add_argument("--formats", default=",".join(plots.DEFAULT_FORMATS),
                        help=f"figure formats, comma-separated, of {', '.join(plots.FORMATS)} "
                             f"(default: {','.join(plots.DEFAULT_FORMATS)})")
    args = parser.parse_args(argv)
    try:
        return merge(args.dirs, args.out, plots.check_formats(args.formats.split(","), "--formats"))
    except (ValueError, OSError) as err:
        print(" ".join(f"error: {err}".split()), file=sys.stderr)
        return 2


def merge(dirs: list[Path], out: Path | None, formats: tuple[str, ...]) -> int:
    missing = [str(d) for d in dirs if not d.exists()]
    if missing:
        raise ValueError(f"dirs={missing} is invalid: no such file or directory")
    out = out or (dirs[0] if dirs[0].is_dir() else dirs[0].parent)
    unreadable = []
    rows, damaged = collect.load(dirs, unreadable)
    if not rows:
        raise ValueError("; ".join(unreadable)
                         or f"dirs={[str(d) for d in dirs]} is invalid: no results.csv rows found")
    for message in unreadable:
        print(f"warning: {message} (left out)", file=sys.stderr)
    inputs = {p.resolve() for p in collect.result_files(dirs)}
    table = out / "results.csv"
    if table.exists() and table.resolve() not in inputs:
        raise ValueError(f"--out={out} is invalid: it holds a results.csv that is not among the inputs "
                         "(give it as an input too, or choose another directory)")
    if table.exists() and len(inputs) > 1:
        print(f"note: {table} is kept as it is (one of the inputs); --out DIR writes the merged results.csv",
              file=sys.stderr)
    written = collect.write_outputs(rows, out, merged_csv=not table.exists(), formats=formats)
    if damaged:
        print(f"warning: {damaged} damaged row(s) left out", file=sys.stderr)
    print(f"{len(rows)} row(s) merged into {out}:")
    print("\n".join(str(p) for p in written))
    return 0


script = console_script(main)

if __name__ == "__main__":
    script()
