"""The cycle-level engine. `spec` (router and sim config groups), `layout` (sizes and
wiring), `state` (pytrees), `rings` (FIFO buffers), `phases` (one function per phase of a
cycle), `step` (the cycle and lax.scan), `stats` (what is counted, results rows), `run`
(networks, batches, devices), `explore` (every route a scheme can take). Import from the
submodules, e.g. `jaxnet.sim.run.simulate`."""
