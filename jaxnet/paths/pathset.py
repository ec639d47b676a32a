"""`PathSet`: k paths per ordered router pair, the format routing tables and weights read.

Directed links are numbered in the topology's port order: link `l` is the `l`-th entry of
`np.nonzero(topology.neighbor >= 0)` (row-major over routers, then ports), so
`link_src[l] = r` and `link_dst[l] = neighbor[r, p]`. The arrays of a path set:

  paths     int32 [n_pairs, k, max_len + 1]  router sequence of each path, -1 padded
  pair_src  int32 [n_pairs]                  source router of each pair
  pair_dst  int32 [n_pairs]                  destination router of each pair
  length    int32 [n_pairs, k]               hops of each path (0 where not valid)
  valid     bool  [n_pairs, k]               False where the pair has fewer than k
                                             edge-disjoint paths (min cut < k)
  link_src, link_dst  int32 [n_links]        the directed links

Pairs are all ordered pairs (s, d), s != d, in row-major order, so pair index
`s * (R - 1) + d - (d > s)`. Derived views: `path_links()` gives the same paths as link
ids, `link_path_counts()` the path count P_e of every directed link, and `incidence()` the
pair-path-link incidence as COO arrays (row = pair * k + path) for LP and Optax solvers.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from jaxnet.core.files import load_arrays


def directed_links(neighbor: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Number the directed links of a port table.

    Returns link_src [L], link_dst [L] and link_id [R, P] (the link leaving router r through
    port p, -1 for unused ports).
    """
    routers, ports = np.nonzero(neighbor >= 0)
    link_id = np.full(neighbor.shape, -1, np.int32)
    link_id[routers, ports] = np.arange(routers.size, dtype=np.int32)
    return routers.astype(np.int32), neighbor[routers, ports].astype(np.int32), link_id


def all_pairs(n_routers: int) -> tuple[np.ndarray, np.ndarray]:
    """Ordered pairs (s, d), s != d, row-major: pair_src, pair_dst int32 [R * (R - 1)]."""
    src, dst = np.nonzero(~np.eye(n_routers, dtype=bool))
    return src.astype(np.int32), dst.astype(np.int32)


@dataclasses.dataclass(frozen=True, eq=False)
class PathSet:
    """k paths per ordered router pair (see the module docstring for the array layout).

    algorithm / params record how the set was made; `link_counts_by_cycle` (int32
    [cycles, n_links], cyclic algorithm only) holds the path counts after every cycle.
    """

    paths: np.ndarray
    pair_src: np.ndarray
    pair_dst: np.ndarray
    length: np.ndarray
    valid: np.ndarray
    link_src: np.ndarray
    link_dst: np.ndarray
    algorithm: str = ""
    params: dict = dataclasses.field(default_factory=dict)
    link_counts_by_cycle: np.ndarray | None = None

    @property
    def n_pairs(self) -> int:
        return int(self.paths.shape[0])

    @property
    def k(self) -> int:
        return int(self.paths.shape[1])

    @property
    def max_len(self) -> int:
        return int(self.paths.shape[2]) - 1

    @property
    def n_links(self) -> int:
        return int(self.link_src.size)

    @property
    def n_routers(self) -> int:
        return int(max(self.link_src.max(), self.link_dst.max())) + 1

    @functools.cached_property
    def path_links(self) -> np.ndarray:
        """int32 [n_pairs, k, max_len] link id of every hop, -1 padded."""
        lookup = np.full((self.n_routers, self.n_routers), -1, np.int32)
        lookup[self.link_src, self.link_dst] = np.arange(self.n_links, dtype=np.int32)
        here, there = self.paths[:, :, :-1], self.paths[:, :, 1:]
        hop = there >= 0
        return np.where(hop, lookup[np.maximum(here, 0), np.maximum(there, 0)], -1).astype(np.int32)

    def link_path_counts(self) -> np.ndarray:
        """int64 [n_links] P_e: how many paths (over all pairs) use each directed link."""
        links = self.path_links
        return np.bincount(links[links >= 0], minlength=self.n_links)

    @property
    def pmax(self) -> int:
        return int(self.link_path_counts().max())

    @property
    def mean_path_length(self) -> float:
        return float(self.length[self.valid].mean())

    def incidence(self) -> tuple[np.ndarray, np.ndarray]:
        """Pair-path-link incidence in COO form: (path_row, link), path_row = pair * k + path."""
        pair, path, hop = np.nonzero(self.path_links >= 0)
        rows = pair * self.k + path
        return rows.astype(np.int32), self.path_links[pair, path, hop]

    def incidence_matrix(self) -> sp.csr_matrix:
        """scipy CSR [n_links, n_pairs * k]: 1 where a path uses a link."""
        rows, links = self.incidence()
        data = np.ones(rows.size, np.float64)
        return sp.csr_matrix((data, (links, rows)), shape=(self.n_links, self.n_pairs * self.k))

    def save(self, path) -> None:
        """Write every array (and the parameters as a string) to one .npz file, atomically
        (temporary file, then rename), so an interrupted save keeps the previous file."""
        path = Path(path)
        tmp = path.with_name(f".{path.stem}.tmp.npz")
        extra = {}
        if self.link_counts_by_cycle is not None:
            extra["link_counts_by_cycle"] = self.link_counts_by_cycle
        np.savez_compressed(
            tmp,
            paths=self.paths,
            pair_src=self.pair_src,
            pair_dst=self.pair_dst,
            length=self.length,
            valid=self.valid,
            link_src=self.link_src,
            link_dst=self.link_dst,
            algorithm=np.array(self.algorithm),
            params=np.array(repr(self.params)),
            **extra,
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path, parameter: str = "path_file") -> "PathSet":
        import ast

        f = load_arrays(path, parameter, ("paths", "pair_src", "pair_dst", "length", "valid", "link_src",
                                          "link_dst", "algorithm", "params"),
                        "a path set written by jaxnet-paths (paths.npz)")
        return cls(
            paths=f["paths"],
            pair_src=f["pair_src"],
            pair_dst=f["pair_dst"],
            length=f["length"],
            valid=f["valid"],
            link_src=f["link_src"],
            link_dst=f["link_dst"],
            algorithm=str(f["algorithm"]),
            params=ast.literal_eval(str(f["params"])),
            link_counts_by_cycle=f["link_counts_by_cycle"] if "link_counts_by_cycle" in f else None,
        )
