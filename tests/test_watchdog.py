"""The deadlock watchdog fires only on a deadlock: at light load, with long links, large
packets and a crossbar speedup, a network that delivers every packet never raises an alarm,
whatever the threshold; a real deadlock still fires and names the buffers it is stuck in
(tests/test_routing.py: a cyclic ring, Polarized corners)."""
import networkx as nx
import numpy as np
import pytest
from conftest import make_network, simulate_cfg

from jaxnet.sim.run import stuck_buffers
from jaxnet.sim.spec import SimSpec
from jaxnet.sim.stats import wide_value

# (routing, router options): long links, large packets, speedups; the papers' routings
CASES = [
    ("minimal", dict(vcs=2, link_latency=100)),
    ("minimal", dict(vcs=2, packet_size=256, input_buffer=2, output_buffer=2)),
    ("polarized", dict(vcs=5, packet_size=64, crossbar_speedup=2, link_latency=20)),
    ("valiant", dict(vcs=4, link_latency=20, router_latency=5)),
]


@pytest.mark.parametrize("routing, router", CASES, ids=[f"{r}-{'-'.join(map(str, o.values()))}" for r, o in CASES])
@pytest.mark.parametrize("watchdog", [1, 5000])
def test_no_alarm_at_light_load(routing, router, watchdog):
    """A packet now and then (the network empty most of the time) and a light steady load:
    every packet generated is delivered and the watchdog stays quiet."""
    network = make_network(nx.complete_graph(4), servers_per_router=1, routing=routing, **router)
    spec = SimSpec(warmup=0, measure=6000, chunk=2000, generate_until=4000, watchdog=watchdog)
    size = network.layout.router.packet_size
    # about 5 packets in all, then about 50: loads in phits scale with the packet size
    loads = [5 * size / (4 * 4000), min(0.3, 50 * size / (4 * 4000))]
    rows, state = simulate_cfg(network, {"name": "uniform"}, [(loads[0], 1), (loads[1], 2)], spec)
    for i, row in enumerate(rows):
        assert not row["deadlock"], (routing, router, watchdog, row["offered_load"], row["deadlock_at"])
        generated = int(wide_value(np.asarray(state.stats.generated_all[i])))
        assert generated > 0 and row["packets_consumed"] == generated


def test_an_alarm_names_the_buffers_packets_wait_in():
    """A ring routed clockwise on one VC deadlocks; the report names input or output
    buffers with packets waiting, and their heads' destinations."""
    from test_routing import _Clockwise

    from jaxnet import build
    from jaxnet.sim.spec import RouterSpec
    from jaxnet.topology import from_graph

    ring = nx.cycle_graph(6)
    topo = from_graph(ring, "ring6", 1, port_order=lambda r: [(r + 1) % 6, (r - 1) % 6])
    network = build.network(topo, _Clockwise(), RouterSpec(vcs=1, input_buffer=1, output_buffer=1))
    traffic = {"name": "destination_table", "routers": [(r + 3) % 6 for r in range(6)]}
    rows, state = simulate_cfg(network, traffic, [(1.0, 1)], SimSpec(warmup=0, measure=3000, chunk=1000, watchdog=200))
    assert rows[0]["deadlock"]
    named = stuck_buffers(network, state, 0)
    assert named and all("waiting, head for router" in line for line in named)
