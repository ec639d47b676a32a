"""Tuning against the simulator (docs/tuning.md): path weights fitted in a closed loop with
simulations (`closed_loop`), a routing config's computed weights resolved before its network
is built (`resolve_weights`), and routing parameters searched by SPSA over simulated batches
(`routing_params`). Above `jaxnet.sim`: these run the simulator."""
from jaxnet.tune.resolve import fill_demand, needs_weights, resolve_weights

__all__ = ["fill_demand", "needs_weights", "resolve_weights"]
