"""How well the first chunk's list capacities fit: per chunk, each work list's most entries in
a cycle and the capacities it ran with, for one point growing its lists as a CPU run does
(`sim.list_sizing: grow`), one JSON line per chunk (benchmarks/README.md).

    python benchmarks/lists_per_chunk.py [--network df876] [--routing '{"name": "rval", "base": "dragonfly_minimal"}']
                                         [--router fogsim | --router '{"vcs": 4}'] [--loads 0.1,0.5]
                                         [--chunks 3] [--chunk 500] [--out outputs/bench/lists_per_chunk.jsonl]

`--router fogsim` is the Restricted Valiant paper's router (conf/experiment/valiant/dragonfly.yaml).
A chunk `redone` overflowed a list and ran again with larger ones (one more compilation);
`ran_with` differing from the chunk before is one more compilation too.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the networks are the benchmarks')

FOGSIM = {"vcs": "auto", "vc_policy": "dragonfly", "packet_size": 10, "router_latency": 10,
          "link_latency": {"local": 2, "global": 20}, "crossbar_speedup": 2, "input_buffer": 100,
          "injection_buffer": 200}


def chunks_of_a_point(network, traffic: str, load: float, chunks: int, chunk: int):
    """Yield one dict per chunk of one point (seed 1) at `load`."""
    import jax

    from jaxnet import build
    from jaxnet.sim import capacities
    from jaxnet.sim.run import advance_chunk, batch_params, compiled_init
    from jaxnet.sim.spec import SimSpec

    spec = SimSpec(warmup=0, measure=10**9)
    lists = capacities.steps("auto", network.layout, 1, 10**9)
    params = batch_params([build.traffic({"name": traffic}, network.topo, 1)], [(load, 1)], spec, network.layout)
    state, sleep = compiled_init(network.layout, capacities.sleeps(network.model, lists))(
        jax.numpy.stack([jax.random.PRNGKey(1)]))
    tier = capacities.initial(network.model, lists, load, "grow", network.route_hops)
    first, previous = tier, 0
    for i in range(chunks):
        start = time.perf_counter()
        state, sleep, peak, used = advance_chunk(network, params, state, sleep, chunk, 1, lists, tier)
        yield {"load": load, "chunk": i, "first_capacities": first, "peak": [int(p) for p in peak],
               "ran_with": used, "redone": used != tier, "s": round(time.perf_counter() - start, 1)}
        tier, previous = capacities.next_capacities(network.layout, lists, peak, used, previous, "grow"), peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", default="df876", choices=sorted(bench.NETWORKS))
    parser.add_argument("--routing", default='{"name": "rval", "base": "dragonfly_minimal"}')
    parser.add_argument("--router", default="fogsim", help="'fogsim' or router settings as JSON")
    parser.add_argument("--traffic", default="uniform")
    parser.add_argument("--loads", default="0.1,0.5")
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--out", default="outputs/bench/lists_per_chunk.jsonl")
    args = parser.parse_args()

    from jaxnet import build
    from jaxnet.sim.spec import LISTED
    router = FOGSIM if args.router == "fogsim" else json.loads(args.router)
    routing = json.loads(args.routing)
    network = build.network(build.topology(bench.NETWORKS[args.network]), build.routing(routing), build.router(router))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "a") as out:
        for load in (float(x) for x in args.loads.split(",")):
            for row in chunks_of_a_point(network, args.traffic, load, args.chunks, args.chunk):
                row = {"engine": bench.engine_commit(), "network": args.network, "routing": routing,
                       "router": args.router, "traffic": args.traffic, "route_hops": round(network.route_hops, 3),
                       "lists": list(LISTED), **row}
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
