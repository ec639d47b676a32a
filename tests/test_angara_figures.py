"""The Angara paper's Figure 4 (BUILD_SSSP calls with and without the unique-routes stage) and
the tornado of its Figure 6 on the Desmos torus (scripts/reproduce_angara.py)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from jaxnet.paths.torus_graph import TorusShape, deadlock_free_turns
from jaxnet.paths.torus_routes import minimal_route_candidates
from jaxnet.paths.torus_tables import build_table, deadlock_cycle, table_metrics

ROOT = Path(__file__).resolve().parents[1]
DESMOS = [4, 2, 2, 2]


@pytest.fixture(scope="module")
def angara(request):
    path = ROOT / "scripts" / "reproduce_angara.py"
    spec = importlib.util.spec_from_file_location("reproduce_angara", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("sides", [DESMOS, [4, 4], [3, 3, 2]])
def test_sssp_without_the_unique_stage_is_a_valid_table_with_more_calls(sides):
    shape = TorusShape.build(sides)
    both = build_table(shape, "sssp")
    alone = build_table(shape, "sssp", unique_first=False)
    assert table_metrics(alone)["minimal"] and deadlock_cycle(alone) is None
    R = shape.n_nodes
    assert R <= alone.info["build_sssp_calls"] <= R * R  # the paper's bounds for this variant
    assert alone.info["build_sssp_calls"] > both.info["build_sssp_calls"]


def test_unique_first_must_be_a_boolean():
    with pytest.raises(ValueError, match="tables.unique_first"):
        build_table(TorusShape.build(DESMOS), "sssp", unique_first="no")


def test_coordinate_tornado_on_the_desmos_torus_leaves_no_route_to_choose(angara):
    """jaxnet's tornado (each coordinate + ceil(k/2) - 1) moves one hop in x on 4x2x2x2, a pair
    with one minimal route: every table routes it identically. Tornado on node ranks
    (i -> i + 15) leaves 20 of 32 pairs a choice."""
    shape = TorusShape.build(DESMOS)
    choices = minimal_route_candidates(shape, deadlock_free_turns(shape)).counts.reshape(32, 32)
    coordinates = angara.tornado_destinations(shape, "coordinates")
    assert (shape.coords[coordinates][:, 0] == (shape.coords[:, 0] + 1) % 4).all()
    assert (shape.coords[coordinates][:, 1:] == shape.coords[:, 1:]).all()
    assert (choices[np.arange(32), coordinates] == 1).all()
    loads = {angara.pattern_loads(build_table(shape, name), coordinates) for name in ("bfs", "sssp")}
    assert loads == {(1, 1.0)}
    ranks = angara.tornado_destinations(shape, "ranks")
    assert (ranks == (np.arange(32) + 15) % 32).all()
    assert int((choices[np.arange(32), ranks] > 1).sum()) == 20
    for name in ("bfs", "sssp"):
        most, share = angara.pattern_loads(build_table(shape, name), ranks)
        assert 1 / most <= share <= 1  # every flow gets between the worst share and its whole link
