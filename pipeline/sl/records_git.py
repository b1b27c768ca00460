"""Fetch the public game records from their git repository at a pinned commit (``sl_dataset.records_git``).

``fetch_records`` runs ``git`` itself: a shallow, blob-less fetch of the one commit into a scratch repository,
a sparse checkout of the records' folder only (the repository's models and paper stay on the server), then the
``*.json`` files copied into the destination, which is replaced only once the content hash (``records_sha256``)
equals the one the params pin. Any URL git can fetch works: GitHub in the pipeline, a ``file://`` repository in
the tests. Every failure is ``RecordsFetchError``, one line naming the param and what to do, within ``timeout_s``
for the whole fetch: git never prompts (ssh in batch mode), is killed with what it started past the deadline or
when the fetch's process dies, and the scratch repository goes with any failure (the next fetch removes one that a
killed fetch left).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..engine.records import record_files, records_sha256
from ..runtime import atomic

GIT_TIMEOUT_S = 600.0  # the whole fetch: the records are ~4 MB, the rest of the repository is never downloaded
MIN_GIT = (2, 26)  # a partial fetch of one commit by its id: protocol v2, git's default since 2.26
SCRATCH = ".{}.git-"  # the scratch repository's name prefix, beside the destination (data/.records.git-*)


class RecordsFetchError(RuntimeError):
    """The records could not be fetched, or are not those the params pin: one line naming the param."""


class _OutOfTime(RecordsFetchError):
    """A git command ran past the fetch's deadline."""


@dataclass(frozen=True)
class RecordsGit:
    """Where the records lie: ``url`` at commit ``rev``, folder ``path``, content hash ``sha256``."""

    url: str
    rev: str
    path: str
    sha256: str


def _die_with_parent() -> None:
    """In git's process (Linux): killed when the fetch's process dies, even killed outright (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def _git(args: list[str], cwd: Path, what: str, deadline: float) -> str:
    """Run git (no prompt: ssh in batch mode); ``RecordsFetchError`` naming ``what`` with git's first ``fatal:``
    line (after ssh's own reason), ``_OutOfTime`` past ``deadline`` (``time.monotonic``), with git and every process
    it started killed."""
    ssh = os.environ.get("GIT_SSH_COMMAND") or "ssh"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
           "GIT_SSH_COMMAND": f"{ssh} -o BatchMode=yes -o ConnectTimeout=30"}
    try:
        proc = subprocess.Popen(["git", "-c", "advice.detachedHead=false", *args], cwd=cwd, env=env, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=_die_with_parent if sys.platform == "linux" else
                                None)
    except FileNotFoundError:
        raise RecordsFetchError("git is not installed: it fetches sl_dataset.records_git (install git)") from None
    try:
        out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 0.0))
    except BaseException as e:  # past the deadline, or Ctrl-C
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise _OutOfTime(what) if isinstance(e, subprocess.TimeoutExpired) else e from None
    if proc.returncode != 0:
        lines = [x.strip() for x in err.splitlines() if x.strip() and not x.startswith(("warning:", "hint:"))]
        fatal = next((i for i, x in enumerate(lines) if x.startswith(("fatal:", "error:"))), len(lines) - 1)
        said = [x for x in lines[:fatal] if not x.startswith("remote:")][-1:]  # ssh's: Permission denied ...
        raise RecordsFetchError(f"{what}: {' '.join(said + lines[fatal:fatal + 1]) or f'git exit {proc.returncode}'}")
    return out.strip()


def fetch_records(src: RecordsGit, dest: str | Path, timeout_s: float = GIT_TIMEOUT_S) -> list[Path]:
    """Fetch ``src`` into ``dest`` (replaced whole, only when the hash checks) within ``timeout_s``; returns the
    record files. ``RecordsFetchError`` when git fails, is too old or runs out of time, the folder holds no
    ``*.json`` or the hash differs (``dest`` untouched, no scratch left)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for left in dest.parent.glob(SCRATCH.format(dest.name) + "*"):  # of fetches killed before they removed it
        shutil.rmtree(left, ignore_errors=True)
    deadline = time.monotonic() + timeout_s
    try:
        said = _git(["--version"], dest.parent, "git --version", deadline)
        if tuple(map(int, re.findall(r"\d+", said)[:2])) < MIN_GIT:
            raise RecordsFetchError(f"{said} is too old to fetch sl_dataset.records_git (a partial fetch of one "
                                    f"commit needs git >= {'.'.join(map(str, MIN_GIT))}): install a newer git")
        scratch = Path(tempfile.mkdtemp(prefix=SCRATCH.format(dest.name), dir=dest.parent))
        try:
            _fetch(src, dest, scratch / "repo", deadline)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    except _OutOfTime as e:
        raise RecordsFetchError(f"fetching sl_dataset.records_git.url {src.url}: no answer within {timeout_s:.0f} s "
                                f"for the whole fetch (in {e}): check that this machine can reach it") from None
    return record_files(dest)


def _fetch(src: RecordsGit, dest: Path, repo: Path, deadline: float) -> None:
    repo.mkdir()
    for args, what in ((["init", "-q"], "git init"), (["remote", "add", "origin", src.url], "git remote add"),
                       *((["config", k, v], "git config") for k, v in (
                           ("remote.origin.promisor", "true"), ("remote.origin.partialclonefilter", "blob:none"),
                           ("core.sparseCheckout", "true"), ("core.sparseCheckoutCone", "false")))):
        _git(args, repo, what, deadline)
    # the sparse pattern written, not `sparse-checkout set --no-cone` (git >= 2.35): every git reads this file
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/sparse-checkout").write_text(f"/{src.path}/*.json\n")
    try:
        _git(["fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", src.rev], repo,
             f"fetching sl_dataset.records_git.rev {src.rev} from sl_dataset.records_git.url {src.url}", deadline)
    except _OutOfTime:
        raise
    except RecordsFetchError as e:
        ref = re.search(r"not our ref|couldn't find remote ref|no such remote ref|unadvertised object", str(e))
        raise RecordsFetchError(f"{e}; " + ("the rev must be a commit of that repository" if ref else
                                            "check the url, and that this machine can reach it")) from None
    _git(["checkout", "-q", "FETCH_HEAD"], repo, f"checking out {src.path} of {src.rev}", deadline)
    got = _git(["rev-parse", "HEAD"], repo, "git rev-parse", deadline)
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
