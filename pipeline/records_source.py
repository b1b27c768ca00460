"""Where human game records come from."""

from __future__ import annotations

import os
from pathlib import Path

from .paths import repo_root

ENV_VAR = "KOIKOI_RECORDS"
RECORDS_HELP = (
    "human records: set KOIKOI_RECORDS, or place the folder gamerecords_dataset of the public "
    "repository guansanghai/KoiKoi-AI (MIT) at ../shared/koikoi-records"
)


def shared_records_dir() -> Path | None:
    """``$KOIKOI_RECORDS`` if set, else ``../shared/koikoi-records`` beside the repository, else None."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    d = repo_root().parent / "shared" / "koikoi-records"
    return d if d.is_dir() else None
