"""Engine speed: simulated router-cycles per second on an RRG (issue 3, item 8).

Writes JSON with, per (VCs, batch): router-cycles/s aggregated over the batch, compile
(first chunk) time, steady wall time and peak memory. Defaults: RRG 720 routers,
degree 17, 7 servers per router, uniform traffic at load 0.5, minimal routing.

    python scripts/bench.py --out outputs/bench.json [--vcs 4 8] [--batches 1 4 16]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time

import jax
import jax.numpy as jnp

from jaxnet.routing import build_routing
from jaxnet.sim.run import Network, compiled_advance, compiled_init
from jaxnet.sim.spec import RouterSpec, SimSpec
from jaxnet.sim.step import Params
from jaxnet.topology import build_topology
from jaxnet.traffic import build_traffic
from jaxnet.traffic.device import stack_tables


def measure(topo, routing, vcs, batch, chunk, chunks, load, traffic, vmap_width):
    network = Network.build(topo, build_routing({"name": routing}), RouterSpec(vcs=vcs))
    table = build_traffic({"name": traffic}, topo, 1)
    params = Params(
        load=jnp.full(batch, load, jnp.float32), traffic=stack_tables([table] * batch),
        warmup=jnp.zeros(batch, jnp.int32), measure=jnp.full(batch, 10**9, jnp.int32),
        watchdog=jnp.full(batch, 10**6, jnp.int32),
        generate_until=jnp.full(batch, 2**31 - 1, jnp.int32))
    keys = jnp.stack([jax.random.PRNGKey(i) for i in range(batch)])
    state = compiled_init(network.layout)(keys)
    advance = compiled_advance(network.layout, network.routing, chunk, vmap_width)
    start = time.perf_counter()
    state = jax.block_until_ready(advance(network.net, network.tables, params, state))
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(chunks):
        state = advance(network.net, network.tables, params, state)
    jax.block_until_ready(state)
    wall = time.perf_counter() - start
    cycles = chunk * chunks
    device_peak = None
    stats = jax.devices()[0].memory_stats() if hasattr(jax.devices()[0], "memory_stats") else None
    if stats:
        device_peak = stats.get("peak_bytes_in_use")
    return {
        "vcs": vcs, "batch": batch, "vmap_width": vmap_width, "cycles": cycles, "routers": topo.n_routers,
        "router_cycles_per_s": topo.n_routers * cycles * batch / wall,
        "cycles_per_s_per_sim": cycles / wall,
        "first_chunk_s_incl_compile": round(first, 3), "wall_s": round(wall, 3),
        "peak_host_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_device_bytes": device_peak,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="outputs/bench.json")
    parser.add_argument("--routers", type=int, default=720)
    parser.add_argument("--degree", type=int, default=17)
    parser.add_argument("--servers", type=int, default=7)
    parser.add_argument("--vcs", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--routing", default="minimal")
    parser.add_argument("--traffic", default="uniform")
    parser.add_argument("--load", type=float, default=0.5)
    parser.add_argument("--chunk", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--vmap-width", default="auto",
                        help="simulations vmapped together: auto (whole batch on GPU, 1 on CPU), all, or N")
    args = parser.parse_args()
    topo = build_topology({"name": "rrg", "routers": args.routers, "degree": args.degree,
                           "seed": 1, "medoid_of": 1, "servers_per_router": args.servers})
    width = {"auto": SimSpec(warmup=0, measure=1).resolved_vmap_width(), "all": None}.get(args.vmap_width)
    width = width if args.vmap_width in ("auto", "all") else int(args.vmap_width)
    results = []
    for vcs in args.vcs:
        for batch in args.batches:
            row = measure(topo, args.routing, vcs, batch, args.chunk, args.chunks, args.load,
                          args.traffic, width)
            print(json.dumps(row))
            results.append(row)
    report = {
        "topology": topo.name, "servers_per_router": args.servers, "routing": args.routing,
        "traffic": args.traffic, "load": args.load, "device": jax.devices()[0].device_kind,
        "devices": jax.device_count(), "jax": jax.__version__, "host": platform.node(),
        "cpus": os.cpu_count(), "results": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
