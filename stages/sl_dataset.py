"""Stage sl_dataset: the game records -> encoded SL samples, split by game into train/val.

Usage: python -m stages.sl_dataset RECORDS_DIR OUT_DIR RESULTS_DIR [--source SOURCE_FILE] (dvc.yaml: data/records
data/sl results/sl_dataset --source results/records/source.json: the records stage's output; the records in
RECORDS_DIR must be those it describes).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.records import record_files
from pipeline.params import SLDatasetParams
from pipeline.runtime import atomic
from pipeline.runtime.results import write_results
from stages import one_line_errors, run_stage, stage_parser

STAGE = "sl_dataset"
# echoes of the dataset's layout and split (data/sl/info.json holds them too): run.json, not metrics.json
INFO_KEYS = ("train_games", "val_games", "num_features", "bit_packed_rows", "value_rows")


def sl_dataset(p: SLDatasetParams, records_dir: str | Path, out_dir: str | Path, results_dir: str | Path,
               source_file: str | Path | None = None) -> dict:
    """Check the records in ``records_dir`` against ``source_file`` (the records stage's description: their kind,
    origin and hash), build the dataset in ``out_dir``, write its results."""
    from pipeline.sl.dataset import build_dataset, records_fingerprint  # torch: loaded only when this runs

    kind, origin = "human", "records"
    with one_line_errors(STAGE, FileNotFoundError, ValueError):
        files = record_files(records_dir)
        if source_file is not None:
            expected = json.loads(Path(source_file).read_text())
            kind, origin = expected.get("kind", kind), expected.get("origin", origin)
            if expected.get("fingerprint") != records_fingerprint(files):
                raise ValueError(f"the records in {records_dir} are not those {source_file} describes: they changed "
                                 "since the records stage ran; run dvc repro again")
    print(f"{STAGE}: {len(files)} records from {records_dir} ({kind}, {origin})", file=sys.stderr)
    try:  # built beside out_dir and swapped in whole: bad records or a kill leave the old dataset as it was
        with atomic.building_dir(out_dir) as out:
            doc = build_dataset(records_dir, out, val_fraction=p.val_fraction, seed=p.seed, source=origin)
    except ValueError as e:
        sys.exit(f"{STAGE}: error: {e}; {out_dir} left as it was")
    doc["human_records"] = kind == "human"
    keys = [*INFO_KEYS, *(k for k in doc if k.startswith("val_samples_"))]
    write_results(results_dir, doc, info_keys=keys)
    return doc


def main(argv: Sequence[str] | None = None) -> None:
    ap = stage_parser(STAGE, __doc__, records_dir="the game records (data/records)",
                      out_dir="the dataset directory (data/sl)",
                      results_dir="metrics.json and run.json go here (results/sl_dataset)")
    ap.add_argument("--source", help="the records stage's output (results/records/source.json): the records "
                    "in RECORDS_DIR must be those it describes")
    args = ap.parse_args(argv)
    run_stage(STAGE, lambda params: sl_dataset(params.sl_dataset, args.records_dir, args.out_dir, args.results_dir,
                                               args.source),
              results=args.results_dir)


if __name__ == "__main__":
    main()
