"""The one place `jaxnet.tune` runs the simulator. A network is built once; what tuning
changes (path weights, routing parameters) lives in its routing tables, which are traced
inputs like the loads, seeds and traffic tables: successive batches reuse the compiled step.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import numpy as np

from jaxnet.sim.network import Network
from jaxnet.sim.run import simulate
from jaxnet.sim.spec import SimSpec
from jaxnet.traffic import tables_for_points


@dataclasses.dataclass(frozen=True)
class Measurement:
    """rows: one results row per point; link_util: float64 [points, n_links] phits/cycle
    carried by every directed link in the measurement window (path-set link order)."""

    rows: list
    link_util: np.ndarray

    def column(self, key: str) -> np.ndarray:
        return np.asarray([float(row[key]) for row in self.rows])


def measure(network: Network, traffic, points: Sequence[tuple[float, int]], window: SimSpec) -> Measurement:
    """Simulate the (offered load, seed) points as one batch under `traffic`: a pattern
    config (its table of each point's seed), or one `TrafficTable` per point."""
    tables = tables_for_points(traffic, network.topo, points) if isinstance(traffic, Mapping) else list(traffic)
    rows, state = simulate(network, tables, points, window)
    layout, topo = network.layout, network.topo
    packets = np.asarray(state.stats.link_packets).reshape(len(points), layout.routers, -1)[:, :, : layout.ports]
    util = packets[:, topo.neighbor >= 0] * (layout.router.packet_size / window.measure)
    return Measurement(rows, util.astype(np.float64))


def with_tables(network: Network, **fields) -> Network:
    """The same network with some routing-table fields replaced (never recompiles while
    their shapes and types stay)."""
    return dataclasses.replace(network, tables=network.tables._replace(**fields))
