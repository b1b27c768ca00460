"""A local git repository standing in for the public records' GitHub repository (a ``file://`` URL), for the
tests of ``sl_dataset.records_git``: the records in a folder of it, beside files the fetch must leave behind."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pipeline.engine.records import record_files, records_sha256

FOLDER = "gamerecords_dataset"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def records_repo(root: Path, records: Path) -> dict[str, str]:
    """A repository at ``root`` whose commit holds ``records``' ``*.json`` under ``gamerecords_dataset/`` (and a
    model file and a README outside it); returns ``sl_dataset.records_git`` for it: url, rev, path, sha256."""
    root.mkdir(parents=True)
    git("init", "-q", cwd=root)
    (root / FOLDER).mkdir()
    for f in record_files(records):
        shutil.copy(f, root / FOLDER / f.name)
    (root / "model.pt").write_bytes(b"\0" * 4096)  # what a sparse fetch never needs
    (root / "README.md").write_text("records\n")
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "records", cwd=root)
    git("config", "uploadpack.allowFilter", "true", cwd=root)  # as GitHub: blob-less fetches
    return {"url": root.as_uri(), "rev": git("rev-parse", "HEAD", cwd=root), "path": FOLDER,
            "sha256": records_sha256(record_files(root / FOLDER))}
