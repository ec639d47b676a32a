"""The cycle-level engine. It takes built objects (`jaxnet.build` makes them from config):

  spec        RouterSpec, SimSpec (the router model and a run's cycles and batching)
  policies    the router's named policies (selection, flow control, injection buffer)
  layout      sizes, wiring (NetArrays) and the Model a cycle simulates
  state       the state pytrees; rings: FIFO buffers
  route       route computation, request filtering and selection
  phases      the other phases of a cycle (release, allocate, transfer, send, inject, generate)
  work        which buffers, heads, links and servers a cycle visits (every one, or lists)
  capacities  how large the lists are, chunk by chunk
  step        the cycle and lax.scan; stats: what is counted, results rows
  network     a network ready to simulate; run: batches and devices; checkpoint: resume
  workers     every CPU core; explore: every route a scheme can take

Import from the submodules, e.g. `jaxnet.sim.run.simulate`."""
