"""Fixtures of the tracking tests."""

import pytest


@pytest.fixture
def store(tmp_path, new_store):
    """The id of experiment ``bookkeeping-test`` in a fresh MLflow store of its own."""
    new_store(tmp_path / "mlflow.db")
    from pipeline.tracking.store import setup_experiment

    return setup_experiment("bookkeeping-test")
