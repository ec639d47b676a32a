"""Merge the results of any set of runs (a multirun sweep's jobs, several sweeps) into one
table, comparison figures and, for experiments, the "paper vs jaxnet" claims table.

Curves are configurations: two rows belong to the same curve only if everything that
changes results but the traffic pattern, the offered load and the seed is equal, so rows
of different configurations are never averaged into one line. A curve's label is its
experiment line's `label`, else one derived from what tells it apart (`labels`)."""
from __future__ import annotations

import functools
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from jaxnet.core.files import write_atomic
from jaxnet.results import claims, labels, plots, summary
from jaxnet.results.table import NOT_RESULTS, read_rows, results_sim, results_topology, write_rows

# configuration keys that never distinguish curves (the grid, bookkeeping, the panel, output)
_IGNORED = tuple(f"sim.{key}" for key in NOT_RESULTS["sim"]) + (
    "experiment", "line", "network", "scale", "traffic", "patterns", "format", "hydra", "plot", "label", "reuse")
LINE_KEYS = ("only", "networks", "label")  # keys of an experiment line that are not configuration


def result_files(dirs: Iterable[Path]) -> list[Path]:
    """The results of each given directory: its own results.csv (a run, or a merged sweep),
    else every results.csv below it (a sweep's jobs); files are taken as given."""
    found = []
    for d in map(Path, dirs):
        if d.is_file() or (d / "results.csv").is_file():
            found.append(d if d.is_file() else d / "results.csv")
        else:
            found += sorted(d.rglob("results.csv"))
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> dict:
    return json.loads(text)


def config_of(row: Mapping) -> dict:
    """The configuration a row was simulated with."""
    return _parsed(row["config"])


def _check_configs(path: Path, rows: Sequence[Mapping]) -> None:
    for row in rows:
        try:
            ok = isinstance(config_of(row), dict)
        except json.JSONDecodeError:
            ok = False
        if not ok:
            raise ValueError(f"{path} is not a jaxnet results table (its `config` column is not a JSON "
                             f"configuration): move it away or give the runs' directories instead")


def load(dirs: Iterable[Path], unreadable: list[str] | None = None) -> tuple[list[dict], int]:
    """(rows of every results.csv found, each point once; number of damaged rows dropped). A
    point is a configuration, load and seed of one experiment line, network and pattern: two
    lines whose configurations coincide (at one scale) keep their rows each. A
    file that is not a jaxnet results table raises a ValueError naming it, unless
    `unreadable` is a list: then its message is added there and the file skipped."""
    rows, damaged, seen = [], 0, set()
    for path in result_files(dirs):
        try:
            good, bad = read_rows(path)
            _check_configs(path, good)
        except ValueError as err:
            if unreadable is None:
                raise
            unreadable.append(str(err))
            continue
        damaged += bad
        for row in good:
            key = tuple(row.get(column) for column in ("experiment", "line", "network", "traffic")) + (
                row["config_id"], row["offered_load"], row["seed"])
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return rows, damaged


def _curve_config(row: Mapping) -> dict:
    """The row's configuration without what never distinguishes curves (nested)."""
    def keep(config: Mapping, prefix: str) -> dict:
        out = {}
        for key, value in config.items():
            dotted = f"{prefix}{key}"
            if dotted in _IGNORED:
                continue
            out[key] = keep(value, dotted + ".") if isinstance(value, Mapping) else value
        return out

    config = keep(config_of(row), "")
    if isinstance(config.get("sim"), Mapping):
        config["sim"] = results_sim(config["sim"])
    if isinstance(config.get("topology"), Mapping):
        config["topology"] = results_topology(config["topology"])
    return config


def _line_labels(experiment: Mapping, rows: Sequence[Mapping]) -> dict[str, str]:
    """line -> its label: the line's own `label`, else derived from what tells the lines
    apart (their routing and router settings)."""
    lines = experiment.get("lines") or {}
    configs = {}
    for row in rows:
        line = row.get("line")
        if line and line not in configs:
            spec = {k: v for k, v in (lines.get(line) or {}).items() if k not in LINE_KEYS}
            configs[line] = {"routing": config_of(row)["routing"], **spec}
    derived = labels.curve_labels(configs)
    return {line: (lines.get(line) or {}).get("label") or derived[line] for line in configs}


def assign_curves(rows: Sequence[dict], panel_key: str | None = None,
                  experiment: Mapping | None = None, by_pattern: bool = False) -> dict[str, str]:
    """Set row['curve'] (an id of the configuration) on every row; return {curve id: label}
    in legend order (the experiment's line order, else first appearance). Curves that share
    a label in one panel (a value of `panel_key`) get what tells them apart added. With
    `by_pattern`, each pattern is a curve of its own, its label followed by the pattern's
    (load curves in panels that hold several patterns: `patterns_share_panels`)."""
    experiment = experiment if experiment is not None else experiment_of(rows)
    configs, traffic_of = {}, {}
    for row in rows:
        config = _curve_config(row)
        identity = [config, row.get("traffic")] if by_pattern else config
        key = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:10]
        row["curve"] = key
        configs.setdefault(key, config)
        traffic_of[key] = row.get("traffic")
    if rows and all(row.get("line") for row in rows):
        by_line = _line_labels(experiment, rows)
        order = list(experiment.get("lines") or {})
        line_of = {row["curve"]: row["line"] for row in rows}
        ranked = sorted(line_of, key=lambda c: order.index(line_of[c]) if line_of[c] in order else len(order))
        names = {curve: by_line[line_of[curve]] for curve in ranked}
    else:
        names = labels.curve_labels(configs)
    if by_pattern:
        names = {curve: f"{name}, {traffic_of[curve]}" for curve, name in names.items()}
    panels = defaultdict(set)
    for row in rows:
        panels[row["curve"]].add(row.get(panel_key) if panel_key else None)
    out = dict(names)
    for name in set(names.values()):
        sharing = [c for c in names if names[c] == name]
        if any(panels[a] & panels[b] for i, a in enumerate(sharing) for b in sharing[i + 1:]):
            out.update(labels.distinguish({c: name for c in sharing}, {c: configs[c] for c in sharing}))
    return out


def patterns_share_panels(rows: Sequence[Mapping], panel_key: str) -> bool:
    """Whether some panel (a value of `panel_key`) holds rows of several patterns: panels by
    network where a network runs more than one."""
    patterns = defaultdict(set)
    for row in rows:
        patterns[row.get(panel_key)].add(row.get("traffic"))
    return any(len(in_panel) > 1 for in_panel in patterns.values())


def experiment_of(rows: Sequence[Mapping]) -> dict:
    """The experiment block of the rows' configuration ({} for plain runs)."""
    for row in rows:
        block = config_of(row).get("experiment")
        if block:
            return block
    return {}


def _networks(rows: Sequence[Mapping]) -> dict[str, str]:
    """network (the experiment's name, else the topology) -> its description; networks
    described alike show the topology parameters in which they differ (two samples of one
    RRG: `RRG 1224/14, p=5 (seed=2)`), else their names (one topology under several patterns:
    `(network=df_uniform)`)."""
    topologies = {}
    for row in rows:
        topologies.setdefault(row.get("network") or row["topology"], config_of(row)["topology"])
    titles = labels.distinguish({key: labels.topology_name(topology) for key, topology in topologies.items()},
                                {key: {"network": topology} for key, topology in topologies.items()})
    return labels.distinguish(titles, {key: {"network": key} for key in titles})


def _title(rows: Sequence[Mapping], experiment: Mapping, panel: str) -> str:
    scales = sorted({r.get("scale") for r in rows if r.get("scale")})
    head = experiment.get("title") or experiment.get("name") or ""
    head += f" ({', '.join(scales)} scale)" if scales else ""
    networks = "" if panel == "network" else "; ".join(dict.fromkeys(_networks(rows).values()))
    return "\n".join(filter(None, [head, networks]))


def assign_panels(rows: Sequence[dict], by: str) -> dict[str, str]:
    """Set row['panel'] (a key per panel of a curve figure, by `network` or by `traffic`);
    return {panel key: title}. A traffic panel is one pattern (a label given to several
    patterns is split), titled as the papers name it; a network panel is titled by the
    network's description."""
    if by == "network":
        for row in rows:
            row["panel"] = row.get("network") or row["topology"]
        return _networks(rows)
    patterns = list(dict.fromkeys((row[by], row.get("pattern", "{}")) for row in rows))
    shared = {label for label, _ in patterns if sum(other == label for other, _ in patterns) > 1}
    keys = {(label, pattern): f"{label} [{i}]" if label in shared else label
            for i, (label, pattern) in enumerate(patterns)}
    titles, configs = {}, {}
    for (label, pattern), key in keys.items():
        config = _parsed(pattern) if pattern.startswith("{") else {}
        titles[key] = labels.panel_title(str(label), config)
        configs[key] = {"traffic": config}
    for row in rows:
        row["panel"] = keys[(row[by], row.get("pattern", "{}"))]
    return labels.distinguish(titles, configs)


def _unfaulty(row: Mapping) -> dict:
    """The row's topology config without its faults."""
    return {k: v for k, v in config_of(row)["topology"].items() if k != "faults"}


def _family(row: Mapping) -> str:
    """The network a row's topology is, failed links aside (the `faults` figure's panels)."""
    return json.dumps(_unfaulty(row), sort_keys=True, default=str)


def _collective_panel(row: Mapping) -> str:
    """A finite workload's panel: its network and its kind of collective."""
    pattern = _parsed(row["pattern"]) if str(row.get("pattern", "")).startswith("{") else {}
    return f"{row.get('network') or row['topology']}|{pattern.get('kind', row['traffic'])}"


def _collective_title(row: Mapping) -> str:
    pattern = _parsed(row["pattern"]) if str(row.get("pattern", "")).startswith("{") else {}
    kind = str(pattern.get("kind", row["traffic"])).replace("_", " ")
    return f"{kind}, {labels.topology_name(config_of(row)['topology'])}"


def write_outputs(rows: list[dict], out_dir: Path, merged_csv: bool = True,
                  formats: Sequence[str] = plots.DEFAULT_FORMATS,
                  experiments_now: Mapping[str, Mapping] | None = None) -> list[Path]:
    """Merged results.csv (unless `merged_csv` is false: the rows are already there), the
    figures (in each of `formats`) and (experiments) claims.md and summary.md in out_dir.
    experiments_now: per experiment name, its block as the experiment file reads now, whose
    title and claims replace those stored with the rows (a title, a cause or a tolerance
    edited since the run)."""
    formats = plots.check_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if rows and merged_csv:
        write_rows(out_dir / "results.csv", rows)
        written.append(out_dir / "results.csv")
    by_experiment = defaultdict(list)
    for row in rows:
        by_experiment[row.get("experiment", "")].append(row)
    for name, group in by_experiment.items():
        experiment = experiment_of(group)
        if name in (experiments_now or {}):  # the title and claims as the file states them now
            now = experiments_now[name]
            experiment = {**experiment, **{key: now[key] for key in ("title", "claims") if key in now}}
        # panels in the experiment's network order; within a job, rows are in its pattern order
        order = list(experiment.get("networks") or {})
        group.sort(key=lambda r: order.index(r["network"]) if r.get("network") in order else len(order))
        panel = experiment.get("panel", "traffic")
        panel_titles = assign_panels(group, panel)
        curve_labels = assign_curves(group, "panel", experiment)
        # load curves: a curve per pattern where a panel holds several (bars group them instead)
        curve_rows, load_curve_labels = group, curve_labels
        if patterns_share_panels(group, "panel"):
            curve_rows = [dict(row) for row in group]
            load_curve_labels = assign_curves(curve_rows, "panel", experiment, by_pattern=True)
        prefix = f"{name.replace('/', '_')}_" if len(by_experiment) > 1 and name else ""
        title = _title(group, experiment, panel)
        scales = {r.get("scale") for r in group}
        bounds = [b for b in experiment.get("bounds", []) if b.get("scale", None) in (None, *scales)]
        for kind in experiment.get("plots", ["throughput", "latency", "jain", "hops"]):
            path = out_dir / f"{prefix}{kind}.png"
            if kind == "faults":  # a panel per network family, failed links on the x axis
                written += plots.save(plots.build_faults(group, _title(group, experiment, "network"),
                                                         _line_labels(experiment, group), _family,
                                                         {_family(r): labels.topology_name(_unfaulty(r)) for r in group}),
                                      path, formats)
            elif kind in plots.COMPLETION:  # finite workloads: a panel per network and collective
                titles = {_collective_panel(r): _collective_title(r) for r in group}
                written += plots.save(plots.build_completion(group, kind, _title(group, experiment, "network"),
                                                             curve_labels, _collective_panel, titles), path, formats)
            elif kind == "bars":  # a panel per network, a bar group per pattern
                group_key = experiment.get("group", "traffic")
                group_titles = {r[group_key]: labels.panel_title(str(r[group_key])) for r in group}
                networks = _networks(group)
                network_titles = {r.get("network", ""): networks[r.get("network") or r["topology"]] for r in group}
                written += plots.bars_figure(group, path, _title(group, experiment, "network"), "network",
                                             group_key, bounds, curve_labels, network_titles, group_titles, formats)
            else:
                written += plots.curves_figure(curve_rows, kind, path, title, "panel", bounds, load_curve_labels,
                                               panel_titles, formats)
        if experiment.get("summary"):
            block = experiment["summary"]
            text = f"# {experiment.get('title', name)}: saturation summary\n\n" + summary.saturation_table(
                group, "panel", curve_labels, block["reference"], block.get("fractions", [0.5, 0.8]))
            write_atomic(out_dir / f"{prefix}summary.md", text)
            written.append(out_dir / f"{prefix}summary.md")
        stated = [c for c in experiment.get("claims") or [] if c.get("scale", None) in (None, *scales)]
        if stated:
            text = f"# {experiment.get('title', name)}: paper vs jaxnet\n\n" + claims.markdown(
                claims.evaluate(group, stated))
            write_atomic(out_dir / f"{prefix}claims.md", text)
            written.append(out_dir / f"{prefix}claims.md")
    return written
