"""``koikoi sl-eval``: top-1 agreement of a model with the human choices in game records."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError
from ..engine import RecordError
from ..net.model_dir import is_model_dir
from ..sl.records_source import RECORDS_HELP, shared_records_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sl-eval", help="agreement of a model's greedy choices with the records' human choices")
    p.add_argument("--model", default="models/sl", help="model directory (default models/sl)")
    p.add_argument("--records", default=None,
                   help="directory of *.json game records (default $KOIKOI_RECORDS or ../shared/koikoi-records)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = Path(args.model)
    if not is_model_dir(model):  # first, and without torch
        raise UserError(f"--model {args.model}: not a model directory (needs model.pt and config.json)")
    records = args.records or shared_records_dir()
    if records is None:
        raise UserError(f"no --records given and no records found; {RECORDS_HELP}")
    # torch is imported only once the arguments are known to be usable
    from ..net.modelio import load_model
    from ..sl.evaluate import evaluate_records  # lightning, torch: loaded only when this runs

    try:
        net, _ = load_model(args.model)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(f"--model: {e}") from None
    try:
        res = evaluate_records(net, records, progress=True)
    except RecordError as e:
        raise UserError(f"--records: {e}") from None
    if res["samples"] == 0:
        raise UserError(f"--records {records}: no usable game records ({res['skipped_files']} skipped)")
    print(f"{res['games']} games, {res['skipped_files']} files skipped; samples: "
          + ", ".join(f"{k} {res[f'samples_{k}']}" for k in ("discard", "pick", "koikoi")))
    # the last line counts interchangeable cards (two dross of a month) as one, as the paper does
    print("exact card: " + ", ".join(f"{k} {res[f'exact_{k}']}" for k in ("discard", "pick", "koikoi", "overall")))
    print(json.dumps({k: res[k] for k in ("discard", "pick", "koikoi", "overall", "samples")}))
    return 0
