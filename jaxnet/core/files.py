"""Files: atomic writing (readers see the old or the new content, never a partial file),
checking that a directory can be written before work is done for it, and reading
user-given array files with one clear error naming the parameter."""
from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory and a rename."""
    write_atomic_bytes(path, text.encode())


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """`write_atomic` for bytes; the directory is created if missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def require_writable(directory: Path, parameter: str) -> None:
    """A `ValueError` naming the parameter unless a file can be created in `directory`
    (created if missing): tried for real, as permissions alone do not tell (root, read-only
    file systems, full disks)."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as err:
        raise ValueError(f"{parameter}={str(directory)!r} is invalid: not a writable directory "
                         f"({type(err).__name__}: {err.strerror or err})") from None


def load_arrays(path, parameter: str, required: Sequence[str] = (), what: str = "an .npz file") -> dict:
    """Every array of an .npz (or the one array of an .npy, as 'array') written by jaxnet, read
    without pickles; a missing, unreadable or incomplete file is a `ValueError` naming the
    parameter, the file and what it should be."""
    def invalid(reason: str) -> ValueError:
        return ValueError(f"{parameter}={str(path)!r} is invalid: {what} ({reason})")

    if not Path(path).is_file():
        raise invalid("no such file")
    try:
        data = np.load(path, allow_pickle=False)
        if isinstance(data, np.ndarray):  # an .npy
            arrays = {"array": data}
        else:
            with data:
                arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise invalid(f"not readable as numpy arrays: {type(err).__name__}") from None
    missing = [key for key in required if key not in arrays]
    if missing:
        raise invalid(f"missing array(s) {missing}")
    return arrays
