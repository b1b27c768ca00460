"""Stage records: the game records every later stage reads, in data/records, with their content hash.

Usage: python -m stages.records RECORDS_DIR OUT_FILE [--changed] (dvc.yaml: data/records
results/records/source.json).

The records come by one rule (``pipeline.sl.records_source``): the folder ``$KOIKOI_RECORDS`` or
``sl_dataset.records_dir`` names, copied as it is when it is there; else ``sl_dataset.records_git`` fetched at its
pinned commit and checked against its ``sha256``; with ``sl_dataset.synthetic``, heuristic self-play games.
RECORDS_DIR (a DVC output, kept while the stage runs) is rewritten only when its content would change, so a rerun
that finds the same records fetches nothing and leaves sl_dataset and engine_tests up to date. OUT_FILE holds the
records' kind, origin, file count and hashes, never a path of this machine.

DVC sees the params: another folder, commit or hash reruns the stage. It cannot see records that change inside a
folder outside the project, nor ``$KOIKOI_RECORDS``; ``--changed`` says whether they did (exit 3 and one line:
they differ from OUT_FILE's; exit 0: they do not, or there is nothing to compare yet; any other code: it could not
tell, and said why), and ``make repro`` runs it first, forces this stage when they did and stops on an error
(docs/sl.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.records import ENV_VAR, record_files, records_sha256
from pipeline.params import ParamError, SLDatasetParams, load_params
from pipeline.runtime import atomic
from pipeline.sl.records_source import RECORDS_HELP, has_records, records_folder, synthesize_records, warn
from pipeline.tracking.lifecycle import stage_exit
from stages import one_line_errors, stage_parser

STAGE = "records"
CHANGED = 3  # --changed's exit code when the records changed: no error exits with it (0: unchanged)


def _hashes(files: list[Path]) -> dict:
    digest = records_sha256(files)
    return {"files": len(files), "fingerprint": digest[:16], "sha256": digest}  # fingerprint: data/sl/info.json's


def _copy(files: list[Path], dest: Path) -> None:
    """``files`` into ``dest``, replacing it whole, unless it holds exactly these records already."""
    if dest.is_dir() and records_sha256(record_files(dest)) == records_sha256(files) and \
            sorted(p.name for p in dest.iterdir()) == sorted(f.name for f in files):
        return
    with atomic.building_dir(dest) as out:
        for f in files:
            out.joinpath(f.name).write_bytes(f.read_bytes())


def records_stage(p: SLDatasetParams, records_dir: str | Path, out_file: str | Path) -> dict:
    """Put the records the params name into ``records_dir`` and their description into ``out_file``; returns it.
    ``ParamError`` (exit code 2) when there are none to be had."""
    from pipeline.sl.records_git import RecordsFetchError, RecordsGit, fetch_records

    dest = Path(records_dir)
    if p.synthetic:
        warn(f"sl_dataset.synthetic: learning from heuristic SELF-PLAY records, not people's. {RECORDS_HELP}.")
        with atomic.building_dir(dest) as out:
            synthesize_records(out, p.synthetic_games, p.seed)
        source = {"kind": "synthetic", "origin": "synthetic", **_hashes(record_files(dest))}
    else:
        folder, named_by = records_folder(p.records_dir)
        if folder is not None and folder.exists():
            if not has_records(folder):
                raise ParamError(f"{named_by} = {folder}: no *.json game records there")
            files = record_files(folder)
            _copy(files, dest)
            source = {"kind": "human", "origin": "folder", **_hashes(files)}
            print(f"{STAGE}: {len(files)} records from {folder} ({named_by})", file=sys.stderr)
        elif p.records_git is None:
            raise ParamError(f"{named_by} = {folder}: no such folder, and sl_dataset.records_git is null")
        else:
            git = RecordsGit(**p.records_git.model_dump())
            held = record_files(dest) if dest.is_dir() else []
            if held and records_sha256(held) == git.sha256:
                print(f"{STAGE}: {dest} holds the records of {git.url} at {git.rev} already", file=sys.stderr)
            else:
                print(f"{STAGE}: {named_by} {folder} is absent: fetching {git.path}/ of {git.url} at {git.rev}",
                      file=sys.stderr, flush=True)
                try:
                    held = fetch_records(git, dest)
                except RecordsFetchError as e:
                    into = f"into {folder} ({named_by})" if folder else "into a folder sl_dataset.records_dir names"
                    sys.exit(f"{STAGE}: error: {e}; or give the records another way: put them {into}, name a folder "
                             f"of them with ${ENV_VAR}, or set sl_dataset.synthetic: true (docs/sl.md)")
                print(f"{STAGE}: fetched {len(held)} records into {dest}, SHA-256 {git.sha256} as pinned",
                      file=sys.stderr)
            source = {"kind": "human", "origin": "git", "url": git.url, "rev": git.rev, "path": git.path,
                      **_hashes(held)}
    atomic.write_text(out_file, json.dumps(source, indent=2) + "\n")
    return source


def changed(p: SLDatasetParams, out_file: str | Path) -> str | None:
    """Why the records the rule names now differ from those ``out_file`` describes (a folder's files changed, the
    variable names another folder, the folder appeared or went), or None: the same, or nothing to compare yet."""
    try:
        source = json.loads(Path(out_file).read_text())
    except (OSError, ValueError):
        return None  # never ran: dvc repro runs the stage anyway
    if p.synthetic:
        return None  # the params say it all
    folder, named_by = records_folder(p.records_dir)
    if has_records(folder):
        now = records_sha256(record_files(folder))
        if source.get("origin") != "folder" or source.get("sha256") != now:
            return f"the records in {folder} ({named_by}) are not those {out_file} describes"
    elif source.get("origin") == "folder":
        return f"{named_by} {folder} holds no records any more: the records are fetched instead"
    return None


def main(argv: Sequence[str] | None = None) -> None:
    ap = stage_parser(STAGE, __doc__, records_dir="the records every later stage reads (data/records)",
                      out_file="the records' kind, origin and content hash (results/records/source.json)")
    ap.add_argument("--changed", action="store_true", help="only say whether the records the params name differ "
                    f"from OUT_FILE's (exit {CHANGED}) or not (exit 0); `make repro` then forces the stage")
    args = ap.parse_args(argv)
    if args.changed:
        # an error is neither answer: it exits 1 (2: bad params) with its line, and make repro stops on it
        with stage_exit(STAGE), one_line_errors(STAGE, FileNotFoundError, OSError):
            why = changed(load_params().sl_dataset, args.out_file)
        if why:
            print(f"{STAGE}: {why}: running the stage again", file=sys.stderr)
        sys.exit(CHANGED if why else 0)
    # not stages.run_stage: recording it in MLflow would open an execution run for a stage that mostly finds
    # the records where they were
    with stage_exit(STAGE), one_line_errors(STAGE, FileNotFoundError, OSError):
        print(json.dumps(records_stage(load_params().sl_dataset, args.records_dir, args.out_file)))


if __name__ == "__main__":
    main()
