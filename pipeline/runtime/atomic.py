"""Writes a kill cannot leave half done: each file (or directory) is written beside its target and renamed over it."""

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    try:  # Linux shows it; os.umask would have to change it to read it (not thread-safe)
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("Umask:"))
        return int(line.split()[1], 8)
    except (OSError, StopIteration, ValueError):
        return 0o022


def _file_mode(path: Path) -> int:
    """The mode the new file gets: the old file's, else what ``open`` would give (mkstemp's is 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def _temp_beside(path: Path, mode: str) -> Iterator[IO[Any]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), _file_mode(path))
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> Path:
    path = Path(path)
    with _temp_beside(path, "w") as f:
        f.write(text)
    return path


def write_bytes(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    with _temp_beside(path, "wb") as f:
        f.write(data)
    return path


def write_with(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """``write(f)`` into a binary file object that becomes ``path`` only once ``write`` returned."""
    path = Path(path)
    with _temp_beside(path, "wb") as f:
        write(f)
    return path


def savefig(fig: Any, path: str | Path, **kwargs: Any) -> Path:
    """``fig.savefig(path, **kwargs)`` (a matplotlib figure), atomically; the format from the suffix."""
    path = Path(path)
    fmt = kwargs.pop("format", None) or path.suffix.lstrip(".").lower() or None
    return write_with(path, lambda f: fig.savefig(f, format=fmt, **kwargs))


def torch_save(obj: Any, path: str | Path) -> Path:
    import torch

    return write_with(path, lambda f: torch.save(obj, f))


@contextmanager
def building_dir(target: str | Path) -> Iterator[Path]:
    """A fresh directory beside ``target`` that replaces it when the block ends without an exception."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    olds = sorted(target.parent.glob(f".{target.name}.old-*"))
    if olds and not target.exists():  # a kill between the two renames of an earlier swap: put the old tree back
        os.replace(olds[-1], target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    replace_dir(tmp, target)


def replace_dir(new: Path, target: Path) -> None:
    """Put directory ``new`` at ``target`` (same parent), removing the old tree afterwards."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    for stale in target.parent.glob(f".{target.name}.old-*"):  # left by a kill between the two renames
        shutil.rmtree(stale, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)
