"""Hydra entry points: `jaxnet`, `jaxnet-plot`, `jaxnet-topo`, `jaxnet-paths`,
`jaxnet-tables`. Importing the package applies JAXNET_HOST_DEVICES and the compilation
cache (`jaxnet.core.devices`) before JAX starts."""
from jaxnet.core.devices import use_compilation_cache, use_host_devices

use_host_devices()
use_compilation_cache()
