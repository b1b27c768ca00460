"""The play page's rules page says what the engine scores: each yaku row's cards make that yaku with the points
the row gives (after a koi-koi too), and the koi-koi bonus is the engine's."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.engine.cards import mask_of
from pipeline.engine.scoring import MAX_KOIKOI, score_mask, with_bonus

RULES = Path(__file__).resolve().parents[2] / "pipeline/play/static/rules.html"


def _rows(text: str) -> list[dict[str, str]]:
    """The ``data-*`` attributes of each yaku row."""
    tags = re.findall(r"<tr ([^>]*data-yaku[^>]*)>", text)
    return [dict(re.findall(r'(data-[\w-]+)="([^"]*)"', tag)) for tag in tags]


def test_every_yaku_row_scores_as_the_engine_scores_it():
    rows = _rows(RULES.read_text())
    names = {r["data-yaku"] for r in rows}
    assert names == {"Five Lights", "Four Lights", "Rainy Four Lights", "Three Lights", "Boar-Deer-Butterfly",
                     "Flower Viewing Sake", "Moon Viewing Sake", "Red & Blue Ribbons", "Red Ribbons", "Blue Ribbons",
                     "Tane", "Tan", "Kasu"}
    for row in rows:
        pile = mask_of([tuple(map(int, c.split(","))) for c in row["data-cards"].split()])
        name = row["data-yaku"]
        assert dict(score_mask(pile).yaku).get(name) == int(row["data-points"]), name
        after = int(row.get("data-koikoi-points", row["data-points"]))
        assert dict(score_mask(pile, 1).yaku).get(name) == after, f"{name} after a koi-koi"


def test_the_koikoi_bonus_and_the_example_are_the_engines():
    text = RULES.read_text()
    bonus = re.search(r"<th>bonus</th>(.*?)</tr>", text)[1]
    cells = re.findall(r"<td>([^<]*)</td>", bonus)
    assert len(cells) == MAX_KOIKOI
    for n, cell in enumerate(cells, start=1):
        expected = with_bonus(10, n)
        assert (10 + int(cell[1:]) if cell.startswith("+") else 10 * int(cell[1:])) == expected, cell
    assert score_mask(mask_of([(8, 1), (9, 1)])).points == 1  # "a Moon Viewing Sake stopped at once is 1 point"
    assert score_mask(mask_of([(8, 1), (9, 1)]), 1).points == 4  # "after one koi-koi it is 3, plus the bonus of 1: 4"
    assert "after one koi-koi it is 3, plus the bonus of 1: 4" in " ".join(text.split())
