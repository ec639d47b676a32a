"""Regenerate the gallery: run paper figures as experiments and write docs/gallery.md.

    python scripts/gallery.py                       # every figure, small scale (resumable)
    python scripts/gallery.py polarized/fig4 antmill/fig9 --scale small
    python scripts/gallery.py polarized/fig4,polarized/fig5,polarized/fig6 --scale paper  # one sweep
    python scripts/gallery.py --tables              # the balanced-paths and Angara scripts
    python scripts/gallery.py --refresh             # re-merge finished sweeps (plots, claims)
    python scripts/gallery.py --refresh valiant/fig2 --scale paper  # only this figure
    python scripts/gallery.py --only-page           # rewrite docs/gallery.md from what ran
    python scripts/gallery.py --build-only antmill/fig5 --scale paper  # its networks into the cache

Each figure runs as `jaxnet -m +experiment=<name> scale=<scale>` into
outputs/gallery/<scale>/<paper>_<figure>/ (rerunning skips finished jobs and points); figures
named together (`a,b`) run as one sweep into outputs/gallery/<scale>/<a>+<b>/, their jobs of one
network and routing batched together, and each figure's rows are merged into its own directory. Its
figures are copied to docs/gallery/ and its wall time, device and the claims table go to a
record in docs/gallery/records/ (committed, so the page survives the outputs); a figure whose
points were all done before the run keeps the record it has (`--refresh` merges it again), and
one finished over several runs says in its record how many of its points ran on each device. The page lists
every figure that has a record, with the command that regenerates it and the paper-scale
cost (router-cycles, from the paper-scale configuration) and its time at the measured speeds of benchmarks/README.md. `--tables` runs
the scripts that reproduce the two non-simulation papers' tables and figures (balanced
paths, Angara tables) and the simulations built on them, and adds them to the page.
`--build-only` builds the named figures' networks (topology, routing tables, resolved VCs)
into the network cache (JAXNET_NETWORK_CACHE) and simulates nothing: on a CPU before a GPU
lease, whose sweeps then load them from the carried cache instead of building them.
A point another figure already simulated (the same configuration, load and seed) is not
simulated again: the sweep takes its row from outputs/gallery/<scale>/ and docs/gallery/<scale>/
(`reuse`), and the record counts only the router-cycles simulated in the run.
"""
from __future__ import annotations

import argparse
import collections
import functools
import json
import math
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jaxnet.cli.experiment import sweep_jobs  # noqa: E402
from jaxnet.cli.sweep import REUSED_FROM  # noqa: E402
from jaxnet.core.files import write_atomic  # noqa: E402
from jaxnet.results import claims as claim_tables  # noqa: E402
from jaxnet.results import collect  # noqa: E402
from jaxnet.results.table import NOT_RESULTS, config_id, equivalent_config_ids  # noqa: E402

OUT = ROOT / "outputs" / "gallery"
DOCS = ROOT / "docs"
IMAGES = DOCS / "gallery"
RECORDS = IMAGES / "records"
# Router-cycles/s of one process on the 2-core CI machine averaged over a sweep of loads
# 0.1..1.0 on RRG 720: the harmonic mean of the speeds at each load (benchmarks/README.md,
# --suite cpu: 1.11 M at load 0.1, 0.36 M at 0.5, 0.04 M at 1.0, interpolated between) is
# 0.12 M; the saturated points take most of the time. Every core (sim.workers) adds 1.7x.
CPU_RATE = 0.12e6


# The other papers' tables and figures: (title, command, output directory, tables, figures).
SCRIPTS = {
    "balanced_paths_table1": (
        "Globally balanced paths, Table 1 and Figures 1-2 (DF114; PF307, DF510 and SF722 take hours: docs/balanced_paths.md)",
        ["python", "scripts/reproduce_gbamcf.py", "--networks", "DF114", "--optax"], "outputs/gbamcf",
        ["table1.md"], ["DF114_figure1.png", "DF114_figure2.png"]),
    "angara_table2": (
        "Angara routing tables, Table 2 (4x2x2x2 and its subsystems) and Figure 5 (random tori)",
        ["python", "scripts/reproduce_angara.py"], "outputs/angara", ["table2.md"], ["figure5.png"]),
}


def copy_figure(source: Path, target: Path, limit: int = 200_000) -> None:
    """Copy a PNG into docs/, as a 256-colour palette image when it would exceed `limit` bytes."""
    shutil.copyfile(source, target)
    if target.stat().st_size > limit:
        from PIL import Image

        Image.open(source).convert("RGB").quantize(256).save(target, optimize=True)


def run_script(key: str) -> None:
    title, command, out, tables, figures = SCRIPTS[key]
    print("$", " ".join(command), flush=True)
    start = time.time()
    done = subprocess.run(command, cwd=ROOT)
    record = {"name": key, "title": title, "exit": done.returncode, "wall_s": round(time.time() - start, 1),
              "command": " ".join(command), "figures": [], "tables": ""}
    IMAGES.mkdir(parents=True, exist_ok=True)
    for figure in figures:
        if (ROOT / out / figure).exists():
            target = IMAGES / f"{key}_{figure}"
            copy_figure(ROOT / out / figure, target)
            record["figures"].append(target.relative_to(DOCS).as_posix())
    record["tables"] = "\n\n".join((ROOT / out / t).read_text().strip() for t in tables if (ROOT / out / t).exists())
    save_record(key, record)


def record_file(key: str) -> Path:
    return RECORDS / f"{key}.json"


def save_record(key: str, record: dict) -> None:
    RECORDS.mkdir(parents=True, exist_ok=True)
    write_atomic(record_file(key), json.dumps(record, indent=1) + "\n")


def figure_key(name: str, scale: str) -> str:
    """antmill/fig5 at small scale -> antmill_fig5_small (its record's file name)."""
    return f"{name.replace('/', '_')}_{scale}"


def sweep_dir(name: str, scale: str) -> Path:
    return OUT / scale / name.replace("/", "_")


def experiments() -> list[str]:
    """Every experiment (a file that names one; the others are parts the figures share),
    by paper, figures in their number order."""
    import yaml

    names = [str(p.relative_to(ROOT / "conf" / "experiment").with_suffix(""))
             for p in (ROOT / "conf" / "experiment").glob("*/*.yaml")
             if (yaml.safe_load(p.read_text()).get("experiment") or {}).get("name")]

    def order(name: str):
        paper, figure = name.split("/")
        return (paper, int(figure[3:]) if figure[3:].isdigit() else 99, figure)

    return sorted(names, key=order)


def routers(topology: dict) -> int:
    """Routers of a topology config, without building it (for cost estimates)."""
    name = topology["name"]
    if name == "rrg":
        return int(topology["routers"])
    if name == "dragonfly":
        a, h = int(topology["a"]), int(topology["h"])
        return a * int(topology.get("groups") or a * h + 1)
    if name in ("hamming", "torus", "mesh"):
        return math.prod(int(s) for s in topology["sides"])
    q = int(topology["q"])
    return {"slimfly": 2 * q * q, "projective": 2 * (q * q + q + 1), "demiprojective": q * q + q + 1}[name]


@functools.lru_cache(maxsize=None)
def paper_jobs(name: str) -> tuple[dict, ...]:
    """The figure's jobs at paper scale (composed once: the page asks several times)."""
    return tuple(sweep_jobs(name, "paper"))


def distinct_networks(name: str, scale: str) -> list[tuple[dict, dict]]:
    """(job, its topology/routing/router groups) for each network the figure's sweep builds,
    in job order: jobs that differ only in traffic or load share one."""
    jobs = paper_jobs(name) if scale == "paper" else tuple(sweep_jobs(name, scale))
    networks = {}
    for job in jobs:
        groups = {key: job[key] for key in ("topology", "routing", "router")}
        networks.setdefault(json.dumps(groups, sort_keys=True, default=str), (job, groups))
    return list(networks.values())


def build_networks(names: Sequence[str], scale: str) -> None:
    """Build the figures' networks into the network cache, simulating nothing (`--build-only`)."""
    from jaxnet import build

    for name in names:
        for job, groups in distinct_networks(name, scale):
            what = f"{name}: {job['routing']['name']} on {job['topology']['name']}"
            start = time.perf_counter()
            try:
                build.network_of(groups)
            except ValueError as err:  # e.g. path weights that the app fits to each job's traffic first
                print(f"{what}: not built ahead ({err})", flush=True)
                continue
            print(f"{what}: in the cache ({time.perf_counter() - start:.1f} s)", flush=True)


def paper_cost(name: str) -> float | None:
    """Router-cycles of the paper-scale run: routers x cycles x loads x seeds x patterns;
    None for an experiment of small scale only."""
    if not _has_paper_scale(name):
        return None
    total = 0.0
    for job in paper_jobs(name):
        sim = job["sim"]
        total += (routers(job["topology"]) * (int(sim["warmup"]) + int(sim["measure"]))
                  * len(sim["loads"]) * len(sim["seeds"]) * len(job["patterns"]))
    return total


def sweep_rows(out: Path) -> list[dict]:
    """The rows of a sweep's jobs (each point once); none before it ran."""
    return collect.load([d for d in out.iterdir() if d.is_dir()])[0] if out.is_dir() else []


def point_key(row: dict) -> tuple:
    """What tells one point from another: its job's configuration id, load and seed (numbers
    as numbers, so that rows read back and points composed from the config compare equal)."""
    return row["config_id"], float(row["offered_load"]), int(row["seed"])


def router_cycles(rows: list[dict]) -> int:
    """Routers x simulated cycles over the rows' points."""
    return sum(int(row["cycles_simulated"]) * routers(collect.config_of(row)["topology"]) for row in rows)


# Seconds an interrupted sweep waits for the app to stop on its own (a Ctrl-C reaches both)
# before passing the interruption on (a SIGTERM to this script alone).
APP_STOPS_S = 5


def run(names: list[str], scale: str, settings: list[str]) -> None:
    """Run figures as one sweep (`jaxnet -m +experiment=a,b`: jobs of one network and routing
    batch together across the figures) and file each figure from its own rows. A sweep
    interrupted (Ctrl-C, a time budget's SIGINT, or SIGTERM) stops the app as Ctrl-C does and
    files the figures whose points are all done; the same command goes on from the rest."""
    out = sweep_dir("+".join(names), scale)
    before = {point_key(r) for r in sweep_rows(out)}
    earlier = [d for d in (OUT / scale, IMAGES / scale) if d.is_dir()]  # every point simulated before
    reuse = f"reuse=[{','.join(repr(d.relative_to(ROOT).as_posix()) for d in earlier)}]"  # the app runs in ROOT
    command = ["jaxnet", "-m", f"+experiment={','.join(names)}", f"scale={scale}", reuse, *settings]
    print("$", " ".join(command), flush=True)
    start = time.time()
    # the app's module rather than its console script: this Python's jaxnet, installed or not
    app = subprocess.Popen([sys.executable, "-m", "jaxnet.cli.simulate", *command[1:], f"hydra.sweep.dir={out}"],
                           cwd=ROOT)
    interrupted = False
    try:
        code = app.wait()
    except KeyboardInterrupt:  # Ctrl-C reaches the app too; SIGTERM to this script is passed on
        try:
            code = app.wait(timeout=APP_STOPS_S)
        except subprocess.TimeoutExpired:
            app.terminate()  # the app stops as on Ctrl-C: it writes what finished and stops
            code = app.wait()
        interrupted = True
    wall = time.time() - start
    import jax

    device = f"{jax.devices()[0].platform}: {jax.devices()[0].device_kind}, {jax.device_count()} device(s)"
    rows = sweep_rows(out)
    new = [r for r in rows if point_key(r) not in before]
    simulated = router_cycles([r for r in new if not r.get(REUSED_FROM)])
    note = f"{simulated:.2e} router-cycles simulated in this run ({simulated / wall / 1e6:.1f} M/s end to end)"
    reused = sum(bool(r.get(REUSED_FROM)) for r in new)
    if reused:
        note += f"; {reused} point(s) reused from other figures' runs (their rows' `{REUSED_FROM}`)"
    if len(names) > 1:
        note += f"; one sweep with {', '.join(n for n in names)}, wall time and rate for all of them"
    filed = []
    for name in names:
        own = [r for r in rows if r.get("experiment") == name]
        if interrupted and len(own) < figure_points(name, scale):
            continue
        earlier = sum(point_key(r) in before for r in own)
        if own and earlier == len(own) and record_file(figure_key(name, scale)).exists():
            print(f"{name}: every point was done before this run, its record stands "
                  f"(`--refresh {name} --scale {scale}` merges it again)", flush=True)
            continue  # this run's wall time and device say nothing about it
        record = {"name": name, "scale": scale, "exit": 0 if interrupted else code, "wall_s": round(wall, 1),
                  "device": device, "command": " ".join(command), "sweep": out.name,
                  "paper_router_cycles": paper_cost(name), "figures": [],
                  "note": note + (f"; {earlier} of this figure's {len(own)} points came from earlier, interrupted "
                                  f"runs of the sweep (its points by device: {points_by_device(own)})" if earlier else "")
                  + ("; the sweep was interrupted after every point of this figure had finished"
                     if interrupted else "") + "."}
        if (len(names) > 1 or interrupted) and own:  # its merged rows, figures and claims in its own directory
            collect.write_outputs(own, sweep_dir(name, scale))
        publish(sweep_dir(name, scale), record)
        filed.append(name)
    if interrupted:
        sys.exit(f"interrupted: {len(rows)} point(s) of the sweep are done in {out}; the same command goes on "
                 f"from them ({'filed: ' + ', '.join(filed) if filed else 'nothing filed'})")


def points_by_device(rows: list[dict]) -> str:
    """Where a figure's points ran, from the rows' device and batch columns (a figure resumed
    across runs may have run on several devices): '100 on NVIDIA H200 (batch 60), 40 on cpu
    (batch 1)'."""
    count = collections.Counter((r.get("device") or "an unnamed device", r.get("batch") or "?") for r in rows)
    return ", ".join(f"{n} on {device} (batch {batch})" for (device, batch), n in count.most_common())


def figure_points(name: str, scale: str) -> int:
    """Points of a figure at a scale: loads x seeds x patterns of each job."""
    jobs = paper_jobs(name) if scale == "paper" else sweep_jobs(name, scale)
    return sum(len(job["sim"]["loads"]) * len(job["sim"]["seeds"]) * len(job["patterns"]) for job in jobs)


def publish(out: Path, record: dict) -> None:
    """Copy a sweep's figures to docs/gallery/ (a paper-scale sweep's, with its merged rows and
    claims, to docs/gallery/paper/<figure>/), take its claims table, save its record."""
    key = figure_key(record["name"], record["scale"])
    paper = record["scale"] == "paper"
    target_dir = IMAGES / "paper" / key if paper else IMAGES
    target_dir.mkdir(parents=True, exist_ok=True)
    record["figures"] = []
    for png in sorted(out.glob("*.png")):
        target = target_dir / (png.name if paper else f"{key}_{png.name}")
        copy_figure(png, target)
        record["figures"].append(target.relative_to(DOCS).as_posix())
    claims = out / "claims.md"
    record["claims"] = claims.read_text().split("\n", 2)[2] if claims.exists() else ""
    if paper:
        for name in ("results.csv", "claims.md"):
            if (out / name).exists():
                shutil.copyfile(out / name, target_dir / name)
    save_record(key, record)


def refresh(names: Sequence[str] = (), scale: str = "small") -> None:
    """Re-merge finished sweeps (figures from their rows, titles and claims as their experiment
    files state them now, e.g. after a change to the plots or to a claim's cause) without
    simulating again; wall times are kept. `names`: only these figures at `scale` (default:
    every record). Records whose sweeps hold no rows on this machine keep their figures and
    numbers and get their claims' causes restated from the experiment file."""
    for record in records():
        if "scale" not in record or (names and (record["name"] not in names or record["scale"] != scale)):
            continue
        experiment_now = sweep_jobs(record["name"], record["scale"])[0]["experiment"]
        out = sweep_dir(record["name"], record["scale"])
        sweep = OUT / record["scale"] / record.get("sweep", out.name)  # figures run together share a sweep
        rows = [r for r in sweep_rows(sweep) if r.get("experiment") == record["name"]]
        if rows:
            collect.write_outputs(rows, out, experiments_now={record["name"]: experiment_now})
            publish(out, record)
        elif record.get("claims"):
            causes = {c["claim"]: c.get("cause") for c in experiment_now.get("claims", [])}
            record["claims"] = claim_tables.with_causes(record["claims"], causes)
            save_record(figure_key(record["name"], record["scale"]), record)


# The paper-scale figures, most valuable first: the order a GPU run takes them in.
PAPER_SCALE_ORDER = ("polarized/fig4", "polarized/fig5", "polarized/fig6", "polarized/fig8", "antmill/fig5",
                     "antmill/fig6", "valiant/fig2", "valiant/fig3", "valiant/fig4", "valiant/fig5")


def paper_figures_left(figures: list[dict]) -> list[str]:
    """The paper-scale figures not yet filed among these records, most valuable first."""
    done = {r["name"] for r in figures if r["scale"] == "paper" and r["exit"] == 0}
    rest = [n for n in PAPER_SCALE_ORDER if n not in done]
    return rest + [n for n in experiments() if n not in done and n not in rest and _has_paper_scale(n)]


def remaining(figures: list[dict]) -> list[str]:
    """The page's list of paper-scale figures not yet run, most valuable first, with the
    command that continues from there."""
    rest = paper_figures_left(figures)
    if not rest:
        return ["Every figure has run at paper scale.", ""]
    lines = ["## Paper scale: the figures that remain", "",
             "Most valuable first; on a GPU, `python scripts/gallery.py --scale paper NAME...` runs them",
             "in this order (each sweep resumes where it stopped; `a,b,c` runs figures that share a",
             "network as one sweep, their points batched together) and files their results, figures and",
             "claims under docs/gallery/paper/; `scripts/device_gallery.sh SECONDS NAME...` does the same",
             "within a time budget, files each figure of a sweep it cut off whose points are all done, and",
             "archives the finished points of the others, to resume from (they are committed under",
             "outputs/gallery/paper/; a batch cut off mid-run is lost unless",
             "`SETTINGS=sim.checkpoint_every=5000` lets a second command on the same machine resume it).",
             "Networks slow to build (RRG medoids) can be built on a CPU ahead of the GPU's time,",
             "`python scripts/gallery.py --build-only --scale paper NAME...` into the network cache",
             "(`JAXNET_NETWORK_CACHE`), and that directory carried along: the sweeps there load them.",
             "For a GPU machine without network access, `bash scripts/prepare_device.sh NAME...` builds",
             "them into `.netcache` and puts the configuration packages' wheels in `.whl`.",
             "A figure filed before, all of whose points were done before the run, keeps its record (the",
             "device and wall time that made it); one whose points ran over several runs says how many",
             "ran on each device. Points that other figures already simulated (the same configuration,",
             "or one with the same results, load and seed; in brackets) are copied from their rows, not",
             "simulated again (`reuse`, docs/experiments.md):", "",
             "| figure | router-cycles | points done |", "|---|---|---|"]
    finished, simulated = paper_points_done()
    for name in rest:
        points, done = paper_point_keys(name), finished.get(name, set())
        elsewhere = sum(point not in done and bool(same & simulated) for point, same in points.items())
        lines.append(f"| {name} | {paper_cost(name):.2e} | {len(done)} of {len(points)}"
                     + (f" ({elsewhere} more simulated for other figures: reused)" if elsewhere else "") + " |")
    return lines + [""]


def paper_points_done() -> tuple[dict[str, set[tuple]], set[tuple]]:
    """(paper-scale points finished per figure: the rows of its sweeps so far, committed under
    outputs/gallery/paper/ so that the next run goes on from them; every point simulated at
    paper scale, filed rows included), as (config id, load, seed), read once for the page."""
    sweeps = [d for d in (OUT / "paper").iterdir() if d.is_dir()] if (OUT / "paper").is_dir() else []
    done = {}
    for sweep in sweeps:
        for r in sweep_rows(sweep):
            done.setdefault(r.get("experiment"), set()).add(point_key(r))
    filed = collect.load([IMAGES / "paper"])[0] if (IMAGES / "paper").is_dir() else []
    return done, set().union(*done.values(), map(point_key, filed))


def paper_point_keys(name: str) -> dict[tuple, set[tuple]]:
    """The figure's paper-scale points as (config id, load, seed), each with the keys of the
    points that give its results (`equivalent_config_ids`: a run of any of them is reused)."""
    return {(config_id(job, pattern), float(load), int(seed)):
            {(cid, float(load), int(seed)) for cid in equivalent_config_ids(job, pattern)}
            for job in paper_jobs(name) for pattern in job["patterns"].values()
            for load in job["sim"]["loads"] for seed in job["sim"]["seeds"]}


def _has_paper_scale(name: str) -> bool:
    try:
        return bool(paper_jobs(name))
    except ValueError:  # an experiment of jaxnet's own, small scale only
        return False


def records() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(RECORDS.glob("*.json"))]


def figure_records() -> list[dict]:
    """The records of the experiments' figures (not of the other scripts' runs)."""
    return [r for r in records() if "paper_router_cycles" in r]


def page() -> str:
    order = {n: i for i, n in enumerate(experiments())}
    figures = sorted(figure_records(),
                     key=lambda r: (order.get(r["name"], 99), r["scale"]))
    lines = ["# Gallery: the papers' figures, regenerated",
             "",
             "Written by `python scripts/gallery.py` (docs/experiments.md explains the experiments).",
             "Each figure below is one command; the small scale is a documented reduced network of",
             "the same family and router model (each experiment file says which), so its numbers",
             "are not the paper's: the claims tables compare the paper's statements with what jaxnet",
             "measured, scale for scale, and say where they disagree. Magnitudes that grow with the",
             "network (Ant Mill's slowdown against uniform is about p delta times uniform's accepted",
             "load: 2-5x on the small RRGs) are reproduced only at paper scale: on the four RRGs of",
             "the paper's Table 1 under minimal routing (antmill/fig6 at paper scale) jaxnet measures",
             "8.07x-15.6x against uniform (the paper: at least 8.1x) and 5.58x-13.9x against a server",
             "permutation (the paper: 5.6x-13.9x). The small scale checks directions, bounds and the",
             "machinery.",
             "The paper-scale cost is",
             "routers x cycles x loads x seeds x patterns of the paper-scale configuration; its CPU",
             f"time assumes {CPU_RATE / 1e6:.2f} M router-cycles/s, one process on the CI machine averaged",
             "over a sweep of loads (benchmarks/README.md: saturated loads are the slow part); the",
             "CI machine's two cores run a sweep about 1.5-1.9x faster. A paper-scale subset of",
             "polarized/fig4 (minimal and Polarized, loads 0.3-0.7, one seed) ran there in 8 min at",
             "0.22 M router-cycles/s on both cores (benchmarks/README.md). On one GPU the engine's",
             "steady state is measured (docs/performance.md: RRG 720 at batch 128 and load 0.5, 69 M",
             "router-cycles/s on an H100 and 80 M on an H200). End to end, Polarized Figs 4-6 at paper",
             "scale as one sweep ran five of their seven lines on one H200 (300 of 420 points, 5.4e9",
             "router-cycles, a batch of 60 points per line) in 530 s, 10 M router-cycles/s: 13-15 M per",
             "line with four VCs, 6.7 M for Valiant's eight, and Polarized's thirteen about 2.8 M, whose",
             "batch, half its loads past saturation, would take 6.5 min on its own (docs/performance.md).",
             "Ant Mill Fig. 6 (minimal routing on four RRGs of 242-1224 routers, 320 points, 5.8e9",
             "router-cycles) ran whole on one H200 in 5.5 min, 17.5 M router-cycles/s end to end",
             "(7-26 M per network's batch of 60-100 points, more on the larger networks).",
             "The GPU times of the README's table are extrapolated from those rates.",
             "Each paper-scale figure below names the device it ran on: those whose networks are",
             "small (the Angara torus, the balanced-paths networks) or whose sweep is short ran on",
             "the CI machine's CPU, one figure per core; Polarized Figs 4-6 ran their two Polarized",
             "lines there (54, 56 and about 95 min on both cores) after the H200 had run their other",
             "five, and Polarized Fig. 8 and Restricted Valiant Fig. 2 ran there whole (260 points",
             "in 9.4 core-hours and 240 in 14.0, resumed from their rows after each interruption).",
             "The list below is what waits for a GPU (or a long CPU run: its points done are kept).",
             ""]
    lines += remaining(figures)
    for r in figures:
        cost = r["paper_router_cycles"]
        lines += [f"## {r['name']} ({r['scale']} scale)", "",
                  f"    {r['command']}", "",
                  f"Wall time {r['wall_s'] / 60:.1f} min on {r['device']}"
                  + ("" if r["exit"] == 0 else f" (exit {r['exit']}: see the sweep's log)") + "."
                  + ("" if cost is None else f" Paper scale (`scale=paper`): {cost:.2e} router-cycles, about "
                     f"{cost / CPU_RATE / 3600:.1f} h in one process on the CI machine.")
                  + (f" {r['note']}" if r.get("note") else ""), ""]
        lines += [f"![{r['name']} {Path(f).stem}]({f})" for f in r["figures"]] + [""]
        if r["claims"]:
            lines += [r["claims"].strip(), ""]
    scripts = {r["name"]: r for r in records() if "title" in r}
    lines += ["# The balanced-paths and Angara papers", "",
              "These papers' results are tables and path or table statistics rather than",
              "load-throughput curves; `python scripts/gallery.py --tables` regenerates them (and",
              "simulates the resulting routes) into this section. Where it has not run yet, the",
              "tables as last measured are in the docs pages named below, with the paper's numbers",
              "beside them.", ""]
    for key, (title, command, _, _, _) in SCRIPTS.items():
        if key not in scripts:
            page_of = "docs/balanced_paths.md" if key.startswith("balanced") else "docs/torus_tables.md"
            lines += [f"## {title}", "", f"    {' '.join(command)}", "", f"Tables: {page_of}.", ""]
    scripts = list(scripts.values())
    for r in scripts:
        lines += [f"## {r['title']}", "", f"    {r['command']}", "",
                  f"Wall time {r['wall_s'] / 60:.1f} min" + ("" if r["exit"] == 0 else f" (exit {r['exit']})") + ".", ""]
        lines += [f"![{r['name']}]({f})" for f in r["figures"]] + [""]
        if r["tables"]:
            lines += [r["tables"], ""]
    return "\n".join(lines)


def _interrupted(*_):
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*",
                        help="experiments (default: all); a,b,c: these run as one sweep, batched together")
    parser.add_argument("--scale", default="small", choices=["small", "paper"])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for every sweep that leaves its results unchanged, e.g. "
                             "sim.checkpoint_every=5000 (a sweep cut off resumes from its last checkpoint)")
    parser.add_argument("--tables", action="store_true", help="run the balanced-paths and Angara scripts")
    parser.add_argument("--refresh", action="store_true",
                        help="re-merge finished sweeps (no simulation): the named figures at --scale, or all")
    parser.add_argument("--only-page", action="store_true", help="only rewrite docs/gallery.md")
    parser.add_argument("--build-only", action="store_true",
                        help="only build the named figures' networks into the network cache (JAXNET_NETWORK_CACHE)")
    args = parser.parse_args()
    known = experiments()
    unknown = [name for names in args.names for name in names.split(",") if name not in known]
    if unknown:
        parser.error(f"unknown experiment {', '.join(unknown)}: the experiments are {', '.join(known)}")
    if args.build_only:
        if not args.names:
            parser.error("--build-only: name the figures whose networks to build")
        build_networks([name for names in args.names for name in names.split(",")], args.scale)
        return
    signal.signal(signal.SIGTERM, _interrupted)  # a SIGTERM stops a sweep as Ctrl-C does
    unchanged = [f"sim.{key}" for key in NOT_RESULTS["sim"] if key not in ("loads", "seeds", "record")]
    for setting in args.set:
        if setting.partition("=")[0] not in unchanged or "=" not in setting:
            parser.error(f"--set {setting}: must be KEY=VALUE with KEY one of {', '.join(unchanged)} "
                         "(settings that leave a figure's results unchanged)")
    if args.refresh:
        refresh([name for names in args.names for name in names.split(",")], args.scale)
    elif args.tables:
        for key in SCRIPTS:
            run_script(key)
    elif not args.only_page:
        for names in args.names or known:
            run(names.split(","), args.scale, args.set)
    write_atomic(DOCS / "gallery.md", page())
    print(f"wrote {DOCS / 'gallery.md'}")


if __name__ == "__main__":
    main()
