"""Games finished, reported from where they are played: a worker's play code calls :func:`report_progress`, which
goes to the sink its backend installed (the caller's progress bar, a queue to the parent, a Ray actor)."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Progress = Callable[[int], None]

_sink: Progress | None = None  # where report_progress goes in this process


def report_progress(n: int) -> None:
    """Called by play code when ``n`` games finished; routed to the caller's progress bar if any."""
    if _sink is not None:
        _sink(n)


@contextmanager
def progress_sink(sink: Progress | None) -> Iterator[None]:
    """Inside, :func:`report_progress` in this process goes to ``sink`` (a backend's worker side)."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous


def install_sink(sink: Progress | None) -> None:
    """Where :func:`report_progress` goes in this process from now on (a worker process's initializer)."""
    global _sink
    _sink = sink
