"""Stage duels: round-robin duels, the searchers' and the phase pairings' duels, Table II, Bradley-Terry ratings,
the champion decided by sequential duels and confirmed on fresh deals, figures, one MLflow run
(``pipeline.duel.duels_stage``).

Usage: python -m stages.duels OUT_DIR (dvc.yaml: results/duels).
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.duel.duels_stage import STAGE, duels_stage
from stages import run_stage, stage_parser


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, out_dir="metrics, table, ratings and figures go here (results/duels)"
                        ).parse_args(argv)
    run_stage(STAGE, lambda params: duels_stage(params.duels, args.out_dir, register=params.registry.enabled),
              ValueError, results=args.out_dir)  # DuelsError is one


if __name__ == "__main__":
    main()
