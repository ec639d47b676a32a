"""Results: rows and their CSV (`table`), figures (`plots`), merging runs and checking an
experiment's claims (`collect`)."""
from jaxnet.results.table import (
    LEADING_COLUMNS,
    config_id,
    decorate,
    done_points,
    provenance,
    read_rows,
    write_rows,
)

__all__ = ["LEADING_COLUMNS", "config_id", "decorate", "done_points", "provenance", "read_rows",
           "write_rows"]
