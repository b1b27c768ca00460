"""The duels stage's ratings file read back (by the play server), without heavy imports."""

import json
from pathlib import Path

RATINGS = "results/duels/ratings.json"
FIELDS = ("elo", "elo_lo", "elo_hi")


def read_ratings(root: Path) -> tuple[str | None, dict[str, dict[str, float]]]:
    """The anchor's key and ``{key: {"elo", "elo_lo", "elo_hi"}}``; ``(None, {})`` without a readable file."""
    try:
        doc = json.loads((root / RATINGS).read_text(encoding="utf-8"))
        table = {k: {f: float(v.get(f, v["elo"])) for f in FIELDS} for k, v in doc["ratings"].items()}
        return str(doc.get("anchor", "")), table
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, {}
