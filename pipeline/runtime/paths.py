"""Project paths that stay right inside ``dvc exp run`` temp-dir copies."""

from __future__ import annotations

import os
from pathlib import Path


def repo_root(start: str | Path | None = None) -> Path:
    """The project root; for a DVC temp-dir experiment, the repository that queued it."""
    here = Path(start or os.getcwd()).resolve()
    parts = here.parts
    for i in range(len(parts) - 3):
        if parts[i:i + 3] == (".dvc", "tmp", "exps"):
            return Path(*parts[:i])
    for p in (here, *here.parents):
        if (p / "dvc.yaml").exists() or (p / "pyproject.toml").exists():
            return p
    return here
