"""Shared fixtures: tiny networks built straight from networkx, so engine tests do not
depend on any particular topology builder."""
import contextlib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

# One XLA compilation cache for the whole session, shared by the pytest-xdist workers and
# the apps the tests start as subprocesses (they inherit the variable): most of a test's
# time is compiling its simulator, and many tests build the same one. New every session, so
# every program is still compiled at least once per run.
# XLA's backend optimisation off: the tiny networks here compile in 40% less time and run
# slower, a net gain for tests that are mostly compilation (a whole fast tier at the default
# level: 5:40 against 5:02); results are bit-identical (the behaviour fixture passes at both
# levels). Apps and benchmarks keep the default.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()
_OWN_CACHE = "JAX_COMPILATION_CACHE_DIR" not in os.environ  # made here (the xdist workers inherit it)
if _OWN_CACHE:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxnet-tests-xla-")
    # built networks likewise: one cache per session, none left in the user's
    os.environ.setdefault("JAXNET_NETWORK_CACHE", os.path.join(os.environ["JAX_COMPILATION_CACHE_DIR"], "networks"))

import absl.logging  # noqa: E402 (after the cache directory is set)
import jax
import networkx as nx
import pytest

from jaxnet import build
from jaxnet.routing import build_routing
from jaxnet.sim.run import simulate
from jaxnet.sim.spec import RouterSpec
from jaxnet.topology import from_graph
from jaxnet.traffic import tables_for_points


# absl (imported by optax and chex) keeps a logging handler on the stderr of its import
# time, which under pytest is pytest's capture; each in-process Hydra app reconfigures
# logging, which closes every handler, and absl's closes its stream unless it is the current
# sys.stderr (not so while tests/apps.py redirects it): point it at the real stderr.
absl.logging.get_absl_handler().python_handler.stream = sys.__stderr__


def make_network(graph, servers_per_router=2, routing="minimal", **router):
    topo = from_graph(nx.convert_node_labels_to_integers(graph), "test", servers_per_router)
    return build.network(topo, build_routing({"name": routing}), RouterSpec(**router))


def simulate_cfg(network, traffic_cfg, points, spec, **kwargs):
    """`simulate` with the traffic given as a config group (tables built once per seed)."""
    return simulate(network, tables_for_points(traffic_cfg, network.topo, points), points, spec, **kwargs)


@pytest.fixture(scope="session")
def small_rrg():
    return make_network(nx.random_regular_graph(4, 16, seed=3), servers_per_router=2, vcs=4)


@pytest.fixture
def heads_ready_from(monkeypatch):
    """A setter: input rings of at least `slots` slots a simulation keep their heads' READY
    beside the records (`jaxnet.sim.state.HEAD_READY_FROM_SLOTS`; 0: every network's)."""
    from jaxnet.sim import run, state

    def keep_from(slots: int) -> None:
        monkeypatch.setattr(state, "HEAD_READY_FROM_SLOTS", slots)
        run.compiled_init.cache_clear()  # empty states are cached per layout

    yield keep_from
    run.compiled_init.cache_clear()


@contextlib.contextmanager
def count_compilations():
    """Count the XLA compilations inside the block (a list that grows by one each)."""
    compiled = []

    def listen(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


def pytest_sessionfinish(session):
    if _OWN_CACHE and not hasattr(session.config, "workerinput"):
        shutil.rmtree(os.environ["JAX_COMPILATION_CACHE_DIR"], ignore_errors=True)


def load_script(path: Path):
    """A script of scripts/ or benchmarks/ as a module (its main() not run)."""
    spec = importlib.util.spec_from_file_location(f"script_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
