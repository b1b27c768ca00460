"""One process at a time through the first use of a SQLite database (MLflow's, Optuna's), whose schema two
processes migrating at once would break, and named locks across processes on a database."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_TIMEOUT_S = 600  # a migration on a large store can take minutes; a stuck one should not hang forever


def sqlite_path(url: str) -> Path | None:
    """The database file of a ``sqlite:`` URL (None for anything else, or an in-memory database)."""
    if not url.startswith("sqlite:"):
        return None
    from sqlalchemy.engine import make_url

    db = make_url(url).database
    return Path(db).resolve() if db and db != ":memory:" else None


@contextmanager
def sqlite_lock(url: str) -> Iterator[None]:
    """Hold ``<database>.lock`` (a ``filelock.FileLock``) while inside, for a SQLite URL."""
    path = sqlite_path(url)
    if path is None:
        yield
        return
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
        yield


@contextmanager
def named_lock(url: str, name: str) -> Iterator[None]:
    """A lock called ``name`` across processes: a file lock (SQLite), an advisory lock (PostgreSQL), else none."""
    path = sqlite_path(url)
    if path is not None:
        from filelock import FileLock

        with FileLock(f"{path}.{name}.lock", timeout=LOCK_TIMEOUT_S):
            yield
        return
    if not url.startswith("postgresql"):
        yield
        return
    import hashlib

    import sqlalchemy
    from sqlalchemy.pool import NullPool

    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    engine = sqlalchemy.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": key})
            try:
                yield
            finally:
                conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
    finally:
        engine.dispose()
