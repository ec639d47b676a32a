"""jaxnet: a GPU-batched, vectorized, cycle-level interconnection-network simulator in JAX.

    import jaxnet
    rows = jaxnet.run(["topology=hamming", "routing=minimal,polarized", "sim.loads=[0.2,0.6]"])

    jaxnet.run(overrides, out_dir=None)  the `jaxnet` command as a function: the same
                                         overrides and defaults (conf/), rows as dicts
    jaxnet.build                         config groups -> topology, routing, router, traffic,
                                         networks (`jaxnet.build.network_of(config)`)
    jaxnet.simulate(network, traffic, points, sim)   one batch of (load, seed) points

docs/python.md documents them with runnable examples. Importing jaxnet starts no JAX; the
first use of one of these does (with the persistent compilation cache, as the apps)."""
__version__ = "0.1.0"
__all__ = ["__version__", "build", "run", "simulate"]


def __getattr__(name: str):
    if name not in ("build", "run", "simulate"):
        raise AttributeError(f"module 'jaxnet' has no attribute {name!r}")
    from jaxnet.core.devices import use_compilation_cache, use_host_devices

    use_host_devices()
    use_compilation_cache()
    if name == "run":
        from jaxnet.api import run

        return run
    if name == "simulate":
        from jaxnet.sim.run import simulate

        return simulate
    import jaxnet.build

    return jaxnet.build


def __dir__():
    return sorted(__all__)
