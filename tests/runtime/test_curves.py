"""A learning curve's CSV: written atomically, read back with the types written."""

from __future__ import annotations

import math

from pipeline.runtime.curves import read_curve, write_curve


def test_curve_round_trip_keeps_types_and_ignores_other_keys(tmp_path):
    rows = [{"loop": 0, "win_rate": 0.5, "ci_low": 1.0, "note": "x"}, {"loop": 1, "win_rate": float("nan")}]
    path = write_curve(rows, tmp_path / "sub" / "curve.csv", ("loop", "win_rate", "ci_low"))
    assert path.read_text().splitlines()[0] == "loop,win_rate,ci_low"
    back = read_curve(path)
    assert back[0] == {"loop": 0, "win_rate": 0.5, "ci_low": 1.0}
    assert type(back[0]["loop"]) is int and type(back[0]["ci_low"]) is float
    assert math.isnan(back[1]["win_rate"]) and back[1]["ci_low"] == ""  # missing: empty
    assert [p.name for p in path.parent.iterdir()] == ["curve.csv"]  # no temp file left
