"""A SQLite MLflow store that was copied or moved keeps working where it now is: MLflow records absolute
artifact paths, which ``relocate`` rewrites (docs/mlflow.md "Moving a store")."""

import sqlite3
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

# (table, column) that hold artifact paths, as a file URI or a plain path (MLflow 3's SQLite schema)
PATH_COLUMNS = (("experiments", "artifact_location"), ("runs", "artifact_uri"), ("logged_models", "artifact_location"),
                ("model_versions", "source"), ("model_versions", "storage_location"))


def _local_path(location: str) -> Path | None:
    if location.startswith("file:"):
        return Path(unquote(urlparse(location).path))
    return Path(location) if location.startswith("/") else None


STORE_TAG = "koikoi.store_dir"  # experiment tag: the directory of the store the experiment was created in


def former_dirs(db: Path) -> list[Path]:
    """The directories, other than ``db``'s own, that the store's experiments were created in: their
    ``STORE_TAG``, or for an older experiment an artifact root ``<dir>/artifacts`` whose ``<dir>`` is named as ours."""
    here = db.resolve().parent
    with sqlite3.connect(db) as con:
        try:
            rows = con.execute("SELECT e.artifact_location, t.value FROM experiments e LEFT JOIN experiment_tags t "
                               "ON t.experiment_id = e.experiment_id AND t.key = ?", (STORE_TAG,)).fetchall()
        except sqlite3.OperationalError:  # no tables yet: a new store
            return []
    found = []
    for location, tagged in rows:
        path = _local_path(location or "")
        if tagged:
            old = Path(tagged)
        elif path is not None and path.name == "artifacts" and path.parent.name == here.name:
            old = path.parent
        else:
            continue
        if old != here and old not in found:
            found.append(old)
    return found


def relocate(db: str | Path, quiet: bool = False) -> list[Path]:
    """Rewrite the artifact paths of the SQLite store ``db`` to its present directory; returns the former ones."""
    db = Path(db)
    if not db.is_file():
        return []
    old_dirs = former_dirs(db)
    if not old_dirs:
        return []
    here = db.resolve().parent
    with sqlite3.connect(db, timeout=60) as con:  # one transaction: all rewritten, or nothing
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for old in old_dirs:
            pairs = [(old.as_uri() + "/", here.as_uri() + "/"), (f"{old}/", f"{here}/")]
            for table, column in PATH_COLUMNS:
                if table not in tables:
                    continue
                for before, after in pairs:
                    con.execute(f"UPDATE {table} SET {column} = ? || substr({column}, ?) "
                                f"WHERE substr({column}, 1, ?) = ?", (after, len(before) + 1, len(before), before))
            con.execute("UPDATE experiment_tags SET value = ? WHERE key = ? AND value = ?",
                        (str(here), STORE_TAG, str(old)))
    if not quiet:
        print(f"mlflow store {here} was made in {', '.join(map(str, old_dirs))}: its artifact paths now point "
              "here", file=sys.stderr)
    return old_dirs
