"""Stage tune (frozen: `dvc repro` skips it; `make tune` runs this module): one session of the study
described by the ``tune`` section of params.yaml.

Usage: python -m pipeline.stages.tune OUT_ROOT (dvc.yaml: results/tune); the session's outputs go in
OUT_ROOT/<study>/, OUT_ROOT relative to the project root (``paths.repo_root``: a queued DVC experiment's
temp copy writes into the repository that queued it). ``koikoi tune`` runs the same session
(``pipeline.tune.session.tune``) with options.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from ..params import load_params
from ..paths import repo_root
from ..runstate import stage_exit
from . import one_line_errors

STAGE = "tune"


def main(argv: Sequence[str] | None = None) -> None:
    from ..tune import session

    ap = argparse.ArgumentParser(prog=f"python -m pipeline.stages.{STAGE}", description=__doc__.splitlines()[0])
    ap.add_argument("out_root", help="the study's outputs go in OUT_ROOT/<study>/ (results/tune)")
    args = ap.parse_args(argv)
    with stage_exit(STAGE):  # Ctrl-C: one line, exit code 130
        params = load_params()
        with one_line_errors(STAGE, ValueError, FileNotFoundError):
            summary = session.tune(params.tune, params, out_root=repo_root() / args.out_root)
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
