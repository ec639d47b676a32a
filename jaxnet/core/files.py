"""Files: atomic writing (readers see the old or the new content, never a partial file) and
reading user-given array files with one clear error naming the parameter."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write `content` (text or bytes) to `path` through a temporary file in the same
    directory and a rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content)
    os.replace(tmp, path)


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
