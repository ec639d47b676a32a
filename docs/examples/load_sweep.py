# %% [markdown]
# # A load sweep from Python
# Minimal and Polarized routing on a small random regular graph under uniform traffic:
# accepted load against offered load, and latency against accepted load. Run it as a script
# (`python docs/examples/load_sweep.py --out sweep.png`) or open it as a notebook.

# %%
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import jaxnet  # noqa: E402

parser = argparse.ArgumentParser(description="Minimal and Polarized routing over offered load")
parser.add_argument("--out", default="load_sweep.png", help="the figure's file")
parser.add_argument("--warmup", type=int, default=1000, help="warm-up cycles per point")
parser.add_argument("--measure", type=int, default=2000, help="measured cycles per point")
args, _ = parser.parse_known_args()

# %% One call runs both routings, each over five loads, two seeds each
rows = jaxnet.run(["topology=rrg", "topology.routers=32", "topology.degree=6", "routing=minimal,polarized",
                   "sim.loads=[0.2,0.4,0.6,0.8,1.0]", "sim.seeds=[1,2]", f"sim.warmup={args.warmup}",
                   f"sim.measure={args.measure}"])

# %% Mean over seeds per routing and load
curves = {}
for row in rows:
    point = curves.setdefault(row["routing"], {}).setdefault(row["offered_load"], [])
    point.append((row["accepted_load"], row["message_latency"]))

# %% Plot
fig, (throughput, latency) = plt.subplots(1, 2, figsize=(7, 2.8), layout="constrained")
for routing, by_load in curves.items():
    loads = sorted(by_load)
    accepted = [sum(a for a, _ in by_load[x]) / len(by_load[x]) for x in loads]
    delay = [sum(d for _, d in by_load[x]) / len(by_load[x]) for x in loads]
    throughput.plot(loads, accepted, marker="o", label=routing.capitalize())
    latency.plot(accepted, delay, marker="o", label=routing.capitalize())
throughput.set(xlabel="offered load (phits/cycle/server)", ylabel="accepted load")
latency.set(xlabel="accepted load", ylabel="message latency (cycles)")
throughput.legend()
fig.savefig(args.out, dpi=150)
print(f"wrote {args.out}")
