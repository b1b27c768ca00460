"""The DVC stage entry points, one module per stage (``dvc.yaml`` runs ``python -m stages.<stage> PATHS...``),
thin over the library in ``pipeline/`` (which never imports this package).

Each module holds the library function the stage runs and a ``main(argv)`` that parses the paths
``dvc.yaml`` passes, reads ``params.yaml`` and runs it inside ``lifecycle.stage_exit`` (Ctrl-C: one
line, exit code 130; a bad param, or a training loss that a too large ``lr`` made non-finite: one line,
exit code 2). Errors in the inputs are one line naming the culprit, exit code 1. ``rl_phase`` serves both
``rl_phase1@<reward>`` and ``rl_phase2@<reward>``.
"""

from __future__ import annotations

# first, so that its Ctrl-C handler (one line, exit code 130) covers every import of the stage
import pipeline  # noqa: F401

# isort: split
import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline import check_interrupted
from pipeline.params import ParamError, load_params
from pipeline.runtime.hardware import cpu_name
from pipeline.runtime.results import add_to_run
from pipeline.tracking.lifecycle import stage_exit
from pipeline.tracking.stage_record import record_stage


@contextmanager
def one_line_errors(stage: str, *errors: type[Exception]) -> Iterator[None]:
    """``errors`` raised inside end the stage with ``<stage>: error: <first line>`` and exit code 1; a
    ``ParamError`` goes on to ``lifecycle.stage_exit`` (exit code 2), whatever else it is."""
    try:
        yield
    except ParamError:
        raise
    except errors as e:
        sys.exit(f"{stage}: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}")


def stage_parser(stage: str, doc: str, **positionals: str) -> argparse.ArgumentParser:
    """The stage's argument parser: one positional path per keyword (its help); usage errors exit 2."""
    ap = argparse.ArgumentParser(prog=f"python -m stages.{stage}", description=doc.splitlines()[0])
    for name, help_text in positionals.items():
        ap.add_argument(name, help=help_text)
    return ap


def run_stage(stage: str, work: Callable[[Any], dict], *errors: type[Exception], name: str | None = None,
              results: str | Path | None = None) -> None:
    """Read params.yaml, run ``work(params)`` and print its result as JSON, inside ``lifecycle.stage_exit``
    (Ctrl-C: one line, exit code 130; a bad param: exit code 2) and ``one_line_errors(stage, *errors)``. The
    result (the stage's DVC metrics) also goes into its execution's MLflow run (``stage_record.record_stage``)
    as ``name`` (default: ``stage``). ``results``: the stage's results directory, whose ``run.json`` gains the
    stage's wall ``seconds`` (its work, with the imports made inside it) and the ``cpu`` it ran on: the README's
    ``make repro`` time is their sum (``docs/hooks.py``)."""
    with stage_exit(stage):
        check_interrupted()  # a Ctrl-C during the imports an optional import swallowed
        started = time.perf_counter()
        params = load_params()
        with one_line_errors(stage, *errors):
            result = work(params)
        if results is not None:
            add_to_run(results, seconds=round(time.perf_counter() - started, 1),
                       cpu=f"{cpu_name()}, {len(os.sched_getaffinity(0))} cores")
        record_stage(name or stage, result)
        print(json.dumps(result))
