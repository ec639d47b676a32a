"""How large the work lists are (`jaxnet.sim.work.Listed`), chunk by chunk, on the host.

Each distinct tuple of capacities is one compilation of the chunk, so capacities change
rarely. Two policies (`sim.list_sizing`):

  grow  the first chunk's are estimated from the offered load (`first`); a list whose
        count outgrew its capacity grows, one whose count shrank well below it shrinks only
        when enough entries would be saved (`next_capacities`). Tight lists, a few
        compilations while a saturating network fills.
  once  sized up front for the batch's load range (`once`), saturated networks included,
        and kept: one compilation per run, each cycle paying for lists sized for the
        fullest network (the default on accelerators, where compilations cost more than
        wider lists).

Under both, a chunk whose lists overflowed is redone with larger ones (`overflowed`).
Results never depend on the capacities.

On small networks in short runs that a CPU steps one simulation at a time, `auto` lists only
the heads routed (`heads_only`): every ring, link and server is visited as without lists,
and the heads that may move are compacted from every ring (`EveryBuffer` with a head
capacity), sized once (`heads_alone`).
"""
from __future__ import annotations

import numpy as np

from jaxnet.sim.layout import Layout, Model
from jaxnet.sim.spec import LISTED
from jaxnet.sim.work import EveryBuffer, Listed, Work, heads_sleep

HEADS = LISTED.index("heads routed")

# sim.active_lists: auto lists the buffers in use on networks of at least AUTO_LISTS_FROM input
# VCs, and on smaller ones for runs of at least LISTS_FROM point-cycles (points x cycles): each
# list capacity is one more compilation of the chunk, which a short run does not win back
# (docs/performance.md). A batch that a CPU vmaps (networks of at most spec.VMAP_UP_TO input
# VCs) saves less per point-cycle with lists and compiles them for longer, so it is listed
# from LISTS_FROM_VMAPPED point-cycles. Shorter runs on small networks that a CPU steps one
# simulation at a time list only the heads routed (`heads_only`). A list's capacity is a
# power of 2**(1/4) times the server count.
AUTO_LISTS_FROM = 16384
LISTS_FROM = 2 * 10**5
LISTS_FROM_VMAPPED = 3 * 10**6
AUTO_LIST_STEPS = tuple(2.0 ** (k / 4) for k in range(-20, 24))
# Entries per server and unit of offered load that each list needs below saturation under
# uniform traffic (per squared load for the output rings with a packet to send on an idle
# link), measured on the benchmark networks (benchmarks/README.md) with the reference router
# (packets of REFERENCE_PACKET_SIZE phits, no router latency) on minimal routes of
# REFERENCE_ROUTE_HOPS hops on average (RRG 720/17/7's; the Dragonfly a=12 h=6's are 2.80).
# Other routers and routes scale them by Little's law (`held`). Past saturation the counts
# keep growing; the lists then grow with them.
IN_USE_PER_LOAD = (5.0, 0.5, 0.4, 5.5, 0.4, 0.15)
REFERENCE_PACKET_SIZE, REFERENCE_ROUTE_HOPS = 16, 2.64
# Entries each list held at most in saturated runs of the benchmark networks, as a share of
# every ring (or server) with a tenth more, and per server with a quarter more
# (benchmarks/README.md, "Lists sized once" and "Saturated lists per server"): what `once`
# sizes a batch for when its loads may saturate, i.e. above ONCE_LIGHT_UP_TO, the smaller of
# the two. The share binds on small networks, the count per server on large ones with many VCs
# (RRG 720 with 13 VCs keeps 0.38 of its input rings occupied, 17 per server). Past saturation
# under adversarial traffic nearly every server has packets to inject (0.92 of them under a
# neighbour permutation on RRG 720). Heads routed: at most 2.5 per server under
# available_first (minimal, neighbour permutation), 8.2 under best_first, whose heads waiting
# for their lowest-total output wake whenever their margin could have closed (Polarized,
# neighbour permutation): HEADS_PER_SERVER_BEST_FIRST.
SATURATED_SHARE = (0.9, 0.8, 0.4, 0.85, 0.25, 1.0)
SATURATED_PER_SERVER = (22.0, 20.0, 3.2, 12.0, 2.0, 1.0)
HEADS_PER_SERVER_BEST_FIRST = 10.5
ONCE_LIGHT_UP_TO = 0.1
# Heads listed alone (`heads_only`) are sized once for HEADS_PER_LOAD heads that may move per
# server and unit of offered load up to HEADS_LIGHT_UP_TO (the most measured under uniform
# traffic up to load 0.7 was 1.6 per server and unit of load, on the Dragonfly a=8 h=4 p=4
# at 0.7, just below its saturation; Hamming 4x4 0.9), and above it for a saturated network
# (`saturated`: heads listed alone never sleep, so their share alone bounds them).
HEADS_LIGHT_UP_TO, HEADS_PER_LOAD = 0.75, 2.0
# A list whose count outgrew its capacity (with a 1.25 margin) grows to hold GROW x the count;
# it shrinks only once the count uses less than 1/SHRINK of it and the unused entries are
# more than SLACK x the server count (a few idle entries cost less than a compilation). While
# its count rises it is kept, unless it holds more than OVERSIZED x the count: it then shrinks
# to hold SHRINK x the count, room to go on rising. (A chunk redone after an overflow sizes
# the lists that overflowed from the counts of a run that went wrong: on the Restricted
# Valiant paper's Dragonfly its heads list took 9x what the redone chunk needed, and the
# filling network kept it so for 11 chunks of 500 cycles; benchmarks/README.md.)
GROW, SHRINK, SLACK, OVERSIZED = 1.5, 2, 0.25, 4


def steps(active_lists, layout: Layout, points: int, cycles: int, cpu_vmapped: bool = False,
          cpu_single: bool = False) -> tuple:
    """Per list, the increasing capacities it may take on `layout` (`sim.active_lists`),
    ending with every ring; () for no lists (every buffer every cycle). `auto` lists every
    buffer in use on small networks only for runs of enough point-cycles (`cpu_vmapped`: a
    CPU steps the points as one vmapped batch), and in shorter ones only the heads routed
    where a CPU steps one simulation at a time (`cpu_single`; a vmapped batch of tiny
    networks compacts them for more than it saves)."""
    lists = active_lists
    everything = (layout.in_vcs,) * 3 + (layout.out_vcs,) * 2 + (layout.servers,)
    if lists == "auto":
        auto = tuple(max(1, int(k * layout.servers)) for k in AUTO_LIST_STEPS)
        enough = LISTS_FROM_VMAPPED if cpu_vmapped else LISTS_FROM
        if layout.in_vcs >= AUTO_LISTS_FROM or points * cycles >= enough:
            lists = (auto,) * len(LISTED)
        elif cpu_single:
            lists = tuple(auto if i == HEADS else (n,) for i, n in enumerate(everything))
        else:
            return ()
    return tuple(tuple(sorted({min(k, n) for k in options} | {n})) for options, n in zip(lists or (), everything))


def heads_only(lists: tuple) -> bool:
    """Whether only the heads routed are listed: every other list can only hold every ring
    (or server), which visiting every one does without a list."""
    return bool(lists) and all(len(options) == 1 for i, options in enumerate(lists) if i != HEADS)


def work(lists: tuple, capacities: tuple | None) -> Work:
    """The Work of a chunk: lists of these capacities (`lists` the capacities each may take),
    every buffer with the heads compacted (`heads_only`), or every buffer (None)."""
    if capacities is None:
        return EveryBuffer()
    if heads_only(lists):
        every_head = capacities[HEADS] >= lists[HEADS][-1]
        return EveryBuffer(head_capacity=None if every_head else int(capacities[HEADS]))
    return Listed(tuple(capacities))


def sleeps(model: Model, lists: tuple) -> bool:
    """Whether blocked heads sleep in a run with these lists (`work.heads_sleep`): only where
    the buffers in use are listed."""
    return bool(lists) and not heads_only(lists) and heads_sleep(model)


def described(lists: tuple, sizing: str) -> str:
    """How a run visited its buffers, as its rows' `work_lists` state it."""
    if not lists:
        return "every buffer"
    return "every buffer, heads listed" if heads_only(lists) else f"listed, sized {sizing}"


def sizing(lists: tuple, list_sizing: str) -> str:
    """How a run's capacities are chosen (`sim.list_sizing`, resolved): heads alone are
    sized once (growing them costs a compilation that a short run does not win back)."""
    return "once" if heads_only(lists) else list_sizing


def fit(lists: tuple, peak, current: tuple | None = None, grow: float = GROW, slack: float = 0,
        rising=None) -> tuple | None:
    """The list capacities for the next chunk given the counts `peak` of the last one: per
    list `current` while it holds 1.25 x the count and is used by more than 1/SHRINK of it
    (or leaves at most `slack` entries unused, or its count is `rising`: a network filling
    up would grow it back, unless it holds more than OVERSIZED x the count, when it shrinks
    to the smallest step that holds SHRINK x the count), else (and with no current) the
    smallest step that holds `grow` x the count. None (every buffer every cycle) when there
    are no lists; lists always beat visiting every buffer, saturated networks included
    (docs/performance.md)."""
    if not lists:
        return None

    def step(options, entries):
        return int(next(k for k in options if k >= min(entries, options[-1])))

    tier = []
    for i, (options, count) in enumerate(zip(lists, np.asarray(peak))):
        if current is None or 1.25 * count > current[i]:
            tier.append(step(options, grow * count))
            continue
        used = current[i] <= max(SHRINK * count, count + slack)
        rises = rising is not None and bool(rising[i])
        if used or (rises and current[i] <= max(OVERSIZED * count, count + slack)):
            tier.append(int(current[i]))
        else:
            tier.append(step(options, (SHRINK if rises else grow) * count))
    return tuple(tier)


def held(packet_size: int, router_latency: int, route_hops: float) -> np.ndarray:
    """Per list, Little's law up to a constant factor: the entries a server's traffic keeps
    listed per unit of offered load are the packets it sends per cycle (1 / packet_size)
    x the routers each passes (route_hops + 1; a server's entry once per packet) x the
    cycles each router holds the entry: an input ring about the packet's length and the
    router's latency (two cycles more), a waiting packet the latency (one more), an output
    ring the packet's length (one more), one cycle for the heads routed and the outputs
    sending. Link latencies and the crossbar's speedup are left out."""
    routers = route_hops + 1
    visits = np.asarray([routers] * 5 + [1.0])
    cycles = np.asarray([packet_size + router_latency + 2, router_latency + 1, 1, packet_size + 1, 1, 1])
    return visits * cycles / packet_size


def first_guess(layout: Layout, load: float, route_hops: float):
    """Entries each list needs per cycle at offered load `load` on routes of `route_hops`
    hops on average: IN_USE_PER_LOAD, scaled from the reference router and routes to
    these (`held`; the factor to two decimals, so that the reference network's own
    estimate stays the one measured)."""
    load = min(1.0, load)
    router = layout.router
    scale = np.round(held(router.packet_size, router.router_latency, route_hops)
                     / held(REFERENCE_PACKET_SIZE, 0, REFERENCE_ROUTE_HOPS), 2)
    return (np.asarray(IN_USE_PER_LOAD) * scale * layout.servers
            * np.asarray([load, load, load, load, load * load, load]))


def first(layout: Layout, lists: tuple, load: float, route_hops: float) -> tuple | None:
    """The first chunk's capacities for points of offered load up to `load` on routes of
    `route_hops` hops on average: estimated well enough that a light point compiles its
    chunk once."""
    return fit(lists, first_guess(layout, load, route_hops), grow=1.25)


def once(model: Model, lists: tuple, load: float, route_hops: float) -> tuple | None:
    """Capacities for a whole run of points of offered load up to `load` (`sim.list_sizing:
    once`): the estimate of `first`, and past ONCE_LIGHT_UP_TO (where uniform and adversarial
    traffic can saturate) the counts of a saturated network (`saturated`)."""
    if not lists:
        return None
    guess = 1.25 * first_guess(model.layout, load, route_hops)
    if load > ONCE_LIGHT_UP_TO:
        guess = np.maximum(guess, saturated(model, lists))
    return fit(lists, guess, grow=1.0)


def saturated(model: Model, lists: tuple):
    """Entries each list needs on a saturated network: SATURATED_SHARE of every ring (or
    server), at most SATURATED_PER_SERVER per server (HEADS_PER_SERVER_BEST_FIRST heads
    under best_first). The heads' count per server holds only where blocked heads sleep
    (`sleeps`): heads that never sleep are bounded by their share alone."""
    layout = model.layout
    every = np.asarray([options[-1] for options in lists], dtype=float)
    per_server = np.asarray(SATURATED_PER_SERVER)
    if layout.router.selection == "best_first":
        per_server[HEADS] = HEADS_PER_SERVER_BEST_FIRST
    if not sleeps(model, lists):
        per_server[HEADS] = np.inf
    return np.minimum(np.asarray(SATURATED_SHARE) * every, per_server * layout.servers)


def heads_alone(model: Model, lists: tuple, load: float) -> tuple:
    """Capacities for a whole run of points of offered load up to `load` that lists the heads
    routed alone (`heads_only`): HEADS_PER_LOAD per server and unit of load up to
    HEADS_LIGHT_UP_TO, beyond it those of a saturated network."""
    heads = (HEADS_PER_LOAD * model.layout.servers * load if load <= HEADS_LIGHT_UP_TO
             else saturated(model, lists)[HEADS])
    return fit(lists, [heads if i == HEADS else options[-1] for i, options in enumerate(lists)], grow=1.0)


def initial(model: Model, lists: tuple, load: float, sizing: str, route_hops: float) -> tuple | None:
    """The first chunk's capacities under `sim.list_sizing` (resolved: grow or once; heads
    listed alone by `heads_alone`) for routes of `route_hops` hops on average
    (`Network.route_hops`)."""
    if heads_only(lists):
        return heads_alone(model, lists, load)
    if sizing == "once":
        return once(model, lists, load, route_hops)
    return first(model.layout, lists, load, route_hops)


def next_capacities(layout: Layout, lists: tuple, peak, current, previous, sizing: str = "grow") -> tuple | None:
    """The next chunk's capacities after a chunk run with `current` peaked at `peak`;
    `previous` the chunk before's peak (zeros after the first chunk: the network starts
    empty). No list shrinks while its count rises: a run's first chunks fill the network,
    and lists shrunk then would grow back, each capacity a compilation. Sized `once`, they
    are kept (only an overflow grows them, `overflowed`)."""
    if sizing == "once":
        return current
    return fit(lists, peak, current, slack=SLACK * layout.servers, rising=np.asarray(peak) > np.asarray(previous))


def overflowed(lists: tuple, peak, current: tuple) -> tuple:
    """Capacities to redo a chunk whose lists overflowed `current`: a list that overflowed
    grows to hold 2x its count; the others keep theirs (each capacity tuple is a
    compilation)."""
    grown = fit(lists, peak, grow=2.0)
    return tuple(g if p > c else c for g, p, c in zip(grown, np.asarray(peak), current))
