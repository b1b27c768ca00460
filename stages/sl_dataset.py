"""Stage sl_dataset: human records -> encoded SL samples, split by game into train/val.

Usage: python -m stages.sl_dataset OUT_DIR RESULTS_DIR [--source SOURCE_FILE] (dvc.yaml: data/sl
results/sl_dataset --source results/records/source.json: the records stage's output, which makes the
records a dep DVC sees; the records found must still be those).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.records import record_files
from pipeline.params import ParamError, SLDatasetParams
from pipeline.runtime import atomic
from pipeline.runtime.results import write_results
from pipeline.sl.records_source import resolve_records
from stages import one_line_errors, run_stage, stage_parser

STAGE = "sl_dataset"
# echoes of the dataset's layout and split (data/sl/info.json holds them too): run.json, not metrics.json
INFO_KEYS = ("train_games", "val_games", "num_features", "bit_packed_rows", "value_rows")


def sl_dataset(p: SLDatasetParams, out_dir: str | Path, results_dir: str | Path,
               source_file: str | Path | None = None) -> dict:
    """Find the records (``resolve_records``; none and ``p.synthetic`` false: ``ParamError``), check them against
    ``source_file`` (the records stage's hash), build the dataset in ``out_dir``, write its results."""
    from pipeline.sl.dataset import build_dataset, records_fingerprint  # torch: loaded only when this runs
    from pipeline.sl.records_source import NoHumanRecords

    with one_line_errors(STAGE, FileNotFoundError, ValueError):
        try:
            src = resolve_records(p.records_dir or None, synthetic=p.synthetic, synthetic_games=p.synthetic_games,
                                  seed=p.seed)
        except NoHumanRecords as e:
            raise ParamError(str(e)) from None  # a usage error: exit code 2, before any output is built
        if source_file is not None:
            expected = json.loads(Path(source_file).read_text())
            if src.human and expected.get("fingerprint") != records_fingerprint(record_files(src.path)) \
                    or src.human != (expected.get("kind") == "human"):
                raise ValueError(f"the records at {src.path} are not those {source_file} names: they changed "
                                 "since the records stage ran; run dvc repro again")
    print(f"{STAGE}: records from {src.path} (source: {src.kind})", file=sys.stderr)
    try:  # built beside out_dir and swapped in whole: bad records or a kill leave the old dataset as it was
        with atomic.building_dir(out_dir) as out:
            doc = build_dataset(src.path, out, val_fraction=p.val_fraction, seed=p.seed, source=src.kind)
    except ValueError as e:
        sys.exit(f"{STAGE}: error: {e}; {out_dir} left as it was")
    doc["human_records"] = src.human
    keys = [*INFO_KEYS, *(k for k in doc if k.startswith("val_samples_"))]
    write_results(results_dir, doc, info_keys=keys)
    return doc


def main(argv: Sequence[str] | None = None) -> None:
    ap = stage_parser(STAGE, __doc__, out_dir="the dataset directory (data/sl)",
                      results_dir="metrics.json and run.json go here (results/sl_dataset)")
    ap.add_argument("--source", help="the records stage's output (results/records/source.json): the records "
                    "found must be those")
    args = ap.parse_args(argv)
    run_stage(STAGE, lambda params: sl_dataset(params.sl_dataset, args.out_dir, args.results_dir, args.source))


if __name__ == "__main__":
    main()
