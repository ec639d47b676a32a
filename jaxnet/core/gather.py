"""Gathers that XLA:CPU runs fast: rows of an array by one flat index.

A gather with a two-dimensional index (table[i, j], slots[row, field]) runs slower on
XLA:CPU than the same gather by one flat index into the array viewed as rows
(benchmarks/README.md). Indices must be in bounds: these gathers skip XLA's clamping and the
wrap-around of negative indices. Scatters stay 2-D: one written by a flat index was slower
on a GPU.
"""
from __future__ import annotations

# Indices here are never negative: skipping the wrap of negative ones saves three ops per
# gather or scatter (less to trace and compile). IN_BOUNDS also skips XLA's clamping (reads
# of rows known to exist).
IN_BOUNDS = {"mode": "promise_in_bounds", "wrap_negative_indices": False}
FLAT_INDEX_LIMIT = 2**31  # flat indices are int32


def take_rows(array, index):
    """array[index] for indices known to be in bounds (skips XLA's clamping)."""
    return array.at[index].get(**IN_BOUNDS)


def take_pair(table, i, j):
    """table[i, j] (int arrays that broadcast together, in bounds), by one flat index into the
    table's first two axes (a 2-D gather where that index could overflow int32)."""
    rows, columns = table.shape[:2]
    if rows * columns >= FLAT_INDEX_LIMIT:
        return table.at[i, j].get(**IN_BOUNDS)
    return take_rows(table.reshape(rows * columns, *table.shape[2:]), i * columns + j)
