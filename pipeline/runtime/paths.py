"""Project paths that stay right inside ``dvc exp run`` temp-dir copies; outputs kept apart from inputs."""

import os
from collections.abc import Iterable
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


def check_apart(out: str | Path, inputs: Iterable[str | Path]) -> None:
    """``ValueError`` when ``out`` is, is inside or contains one of a command's ``inputs``."""
    o = Path(out).resolve()
    for given in inputs:
        i = Path(given).resolve()
        if o == i or i in o.parents or o in i.parents:
            how = "is" if o == i else "is inside" if i in o.parents else "contains"
            raise ValueError(f"{out} {how} the input {given}; write it elsewhere")
