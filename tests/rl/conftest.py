"""The RL tests run on one torch thread."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def one_thread(one_thread):
    """Every test here on one torch thread (tests/conftest.py)."""
    yield one_thread
