"""Configuration in, built objects out: the one place that turns config groups (the
mappings Hydra composes from `conf/`) into what the engine takes.

    topology(cfg)       Topology            (the `topology` group)
    routing(cfg)        RoutingScheme       (the `routing` group)
    router(cfg)         RouterSpec          (the `router` group)
    sim(cfg)            SimSpec             (the `sim` group)
    traffic(cfg, topo, seed)  TrafficTable  (the `traffic` group, for one seed)
    network(topo, routing, router)  Network: tables built, the VC policy resolved, `vcs: auto`
                        sized from the exact longest route, deadlock freedom checked (on a
                        topology with failed links also every route followed: `check_faults`)
    network_of(config)  Network of a whole config (its topology, routing and router groups),
                        from the network cache when it was built before

Every function refuses bad input with one line naming the parameter, the value and what
is allowed. Keys a mapping leaves out take the config files' defaults (conf/<group>/<name>.yaml,
conf/router/default.yaml, conf/sim/default.yaml), as on the command line.

The network cache: building a network (an RRG medoid of many samples, path sets, routing
tables, the longest route for `vcs: auto`) can take longer than simulating a point, so
`network_of` keeps what it built in JAXNET_NETWORK_CACHE (default ~/.cache/jaxnet/networks;
`off`: none), keyed by the three config groups over their config files' defaults (a
changed default is a changed config), the contents of any file they name, and jaxnet's own
source (less the apps and the results code, which build nothing): a changed config or a
changed building code builds anew. Topologies are kept there too (`topology_of`, keyed by
the topology group), so the routings of a sweep on one network build its topology once (an
RRG medoid of many samples).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import pickle
import time
from pathlib import Path
from typing import Mapping

from jaxnet.core.configs import CONF_DIR
from jaxnet.core.files import write_atomic_bytes
from jaxnet.core.registry import closest
from jaxnet.core.validate import require
from jaxnet.paths.deadlock import channel_dependency_graph, find_deadlock_cycle
from jaxnet.routing import RoutingScheme, build_routing, vc_policy
from jaxnet.sim.explore import explore_routes
from jaxnet.sim.network import Network
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.topology import Topology, build_topology
from jaxnet.topology.cartesian import port_rings
from jaxnet.traffic import TrafficTable, build_traffic

log = logging.getLogger("jaxnet")

# `router.vcs: auto` follows every route of a scheme whose routes the static bound only
# bounds up to this many routers (the route explorer); above it the bound is used.
EXPLORE_UP_TO = 128


def defaults(group: str, cfg: Mapping) -> dict:
    """`cfg` over the defaults of its config file: conf/<group>/<name>.yaml for a group whose
    entries are named (topology, routing, traffic), else conf/<group>/default.yaml."""
    import yaml

    require(isinstance(cfg, Mapping), group, cfg, "a config group (a mapping)")
    name = cfg.get("name", "default") if group in ("topology", "routing", "traffic") else "default"
    path = Path(CONF_DIR) / group / f"{name}.yaml"
    return {**(yaml.safe_load(path.read_text()) or {} if path.is_file() else {}), **cfg}


def topology(cfg: Mapping) -> Topology:
    """The `topology` group over its config file's defaults, with its `faults` (failed
    links) removed."""
    return build_topology(defaults("topology", cfg))


def routing(cfg: Mapping) -> RoutingScheme:
    return build_routing(defaults("routing", cfg))


def traffic(cfg: Mapping, topo: Topology, seed: int) -> TrafficTable:
    return build_traffic(defaults("traffic", cfg), topo, seed)


def _fields(cls, group: str, cfg: Mapping) -> dict:
    """The keys of a config group, each a field of `cls`."""
    require(isinstance(cfg, Mapping), group, cfg, "a config group (a mapping)")
    known = [f.name for f in dataclasses.fields(cls)]
    for key in cfg:
        require(key in known, f"{group}.{key}", cfg[key], f"unknown key; {group} takes only {sorted(known)}"
                f"{closest(key, known)}")
    return dict(cfg)


def router(cfg: Mapping) -> RouterSpec:
    """The `router` group; `link_latency` may be a number or a map {link class: cycles}."""
    values = _fields(RouterSpec, "router", defaults("router", cfg))
    latency = values.get("link_latency", 1)
    if isinstance(latency, Mapping):
        values["link_latency"] = tuple(sorted((str(k), v) for k, v in latency.items()))
    return RouterSpec(**values)


def sim(cfg: Mapping) -> SimSpec:
    """The `sim` group; `loads` and `seeds` are non-empty lists (duplicates merged)."""
    values = _fields(SimSpec, "sim", defaults("sim", cfg))
    for key in ("loads", "seeds"):
        if key in values:
            grid = values[key]
            require(isinstance(grid, (list, tuple)) and len(grid) > 0, f"sim.{key}", grid, "a non-empty list")
            values[key] = tuple(grid)
    return SimSpec(**values)


def network(topo: Topology, scheme: RoutingScheme, router_spec: RouterSpec) -> Network:
    """The network; `router.vcs: auto` sizes the VCs as the scheme's VC policy needs on this
    topology, with hop VCs from the exact longest route (`longest_route`)."""
    built = _network(topo, scheme, router_spec)
    if topo.failed_links is not None:
        check_faults(built)
    return built


def _network(topo: Topology, scheme: RoutingScheme, router_spec: RouterSpec) -> Network:
    require(topo.n_ports <= 127, "topology degree", topo.n_ports, "at most 127 ports per router")
    if router_spec.selection == "auto":
        router_spec = dataclasses.replace(router_spec, selection=scheme.selection)
    tables = scheme.build_tables(topo)
    max_hops = int(scheme.max_hops(topo, tables))
    policy = vc_policy.resolve(router_spec.vc_policy, scheme, router_spec.flow_control)
    needed = int(policy.vcs_needed(scheme, topo, tables))
    scheme.check_deadlock_free(topo, tables, policy.name)
    rings = port_rings(topo) if router_spec.flow_control == "bubble" else None

    def assemble(spec: RouterSpec, hops: int) -> Network:
        return Network.assemble(topo, scheme, spec, hops, policy, tables, rings)

    if router_spec.vcs == "auto":
        require(needed <= 64, "router.vcs", "auto", f"at most 64 VCs ({scheme.name} needs {needed})")
        built = assemble(dataclasses.replace(router_spec, vcs=needed), max_hops)
        if policy.name != "hops":
            return built
        longest = longest_route(built)
        return assemble(dataclasses.replace(router_spec, vcs=max(longest, 1)), longest)
    require(router_spec.vcs >= needed, "router.vcs", router_spec.vcs,
            f">= {needed}: routing={scheme.name} with vc_policy={policy} needs {needed} VCs "
            f"on {topo.name} (longest route {max_hops} hops)")
    return assemble(router_spec, max_hops)


def network_of(config: Mapping) -> Network:
    """The network of a config's `topology`, `routing` and `router` groups, from the network
    cache when it holds it (see the module docstring); its topology from the cache too."""
    return _cached("network", {key: defaults(key, config[key]) for key in ("topology", "routing", "router")},
                   lambda: network(topology_of(config["topology"]), routing(config["routing"]),
                                   router(config["router"])))


def topology_of(cfg: Mapping) -> Topology:
    """The topology of a `topology` group, from the network cache when it was built before:
    every routing of a sweep on one network shares it (an RRG medoid of many samples is
    the slowest part of building most networks)."""
    return _cached("topology", {"topology": defaults("topology", cfg)}, lambda: topology(cfg))


def _cached(kind: str, groups: Mapping, build_it):
    """What `build_it()` builds for these config groups, from the network cache when it
    holds it; written there once built (atomically: readers never see half an entry)."""
    path = _cache_path(kind, groups)
    if path is not None and path.is_file():
        try:
            built = pickle.loads(path.read_bytes())
            log.info("%s from the cache: %s", kind, path)
            return built
        except Exception:  # noqa: BLE001 (a damaged or foreign entry is rebuilt)
            log.warning("%s cache entry %s unreadable: building the %s again", kind, path, kind)
    start = time.perf_counter()
    built = build_it()
    if path is not None:
        try:
            write_atomic_bytes(path, pickle.dumps(built))
            log.info("%s built in %.1f s, cached in %s", kind, time.perf_counter() - start, path)
        except OSError as err:
            log.warning("%s cache %s not written (%s)", kind, path, err)
    return built


def _cache_path(kind: str, groups: Mapping) -> Path | None:
    """Where the `kind` (network or topology) of these config groups is cached, or None with
    the cache off."""
    where = os.environ.get("JAXNET_NETWORK_CACHE", "")
    if where == "off":
        return None
    files = {value: _file_digest(value) for value in _strings(groups) if os.path.isfile(value)}
    blob = json.dumps([groups, files, _source_digest()], sort_keys=True, default=str)
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = hashlib.sha256(blob.encode()).hexdigest()[:24]
    return Path(where or home / "jaxnet" / "networks") / (f"{name}.pkl" if kind == "network" else f"{kind}-{name}.pkl")


def _strings(value) -> list[str]:
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# jaxnet's modules that never build a network (the apps, the Python API that drives them, the
# results and plots: the building code imports none of them), so that a change there keeps the
# network cache
NOT_BUILDING = ("api.py", "cli", "results")


def building_sources() -> list[Path]:
    """jaxnet's source files a network's building may depend on: all but NOT_BUILDING's."""
    package = Path(__file__).resolve().parent
    return [source for source in sorted(package.rglob("*.py"))
            if source.relative_to(package).parts[0] not in NOT_BUILDING]


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """A digest of the source that builds networks: a change to it builds them anew."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for source in building_sources():
        digest.update(source.relative_to(package).as_posix().encode() + source.read_bytes())
    return digest.hexdigest()


def check_faults(built: Network) -> None:
    """On a topology with failed links, follow every route of the scheme (the route explorer)
    and refuse, in one line, a scheme that routes over a failed link, one that leaves router
    pairs without any route that arrives (naming them), and routes whose channel
    dependencies close a cycle. Pairs only some of whose routes reach a router with no
    candidate port (a corner: Polarized on irregular graphs, with or without faults) are
    logged: such packets wait there, counted in `no_route_events`."""
    scheme, topo = built.routing, built.topo
    log.info("following every route of routing=%s on %s (%d router pairs): failed links", scheme.name, topo.name,
             topo.n_routers * (topo.n_routers - 1))
    routes = explore_routes(built, draws=scheme.explore_draws)
    if len(routes.dangling):
        router, port, target = routes.dangling[0]
        raise ValueError(f"routing={scheme.name} is invalid on {topo.name}: its routes take {len(routes.dangling)} "
                         f"failed link(s) (router {router} port {port} towards router {target}, ...); its tables "
                         f"do not follow the faulty graph: use one that does (e.g. minimal, valiant, polarized, ksp)")
    pairs = topo.n_routers * (topo.n_routers - 1)
    if len(routes.served) < pairs:
        served = set(map(tuple, routes.served.tolist()))
        missing = [(s, d) for s in range(topo.n_routers) for d in range(topo.n_routers) if s != d and (s, d) not in served]
        shown = ", ".join(f"{s}->{d}" for s, d in missing[:5])
        raise ValueError(f"routing={scheme.name} is invalid on {topo.name}: it cannot serve {len(missing)} router "
                         f"pair(s) ({shown}{', ...' if len(missing) > 5 else ''}): none of their routes arrives")
    if len(routes.stuck):
        log.warning("routing=%s on %s: routes of %d of %d router pairs may reach a router with no candidate port "
                    "(e.g. %d->%d); packets that do wait there (no_route_events)", scheme.name, topo.name,
                    len(routes.stuck), pairs, *routes.stuck[0])
    cycle = find_deadlock_cycle(channel_dependency_graph(routes.dependencies))
    if cycle is not None:
        raise ValueError(f"routing={scheme.name} is invalid on {topo.name}: its channel dependencies close a "
                         f"cycle of {len(cycle)} channels (router, port, VC ids {cycle[:4]}...): it can deadlock")


def longest_route(built: Network) -> int:
    """The longest route of the network's scheme in router-to-router hops: its own
    `max_hops` where that is exact, else every route followed by the route explorer
    (networks up to EXPLORE_UP_TO routers; larger ones use the bound and say so)."""
    scheme, topo = built.routing, built.topo
    if scheme.exact_max_hops:
        return built.layout.max_hops
    if topo.n_routers > EXPLORE_UP_TO:
        log.warning("router.vcs=auto: %s routes on %d routers are not all followed (more than %d): using the "
                    "bound of %d hops", scheme.name, topo.n_routers, EXPLORE_UP_TO, built.layout.max_hops)
        return built.layout.max_hops
    return int(explore_routes(built, draws=scheme.explore_draws).longest)
