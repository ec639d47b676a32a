"""Output selection per head: DESIGN's order (available_first) and the Polarized paper's
Algorithm 1 (best_first)."""
import jax.numpy as jnp
import numpy as np
import pytest

from jaxnet.sim.keys import NONE, choice_index
from jaxnet.sim.route import select_output

# One head, four candidate ports: costs w, occupancy q (phits), availability.
COST = jnp.asarray([[0, 64, 64, 80]], jnp.int32)
USABLE = jnp.ones((1, 4), bool)


def chosen(selection, occupancy, available, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2**32, 1, dtype=np.uint32)
    best = select_output(selection, COST, jnp.asarray([occupancy], jnp.int32), USABLE,
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
