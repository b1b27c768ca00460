"""Stage records: which game records sl_dataset learns from, as a small file DVC can compare.

Usage: python -m stages.records OUT_FILE (dvc.yaml: results/records/source.json).

The records lie outside the repository, in the folder ``sl_dataset.records_dir`` names
(../shared/koikoi-records by default): dvc.yaml lists that folder as this stage's dep, so DVC reruns it when the
records change and ``dvc status`` is clean when they did not. It writes the records' content hash, which
changes only when the records do; then sl_dataset (and engine_tests, which replays them) run again.
``$KOIKOI_RECORDS`` naming another folder than the param is refused (DVC would watch the wrong one), as is a
folder without records while ``sl_dataset.synthetic`` is false: one line, exit code 2, before any output of
sl_dataset is removed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.records import record_files
from pipeline.params import ParamError, SLDatasetParams, load_params
from pipeline.runtime import atomic
from pipeline.sl.records_source import ENV_VAR, NoHumanRecords, find_records
from pipeline.tracking.lifecycle import stage_exit
from stages import one_line_errors, stage_parser

STAGE = "records"


def records_source(p: SLDatasetParams) -> dict:
    """What the records ``sl_dataset`` would learn from are: ``{"kind": "synthetic"}`` (the games follow from
    sl_dataset's params) or ``{"kind": "human", "files": n, "fingerprint": hash of their names and bytes}``
    (the same records give the same file on any machine, wherever they lie)."""
    from pipeline.sl.dataset import records_fingerprint  # torch: loaded only when this runs

    env = os.environ.get(ENV_VAR)
    if env and p.records_dir and Path(env).resolve() != Path(p.records_dir).resolve():
        raise ParamError(f"${ENV_VAR} = {env} but sl_dataset.records_dir = {p.records_dir}: the pipeline tracks "
                         "the param's folder; set sl_dataset.records_dir instead (and unset the variable)")
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
