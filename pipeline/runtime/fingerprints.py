"""Short hashes of what a run depends on: its params and data (``fingerprint``) and the files it starts from or plays
with (``file_fingerprint``: a model directory, a table). A checkpoint is resumed only by a run of the same fingerprint
(``tracking.resume``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def fingerprint(values: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    """A short hash of ``values`` less the keys in ``skip`` (those that may change between a run and its resumption)."""
    skip = set(skip)
    key = {k: v for k, v in values.items() if k not in skip}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_fingerprint(path: str | Path) -> str:
    """A short hash of a file's bytes (a table), or of a directory's files by name (a model directory: its weights
    and config); ``-`` when there is no such file or directory."""
    path = Path(path)
    if path.is_dir():
        return fingerprint({f.name: file_fingerprint(f) for f in path.iterdir() if f.is_file()})
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "-"
