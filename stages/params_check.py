"""Stage params_check: every section of the params file checked, before any other stage runs.

Usage: python -m stages.params_check PARAMS_FILE OUT_FILE (dvc.yaml: params.yaml
results/params_check/valid.json).

DVC removes a stage's outputs before it runs its command, so a stage that refuses a bad param itself
would refuse it only after its model is gone. Beyond the values, the paths and devices the stages of
dvc.yaml will need are checked (``pipeline.params.needs``): a model directory that is not there and that
no stage makes, ``cuda`` without CUDA. Every other stage depends on this stage's output, and
this stage depends on the whole params file: a bad param stops ``dvc repro`` here (one line, exit code
2) before any output is removed. The output never changes, so a valid change of params reruns only the
stages that read the changed params.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.params import load_params
from pipeline.params.needs import check_needs
from pipeline.runtime import atomic
from pipeline.tracking.lifecycle import stage_exit
from stages import stage_parser

STAGE = "params_check"


def params_check(params_file: str | Path, out_file: str | Path) -> dict:
    """``load_params(params_file)`` and ``check_needs`` (``ParamError`` on the first bad param: a bad value, or
    a path or device a stage would refuse after DVC removed its outputs), then the constant output."""
    check_needs(load_params(params_file), params_file)
    result = {"valid": True}
    atomic.write_text(out_file, json.dumps(result) + "\n")
    return result


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, params_file="the params file (params.yaml)",
                        out_file="written when every param is valid (results/params_check/valid.json)"
                        ).parse_args(argv)
    with stage_exit(STAGE):
        print(json.dumps(params_check(args.params_file, args.out_file)))


if __name__ == "__main__":
    main()
