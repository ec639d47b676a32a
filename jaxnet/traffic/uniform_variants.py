"""The papers' uniform distribution and patterns built on it: `uniform`,
`uniform_other_router`, `all_to_all` and `hot_region`.

all_to_all is the stationary equivalent of a personalised all-to-all exchange: every packet
goes to a uniformly random other server, own switch included (as MPI_Alltoall includes the
peers on the same node), which is exactly `uniform`; it is kept as a name for that reading.
A traffic table is a fixed per-packet distribution, so a phased schedule (step k: switch i
-> switch i + k, which the Ant Mill paper notes can itself become Ant Mill traffic) is not
expressible; over a measurement window much longer than one exchange, the schedule offers
every pair the same load as this distribution.

hot_region (Restricted Valiant paper, HOT): a `fraction` of each server's traffic goes to a
random server among the first `region` fraction of servers (server ids, router-major), the
rest is `uniform` (any other server, hot region and own router included). Hot destinations
on the source's own router are excluded from the hot share (it is spread over the rest of
the region; a source whose router holds the whole region sends only uniform traffic).
Defaults 0.25 and 0.125 as in the paper; under minimal routing a hot server then receives
at most region / (fraction + region * (1 - fraction)) = 36.4 %. `placement: spread` puts the
same hot servers on routers spread evenly over the router ids instead of the first ones: every
hot server receives the same load, but no group of a Dragonfly holds more than its share of
the region, so the links into the region carry little more than uniform traffic (a
counterfactual of the paper's pattern: docs/fidelity.md, "Restricted Valiant").
"""
from __future__ import annotations

import numpy as np

from jaxnet.core.validate import require
from jaxnet.topology.base import Topology
from jaxnet.traffic.base import ANY_SERVER, UNIFORM, TrafficTable, per_router_table, uniform_table


def uniform(topo: Topology, rng) -> TrafficTable:
    """The papers' uniform: every packet goes to a uniformly random other server, servers on
    the source's own router included (probability (p - 1) / (S - 1))."""
    require(topo.n_servers >= 2, "topology", topo.name, "uniform traffic needs at least 2 servers")
    return uniform_table(topo.n_servers)


def uniform_other_router(topo: Topology, rng) -> TrafficTable:
    """Every packet goes to a uniformly random server on another router (never the source's
    own router): the variant that excludes the own switch."""
    require(topo.n_routers >= 2, "topology", topo.name, "uniform_other_router needs at least 2 routers")
    return uniform_table(topo.n_servers, other_router=True)


def all_to_all(topo: Topology, rng) -> TrafficTable:
    """Uniform over every other server, the source's own router included (= `uniform`)."""
    return uniform(topo, rng)


HOT_PLACEMENTS = ("first", "spread")


def hot_region(topo: Topology, rng, fraction: float = 0.25, region: float = 0.125,
               placement: str = "first") -> TrafficTable:
    """`fraction` of the traffic to `region` of the servers (the first ones, or spread over
    the routers), the rest uniform."""
    require(0.0 <= fraction <= 1.0, "traffic.fraction", fraction, "must be in [0, 1]")
    require(0.0 < region <= 1.0, "traffic.region", region, "must be in (0, 1]")
    require(placement in HOT_PLACEMENTS, "traffic.placement", placement, f"must be one of {', '.join(HOT_PLACEMENTS)}")
    p, n_routers = topo.servers_per_router, topo.n_routers
    n_hot = max(1, int(round(region * topo.n_servers)))
    whole, partial = divmod(n_hot, p)
    hot_routers = whole + (partial > 0)
    routers = (np.arange(hot_routers) if placement == "first"
               else np.arange(hot_routers) * n_routers // hot_routers)  # evenly spaced ids
    # hot entries: each whole router of the region, then the region's servers on the last one
    hot_router = np.concatenate([routers[:whole], np.full(partial, routers[-1])])
    hot_server = np.concatenate([np.full(whole, ANY_SERVER), np.arange(partial)])
    hot_size = np.concatenate([np.full(whole, float(p)), np.ones(partial)])
    own = hot_router[None, :] == np.arange(n_routers)[:, None]
    hot_weight = np.where(own, 0.0, hot_size[None, :])
    reachable = hot_weight.sum(axis=1, keepdims=True)
    hot_weight = np.divide(fraction * hot_weight, reachable, out=np.zeros_like(hot_weight),
                           where=reachable > 0)
    uniform_weight = np.where(reachable > 0, 1.0 - fraction, 1.0)
    return per_router_table(
        np.concatenate([np.full((n_routers, 1), UNIFORM), np.tile(hot_router, (n_routers, 1))], 1),
        np.concatenate([np.full((n_routers, 1), ANY_SERVER), np.tile(hot_server, (n_routers, 1))], 1),
        np.concatenate([uniform_weight, hot_weight], 1),
        p)
