"""Hydra entry points: `jaxnet`, `jaxnet-topo`, `jaxnet-paths`, `jaxnet-tables`. Importing
the package asks XLA for one host device per CPU core before JAX starts."""
from jaxnet.core.devices import use_every_core

use_every_core()
