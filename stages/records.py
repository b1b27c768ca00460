"""Stage records: which game records sl_dataset learns from, as a small file DVC can compare.

Usage: python -m stages.records OUT_FILE (dvc.yaml: results/records/source.json).

The records come from outside the repository ($KOIKOI_RECORDS, ../shared/koikoi-records, a download), so
no dep of sl_dataset could name them. This stage runs on every ``dvc repro`` (``always_changed``: a hash of
a few MB) and writes the resolved records' content hash; the file changes only when the records do, and
then sl_dataset, which depends on it, runs again. No human records and ``sl_dataset.synthetic`` false: one
line, exit code 2, before any output of sl_dataset is removed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.records import record_files
from pipeline.params import ParamError, SLDatasetParams, load_params
from pipeline.runtime import atomic
from pipeline.sl.records_source import NoHumanRecords, find_records
from pipeline.tracking.lifecycle import stage_exit
from stages import one_line_errors, stage_parser

STAGE = "records"


def records_source(p: SLDatasetParams) -> dict:
    """What the records ``sl_dataset`` would learn from are: ``{"kind": "synthetic"}`` (the games follow from
    sl_dataset's params) or ``{"kind": "human", "files": n, "fingerprint": hash of their names and bytes}``
    (the same records give the same file on any machine, wherever they lie)."""
    from pipeline.sl.dataset import records_fingerprint  # torch: loaded only when this runs

    try:
        src = find_records(p.records_dir or None, synthetic=p.synthetic)
    except NoHumanRecords as e:
        raise ParamError(str(e)) from None  # a usage error: exit code 2
    if src.kind == "synthetic":
        return {"kind": "synthetic"}
    files = record_files(src.path)
    return {"kind": "human", "files": len(files), "fingerprint": records_fingerprint(files)}


def records_stage(p: SLDatasetParams, out_file: str | Path) -> dict:
    """Resolve the records (``records_source``) and write the result into ``out_file``."""
    with one_line_errors(STAGE, FileNotFoundError):
        source = records_source(p)
    atomic.write_text(out_file, json.dumps(source, indent=2) + "\n")
    return source


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, out_file="the records' kind and content hash "
                        "(results/records/source.json)").parse_args(argv)
    # not stages.run_stage: this stage runs on every `dvc repro`, and recording it in MLflow would open an
    # execution run in experiment `pipeline` for every repro that has nothing else to do
    with stage_exit(STAGE):
        print(json.dumps(records_stage(load_params().sl_dataset, args.out_file)))


if __name__ == "__main__":
    main()
