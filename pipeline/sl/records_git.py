"""Fetch the public game records from their git repository at a pinned commit (``sl_dataset.records_git``).

``fetch_records`` runs ``git`` itself: a shallow, blob-less fetch of the one commit into a scratch repository,
a sparse checkout of the records' folder only (the repository's models and paper stay on the server), then the
``*.json`` files copied into the destination, which is replaced only once the content hash (``records_sha256``)
equals the one the params pin. Any URL git can fetch works: GitHub in the pipeline, a ``file://`` repository in
the tests. Every failure is ``RecordsFetchError``, one line naming the param to look at and what to do, within
``timeout_s`` for the whole fetch: git never prompts (no terminal prompt, ssh in batch mode), a git command past
the deadline is killed with whatever it started, and the scratch repository goes with any failure (one that a
killed run left is removed by the next fetch).
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
# a partial fetch of one commit by its id: protocol v2 (git's default since 2.26) and a mature partial clone
MIN_GIT = (2, 26)
SCRATCH = ".{}.git-"  # the scratch repository's name prefix, beside the destination (data/.records.git-*)


class RecordsFetchError(RuntimeError):
    """The records could not be fetched, or are not those the params pin: one line naming the param."""


class _OutOfTime(RecordsFetchError):
    """A git command ran past the fetch's deadline (``fetch_records`` says which fetch)."""


@dataclass(frozen=True)
class RecordsGit:
    """Where the records lie: ``url`` at commit ``rev``, folder ``path``, content hash ``sha256``."""

    url: str
    rev: str
    path: str
    sha256: str


def _env() -> dict[str, str]:
    """git's environment: no prompt for a password (terminal or askpass), ssh in batch mode (a key or nothing)."""
    ssh = os.environ.get("GIT_SSH_COMMAND") or "ssh"
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
            "GIT_SSH_COMMAND": f"{ssh} -o BatchMode=yes -o ConnectTimeout=30"}


def _reason(stderr: str, code: int) -> str:
    """git's own reason, one line: its first ``fatal:`` line, after what ssh said before it (``Permission denied
    (publickey).``); else its last line."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip() and not x.startswith(("warning:", "hint:"))]
    fatal = next((i for i, x in enumerate(lines) if x.startswith(("fatal:", "error:"))), None)
    if fatal is None:
        return lines[-1] if lines else f"git exit {code}"
    said = [x for x in lines[:fatal] if not x.startswith("remote:")]
    return " ".join([*said[-1:], lines[fatal]])


def _die_with_parent() -> None:
    """Run in git's process before it starts (Linux): git is killed when the fetch's process dies, even when that
    is killed outright, instead of waiting on a silent host for good."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _git(args: list[str], cwd: Path, what: str, deadline: float) -> str:
    """Run git; ``RecordsFetchError`` naming ``what`` when it fails, ``_OutOfTime`` when it runs past ``deadline``
    (``time.monotonic``), when it is killed with every process it started (ssh, a remote helper)."""
    try:
        proc = subprocess.Popen(["git", "-c", "advice.detachedHead=false", *args], cwd=cwd, env=_env(), text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True,
                                preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    except FileNotFoundError:
        raise RecordsFetchError("git is not installed: it fetches sl_dataset.records_git (install git)") from None
    try:
        out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise _OutOfTime(what) from None
    except BaseException:  # Ctrl-C: git and what it started go too
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    if proc.returncode != 0:
        raise RecordsFetchError(f"{what}: {_reason(err or out, proc.returncode)}")
    return out.strip()


def check_git(deadline: float) -> None:
    """``RecordsFetchError`` unless ``git --version`` is at least ``MIN_GIT``."""
    said = _git(["--version"], Path.cwd(), "git --version", deadline)
    m = re.search(r"(\d+)\.(\d+)", said)
    if m is None or (int(m[1]), int(m[2])) < MIN_GIT:
        need = ".".join(map(str, MIN_GIT))
        raise RecordsFetchError(f"{said or 'git'} is too old to fetch sl_dataset.records_git (a partial fetch of one "
                                f"commit needs git >= {need}): install a newer git")


def remove_leftovers(dest: Path) -> None:
    """The scratch repositories of fetches into ``dest`` that were killed before they could remove their own."""
    for d in dest.parent.glob(SCRATCH.format(dest.name) + "*"):
        shutil.rmtree(d, ignore_errors=True)


def fetch_records(src: RecordsGit, dest: str | Path, timeout_s: float = GIT_TIMEOUT_S) -> list[Path]:
    """Fetch ``src`` into ``dest`` (replaced whole, only when the hash checks) within ``timeout_s``; returns the
    record files. ``RecordsFetchError`` when git fails or runs out of time, the folder holds no ``*.json`` or the
    hash differs (``dest`` untouched, no scratch left)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    remove_leftovers(dest)
    try:
        check_git(deadline)
        _fetch(src, dest, deadline)
    except _OutOfTime as e:
        raise RecordsFetchError(f"fetching sl_dataset.records_git.url {src.url}: no answer within {timeout_s:.0f} s "
                                f"for the whole fetch (in {e}): check that this machine can reach it") from None
    return record_files(dest)


def _fetch(src: RecordsGit, dest: Path, deadline: float) -> None:
    """``fetch_records``' work in a scratch repository beside ``dest``, removed whatever happens."""
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH.format(dest.name), dir=dest.parent))
    try:
        repo = scratch / "repo"
        repo.mkdir()

        def git(args: list[str], what: str) -> str:
            return _git(args, repo, what, deadline)

        git(["init", "-q"], "git init")
        git(["remote", "add", "origin", src.url], "git remote add")
        for key, value in (("remote.origin.promisor", "true"), ("remote.origin.partialclonefilter", "blob:none"),
                           ("core.sparseCheckout", "true"), ("core.sparseCheckoutCone", "false")):
            git(["config", key, value], "git config")
        # the sparse pattern written, not `sparse-checkout set --no-cone`: every git with sparse checkouts reads it
        (repo / ".git/info").mkdir(exist_ok=True)
        (repo / ".git/info/sparse-checkout").write_text(f"/{src.path}/*.json\n")
        try:
            git(["fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", src.rev],
                f"fetching sl_dataset.records_git.rev {src.rev} from sl_dataset.records_git.url {src.url}")
        except _OutOfTime:
            raise
        except RecordsFetchError as e:
            ref = re.search(r"not our ref|couldn't find remote ref|no such remote ref|unadvertised object", str(e))
            todo = "the rev must be a commit of that repository" if ref else \
                "check the url, and that this machine can reach it"
            raise RecordsFetchError(f"{e}; {todo}") from None
        git(["checkout", "-q", "FETCH_HEAD"], f"checking out {src.path} of {src.rev}")
        got = git(["rev-parse", "HEAD"], "git rev-parse")
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
