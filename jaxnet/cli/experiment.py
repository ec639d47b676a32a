"""Experiments: one paper figure as a Hydra config (`conf/experiment/<paper>/<figure>.yaml`,
`# @package _global_`), run as `jaxnet -m +experiment=<paper>/<figure> [scale=paper]`.

An experiment file sets the top-level keys `scale` (small | paper), `line` and `network`
(swept by the file's `hydra.sweeper.params`: one job per line and network) and the block

    experiment:
      name, title         the figure; its title names the papers' network
      plots               throughput, latency, tail, jain, hops, bars (maximum accepted load),
                          faults (maximum accepted load vs links failed), completion
                          (collectives: completion time and effective bandwidth vs size)
      panel, group        how curve figures split (traffic | network) and how bars group
                          (bars: a panel per network)
      lines               name -> {routing: {...}, router: {...}, only: [networks], label}: the
                          curves (label: the legend's text; default derived from the settings)
      networks            name -> {small: {topology}, paper: {topology}, patterns?} (optional;
                          a network's own patterns replace the experiment's)
      patterns            label -> traffic config, or scale -> {label: config}: every pattern of
                          a job runs in the same batch as its loads and seeds
      scales              small | paper -> {router: {...}, sim: {...}, topology: {...}}
      bounds              analytic lines: {value, label, panel?, traffic?, scale?}
      summary             {reference: a line, fractions: [0.5, 0.8]}: summary.md, peak accepted
                          load and latency at those fractions of the reference's peak
      claims              the paper's statements: {claim, source, quote, paper, relation,
                          tolerance?, scale?, cause?, jaxnet: an expression over peak(),
                          accepted(), hops(), latency(), jain()} (jaxnet.results.claims);
                          `scale` keeps a bound or claim to one scale

`resolve` turns the composed config of one job into a plain run: topology, routing and
traffic groups are replaced whole by the experiment's, router and sim keys are overridden,
and keys given on the command line (`sim.loads=[0.3,0.7]`) win over the experiment's.
"""
from __future__ import annotations

import contextlib
import copy
import itertools
from typing import Mapping, Sequence

from jaxnet.core.validate import require
from jaxnet.tune import fill_demand

SCALES = ("small", "paper")
REPLACED = ("topology", "routing", "traffic")  # groups an experiment replaces whole


class NotApplicable(Exception):
    """This job's line does not run on this job's network (the sweep skips it)."""


def _apply(config: dict, overrides: Mapping) -> None:
    for key, value in overrides.items():
        if key in REPLACED or not isinstance(value, Mapping) or not isinstance(config.get(key), dict):
            config[key] = copy.deepcopy(value)
        else:
            _apply(config[key], value)


def patterns_of(config: Mapping) -> dict:
    """label -> traffic config of every pattern a job runs (one for a plain run)."""
    if "patterns" in config:
        return dict(config["patterns"])
    return {config["traffic"]["name"]: config["traffic"]}


def _get(config: Mapping, dotted: str):
    for part in dotted.split("."):
        if not isinstance(config, Mapping) or part not in config:
            return KeyError
        config = config[part]
    return config


def _set(config: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        config = config.setdefault(part, {})
    config[last] = copy.deepcopy(value)


def resolve(config: dict, explicit: tuple[str, ...] = ()) -> dict:
    """The job a composed config describes, with its patterns (see the module docstring);
    `explicit` names the dotted keys given on the command line, which keep their values."""
    out = _resolve(config)
    for key in explicit:
        value = _get(config, key)
        if value is not KeyError and not key.startswith(("experiment", "hydra")):
            _set(out, key, value)
    # routing tables that follow the run's traffic (a `table` scheme's null demand) say so
    out["routing"] = fill_demand(out["routing"], out["patterns"], out["sim"]["seeds"])
    return out


def _resolve(config: dict) -> dict:
    experiment = config.get("experiment")
    if not experiment:
        return {**config, "patterns": patterns_of(config)}
    out = copy.deepcopy(config)
    scale = config.get("scale", "small")
    name = experiment.get("name", "experiment")
    require(scale in SCALES and scale in experiment.get("scales", {}), "scale", scale,
            f"one of {[s for s in SCALES if s in experiment.get('scales', {})]} for experiment {name}")
    _apply(out, {k: v for k, v in experiment["scales"][scale].items() if k != "patterns"})
    networks = experiment.get("networks") or {}
    if networks:
        network = config.get("network")
        require(network in networks, "network", network, f"one of {sorted(networks)} for experiment {name}")
        require(scale in networks[network], "scale", scale, f"network {network} has no {scale} scale")
        out["topology"] = copy.deepcopy(networks[network][scale])
    lines = experiment.get("lines") or {}
    if lines:
        line = config.get("line")
        require(line in lines, "line", line, f"one of {sorted(lines)} for experiment {name}")
        spec = lines[line]
        if spec.get("only") and config.get("network") not in spec["only"]:
            raise NotApplicable(f"line {line} runs only on {list(spec['only'])}, not on {config.get('network')}")
        _apply(out, {k: v for k, v in spec.items() if k not in ("only", "networks", "label")})
        _apply(out, (spec.get("networks") or {}).get(config.get("network"), {}))
    patterns = ((networks.get(config.get("network")) or {}).get("patterns")
                or experiment["scales"][scale].get("patterns") or experiment.get("patterns"))
    if patterns:
        if scale in patterns and isinstance(patterns[scale], Mapping) and "name" not in patterns[scale]:
            patterns = patterns[scale]
        out["patterns"] = copy.deepcopy(dict(patterns))
    else:
        out["patterns"] = patterns_of(out)
    return out


def sweep_jobs(name: str, scale: str = "small", overrides: Sequence[str] = ()) -> list[dict]:
    """The resolved jobs `jaxnet -m +experiment=<name> scale=<scale> [overrides]` runs
    (`compose_jobs`)."""
    return compose_jobs([f"+experiment={name}", f"scale={scale}", *overrides])


def compose_jobs(overrides: Sequence[str] = ()) -> list[dict]:
    """The resolved jobs `jaxnet -m [overrides]` runs (`job_overrides`), composed from conf/
    as Hydra composes them; jobs a line skips (`NotApplicable`) are left out."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf, open_dict

    from jaxnet.cli.common import CONF_DIR, keys_of

    jobs = []
    with initialize_config_dir(config_dir=CONF_DIR, version_base=None):
        for job in job_overrides(overrides):
            cfg = compose(config_name="config", overrides=job)
            with open_dict(cfg):
                cfg.pop("hydra", None)
            try:
                jobs.append(resolve(OmegaConf.to_container(cfg, resolve=True), keys_of(job)))
            except NotApplicable:
                continue
    return jobs


def job_overrides(overrides: Sequence[str] = (), hydra_overrides: Sequence[str] = ()) -> list[list[str]]:
    """The override list of every job `jaxnet -m [overrides]` runs: one per combination of the
    swept values (`routing=minimal,valiant`), each expanded by its experiment's own sweep
    (`hydra.sweeper.params`: lines, networks) for the keys the overrides do not set, so that
    `+experiment=polarized/fig4,polarized/fig5` runs every line of both figures. A sweep
    among the overrides (`line=minimal,polarized`) replaces the experiment's own for that
    key. hydra_overrides: the command line's `hydra.*` overrides, which Hydra hands a
    launcher apart from the jobs' (`hydra.searchpath` finds experiments outside conf/), used
    to compose and left out of the lists returned."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from jaxnet.cli.common import CONF_DIR

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    base = [o.input_line for o in parsed if not o.is_sweep_override()]
    swept = [[f"{o.get_key_element()}={value}" for value in o.sweep_string_iterator()]
             for o in parsed if o.is_sweep_override()]
    given = {o.key_or_group for o in parsed}
    outer = GlobalHydra.instance().is_initialized()
    context = contextlib.nullcontext() if outer else initialize_config_dir(config_dir=CONF_DIR, version_base=None)
    jobs = []
    with context:
        for combination in itertools.product(*swept):
            job = [*base, *combination]
            composed = compose(config_name="config", overrides=[*hydra_overrides, *job], return_hydra_config=True)
            params = composed.hydra.sweeper.params or {}
            own = [[f"{key}={value}" for value in str(values).split(",")]
                   for key, values in params.items() if key not in given]
            jobs += [[*job, *extra] for extra in itertools.product(*own)]
    return jobs
