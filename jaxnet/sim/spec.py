"""The `router` and `sim` config groups, validated: `RouterSpec` (the router model, static:
part of the jit cache key) and `SimSpec` (cycles and batching of a run). Buffers are
counted in packets, packets in phits, times in cycles."""
from __future__ import annotations

import dataclasses
import logging
import math
import os

import jax

from jaxnet.core.validate import is_int, require, require_int, require_number
from jaxnet.sim.policies import ALLOCATORS, FLOW_CONTROLS, INJECTION_POLICIES, SELECTIONS

# Packets a buffer (input, injection, output, source queue) holds at most: the engine packs
# a ring's three counters into one int32 (`jaxnet.sim.state.Rings`), 10 bits each.
MAX_DEPTH = 1023
# Cycle counts and times are int32 on the device (the cycle counter, a packet's time fields,
# the watchdog's threshold): every count stays below 2**30, which leaves room to add a latency.
MAX_CYCLES = 2**30
INT32 = "cycles are int32 on the device"
# A measurement window shorter than this many packets' serialisation (per server) is warned about.
FEW_PACKETS = 10
# The work lists (`jaxnet.sim.work.Listed`), in the order of sim.active_lists and of the
# counts the engine reports.
LISTED = ("occupied input rings", "input rings with a packet waiting", "heads routed",
          "occupied output rings", "output rings with a packet to send on an idle link",
          "servers with a packet to inject or to generate")
# What adaptive selection may read of an output (router.occupancy).
OCCUPANCIES = ("vc", "port", "credits")
# What an output queue is (router.output_queue): storage of its own per (port, VC) ("buffer"),
# or FOGSim's input-output queue ("reserved": see RouterSpec).
OUTPUT_QUEUES = ("buffer", "reserved")
LINK_ORDERS = ("round_robin", "arrival")
# What sim.record may list.
RECORDINGS = ("links", "series")
# sim.vmap_width: auto on a CPU vmaps the whole batch of networks of at most this many input
# VCs, and steps larger ones one at a time (docs/performance.md).
VMAP_UP_TO = 800
# Backends on which `auto` settings choose as for an accelerator.
ACCELERATORS = ("gpu", "cuda", "rocm", "tpu")
LIST_SIZINGS = ("auto", "grow", "once")
# sim.sub_batch: auto on a CPU puts about this many router-cycles (a few seconds on one core)
# into a sub-batch, at most SUB_BATCH_MAX points: each sub-batch pays a fixed set-up (the
# state, traffic tables, its first chunk, results), which points of small networks do not
# cover. A batch that the CPU vmaps (VMAP_UP_TO) costs less per point the wider it is, and
# takes VMAPPED_WIDER times as many.
SUB_BATCH_WORK = 2 * 10**6
SUB_BATCH_MAX = 32
VMAPPED_WIDER = 4
# sim.workers: auto starts one process per core for jobs of at least this many router-cycles
# (starting a worker costs seconds).
WORKERS_FROM = 10**7


def _load(value) -> float:
    return require_number(value, "sim.loads", 0.0, 1.0, low_open=True)  # phits/cycle/server


def checked_seed(value) -> int:
    """A `sim.seeds` entry as an int, or a `ValueError` naming `sim.seeds`."""
    return require_int(value, "sim.seeds", 0, 2**31 - 1)


@dataclasses.dataclass(frozen=True)
class RouterSpec:
    """The `router` config group (DESIGN section 3); its defaults are conf/router/default.yaml's."""

    vcs: int | str = "auto"  # or a number; auto: as many as the scheme needs on the topology
    input_buffer: int = 4
    output_buffer: int = 2
    packet_size: int = 16
    link_latency: int | tuple[tuple[str, int], ...] = 1
    router_latency: int = 0
    crossbar_speedup: int = 1
    source_queue: int = 20
    vc_policy: str = "auto"  # resolved for the scheme when the network is built
    injection_buffers: int | None = None
    injection_buffer: int | None = None
    injection_policy: str = "lowest"
    selection: str = "auto"  # resolved for the scheme when the network is built
    flow_control: str = "cut_through"
    # False: a head may not request an output port while any VC of that port is receiving a
    # packet through the crossbar (the reference simulator's `allow_request_busy_port: false`).
    request_busy_port: bool = True
    # What adaptive selection reads of a candidate output: its VC's occupancy ("vc"), the sum
    # over every VC of its port ("port"), or only the VC's downstream credits in use
    # ("credits", the reference simulator's LowestSinghWeight default).
    occupancy: str = "vc"
    # Which requests the crossbar grants in a cycle (`policies.ALLOCATORS`): per output VC
    # ("vc") or FOGSim's per port, transit first ("port").
    allocator: str = "vc"
    # Matching iterations per cycle of the port allocator (FOGSim's ArbiterIterations): ports
    # left unmatched try again among their other requests.
    allocator_iterations: int = 1
    # "buffer": each output (port, VC) buffers router.output_buffer packets of its own; its
    # packets take downstream credits when they start on the link, and an input slot's credit
    # returns once its packet has crossed the crossbar. "reserved": FOGSim's input-output
    # queue: router.output_buffer packets per output port, shared by its VCs; a packet crosses
    # the crossbar only if the downstream buffer has credits for it and for every packet of
    # its VC already queued at the output, and its input slot's credit returns only when it
    # leaves the output on the link.
    output_queue: str = "buffer"
    # Which packet an idle output link starts among its VCs' heads that may go: the next VC
    # round-robin ("round_robin"), or the oldest, the first to have crossed the crossbar
    # ("arrival": FOGSim's output queue, one FIFO per port; ties round-robin).
    link_order: str = "round_robin"

    def __post_init__(self) -> None:
        require(isinstance(self.request_busy_port, bool), "router.request_busy_port", self.request_busy_port,
                "true or false")
        require(self.occupancy in OCCUPANCIES, "router.occupancy", self.occupancy, f"one of {', '.join(OCCUPANCIES)}")
        for name in ("packet_size", "crossbar_speedup"):
            require_int(getattr(self, name), f"router.{name}", 1, MAX_CYCLES, INT32)
        for name in ("input_buffer", "output_buffer", "source_queue"):
            require_int(getattr(self, name), f"router.{name}", 1, MAX_DEPTH)
        if self.vcs != "auto":
            require_int(self.vcs, "router.vcs", 1, 64)
        require_int(self.router_latency, "router.router_latency", 0, MAX_CYCLES, INT32)
        for cls_name, cycles in self.latency_by_class().items():
            require_int(cycles, "router.link_latency" + ("" if cls_name == "*" else f".{cls_name}"), 1,
                        MAX_CYCLES, INT32)
        INJECTION_POLICIES.get(self.injection_policy)
        if self.selection != "auto":
            SELECTIONS.get(self.selection)
        FLOW_CONTROLS.get(self.flow_control)
        allocator = ALLOCATORS.get(self.allocator)
        require_int(self.allocator_iterations, "router.allocator_iterations", 1, 16)
        require(self.allocator_iterations == 1 or allocator.iterates, "router.allocator_iterations",
                self.allocator_iterations, f"1: router.allocator {self.allocator} does not match in iterations")
        require(self.output_queue in OUTPUT_QUEUES, "router.output_queue", self.output_queue,
                f"one of {', '.join(OUTPUT_QUEUES)}")
        require(self.link_order in LINK_ORDERS, "router.link_order", self.link_order,
                f"one of {', '.join(LINK_ORDERS)}")
        require(self.output_queue == "buffer" or self.flow_control == "cut_through", "router.output_queue",
                self.output_queue, "buffer with router.flow_control bubble")
        if self.flow_control == "bubble":
            require(self.output_buffer >= 2 and self.input_buffer >= 2, "router.flow_control",
                    self.flow_control, "bubble needs input and output buffers of >= 2 packets")
        if self.injection_buffers is not None:
            require_int(self.injection_buffers, "router.injection_buffers", 1, 64 if self.vcs == "auto" else self.vcs)
        if self.injection_buffer is not None:
            require_int(self.injection_buffer, "router.injection_buffer", 1, MAX_DEPTH)

    def latency_by_class(self) -> dict:
        if not isinstance(self.link_latency, tuple):
            return {"*": self.link_latency}
        return dict(self.link_latency)

    def latency_of(self, class_name: str) -> int:
        table = self.latency_by_class()
        if "*" in table:
            return table["*"]
        require(class_name in table, "router.link_latency", dict(table),
                f"a latency for every link class of the topology (missing {class_name!r})")
        return table[class_name]

    @property
    def injection_depth(self) -> int:
        """Packets per injection buffer (injection port VC); transit buffers hold input_buffer."""
        return self.input_buffer if self.injection_buffer is None else self.injection_buffer

    @property
    def injection_vcs(self) -> int:
        """VCs of an injection port that servers may use (the injection buffers)."""
        return self.vcs if self.injection_buffers is None else self.injection_buffers

    @property
    def transfer_cycles(self) -> int:
        """Cycles a granted input VC needs to move a whole packet through the crossbar."""
        return math.ceil(self.packet_size / self.crossbar_speedup)


@dataclasses.dataclass(frozen=True)
class SimSpec:
    """The `sim` config group: the grid of points, warm-up and measurement lengths (cycles),
    and how the batch is stepped. `chunk` cycles run per compiled scan call. Its defaults are
    conf/sim/default.yaml's."""

    loads: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
    seeds: tuple[int, ...] = (1,)
    warmup: int | str = 1000  # cycles, or "auto": per point, once stable (`jaxnet.sim.window`)
    measure: int = 2000
    # The automatic warm-up: windows of `window` cycles (also the time series'), the relative
    # tolerance within which two consecutive windows agree, and the cycle it ends at the latest.
    window: int = 500
    warmup_tolerance: float = 0.05
    warmup_max: int = 20000
    # What is recorded beyond the rows (written beside them): "links" (per-port utilisation and
    # buffer occupancy), "series" (accepted load and latency per window).
    record: tuple[str, ...] = ()
    chunk: int = 500
    # Cycles without a packet moving (with packets inside) beyond the longest quiet time a
    # moving network can have (`quiet_cycles`) that count as a deadlock.
    watchdog: int = 5000
    allow_deadlock: bool = False  # false: a run whose watchdog fired exits non-zero
    generate_until: int | None = None  # cycle at which generation stops (None: never)
    # Simulations stepped together by vmap; the rest of the batch runs through lax.map in
    # the same compiled call. "auto": the whole batch on GPU/TPU and, on a CPU, on networks
    # of at most VMAP_UP_TO input VCs; 1 on larger ones (where XLA:CPU's batched gathers
    # cost more than vectorising across simulations saves).
    vmap_width: int | str | None = "auto"
    # Capacities a cycle's work lists may take: an increasing list for each of LISTED;
    # "auto": powers of 2**(1/4) times the server count, on small networks in short runs
    # none or the heads routed alone (`jaxnet.sim.capacities.steps`); null: every buffer
    # and head every cycle. Results never depend on them.
    active_lists: str | tuple | None = "auto"
    # How the lists' capacities are chosen (`jaxnet.sim.capacities`): "grow" from the offered
    # load's estimate, chunk by chunk as a network fills (tight lists, a few compilations);
    # "once" sized up front for a saturated network and kept (one compilation per run);
    # "auto": once on GPU/TPU, grow on a CPU.
    list_sizing: str = "auto"
    # Points simulated (and written) together; "auto": an accelerator's whole job (its memory
    # permitting); on a CPU about SUB_BATCH_WORK router-cycles (`resolved_sub_batch`).
    sub_batch: int | str = "auto"
    # Processes simulating a job's sub-batches side by side, one per CPU core; "auto": every
    # core available on a CPU for jobs of at least WORKERS_FROM router-cycles, else 1.
    workers: int | str = "auto"
    checkpoint_every: int | None = None  # cycles between saved states (a multiple of chunk)
    check_invariants: bool = False  # check conservation, credit bounds and the kept heads after every chunk

    def __post_init__(self):
        for key, check in (("loads", _load), ("seeds", checked_seed)):
            object.__setattr__(self, key, tuple(dict.fromkeys(check(x) for x in getattr(self, key))))
        require(self.warmup == "auto" or (is_int(self.warmup) and 0 <= self.warmup <= MAX_CYCLES), "sim.warmup",
                self.warmup, f"an integer in [0, {MAX_CYCLES}] (cycles; {INT32}) or 'auto'")
        require_int(self.measure, "sim.measure", 1, MAX_CYCLES, INT32)
        require_int(self.chunk, "sim.chunk", 1, MAX_CYCLES, INT32)
        require_int(self.window, "sim.window", 1, MAX_CYCLES, INT32)
        require_number(self.warmup_tolerance, "sim.warmup_tolerance", 0.0, 1.0, low_open=True)
        require_int(self.warmup_max, "sim.warmup_max", self.window, MAX_CYCLES, INT32)
        require(self.warmup_max % self.window == 0, "sim.warmup_max", self.warmup_max,
                f"a multiple of sim.window={self.window}")
        record = (self.record,) if isinstance(self.record, str) else self.record
        require(isinstance(record, (list, tuple)) and all(r in RECORDINGS for r in record), "sim.record",
                self.record, f"a list of {', '.join(RECORDINGS)} (or [])")
        object.__setattr__(self, "record", tuple(dict.fromkeys(record)))
        first = self.warmup_max if self.auto_warmup else self.warmup
        longer = ("warmup_max" if self.auto_warmup else "warmup") if first > self.measure else "measure"
        require(math.ceil(self.total / self.chunk) * self.chunk <= MAX_CYCLES, f"sim.{longer}", getattr(self, longer),
                f"sim.warmup + sim.measure, rounded up to a multiple of sim.chunk, must be at most {MAX_CYCLES} "
                f"cycles ({INT32})")
        require_int(self.watchdog, "sim.watchdog", 1, MAX_CYCLES, INT32)
        if self.generate_until is not None:
            require_int(self.generate_until, "sim.generate_until", 0, MAX_CYCLES, INT32)
            require(self.warmup != "auto", "sim.generate_until", self.generate_until,
                    "null with sim.warmup=auto: generation may only stop after the warm-up")
            require(self.generate_until >= self.warmup, "sim.generate_until", self.generate_until,
                    f"null or a cycle >= sim.warmup={self.warmup}: generation may only stop after the warm-up")
        for flag in ("allow_deadlock", "check_invariants"):
            require(isinstance(getattr(self, flag), bool), f"sim.{flag}", getattr(self, flag), "true or false")
        require(self.vmap_width in ("auto", None) or (is_int(self.vmap_width) and self.vmap_width >= 1),
                "sim.vmap_width", self.vmap_width, "'auto', null (whole batch) or an integer >= 1")
        require(self.sub_batch == "auto" or (is_int(self.sub_batch) and self.sub_batch >= 1),
                "sim.sub_batch", self.sub_batch, "'auto' or an integer >= 1")
        require(self.workers == "auto" or (is_int(self.workers) and self.workers >= 1),
                "sim.workers", self.workers, "'auto' or an integer >= 1")
        if self.checkpoint_every is not None:
            require_int(self.checkpoint_every, "sim.checkpoint_every", self.chunk, MAX_CYCLES, INT32)
            require(self.checkpoint_every % self.chunk == 0, "sim.checkpoint_every", self.checkpoint_every,
                    f"null or a multiple of sim.chunk={self.chunk}")
        lists = self.active_lists
        ok = lists in ("auto", None) or (isinstance(lists, (list, tuple)) and len(lists) == len(LISTED) and all(
            isinstance(s, (list, tuple)) and len(s) > 0 and all(is_int(k) and k >= 1 for k in s) for s in lists))
        require(ok, "sim.active_lists", lists,
                f"'auto', null (every buffer) or {len(LISTED)} lists of capacities, one for each of {LISTED}")
        if isinstance(lists, list):
            object.__setattr__(self, "active_lists", tuple(tuple(sorted(int(k) for k in s)) for s in lists))
        require(self.list_sizing in LIST_SIZINGS, "sim.list_sizing", self.list_sizing, " | ".join(LIST_SIZINGS))

    @property
    def points(self) -> list[tuple[float, int]]:
        """The (offered load, seed) grid, loads outermost."""
        return [(float(load), int(seed)) for load in self.loads for seed in self.seeds]

    def resolved_vmap_width(self, layout) -> int | None:
        """Simulations vmapped together (None: the whole batch)."""
        if self.vmap_width == "auto":
            accelerator = jax.default_backend() in ACCELERATORS
            return None if accelerator or layout.in_vcs <= VMAP_UP_TO else 1
        return self.vmap_width

    def cpu_vmapped(self, layout, points: int) -> bool:
        """Whether a CPU steps `points` points on `layout` as one vmapped batch."""
        width = self.resolved_vmap_width(layout)
        return jax.default_backend() not in ACCELERATORS and points > 1 and width != 1

    def cpu_single(self, layout, points: int) -> bool:
        """Whether a CPU steps `points` points on `layout` one simulation at a time."""
        return jax.default_backend() not in ACCELERATORS and not self.cpu_vmapped(layout, points)

    def resolved_list_sizing(self) -> str:
        """`list_sizing` with auto resolved for the default device: once or grow."""
        if self.list_sizing == "auto":
            return "once" if jax.default_backend() in ACCELERATORS else "grow"
        return self.list_sizing

    @property
    def auto_warmup(self) -> bool:
        return self.warmup == "auto"

    @property
    def total(self) -> int:
        """Cycles a run needs (at most: under an automatic warm-up it ends once every point's
        window has)."""
        return (self.warmup_max if self.auto_warmup else self.warmup) + self.measure

    def resolved_workers(self, router_cycles: int, points: int) -> int:
        """Worker processes for a job of `router_cycles` (routers x cycles x points): on a CPU
        with one device, every core this process may use, for jobs big enough to pay for
        starting them (WORKERS_FROM); one otherwise (an accelerator, or host devices)."""
        if self.workers != "auto":
            return int(self.workers)
        if jax.default_backend() != "cpu" or jax.device_count() > 1 or router_cycles < WORKERS_FROM:
            return 1
        return max(1, min(len(os.sched_getaffinity(0)), points))

    def resolved_sub_batch(self, layout, points: int, devices: int = 1, workers: int = 1,
                           fits: int | None = None) -> int:
        """Points per sub-batch of a job of `points` points, written to results as soon as they
        finish. On an accelerator the whole job as far as `fits` (the simulations its memory
        holds) allows: one vmapped call. On a CPU enough points for SUB_BATCH_WORK
        router-cycles (up to SUB_BATCH_MAX; VMAPPED_WIDER times both where the CPU vmaps the
        batch), at least 2 per device in one process; with
        worker processes at most a share that gives each worker two sub-batches (a saturated
        point costs many times a light one: small sub-batches keep every worker busy to the
        end)."""
        if self.sub_batch != "auto":
            return int(self.sub_batch)
        if jax.default_backend() != "cpu":
            return max(1, min(points, fits or points))
        wider = VMAPPED_WIDER if self.cpu_vmapped(layout, points) else 1
        wide = min(wider * SUB_BATCH_MAX, -(-wider * SUB_BATCH_WORK // (layout.routers * self.total)))
        if workers > 1:
            return max(1, min(wide, -(-points // (2 * workers))))
        return max(2 * devices, min(wide, points))


def check_measurable(router: RouterSpec, sim: SimSpec) -> None:
    """Refuse router settings under which a run of `sim` cannot measure anything, and warn in
    one line where it measures very little. Refused (ValueError): a link latency or a router
    latency of at least the whole run (no packet could cross a link, or leave its first
    router, before the run ends) and a packet longer than the measurement window (a server
    takes one phit per cycle, so the window could not see one whole packet arrive). Warned:
    a window of fewer than FEW_PACKETS packets per server. A packet never outgrows a buffer:
    buffers are counted in whole packets."""
    total = sim.warmup + sim.measure
    for name, cycles in router.latency_by_class().items():
        require(cycles < total, "router.link_latency" + ("" if name == "*" else f".{name}"), cycles,
                f"must be shorter than the whole run (sim.warmup + sim.measure = {total} cycles): no packet "
                "could cross a link before the run ends")
    require(router.router_latency < total, "router.router_latency", router.router_latency,
            f"must be shorter than the whole run (sim.warmup + sim.measure = {total} cycles): no packet "
            "could leave its first router before the run ends")
    require(router.packet_size <= sim.measure, "router.packet_size", router.packet_size,
            f"must be at most sim.measure={sim.measure} phits: a server receives one phit per cycle, so the "
            "measurement window could not see a whole packet arrive")
    if sim.measure < FEW_PACKETS * router.packet_size:
        logging.getLogger("jaxnet").warning(
            "sim.measure=%d cycles hold fewer than %d packets of router.packet_size=%d phits per server: "
            "accepted load and latency rest on very few packets", sim.measure, FEW_PACKETS, router.packet_size)
