"""Fetch the public game records from their git repository at a pinned commit (``sl_dataset.records_git``).

``fetch_records`` runs ``git`` itself: a shallow, blob-less fetch of the one commit into a scratch repository,
a sparse checkout of the records' folder only (the repository's models and paper stay on the server), then the
``*.json`` files copied into the destination, which is replaced only once the content hash (``records_sha256``)
equals the one the params pin. Any URL git can fetch works: GitHub in the pipeline, a ``file://`` repository in
the tests. Every failure is ``RecordsFetchError``, one line naming the param to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..engine.records import record_files, records_sha256
from ..runtime import atomic

GIT_TIMEOUT_S = 600.0  # the whole fetch: the records are ~4 MB, the rest of the repository is never downloaded


class RecordsFetchError(RuntimeError):
    """The records could not be fetched, or are not those the params pin: one line naming the param."""


@dataclass(frozen=True)
class RecordsGit:
    """Where the records lie: ``url`` at commit ``rev``, folder ``path``, content hash ``sha256``."""

    url: str
    rev: str
    path: str
    sha256: str


def _git(args: list[str], cwd: Path, what: str, deadline_s: float) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}  # never wait on a password prompt
    try:
        proc = subprocess.run(["git", "-c", "advice.detachedHead=false", *args], cwd=cwd, env=env, text=True,
                              capture_output=True, timeout=deadline_s)
    except FileNotFoundError:
        raise RecordsFetchError("git is not installed: it fetches sl_dataset.records_git (or place the records "
                                "folder sl_dataset.records_dir names)") from None
    except subprocess.TimeoutExpired:
        raise RecordsFetchError(f"{what} took longer than {deadline_s:.0f} s") from None
    if proc.returncode != 0:
        lines = [x for x in (proc.stderr or proc.stdout).splitlines() if x.strip() and not x.startswith("warning:")]
        raise RecordsFetchError(f"{what} failed: {lines[-1].strip() if lines else f'git exit {proc.returncode}'}")
    return proc.stdout.strip()


def fetch_records(src: RecordsGit, dest: str | Path, timeout_s: float = GIT_TIMEOUT_S) -> list[Path]:
    """Fetch ``src`` into ``dest`` (replaced whole, only when the hash checks); returns the record files.
    ``RecordsFetchError`` when git fails, the folder holds no ``*.json`` or the hash differs (``dest`` untouched)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}.git-", dir=dest.parent))
    try:
        repo = scratch / "repo"
        repo.mkdir()
        _git(["init", "-q"], repo, "git init", timeout_s)
        _git(["remote", "add", "origin", src.url], repo, "git remote add", timeout_s)
        _git(["config", "remote.origin.promisor", "true"], repo, "git config", timeout_s)
        _git(["config", "remote.origin.partialclonefilter", "blob:none"], repo, "git config", timeout_s)
        _git(["sparse-checkout", "set", "--no-cone", f"/{src.path}/*.json"], repo, "git sparse-checkout", timeout_s)
        _git(["fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", src.rev], repo,
             f"fetching sl_dataset.records_git.rev {src.rev} from sl_dataset.records_git.url {src.url}", timeout_s)
        _git(["checkout", "-q", "FETCH_HEAD"], repo, f"checking out {src.path} of {src.rev}", timeout_s)
        got = _git(["rev-parse", "HEAD"], repo, "git rev-parse", timeout_s)
        if got != src.rev:
            raise RecordsFetchError(f"{src.url} gave commit {got} for sl_dataset.records_git.rev {src.rev}")
        folder = repo / src.path
        files = record_files(folder) if folder.is_dir() else []
        if not files:
            raise RecordsFetchError(f"sl_dataset.records_git.path {src.path} holds no *.json records at {src.rev} "
                                    f"of {src.url}")
        digest = records_sha256(files)
        if digest != src.sha256:
            raise RecordsFetchError(f"the records fetched from {src.url} at {src.rev} ({len(files)} files) hash to "
                                    f"{digest}, not sl_dataset.records_git.sha256 {src.sha256}")
        with atomic.building_dir(dest) as out:
            for f in files:
                shutil.copy2(f, out / f.name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return record_files(dest)
