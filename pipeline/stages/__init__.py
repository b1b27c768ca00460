"""One module per DVC stage (``dvc.yaml`` runs ``python -m pipeline.stages.<stage> PATHS...``).

Each module holds the library function the stage runs and a ``main(argv)`` that parses the paths
``dvc.yaml`` passes, reads ``params.yaml`` and runs it inside ``runstate.stage_exit`` (Ctrl-C: one
line, exit code 130; a bad param: one line, exit code 2). Errors in the inputs are one line naming
the culprit, exit code 1. ``rl_phase`` serves both ``rl_phase1@<reward>`` and ``rl_phase2@<reward>``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_line_errors(stage: str, *errors: type[Exception]) -> Iterator[None]:
    """``errors`` raised inside end the stage with ``<stage>: error: <first line>`` and exit code 1."""
    try:
        yield
    except errors as e:
        sys.exit(f"{stage}: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
