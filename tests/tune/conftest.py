"""Fixtures for the tuner tests: a real PostgreSQL server (the tiny SL dataset is tests/conftest.py's
``synthetic_dataset``)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny import free_port


def _postgres_bindir() -> Path | None:
    """Debian's server binaries (/usr/lib/postgresql/<version>/bin), else initdb on PATH."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True):
        if (Path(d) / "initdb").is_file() and (Path(d) / "pg_ctl").is_file():
            return Path(d)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A PostgreSQL server of its own on a free loopback port, stopped afterwards; yields its base URL
    (``postgresql://postgres@127.0.0.1:PORT``; add ``/postgres`` or another database name)."""
    bindir = _postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server not installed (Debian package postgresql: `make system-packages`)")
    # not pytest's tmp_path: its parents are private to root, and the server must not run as root
    root = Path(tempfile.mkdtemp(prefix="koikoi-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: run it as nobody
        try:
            nobody = pwd.getpwnam("nobody")
        except KeyError:
            pytest.skip("running as root and there is no user 'nobody' to run PostgreSQL as")
        os.chown(root, nobody.pw_uid, nobody.pw_gid)
        as_user = ["runuser", "-u", "nobody", "--"]
    data, port = root / "data", free_port()
    pg_ctl = [*as_user, str(bindir / "pg_ctl"), "-D", str(data)]
    run = dict(cwd=root, check=True, capture_output=True, text=True, timeout=120)
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                    "--no-sync", "-E", "UTF8"], **run)
    # -F: no fsync (a throw-away server); -k: its Unix socket in the temporary directory
    subprocess.run([*pg_ctl, "-l", str(root / "server.log"), "-w", "-t", "60", "-o",
                    f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -F", "start"], **run)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "-w", "stop"], cwd=root, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def make_database(postgres):
    """``make_database(name)``: ``CREATE DATABASE name`` on the module's server; returns its URL."""

    def make(name: str) -> str:
        import psycopg

        with psycopg.connect(f"{postgres}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{postgres}/{name}"

    return make
