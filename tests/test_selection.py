"""Output selection per head: DESIGN's order (available_first) and the Polarized paper's
Algorithm 1 (best_first)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnet.sim.keys import NONE, choice_index
from jaxnet.sim.route import candidate_totals, select_output, waiting_margin, wake_candidates

# One head, four candidate ports: costs w, occupancy q (phits), availability.
COST = jnp.asarray([[0, 64, 64, 80]], jnp.int32)
USABLE = jnp.ones((1, 4), bool)


def chosen(selection, occupancy, available, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2**32, 1, dtype=np.uint32)
    best = select_output(selection, candidate_totals(COST, jnp.asarray([occupancy], jnp.int32), USABLE), USABLE,
                         jnp.asarray([available]), jnp.asarray(bits))
    best = int(best[0])
    return None if best == NONE else int(choice_index(best))


def test_available_first_takes_the_cheapest_output_that_can_take_the_packet():
    assert chosen("available_first", [0, 0, 0, 0], [False, True, True, True]) in (1, 2)
    assert chosen("available_first", [0, 0, 32, 0], [False, True, True, True]) == 1
    assert chosen("available_first", [0, 0, 0, 0], [False, False, False, False]) is None


def test_best_first_waits_for_a_blocked_best_output():
    assert chosen("best_first", [48, 0, 0, 0], [False, True, True, True]) is None
    assert chosen("best_first", [48, 0, 0, 0], [True, False, False, False]) == 0


def test_best_first_takes_an_available_output_among_equal_lowest_totals():
    """Algorithm 1 keeps every candidate of minimum w + q, then drops those that fail
    virtual cut-through: a tie with a blocked output never makes the packet wait."""
    for seed in range(16):
        assert chosen("best_first", [64, 0, 0, 0], [False, True, False, True], seed) == 1
        assert chosen("best_first", [64, 0, 16, 0], [True, True, True, True], seed) in (0, 1)


@pytest.mark.parametrize("selection", ["available_first", "best_first"])
def test_ties_are_broken_at_random(selection):
    picks = {chosen(selection, [64, 0, 0, 0], [True, True, True, True], seed) for seed in range(64)}
    assert picks == {0, 1, 2}


@pytest.mark.parametrize("adaptive", [True, False])
def test_minimal_takes_the_least_occupied_port_unless_not_adaptive(adaptive):
    """On a 4-ring the opposite router has two minimal ports; with one of them occupied,
    adaptive minimal always takes the other, `adaptive: false` either of them."""
    import networkx as nx

    from jaxnet.core import packets as pk
    from jaxnet.routing import build_routing
    from jaxnet.topology.base import from_graph

    topo = from_graph(nx.cycle_graph(4), "ring", 1)
    scheme = build_routing({"name": "minimal", "adaptive": adaptive})
    packets = jnp.zeros((1, pk.N_FIELDS), jnp.int32).at[0, pk.DST_R].set(2)
    tables = jax.tree_util.tree_map(jnp.asarray, scheme.build_tables(topo))
    found = scheme.candidates(tables, jnp.asarray([0]), packets, topo.n_ports)
    occupancy = jnp.asarray([[48, 0]], jnp.int32)
    if found.scale is not None:
        occupancy = occupancy * found.scale
    picks = set()
    for seed in range(32):
        bits = np.random.default_rng(seed).integers(0, 2**32, 1, dtype=np.uint32)
        usable = found.cost < 2**20
        best = select_output("available_first", candidate_totals(found.cost, occupancy, usable), usable,
                             jnp.ones((1, 2), bool), jnp.asarray(bits))
        picks.add(int(choice_index(best[0])))
    assert picks == ({1} if adaptive else {0, 1})


def test_waiting_margin_is_the_gap_a_waiting_head_must_see_close():
    """A head that waits for its lowest-total candidate (best_first) while another can take
    it is `margin` phits of total away from requesting; heads that request, and heads none
    of whose candidates can take them (they wait for a rise), have none."""
    def margin(occupancy, available):
        total = candidate_totals(COST, jnp.asarray([occupancy], jnp.int32), USABLE)
        best = select_output("best_first", total, USABLE, jnp.asarray([available]), jnp.zeros(1, jnp.uint32))
        return int(waiting_margin(total, USABLE, jnp.asarray([available]), best != NONE)[0])

    assert margin([48, 0, 10, 0], [False, False, True, True]) == 74 - 48  # waits for port 0 (48)
    assert margin([48, 0, 10, 0], [True, False, True, True]) == 0  # requests port 0
    assert margin([48, 0, 10, 0], [False, False, False, False]) == 0  # nothing can take it
    assert margin([64, 0, 10, 0], [False, True, True, True]) == 0  # a tie at 64: requests port 1


def test_a_sleeping_head_wakes_only_for_candidates_below_what_it_could_take():
    """A head waiting on its margin wakes on a rise only of a candidate whose total lies below
    every candidate that could take it (any other would first have to close the margin); a
    head nothing can take wakes on any candidate."""
    def wakes(occupancy, available):
        total = candidate_totals(COST, jnp.asarray([occupancy], jnp.int32), USABLE)
        return [bool(x) for x in wake_candidates(total, USABLE, jnp.asarray([available]))[0]]

    # totals 48, 64, 74, 80: it could take port 2 (74) and waits for port 0 (48); port 1 (64)
    # could also become the lowest before the margin of 26 closes, port 3 (80) could not
    assert wakes([48, 0, 10, 0], [False, False, True, True]) == [True, True, False, False]
    assert wakes([48, 0, 10, 0], [False, True, True, True]) == [True, False, False, False]
    assert wakes([48, 0, 10, 0], [False, False, False, False]) == [True, True, True, True]
