"""The route explorer: enumerate every route a scheme can produce, for deadlock and route-length checks.

Starting from every ordered router pair (and `draws` random draws of the fields a scheme
sets at injection, e.g. Valiant intermediates), every candidate port is followed, ignoring
occupancy, through the scheme's own `candidates` / `on_hop` code and the router's VC
policy, exactly as the engine calls them. The result is the set of channel dependencies
(channel = (router, port, VC) as one integer) and the longest route, so the channel
dependency graph can be checked for cycles with `jaxnet.paths.deadlock`.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.routing.base import NOT_CANDIDATE
from jaxnet.sim.phases import take_port


@dataclasses.dataclass
class RouteSet:
    """dependencies: int64 [n, 2] distinct (channel, next channel) pairs;
    longest: longest route found (hops); corners: states with no candidate at all;
    stuck: int64 [m, 2] distinct (source, destination) router pairs of routes that reach
    such a state; served: int64 [m, 2] distinct pairs with at least one route that arrives;
    dangling: int64 [m, 3] distinct (router, port, destination router) of candidates through
    a port that leads to no router (a failed or unused link)."""

    dependencies: np.ndarray
    longest: int
    corners: int
    stuck: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.int64))
    served: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.int64))
    dangling: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3), np.int64))


def explore_routes(network, draws: int = 4, seed: int = 0, max_hops: int | None = None) -> RouteSet:
    """Follow every candidate of `network.routing` from every router pair (host loop)."""
    topo, layout, routing = network.topo, network.layout, network.routing
    n, ports, v_count = layout.routers, layout.ports, layout.vcs
    limit = max_hops if max_hops is not None else 4 * layout.max_hops + 4
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    src, dst = np.repeat(src, draws), np.repeat(dst, draws)
    packets = np.zeros((len(src), pk.N_FIELDS), np.int32)
    packets[:, pk.DST_R], packets[:, pk.DST] = dst, dst * layout.servers_per_router
    packets[:, pk.SRC], packets[:, pk.MID] = src, -1
    bits = jax.random.bits(jax.random.PRNGKey(seed), (len(src),), jnp.uint32)
    packets = np.asarray(routing.at_injection(network.tables, jnp.asarray(src), jnp.asarray(packets), bits))
    router, previous = src.astype(np.int32), np.full(len(src), -1, np.int64)
    deps, longest, corners, stuck, served, dangling = [], 0, 0, [], [], []
    step = jax.jit(lambda r, p: _expand(network, r, p))
    while len(router):
        arrived = np.asarray(routing.delivers(network.tables, jnp.asarray(router), jnp.asarray(packets)))
        longest = max(longest, int(packets[arrived, pk.HOPS].max(initial=0)))
        served.append(packets[arrived][:, [pk.SRC, pk.DST_R]])
        router, packets, previous = router[~arrived], packets[~arrived], previous[~arrived]
        if not len(router):
            break
        if int(packets[:, pk.HOPS].max()) >= limit:
            raise RuntimeError(f"routing={routing.name}: a route exceeds {limit} hops (livelock?)")
        ok, vc, moved = (np.asarray(x) for x in step(jnp.asarray(router), jnp.asarray(packets)))
        cornered = ~ok.any(axis=1)
        corners += int(cornered.sum())
        stuck.append(packets[cornered][:, [pk.SRC, pk.DST_R]])
        rows, port = np.nonzero(ok)
        leads = topo.neighbor[router[rows], port] >= 0
        dangling.append(np.stack([router[rows], port, packets[rows, pk.DST_R]], axis=1)[~leads])
        rows, port = rows[leads], port[leads]
        channel = (router[rows].astype(np.int64) * ports + port) * v_count + vc[rows, port]
        has_prev = previous[rows] >= 0
        deps.append(np.stack([previous[rows][has_prev], channel[has_prev]], axis=1))
        nxt = moved[rows, port]
        state = np.concatenate([topo.neighbor[router[rows], port][:, None], nxt,
                                channel[:, None].astype(np.int32)], axis=1)
        state = np.unique(state, axis=0)
        router, packets, previous = state[:, 0], state[:, 1:-1], state[:, -1].astype(np.int64)
    def distinct(parts, width):
        return np.unique(np.concatenate(parts).astype(np.int64), axis=0) if parts else np.zeros((0, width), np.int64)

    return RouteSet(distinct(deps, 2), longest, corners, distinct(stuck, 2), distinct(served, 2),
                    distinct(dangling, 3))


def _expand(network, router, packets):
    """(candidate mask [M, P], VC [M, P], packet after taking each port [M, P, F])."""
    layout, routing = network.layout, network.routing
    cost, scheme_vc, _ = routing.candidates(network.tables, router, packets, layout.ports)
    vc = layout.vc_policy.candidate_vcs(network.net.port_class, router, packets, scheme_vc)
    vc = jnp.broadcast_to(vc[:, None] if vc.ndim == 1 else vc, cost.shape)
    ok = (cost < NOT_CANDIDATE) & (vc < layout.vcs)
    ports = jnp.arange(layout.ports)
    moved = jax.vmap(lambda p: take_port(routing, network.tables, network.net, router, packets,
                                         jnp.full_like(router, p)))(ports)
    return ok, vc, jnp.swapaxes(moved, 0, 1)
