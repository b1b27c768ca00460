"""Suite-wide: every test tracks into a throwaway MLflow store, and the repository's ``mlruns/`` is
checked to be untouched when the suite ends (a test that wrote there fails the run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_MLRUNS = Path(__file__).resolve().parents[1] / "mlruns"


def store_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file()}


def changes(before: dict, after: dict) -> list[str]:
    """Files added, removed or modified between two snapshots."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


@pytest.fixture(scope="session", autouse=True)
def throwaway_mlflow_store(tmp_path_factory):
    """``MLFLOW_TRACKING_URI`` at a temp SQLite store for the whole session (tests may point it elsewhere)."""
    before = store_snapshot(REPO_MLRUNS)
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow')}/mlflow.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_URI", uri)
        yield uri
    changed = changes(before, store_snapshot(REPO_MLRUNS))
    if changed:
        pytest.fail(f"the tests wrote into the repository's {REPO_MLRUNS}: {', '.join(changed[:10])}"
                    f"{' ...' if len(changed) > 10 else ''}", pytrace=False)


@pytest.fixture(autouse=True)
def kernel_cache_bounds_stay_in_their_test():
    """A PhaseRunner bounds the kernel caches in os.environ (pipeline.runtime.memory): later tests would inherit it."""
    from pipeline.runtime.memory import KERNEL_CACHES

    saved = {name: os.environ.get(name) for name in (*KERNEL_CACHES, "KOIKOI_BOUNDED_KERNEL_CACHES")}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def one_thread():
    """Tiny nets gain nothing from intra-op threads, and on a shared machine they lose a lot (test directories
    of tiny nets use it for every test)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
