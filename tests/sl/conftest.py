"""Shared fixtures: two human records copied to a temp dir, a dataset built from them, and a synthetic one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.sl.records_source import shared_records_dir

RECORDS = shared_records_dir()
SKIP_MSG = ("human records not found: set KOIKOI_RECORDS or place the folder gamerecords_dataset of "
            "github.com/guansanghai/KoiKoi-AI (MIT) at ../shared/koikoi-records")


@pytest.fixture(scope="session")
def two_records(tmp_path_factory) -> Path:
    if RECORDS is None or not (Path(RECORDS) / "1.json").is_file() or not (Path(RECORDS) / "2.json").is_file():
        pytest.skip(SKIP_MSG)
    d = tmp_path_factory.mktemp("records")
    for name in ("1.json", "2.json"):
        shutil.copy(Path(RECORDS) / name, d / name)
    return d


@pytest.fixture(scope="session")
def two_game_dataset(two_records, tmp_path_factory) -> tuple[Path, dict]:
    from pipeline.sl.dataset import build_dataset

    out = tmp_path_factory.mktemp("sl")
    metrics = build_dataset(two_records, out, val_fraction=0.5, seed=0, source="test", progress=False)
    return out, metrics
