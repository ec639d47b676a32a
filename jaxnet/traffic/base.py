"""`TrafficTable`: a traffic pattern compiled on the host, sampled per packet on device.

Every pattern becomes, for each source server, a weighted list of K entries. An entry is
either "uniform" (router UNIFORM: a uniformly random server other than the source itself,
the papers' uniform traffic), "uniform on other routers" (router UNIFORM_OTHER_ROUTER: a
uniformly random server on any router but the source's own), a whole router (server -1: a
uniformly random server of that router), or one server. Entries are drawn with the alias method, so a
draw costs two table reads whatever K is.
"""
from __future__ import annotations

import dataclasses

import numpy as np

UNIFORM = -1  # entry_router value: any server but the source itself
UNIFORM_OTHER_ROUTER = -2  # entry_router value: any server not on the source's router
ANY_SERVER = -1  # entry_server value: any server of entry_router


@dataclasses.dataclass(frozen=True)
class Program:
    """A finite workload (`jaxnet.traffic.collective`): every server runs J steps in order.
    In step j server s sends packets[s, j] packets, the k-th of them to server
    (dst[s, j] + k mod span[s, j]) mod S, or, where dst is -1, to one drawn from the table;
    its step j + 1 starts the cycle after it has sent them and the last of the expect[s, j]
    packets that other servers sent in their step j to it has arrived. All int32 [S, J]."""

    dst: np.ndarray
    span: np.ndarray
    packets: np.ndarray
    expect: np.ndarray

    @property
    def steps(self) -> int:
        return int(self.packets.shape[1])


@dataclasses.dataclass(frozen=True)
class TrafficTable:
    """Destination distribution per source server (S servers, K entries each).

    entry_router: int32 [S, K] destination router, or UNIFORM / UNIFORM_OTHER_ROUTER.
    entry_server: int32 [S, K] server index within that router, or ANY_SERVER.
    alias_prob: float32 [S, K] alias-method probability of keeping entry k.
    alias_index: int32 [S, K] entry used instead of k otherwise.
    rate: float32 [S] generation rate relative to the offered load (0 = silent source).
    program: a finite workload (each server sends a fixed amount, in dependent steps), or None
      for open-loop traffic (servers generate at the offered load for as long as the run).
    """

    entry_router: np.ndarray
    entry_server: np.ndarray
    alias_prob: np.ndarray
    alias_index: np.ndarray
    rate: np.ndarray
    program: Program | None = None

    @property
    def n_entries(self) -> int:
        return int(self.entry_router.shape[1])

    def probabilities(self) -> np.ndarray:
        """float64 [S, K] probability of each entry (inverts the alias tables; for tests)."""
        s, k = self.alias_prob.shape
        prob = self.alias_prob.astype(np.float64) / k
        np.add.at(prob, (np.repeat(np.arange(s), k), self.alias_index.ravel()),
                  (1.0 - self.alias_prob.astype(np.float64).ravel()) / k)
        return prob

    def router_matrix(self, servers_per_router: int) -> np.ndarray:
        """float64 [S, R] probability that each source server sends to each router."""
        s, _ = self.entry_router.shape
        p = servers_per_router
        n_routers = s // p
        prob = self.probabilities()
        out = np.zeros((s, n_routers))
        rows = np.arange(s)
        own = rows // p
        for k in range(self.n_entries):
            router = self.entry_router[:, k]
            fixed = router >= 0
            np.add.at(out, (rows[fixed], router[fixed]), prob[fixed, k])
            anywhere = router == UNIFORM  # p servers per other router, p - 1 on its own
            spread = prob[anywhere, k] / (s - 1)
            out[anywhere] += p * spread[:, None]
            out[rows[anywhere], own[anywhere]] -= spread
            remote = router == UNIFORM_OTHER_ROUTER
            spread = prob[remote, k] / (n_routers - 1)
            out[remote] += spread[:, None]
            out[rows[remote], own[remote]] -= spread
        return out


def from_entries(entry_router, entry_server, weights, rate=None) -> TrafficTable:
    """Build alias tables from per-source entries and non-negative weights [S, K]."""
    entry_router = np.asarray(entry_router, np.int32)
    entry_server = np.asarray(entry_server, np.int32)
    weights = np.asarray(weights, np.float64)
    if entry_router.ndim == 1:
        entry_router, entry_server, weights = entry_router[:, None], entry_server[:, None], weights[:, None]
    s, k = weights.shape
    total = weights.sum(axis=1)
    silent = total <= 0
    weights = np.where(silent[:, None], 1.0, weights)
    prob = weights / weights.sum(axis=1, keepdims=True)
    alias_prob, alias_index = _alias_tables(prob)
    if rate is None:
        rate = np.ones(s)
    rate = np.where(silent, 0.0, np.asarray(rate, np.float64))
    return TrafficTable(entry_router, entry_server, alias_prob, alias_index, rate.astype(np.float32))


def _alias_tables(prob: np.ndarray):
    """Vose's alias method, row by row: keep[k] and alias[k] with P(k)=(keep+sum alias)/K."""
    s, k = prob.shape
    keep = np.ones((s, k), np.float32)
    alias = np.tile(np.arange(k, dtype=np.int32), (s, 1))
    if k == 1:
        return keep, alias
    for row in range(s):
        scaled = prob[row] * k
        small = [i for i in range(k) if scaled[i] < 1.0]
        large = [i for i in range(k) if scaled[i] >= 1.0]
        while small and large:
            lo, hi = small.pop(), large.pop()
            keep[row, lo] = scaled[lo]
            alias[row, lo] = hi
            scaled[hi] -= 1.0 - scaled[lo]
            (small if scaled[hi] < 1.0 else large).append(hi)
        for i in small + large:
            keep[row, i] = 1.0
    return keep, alias


def uniform_table(n_servers: int, other_router: bool = False) -> TrafficTable:
    """Uniform: every server sends to any other server (the papers' uniform), or, with
    `other_router`, to any server not on its own router."""
    ones = np.ones(n_servers)
    kind = UNIFORM_OTHER_ROUTER if other_router else UNIFORM
    return from_entries(np.full(n_servers, kind), np.full(n_servers, ANY_SERVER), ones)


def destination_table(dest_servers, servers_per_router: int) -> TrafficTable:
    """A fixed mapping: source server i always sends to server dest_servers[i] (-1: silent)."""
    dest = np.asarray(dest_servers, np.int64)
    silent = dest < 0
    safe = np.where(silent, 0, dest)
    return from_entries(
        safe // servers_per_router,
        safe % servers_per_router,
        np.where(silent, 0.0, 1.0),
    )


def router_destination_table(dest_routers, servers_per_router: int) -> TrafficTable:
    """A fixed router mapping: every server of router r sends to a random server of dest_routers[r]."""
    dest = np.repeat(np.asarray(dest_routers, np.int64), servers_per_router)
    silent = dest < 0
    return from_entries(np.where(silent, 0, dest), np.full(dest.shape, ANY_SERVER),
                        np.where(silent, 0.0, 1.0))


SERVER_MAPS = ("same", "random")


def router_map_table(dest_routers, servers_per_router: int, server_map: str = "same") -> TrafficTable:
    """A router mapping: servers of router r send to router dest_routers[r] (-1: silent).

    server_map "same": server k of r sends to server k of the destination (a server
    permutation when dest_routers is one); "random": to a random server there per packet.
    """
    if server_map not in SERVER_MAPS:
        raise ValueError(f"traffic.server_map={server_map!r} is invalid: one of {SERVER_MAPS}")
    if server_map == "random":
        return router_destination_table(dest_routers, servers_per_router)
    dest = np.asarray(dest_routers, np.int64)
    local = np.arange(servers_per_router)
    servers = np.where(dest[:, None] < 0, -1, dest[:, None] * servers_per_router + local)
    return destination_table(servers.ravel(), servers_per_router)


def per_router_table(entry_router, entry_server, weights, servers_per_router: int,
                     rate=None) -> TrafficTable:
    """A table given by one row per router [R, K], shared by every server of that router.

    Builds the alias tables once per router rather than once per server.
    """
    table = from_entries(entry_router, entry_server, weights, rate)
    return TrafficTable(*(np.repeat(getattr(table, field.name), servers_per_router, axis=0)
                          for field in dataclasses.fields(table) if field.name != "program"))
