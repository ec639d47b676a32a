"""Test helper: walk a routing scheme's routes on the host, packet by packet, without the
engine (candidates -> pick a port -> the engine's own `take_port`), to check individual
routes. `jaxnet.sim.explore` enumerates all routes instead."""
import jax
import jax.numpy as jnp
import numpy as np

from jaxnet.core import packets as pk
from jaxnet.routing.base import NOT_CANDIDATE
from jaxnet.sim.layout import Layout, build_net_arrays
from jaxnet.sim.phases import take_port
from jaxnet.sim.spec import RouterSpec


def trace_routes(scheme, topo, choose="first", seed=0):
    """Routes of every ordered router pair (s != t) as lists of (router, port, vc).

    choose="first": the lowest-cost candidate, lowest port on ties (deterministic schemes);
    choose="random": any candidate at random (explores adaptive and non-minimal choices).
    Returns (src, dst, routes). Fails if a packet has no candidate or needs more than
    `max_hops` hops.
    """
    tables = scheme.build_tables(topo)
    dev = jax.tree_util.tree_map(jnp.asarray, tables)
    max_hops = scheme.max_hops(topo, tables)
    net = build_net_arrays(topo, Layout(topo.n_routers, topo.n_ports, topo.servers_per_router,
                                        RouterSpec(vcs=1), max_hops, scheme.vc_policies[0]))
    n_routers, ports = topo.n_routers, topo.n_ports
    src, dst = np.divmod(np.arange(n_routers * n_routers), n_routers)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    n = len(src)
    packets = np.zeros((n, pk.N_FIELDS), np.int32)
    packets[:, pk.DST] = dst * topo.servers_per_router
    packets[:, pk.DST_R], packets[:, pk.SRC], packets[:, pk.MID] = dst, src, -1
    rng = np.random.default_rng(seed)
    bits = jnp.asarray(rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32))
    packets = scheme.at_injection(dev, jnp.asarray(src), jnp.asarray(packets), bits)
    router = src.copy()
    routes = [[] for _ in range(n)]
    for _ in range(max_hops):
        active = router != dst
        if not active.any():
            break
        cost, vc, _ = scheme.candidates(dev, jnp.asarray(router, jnp.int32), packets, ports)
        cost = np.asarray(cost)
        hops = np.asarray(packets[:, pk.HOPS])
        vc = (np.repeat(hops[:, None], ports, 1) if vc is None
              else np.broadcast_to(np.asarray(vc).reshape(n, -1), (n, ports)))
        ok = cost < NOT_CANDIDATE
        assert ok[active].any(axis=1).all(), "a packet has no candidate port"
        if choose == "first":
            port = np.argmin(np.where(ok, cost, NOT_CANDIDATE), axis=1)
        else:
            port = np.array([rng.choice(np.flatnonzero(o)) if o.any() else 0 for o in ok])
        port = np.where(active, port, -1)
        for i in np.flatnonzero(active):
            routes[i].append((int(router[i]), int(port[i]), int(vc[i, port[i]])))
        packets = take_port(scheme, dev, net, jnp.asarray(router, jnp.int32), packets,
                            jnp.asarray(port, jnp.int32))
        router = np.where(active, topo.neighbor[router, np.maximum(port, 0)], router)
    assert (router == dst).all(), "a route is longer than the scheme's max_hops"
    return src, dst, routes
