"""Hydra entry points: `jaxnet`, `jaxnet-topo`, `jaxnet-paths`, `jaxnet-tables`."""
