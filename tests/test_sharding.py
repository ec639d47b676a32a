"""The batch shards across devices without changing results (two virtual CPU devices)."""
import json
import os
import subprocess
import sys

SCRIPT = """
import json, jax, networkx as nx
from conftest import make_network, simulate_cfg
from jaxnet.sim.spec import SimSpec

network = make_network(nx.random_regular_graph(4, 12, seed=1), servers_per_router=2, vcs=4)
rows, state = simulate_cfg(network, {"name": "uniform"}, [(0.3, 1), (0.9, 2)], SimSpec(warmup=100, measure=400, chunk=250))
print(json.dumps({"devices": jax.device_count(), "shards": len(state.cycle.sharding.device_set),
                  "accepted": [r["accepted_load"] for r in rows],
                  "latency": [r["message_latency"] for r in rows]}))
"""


def _run(devices: int) -> dict:
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}"
    env = {**os.environ, "XLA_FLAGS": flags.strip(), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(__file__), timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_two_devices_give_the_same_results_as_one():
    one, two = _run(1), _run(2)
    assert one["devices"] == 1 and two["devices"] == 2 and two["shards"] == 2
    assert one["accepted"] == two["accepted"] and one["latency"] == two["latency"]
