"""Stage tune (frozen: `dvc repro` skips it; `make tune` runs this module): one session of the study
described by the ``tune`` section of params.yaml.

Usage: python -m stages.tune OUT_ROOT (dvc.yaml: results/tune); the session's outputs go in
OUT_ROOT/<study>/, OUT_ROOT relative to the project root (``paths.repo_root``: a queued DVC experiment's
temp copy writes into the repository that queued it). ``koikoi tune`` runs the same session
(``pipeline.tune.tuning_session.tune``) with options.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.runtime.paths import repo_root
from stages import run_stage, stage_parser

STAGE = "tune"


def main(argv: Sequence[str] | None = None) -> None:
    from pipeline.tune import tuning_session as session  # lightning, optuna: loaded only when this runs

    args = stage_parser(STAGE, __doc__, out_root="the study's outputs go in OUT_ROOT/<study>/ (results/tune)"
                        ).parse_args(argv)
    run_stage(STAGE, lambda params: session.tune(params.tune, params, out_root=repo_root() / args.out_root),
              ValueError, FileNotFoundError)


if __name__ == "__main__":
    main()
