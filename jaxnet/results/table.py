"""Results rows: one per (configuration, traffic pattern, offered load, seed), with the full
configuration, software versions, provenance (commit, date, host) and a checksum; written
atomically as CSV, read back with damaged rows detected and dropped (they are recomputed),
and skipped by a sweep that already has them. The configuration blocks an experiment's rows
all repeat (SHARED_BLOCKS) are written once per table and put back on reading."""
from __future__ import annotations

import csv
import datetime
import functools
import hashlib
import io
import json
import platform
import subprocess
from pathlib import Path
from typing import Iterable, Mapping

from jaxnet import __version__
from jaxnet.core.files import write_atomic
from jaxnet.sim.policies import INJECTION_POLICIES

# The columns every results.csv starts with; then the rest of the row, the checksum last.
LEADING_COLUMNS = [
    "topology", "routing", "traffic", "offered_load", "seed", "accepted_load",
    "accepted_load_min", "injected_load", "message_latency", "network_latency",
    "average_hops", "jain_generated", "jain_consumed", "link_util_mean", "link_util_max",
    "missed_generations", "warmup", "measure", "wall_s", "device",
]
CHECKSUM = "row_sha"
# what makes a CSV a jaxnet results table (the point's identity, its configuration, the checksum)
REQUIRED_COLUMNS = ("config_id", "offered_load", "seed", "config", CHECKSUM)
# Config parts that do not change results (how a batch is run, where it is written).
NOT_RESULTS = {"sim": ("loads", "seeds", "chunk", "vmap_width", "active_lists", "list_sizing", "checkpoint_every",
                       "check_invariants", "sub_batch", "workers", "allow_deadlock", "record")}
# Of those, keys that config ids hashed before they were known not to change results: hashed
# at this value whatever they are set to, so that the ids of earlier rows stay the same.
HASHED_AS = {"sim": {"list_sizing": "auto"}}
# Configuration blocks every row of an experiment repeats (the figure's description: lines,
# networks at each scale, claims; its patterns), most of a row's size. A table writes each
# block in full in the first row that has it; later rows hold {SHARED_BLOCK: its digest}.
SHARED_BLOCKS = ("experiment", "patterns")
SHARED_BLOCK = "$block"
# sim keys that change results only under an automatic warm-up (sim.warmup: auto)
AUTO_WARMUP_KEYS = ("window", "warmup_tolerance", "warmup_max")


def results_topology(topology: Mapping) -> dict:
    """A `topology` config group without `faults: null` (no faults: as if the key were absent)."""
    return {k: v for k, v in topology.items() if not (k == "faults" and v is None)}


def results_sim(sim: Mapping) -> dict:
    """The keys of a `sim` config group that change results."""
    auto = sim.get("warmup") == "auto"
    kept = {k: v for k, v in sim.items() if k not in NOT_RESULTS["sim"] and (auto or k not in AUTO_WARMUP_KEYS)}
    return {**kept, **{k: v for k, v in HASHED_AS["sim"].items() if k in sim}}


def config_id(config: Mapping, pattern: Mapping) -> str:
    """Short stable hash of what changes the results of a point: topology, routing, router,
    the traffic pattern and the cycles."""
    sim = results_sim(config["sim"])
    blob = json.dumps({"topology": results_topology(config["topology"]), **{k: config[k] for k in ("routing", "router")},
                       "traffic": pattern, "sim": sim}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def equivalent_config_ids(config: Mapping, pattern: Mapping) -> set[str]:
    """The config ids of the configurations whose points give this one's results, its own
    included, for `reuse`. With one injection buffer per server port every
    `router.injection_policy` takes that buffer, so the policy changes nothing."""
    own = config_id(config, pattern)
    router = config["router"]
    if router.get("injection_buffers") != 1:
        return {own}
    return {own, *(config_id({**config, "router": {**router, "injection_policy": policy}}, pattern)
                   for policy in INJECTION_POLICIES)}


@functools.lru_cache(maxsize=1)
def provenance() -> dict:
    """The software and machine a row comes from: versions, git commit (or 'unknown'), host."""
    import jax

    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return {"jaxnet_version": __version__, "jax_version": jax.__version__, "git_commit": commit,
            "host": platform.node()}


def decorate(row: dict, config: Mapping, cid: str, pattern_label: str, pattern: Mapping) -> dict:
    """A simulation row with its configuration, pattern, provenance and date."""
    experiment = config.get("experiment") or {}
    return {
        "topology": config["topology"]["name"],
        "routing": config["routing"]["name"],
        "traffic": pattern_label,
        "warmup": config["sim"]["warmup"],
        "measure": config["sim"]["measure"],
        **row,
        "experiment": experiment.get("name", ""),
        "line": config.get("line", ""),
        "network": config.get("network", ""),
        "scale": config.get("scale", ""),
        "pattern": json.dumps(pattern, sort_keys=True, default=str),
        "config_id": cid,
        "config": json.dumps(config, default=str),  # in the config files' order (lines, networks)
        **provenance(),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
    }


def _cell(value) -> str:
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def _checksum(row: Mapping, columns: Iterable[str]) -> str:
    text = "\x1f".join(f"{c}={_cell(row.get(c, ''))}" for c in columns if c != CHECKSUM)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _digest(block) -> str:
    return hashlib.sha256(json.dumps(block, sort_keys=True).encode()).hexdigest()[:16]


def _is_reference(block) -> bool:
    return isinstance(block, dict) and set(block) == {SHARED_BLOCK}


def _json_object(text: str) -> dict | None:
    """The JSON object a cell holds, else None."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _share_blocks(config_cells: Iterable[str]) -> list[str]:
    """The rows' `config` cells with each shared block after its first appearance replaced by
    a reference to it (a job's rows share one configuration: each distinct cell is parsed once)."""
    written, shared, out = set(), {}, []
    for text in config_cells:
        if text not in shared:
            config = _json_object(text) or {}
            blocks = {key: config[key] for key in SHARED_BLOCKS if config.get(key) and not _is_reference(config[key])}
            digests = {key: _digest(block) for key, block in blocks.items()}
            new = {key for key, digest in digests.items() if digest not in written}
            written.update(digests.values())
            referenced = dict(config, **{key: {SHARED_BLOCK: digest} for key, digest in digests.items()})
            shared[text] = json.dumps(referenced) if digests else text
            if digests and new:  # its first appearance keeps the new blocks in full
                out.append(json.dumps({**referenced, **{key: blocks[key] for key in new}}))
                continue
        out.append(shared[text])
    return out


def _restore_blocks(rows: list[dict]) -> None:
    """Put the shared blocks back into the rows' `config` (in place). A block whose full row
    was damaged is left out of the rows that referred to it: they keep their results and the
    rest of their configuration."""
    marker = f'"{SHARED_BLOCK}"'
    if not any(marker in row["config"] for row in rows):
        return
    blocks = {}
    for row in rows:  # the blocks written in full
        if row["config"].count(marker) < len(SHARED_BLOCKS):
            config = _json_object(row["config"]) or {}
            for key in SHARED_BLOCKS:
                if config.get(key) and not _is_reference(config[key]):
                    blocks.setdefault(_digest(config[key]), config[key])
    restored = {}
    for row in rows:
        text = row["config"]
        config = _json_object(text) if marker in text and text not in restored else None
        if config is not None:
            for key in SHARED_BLOCKS:
                if _is_reference(config.get(key)):
                    block = blocks.get(config[key][SHARED_BLOCK])
                    if block is None:
                        del config[key]
                    else:
                        config[key] = block
            restored[text] = json.dumps(config)
        row["config"] = restored.get(text, text)


def read_rows(path: Path) -> tuple[list[dict], int]:
    """(rows whose checksum holds, number of damaged rows dropped) of a results.csv; a
    missing or empty file has none. Truncated or edited rows fail their checksum. A file that
    is not a jaxnet results table (not UTF-8 CSV text, or without the columns jaxnet writes)
    is a ValueError naming it and what to do; it is never overwritten."""
    path = Path(path)
    if not path.exists():
        return [], 0

    def foreign(reason: str) -> ValueError:
        return ValueError(f"{path} is not a jaxnet results table ({reason}): move it out of the way and rerun")

    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # a configuration may list a whole pattern
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or []
            rows = list(reader)
    except UnicodeDecodeError:
        raise foreign("not UTF-8 text") from None
    except csv.Error as err:
        raise foreign(f"not CSV: {err}") from None
    except OSError as err:
        raise ValueError(f"{path} cannot be read ({err.strerror or type(err).__name__}): "
                         "make it readable or move it out of the way, and rerun") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if columns and missing:
        raise foreign(f"no {', '.join(missing)} column{'s' if len(missing) > 1 else ''}")
    good = [r for r in rows if r[CHECKSUM] == _checksum(r, columns) and None not in r and None not in r.values()]
    _restore_blocks(good)
    return good, len(rows) - len(good)


def done_points(rows: Iterable[Mapping], cid: str) -> set[tuple[float, int]]:
    return {(float(r["offered_load"]), int(r["seed"])) for r in rows if r.get("config_id") == cid}


def write_rows(path: Path, rows: list[Mapping]) -> None:
    """Write all rows as CSV atomically (temp file + rename), each with its checksum and each
    shared configuration block once."""
    columns = list(LEADING_COLUMNS)
    for row in rows:
        columns += [k for k in row if k not in columns and k != CHECKSUM]
    columns.append(CHECKSUM)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    cells = [{k: _cell(v) for k, v in row.items()} for row in rows]
    configs = _share_blocks(c.get("config", "") for c in cells)
    for row, config in zip(cells, configs):
        if "config" in row:
            row["config"] = config
        row[CHECKSUM] = _checksum(row, columns)
        writer.writerow(row)
    write_atomic(Path(path), buffer.getvalue())
