"""The cycle-level engine: state pytrees (`state`), the one-cycle step (`step`), batched
runs and summaries (`run`). Import from the submodules, e.g. `jaxnet.sim.run.simulate`."""
