"""``koikoi sl-cv``: k-fold cross-validation of supervised training, split by game (the paper's Table I)."""

import argparse
import json

from ..cli_args import as_user_error, comma_list, int_range, param_overrides
from ..params import parse_params, read_doc, with_overrides


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sl-cv", help="k-fold cross-validation (by game) of SL training on data/sl")
    p.add_argument("--folds", type=int_range(2), default=5, help="number of folds (default 5)")
    p.add_argument("--dataset", default="data/sl", help="SL dataset directory (default data/sl)")
    p.add_argument("--params", default="params.yaml", help="params file; its sl_train section is used")
    p.add_argument("--set", "-S", action="append", default=[], metavar="KEY=VALUE",
                   help="override an sl_train param, e.g. -S lr=0.0005 (repeatable)")
    p.add_argument("--max-epochs", type=int_range(1), default=None, help="override sl_train.max_epochs")
    p.add_argument("--decisions", default=None, metavar="TYPES",
                   help="train and score only these of discard,pick,koikoi (comma-separated; three-network models)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    overrides = param_overrides(args.set, "sl_train")
    params = parse_params(with_overrides(read_doc(args.params), overrides), args.params).sl_train
    from ..sl.cross_validation import cross_validate  # lightning, torch: loaded only when this runs
    with as_user_error((ValueError, FileNotFoundError)):
        decisions = None if args.decisions is None else comma_list(args.decisions)
        res = cross_validate(args.dataset, params, folds=args.folds, max_epochs=args.max_epochs,
                             decisions=decisions)
    print(json.dumps(res))
    return 0
