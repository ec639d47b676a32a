"""Which buffers, heads, links and servers a cycle visits: the work lists.

The cycle (`jaxnet.sim.step.cycle_step`) asks a `Work` at each phase which rings or
servers to visit (a `rings.Subset`). Two implementations give identical results:

  EveryBuffer  every ring, link and server, every cycle, and every head, or only the
               heads that may move, compacted from every ring into a static capacity;
  Listed       only those with something to do, kept in compact lists of static
               capacities (`capacities`, one per entry of LISTED):
                 - the occupied input and output rings, carried from cycle to cycle and
                   updated from the cycle's pushes (a cycle never scans every ring, unless
                   the list has grown to every ring: then every ring is visited with
                   the mask of those in use, `Listed.dense`);
                 - of the occupied input rings, those with a packet waiting to leave, and of
                   their heads those that may move and are awake (below);
                 - of the occupied output rings, those whose link is idle, plus those just
                   filled;
                 - the servers with a packet to inject on an idle link or one to generate.
               A head that none of its candidate outputs could take sleeps until the
               availability of an output VC on one of its candidate ports may have risen
               (`may_have_risen`): under either selection nothing else lets it request,
               and its candidates depend only on the packet (a recomputing scheme's heads
               stuck at injection, which it redraws, stay awake). Under best_first a head
               that waits for its lowest-total candidates while another could take it
               sleeps too, until a rise or until the totals could have closed its margin
               (`Requests.margin`): each total moves at most `route.occupancy_step` a
               cycle; only a rise on a candidate below every one that could take it wakes
               it earlier (`route.wake_candidates`). Results are
               exact while no list outgrows its capacity; each cycle
               reports how many entries every list needed (`counts`), and a run whose lists
               overflowed is redone with larger capacities (`jaxnet.sim.run`, sized by
               `jaxnet.sim.capacities`).

A Work is static (hashable: part of the jit cache key). Its per-cycle carry (`todo`) holds
the subsets the next cycle starts from and this cycle's counts; `Sleep` is what it keeps
from one chunk of cycles to the next.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxnet.core.gather import take_pair
from jaxnet.sim.layout import Layout, Model
from jaxnet.sim.phases import count_waiting, redrawn_if_stuck
from jaxnet.sim.policies import ALLOCATORS
from jaxnet.sim.rings import DROP, EVERY, Subset, counters, pick, put, take_rows
from jaxnet.sim.route import movable_heads, occupancy_step
from jaxnet.sim.spec import LISTED

NEVER = jnp.iinfo(jnp.int32).max  # Sleep.wake_at of a head that waits for a rise
# Prefix sums in blocks of this many entries: a 0/1 matrix product per block, the same for
# the blocks' totals, and so on.
PREFIX_BLOCK = 32
# Partial sums are exact in float32 up to here.
FLOAT32_EXACT = 1 << 24


def prefix_count(mask):
    """int32 [n]: how many entries of mask (bool [n]) hold up to and including each one.
    Within blocks of PREFIX_BLOCK entries a product with an upper-triangular 0/1 matrix
    (exact: float32 below FLOAT32_EXACT entries), and the same for the blocks' totals, level
    by level: on XLA:CPU a cumsum (a reduce-window) of the totals cost three times the rest,
    and lax.associative_scan compiles slowly."""
    dtype = jnp.float32 if mask.shape[0] <= FLOAT32_EXACT else jnp.int32
    return _inclusive_sums(mask.astype(dtype)).astype(jnp.int32)


def _inclusive_sums(values):
    """The inclusive prefix sums of `values` [n] in its dtype (see prefix_count)."""
    n = values.shape[0]
    upper = jnp.triu(jnp.ones((PREFIX_BLOCK, PREFIX_BLOCK), values.dtype))
    if n <= PREFIX_BLOCK:
        return jnp.dot(values, upper[:n, :n], precision=jax.lax.Precision.HIGHEST)
    blocks = jnp.pad(values, (0, -n % PREFIX_BLOCK)).reshape(-1, PREFIX_BLOCK)
    within = jnp.dot(blocks, upper, precision=jax.lax.Precision.HIGHEST)
    totals = within[:, -1]
    before = _inclusive_sums(totals) - totals
    return (within + before[:, None]).reshape(-1)[:n]


def _positions(mask, capacity: int):
    """(index [capacity] of the first `capacity` entries where mask holds, in order (0
    padded), count of entries where it holds): a prefix count and a scatter, faster on a CPU
    than jnp.nonzero."""
    position = prefix_count(mask)
    index = jnp.zeros(capacity, jnp.int32).at[jnp.where(mask, position - 1, capacity)].set(
        jnp.arange(mask.shape[0], dtype=jnp.int32), **DROP)
    return index, position[-1]


def compact(mask, capacity: int) -> tuple[Subset, jnp.ndarray]:
    """(the entries where `mask` (bool [n]) holds as a subset of `capacity` entries, how
    many hold). Entries past the capacity are left out: the caller checks the count."""
    index, count = _positions(mask, capacity)
    return Subset(index, jnp.arange(capacity) < count), count


def compact_subset(subset: Subset, mask, capacity: int) -> tuple[Subset, jnp.ndarray]:
    """The entries of a subset (ids None: of every ring) where `mask` (bool [K]) holds, as
    `compact`."""
    if subset.ids is None:
        return compact(mask, capacity)
    index, count = _positions(mask, capacity)
    return Subset(take_rows(subset.ids, index), jnp.arange(capacity) < count), count


class Sleep(NamedTuple):
    """Heads that wait for an output (see the module docstring), kept up to date every cycle.

    wait_vc: int32 [in_vcs] -1 where the input ring's head is awake; where it sleeps, the VC
      of all its usable candidates (V where they differ; never under a
      `VcPolicy.one_vc_per_head`, whose sleeping heads have a usable candidate).
    waits_on: uint32 [in_vcs, W] the candidate network ports whose rise wakes it (`port_mask`
      of `route.Requests.wakes_on`).
    wake_at: int32 [in_vcs] cycle at which a sleeping head is routed again even if no
      candidate's availability rose (NEVER: it waits for a rise).
    """

    wait_vc: jnp.ndarray
    waits_on: jnp.ndarray
    wake_at: jnp.ndarray


def no_sleep(layout: Layout) -> Sleep:
    """Every head awake (an empty network)."""
    return Sleep(jnp.full(layout.in_vcs, -1, jnp.int32),
                 jnp.zeros((layout.in_vcs, -(-layout.ports // 32)), jnp.uint32),
                 jnp.full(layout.in_vcs, NEVER, jnp.int32))


def may_have_risen(layout: Layout, outputs, out_held, out_rings: Subset, freed, t):
    """bool [K]: the visited outputs (port, VC) whose availability (0 nothing, 1 a packet as
    `route.OutputView.available`, 2 also room for another as `room_for_two`) may have risen
    since the last cycle: those that can take a packet now and freed a slot this cycle
    (`freed` bool [K], from `release_slots`) or whose hold ends this cycle. Between two
    cycles an output's room grows only when a slot frees and its hold only ends at
    `out_held`, so every rise is among them; an empty output, never held and always at its
    highest, cannot rise. A head that no candidate can take stays so until one of these."""
    _, taken, _ = counters(outputs, out_rings.ids)
    held_until = pick(out_held, out_rings.ids)
    can_take = (held_until <= t) & (taken < layout.router.output_buffer)
    return can_take & (freed | (held_until == t))


def port_mask(ports):
    """uint32 [..., W] bit p % 32 of word p // 32 set where ports (bool [..., P]) holds. Each
    word sums its own ports' bits (padding the ports to whole words made XLA:CPU's
    reduction slower)."""
    n = ports.shape[-1]
    words = [ports[..., first:first + 32] for first in range(0, n, 32)]
    return jnp.stack([jnp.sum(word.astype(jnp.uint32) << jnp.arange(word.shape[-1], dtype=jnp.uint32), axis=-1,
                              dtype=jnp.uint32) for word in words], axis=-1)


def rose_ports(layout: Layout, out_rings: Subset, rose):
    """uint32 [R, V (+ 1), W]: per router and VC, the `port_mask` of network ports where a
    visited output's availability rose (`rose` bool [K], `may_have_risen`); row V, where a
    head's candidates may lie on different VCs (not `VcPolicy.one_vc_per_head`): where some
    VC's did (one bit per port, from its lowest VC that rose). Built by one scatter-add of
    the K outputs' bits (distinct bits, so adding never carries), not by a computed mask that
    XLA:CPU would fuse into, and redo for, each head's lookup."""
    r_count, v_count, ports = layout.routers, layout.vcs, layout.ports
    words = -(-ports // 32)
    rows = v_count if layout.vc_policy.one_vc_per_head else v_count + 1
    ids = jnp.arange(layout.out_vcs, dtype=jnp.int32) if out_rings.ids is None else out_rings.ids
    router, rest = layout.router_of(ids), ids % (layout.ports_per_router * v_count)
    port, vc = rest // v_count, rest % v_count
    rose = rose & out_rings.valid & (port < ports)
    bit = jnp.uint32(1) << (port % 32).astype(jnp.uint32)
    slots = r_count * rows * words
    word = (router * rows + vc) * words + port // 32
    index, bits = jnp.where(rose, word, slots), bit
    if rows > v_count:
        # outputs that did not rise go out of bounds (dropped), not onto one spare slot: a GPU
        # serializes atomic updates of one address
        network_port = jnp.where(rose, router * ports + port, r_count * ports)
        lowest_vc = jnp.full(r_count * ports, v_count, jnp.int32).at[network_port].min(vc, **DROP)
        lead = rose & (take_rows(lowest_vc, jnp.minimum(network_port, r_count * ports - 1)) == vc)
        index = jnp.concatenate([index, jnp.where(lead, word + (v_count - vc) * words, slots)])
        bits = jnp.concatenate([bit, bit])
    return jnp.zeros(slots, jnp.uint32).at[index].add(bits, **DROP).reshape(r_count, rows, words)


def wake_reasons(layout: Layout, sleep: Sleep, outputs, out_held, out_rings: Subset, freed, ids, t):
    """(asleep, risen, due), bool [K] for the input rings `ids` (None: every one): the head
    slept after it was last routed; an output VC on one of the ports it waits on rose this
    cycle (`rose_ports` of the visited outputs `out_rings`, `freed` as `may_have_risen`); its
    margin could have closed by now (`Sleep.wake_at`). A sleeping head is routed again when
    risen or due."""
    rose = rose_ports(layout, out_rings, may_have_risen(layout, outputs, out_held, out_rings, freed, t))
    wait_vc = pick(sleep.wait_vc, ids)
    ring = jnp.arange(layout.in_vcs, dtype=jnp.int32) if ids is None else ids
    rose_here = take_pair(rose, layout.router_of(ring), jnp.maximum(wait_vc, 0))
    risen = jnp.any(pick(sleep.waits_on, ids) & rose_here, axis=1)
    return wait_vc >= 0, risen, pick(sleep.wake_at, ids) <= t


class Todo(NamedTuple):
    """A Work's carry from cycle to cycle.

    inputs, outputs: Subset the occupied input and output rings (EVERY: every ring).
    sleep: Sleep, or None where nobody sleeps.
    counts: int32 [6] entries each of LISTED needed this cycle.
    """

    inputs: Subset
    outputs: Subset
    sleep: Sleep | None
    counts: jnp.ndarray


def heads_sleep(model: Model) -> bool:
    """Whether blocked heads sleep when work is listed: with outputs that only their own
    VC's packet blocks, and inputs that only their own VC's packet holds (a head whose input
    port is busy could miss the rise that wakes it; every ring visited: nobody sleeps), and
    outputs whose room frees only in themselves (not the reserved output queues, whose room
    also waits for downstream credits). Heads that a recomputing scheme redraws while they
    are stuck (`phases.redrawn_if_stuck`: at injection) never sleep."""
    spec = model.layout.router
    return (spec.request_busy_port and spec.output_queue == "buffer"
            and not ALLOCATORS[spec.allocator].holds_input_port)


@dataclasses.dataclass(frozen=True)
class Work:
    """Which rings, heads, links and servers each phase visits (see the module docstring)."""

    def start(self, model: Model, state, sleep: Sleep | None) -> Todo:
        """The carry at the start of a chunk of cycles, from the state (and the heads
        asleep at its end, for a Work that sleeps)."""
        raise NotImplementedError

    def heads(self, model: Model, todo: Todo, state, inputs, outputs, kept):
        """(the input rings whose head to route, todo), after the release: EVERY, or a list
        of heads that may move (`route.movable_heads`), which routing then takes as they are."""
        raise NotImplementedError

    def routed(self, model: Model, todo: Todo, heads: Subset, requests, t) -> Todo:
        """The carry after routing `heads` in cycle t."""
        return todo

    def links(self, model: Model, todo: Todo, port_busy, kept, requests, filled, t):
        """(the output rings that may start a packet on their link, todo)."""
        raise NotImplementedError

    def servers(self, model: Model, todo: Todo, queue, server_busy, generates, t):
        """(the servers with a packet to inject or to generate, todo)."""
        raise NotImplementedError

    def next_cycle(self, model: Model, todo: Todo, inputs, outputs, kept, requests, filled, sent, injected) -> Todo:
        """The carry for the next cycle, with this cycle's counts."""
        raise NotImplementedError

    def waiting(self, model: Model, waiting, inputs, outputs, requests, granted, sent, injected):
        """int32 [2, V]: packets waiting in input (row 0) and output (row 1) buffers per VC
        after the cycle (`waiting`: before it): the cycle's moves added to it."""
        return count_waiting(model, waiting, requests, granted, sent, injected)


def servers_busy(queue, server_busy, generates, t):
    """bool [S]: the servers with something to do this cycle: a packet to inject (queued,
    and their link idle) or one to generate. The others' `inject` and `generate` change
    nothing."""
    return generates | ((queue.taken > 0) & (server_busy <= t))


@dataclasses.dataclass(frozen=True)
class EveryBuffer(Work):
    """Every ring, link and server, every cycle, and every input ring's head; or, with a
    `head_capacity`, only the heads that may move, compacted from every ring into that many
    entries. On a small network most rings are empty and routing costs the most per ring,
    while lists carried from cycle to cycle cost more than they save; its heads never sleep.
    Its counts are those the lists would need (every ring: the waiting ones; the heads:
    those that may move where they are compacted)."""

    head_capacity: int | None = None

    def start(self, model, state, sleep=None):
        return Todo(EVERY, EVERY, None, jnp.zeros(len(LISTED), jnp.int32))

    def heads(self, model, todo, state, inputs, outputs, kept):
        if self.head_capacity is None:
            return EVERY, todo
        _, movable = movable_heads(model, inputs, state.in_busy, EVERY, state.cycle)
        heads, n_heads = compact(movable, self.head_capacity)
        return heads, todo._replace(counts=todo.counts.at[2].set(n_heads))

    def links(self, model, todo, port_busy, kept, requests, filled, t):
        return EVERY, todo

    def servers(self, model, todo, queue, server_busy, generates, t):
        n_servers = jnp.sum(servers_busy(queue, server_busy, generates, t), dtype=jnp.int32)
        return EVERY, todo._replace(counts=todo.counts.at[5].set(n_servers))

    def waiting(self, model, waiting, inputs, outputs, requests, granted, sent, injected):
        """Summed over every ring per VC: a reduction instead of the moves' scatters."""
        per_vc = lambda rings: jnp.sum((rings.taken - rings.gone).reshape(-1, model.layout.vcs), axis=0)  # noqa: E731
        return jnp.stack([per_vc(inputs), per_vc(outputs)])

    def next_cycle(self, model, todo, inputs, outputs, kept, requests, filled, sent, injected):
        in_waiting = jnp.sum(inputs.taken > inputs.gone, dtype=jnp.int32)
        heads = in_waiting if self.head_capacity is None else todo.counts[2]
        counts = jnp.stack([jnp.sum(inputs.taken > 0, dtype=jnp.int32), in_waiting, heads,
                            jnp.sum(outputs.taken > 0, dtype=jnp.int32),
                            jnp.sum(outputs.taken > outputs.gone, dtype=jnp.int32), todo.counts[5]])
        return todo._replace(counts=counts)


@dataclasses.dataclass(frozen=True)
class Listed(Work):
    """Only the rings, heads, links and servers with something to do, in lists of the
    given capacities (one per entry of LISTED). With `dense`, a list of occupied input or
    output rings as long as every ring is not kept: every ring is visited with the mask of
    those in use, which costs less than a list's gathers and scatters of the same entries."""

    capacities: tuple[int, ...]
    dense: bool = True

    def _occupied(self, rings, capacity: int) -> tuple[Subset, jnp.ndarray]:
        """(the rings of `rings` (Rings) in use, as a list of `capacity` or, where that
        holds every ring under `dense`, EVERY; how many)."""
        occupied = rings.taken > 0
        if self.dense and capacity >= occupied.shape[0]:
            return EVERY, jnp.sum(occupied, dtype=jnp.int32)
        return compact(occupied, capacity)

    def start(self, model, state, sleep=None):
        """The occupied rings of `state` listed from scratch (once per chunk)."""
        capacity = self.capacities
        in_list, n_in = self._occupied(state.inputs, capacity[0])
        out_list, n_out = self._occupied(state.outputs, capacity[3])
        sleep = (sleep if sleep is not None else no_sleep(model.layout)) if heads_sleep(model) else None
        return Todo(in_list, out_list, sleep, jnp.stack([n_in, 0, 0, n_out, 0, 0]))

    def heads(self, model, todo, state, inputs, outputs, kept):
        """The listed input rings with a packet waiting whose head may move and is awake
        (or woken: an output VC on one of its candidate ports rose this cycle)."""
        layout, t, capacity = model.layout, state.cycle, self.capacities
        waiting, n_waiting = self._waiting(todo.inputs, kept.waiting_in)
        awake = waiting
        if todo.sleep is not None:  # a sleeping head's READY is not read
            asleep, risen, due = wake_reasons(layout, todo.sleep, outputs, state.out_held, todo.outputs,
                                              kept.freed_out, waiting.ids, t)
            awake = Subset(waiting.ids, waiting.valid & (~asleep | risen | due))
        _, movable = movable_heads(model, inputs, state.in_busy, awake, t)
        heads, n_heads = compact_subset(waiting, movable, capacity[2])
        return heads, todo._replace(counts=todo.counts.at[1].set(n_waiting).at[2].set(n_heads))

    def _waiting(self, in_list: Subset, waiting):
        """(the listed input rings with a packet waiting, how many): compacted where that
        list's capacity is at most half the occupied rings' (below saturation); near
        saturation most occupied rings hold a waiting packet and checking them all costs
        less than compacting them, so the occupied list is used with the mask."""
        capacity = self.capacities
        if 2 * capacity[1] <= capacity[0]:
            return compact_subset(in_list, waiting, capacity[1])
        return Subset(in_list.ids, waiting), jnp.sum(waiting, dtype=jnp.int32)

    def routed(self, model, todo, heads, requests, t):
        """The routed heads that cannot request before a rise, or before the totals could
        have closed their margin, sleep; the others wake."""
        if todo.sleep is None:
            return todo
        asleep = (requests.blocked | (requests.margin > 0)) & ~redrawn_if_stuck(model.routing, requests)
        # a margin is set only where occupancy_step is bounded: the head cannot request
        # before cycle t + ceil(margin / (2 step)), the two totals closing in on each other
        closing = 2 * (occupancy_step(model) or 1)
        closes = t + (requests.margin + closing - 1) // closing
        sleep = todo.sleep._replace(
            wait_vc=put(todo.sleep.wait_vc, heads.ids, heads.valid, jnp.where(asleep, requests.wait_vc, -1)),
            waits_on=put(todo.sleep.waits_on, heads.ids, heads.valid, port_mask(requests.wakes_on)),
            wake_at=put(todo.sleep.wake_at, heads.ids, heads.valid, jnp.where(requests.blocked, NEVER, closes)))
        return todo._replace(sleep=sleep)

    def links(self, model, todo, port_busy, kept, requests, filled, t):
        """The listed output rings with a packet waiting whose link is idle (a busy link
        sends nothing), and those just filled."""
        out_list = todo.outputs
        ring = jnp.arange(model.layout.out_vcs, dtype=jnp.int32) if out_list.ids is None else out_list.ids
        idle = take_rows(port_busy, ring // model.layout.vcs) <= t
        sending, n_sending = compact_subset(out_list, kept.waiting_out & idle, self.capacities[4])
        filled_ring = jnp.where(filled, requests.out_vc, 0)
        sending = Subset(jnp.concatenate([sending.ids, filled_ring]), jnp.concatenate([sending.valid, filled]))
        return sending, todo._replace(counts=todo.counts.at[4].set(n_sending))

    def servers(self, model, todo, queue, server_busy, generates, t):
        servers, n_servers = compact(servers_busy(queue, server_busy, generates, t), self.capacities[5])
        return servers, todo._replace(counts=todo.counts.at[5].set(n_servers))

    def next_cycle(self, model, todo, inputs, outputs, kept, requests, filled, sent, injected):
        """The rings kept after the release, and those a packet entered empty. A ring
        emptied by the release is listed again only if a packet enters it this cycle, so no
        ring is listed twice."""
        capacity = self.capacities
        arrived = jnp.where(sent.to_router, sent.down, 0)
        in_list, n_in = self._next(todo.inputs, [kept.inputs, sent.to_router & sent.down_empty,
                                                 injected.moved & injected.ring_was_empty],
                                   [arrived, injected.ring], capacity[0])
        filled_ring = jnp.where(filled, requests.out_vc, 0)
        out_list, n_out = self._next(todo.outputs, [kept.outputs, filled], [filled_ring], capacity[3])
        return todo._replace(inputs=in_list, outputs=out_list, counts=todo.counts.at[0].set(n_in).at[3].set(n_out))

    @staticmethod
    def _next(listed: Subset, occupied, entered, capacity: int) -> tuple[Subset, jnp.ndarray]:
        """(the occupied rings for the next cycle, how many): the rings `listed` and
        `entered` (a list of id arrays) where the masks `occupied` (one per array, `listed`'s
        first) hold: still holding a slot, or entered empty. Where every ring was visited
        (EVERY) it still is."""
        if listed.ids is None:
            return EVERY, sum(jnp.sum(mask, dtype=jnp.int32) for mask in occupied)
        return compact_subset(Subset(jnp.concatenate([listed.ids, *entered]), None), jnp.concatenate(occupied),
                              capacity)
