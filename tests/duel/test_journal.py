"""``koikoi duel --journal``: a killed duel goes on where it stopped, and counts as the duel played straight."""

import json
import math
import statistics

import pytest
from tiny import TINY

from pipeline.cli import main
from pipeline.duel import runner
from pipeline.duel.journal import DuelJournal
from pipeline.duel.stats import DuelResult

HEADER = {"a": "A", "b": "B", "seed": 5, "rounds": 3, "points": 30, "inference": ["fp32", "fp32"]}


def specs(*seeds: int) -> list:
    import torch

    from pipeline.net.model import KoiKoiNet
    from pipeline.selfplay.policies import NetSpec

    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        out.append(NetSpec.from_net(KoiKoiNet(TINY).eval(), str(seed)))
    return out


def totals(r) -> tuple:
    return r.games, r.wins, r.losses, r.draws, r.points


def test_a_journal_cut_short_resumes_to_the_straight_duel(tmp_path):
    a, b = specs(0, 1)
    kw = dict(seed=5, num_rounds=3, workers=0, inference="fp32")
    straight = runner.play_model_duel(a, b, 8, **kw)
    path = tmp_path / "duel.jsonl"
    journalled = runner.play_model_duel(a, b, 8, journal=DuelJournal(path, HEADER, block=2), **kw)
    assert totals(journalled) == totals(straight) and journalled.pairs == straight.pairs
    header, first, second = path.read_text().splitlines()
    assert [json.loads(x)["block"] for x in (first, second)] == [5, 7]

    path.write_text(f"{header}\n{first}\n{second[:17]}")  # killed while writing the second block
    journal = DuelJournal(path, HEADER, block=2)  # 4 deals: two blocks of 2
    assert list(journal.done) == [5] and path.read_text() == f"{header}\n{first}\n"
    assert totals(runner.play_model_duel(a, b, 8, journal=journal, **kw)) == totals(straight)
    assert len(path.read_text().splitlines()) == 3

    # every block is in the journal: nothing is played, so other players change nothing
    c, d = specs(2, 3)
    assert totals(runner.play_model_duel(c, d, 8, journal=DuelJournal(path, HEADER, block=2), **kw)) == totals(straight)
    # a longer duel of the same options counts the blocks played already and plays the rest
    longer = runner.play_model_duel(a, b, 12, journal=DuelJournal(path, HEADER, block=2), **kw)
    assert totals(longer) == totals(runner.play_model_duel(a, b, 12, **kw))


@pytest.mark.parametrize("field, value", [("seed", 6), ("a", "C"), ("inference", ["bf16", "fp32"])])
def test_a_journal_of_another_duel_is_refused_not_overwritten(tmp_path, field, value):
    path = tmp_path / "duel.jsonl"
    journal = DuelJournal(path, HEADER)
    assert not path.exists()  # nothing until a block ends
    journal.record(5, DuelResult(games=2, wins=1, losses=1), {})
    before = path.read_text()
    with pytest.raises(ValueError, match=f"{path}: journal of another duel: {field} is"):
        DuelJournal(path, {**HEADER, field: value})
    assert path.read_text() == before


def test_the_command_names_the_journal_in_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("shopping list\n")
    assert main(["duel", "heuristic", "random", "--games", "2", "--journal", str(tmp_path / "j.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "koikoi duel: error: --journal: only a duel with a model or search agent on --workers >= 1 keeps one"
    assert not (tmp_path / "j.jsonl").exists()

    model = tmp_path / "tiny"
    from tiny import save_tiny

    save_tiny(model)
    argv = ["duel", str(model), str(model), "--games", "2", "--rounds", "1", "--workers", "1"]
    assert main([*argv, "--journal", str(tmp_path / "notes.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    notes = tmp_path / "notes.txt"
    assert err[-1] == f"koikoi duel: error: --journal {notes}: not a duel journal (its first line is not JSON)"
    assert (tmp_path / "notes.txt").read_text() == "shopping list\n"


def test_paired_difference_is_the_mean_of_the_shared_blocks_differences():
    from pipeline.duel.stats import paired_difference

    mine = {0: DuelResult(games=4, wins=3, losses=1), 2: DuelResult(games=4, wins=2, draws=2),
            4: DuelResult(games=4, wins=4), 6: DuelResult(games=2, wins=2)}
    other = {0: DuelResult(games=4, wins=1, losses=3), 2: DuelResult(games=4, wins=2, losses=2),
             4: DuelResult(games=4, wins=3, losses=1), 6: DuelResult(games=4, wins=0, losses=4), 8: DuelResult(games=4)}
    out = paired_difference(mine, other)  # blocks 0, 2 and 4: 6 has other games, 8 is not mine
    diffs = [0.5, 0.25, 0.25]
    half = 4.302652729911275 * statistics.stdev(diffs) / len(diffs) ** 0.5  # Student's t(2), not the normal 1.96
    assert (out["blocks"], out["games"], out["minus"]) == (3, 12, round(statistics.fmean(diffs), 4))
    assert out["ci95"] == [round(statistics.fmean(diffs) - half, 4), round(statistics.fmean(diffs) + half, 4)]
    assert paired_difference(mine, {0: other[0]})["minus"] is None  # one block: no interval


def test_a_mean_over_ten_blocks_has_a_t9_interval():
    from pipeline.duel.stats import mean_ci

    x = [0.01 * i for i in range(10)]
    mean, half = mean_ci(x)
    assert mean == pytest.approx(0.045)
    assert half == pytest.approx(2.262 * statistics.stdev(x) / 10 ** 0.5, rel=1e-3)  # t(9) = 2.262, not 1.96
    assert mean_ci(x * 100)[1] == pytest.approx(1.962 * statistics.stdev(x * 100) / 1000 ** 0.5, rel=1e-3)
    assert math.isnan(mean_ci([0.3])[1])


def test_the_command_pairs_a_duel_with_another_agents_on_the_same_deals(tmp_path, monkeypatch, capsys):
    from tiny import save_tiny

    monkeypatch.setattr(runner, "JOURNAL_BLOCK", 2)  # 4 deals: two blocks of 2
    b, a1, a2 = (str(save_tiny(tmp_path / f"m{i}", seed=i)) for i in range(3))
    argv = ["--games", "8", "--rounds", "1", "--seed", "9", "--workers", "1"]
    first, second = tmp_path / "a1.jsonl", tmp_path / "a2.jsonl"
    assert main(["duel", a2, b, *argv, "--paired", str(first)]) == 2  # nothing to pair by
    err = capsys.readouterr().err.strip()
    assert err.endswith("--paired needs --journal: the comparison is by the journals' blocks")
    assert main(["duel", a1, b, *argv, "--journal", str(first)]) == 0
    assert main(["duel", a2, b, *argv[:-2], "--seed", "10", "--workers", "1", "--journal", str(tmp_path / "x.jsonl"),
                 "--paired", str(first)]) == 2  # other deals
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"koikoi duel: error: --paired {first}: journal of another duel: seed is 9 there")
    capsys.readouterr()
    assert main(["duel", a2, b, *argv, "--journal", str(second), "--paired", str(first)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = [[json.loads(x) for x in p.read_text().splitlines()[1:]] for p in (second, first)]
    diffs = [(r["wins"] + r["draws"] / 2 - q["wins"] - q["draws"] / 2) / r["games"] for r, q in zip(*rows)]
    paired = out["paired"][str(first)]
    assert (paired["a"], paired["blocks"], paired["games"]) == (a1, 2, 8)
    assert paired["minus"] == round(statistics.fmean(diffs), 4)


def test_a_sequential_duel_resumes_from_its_journal_to_the_same_decision(tmp_path, monkeypatch):
    from pipeline.duel.sprt import Sprt

    monkeypatch.setattr(runner, "SPRT_BLOCK", 2)  # looks every 2 deals, jobs of up to 4 blocks
    monkeypatch.setattr(runner, "SPRT_JOB", 8)
    a, b = specs(0, 1)
    kw = dict(seed=5, num_rounds=1, workers=0, inference="fp32", sprt=Sprt(0.05, 0.10))  # two equals: H1 soon
    straight = runner.play_model_duel(a, b, 200, **kw)
    assert straight.sprt["decision"] == "H1" and straight.games < 200 and straight.games % 4 == 0
    assert sum(straight.pairs) == straight.games // 2
    path = tmp_path / "sprt.jsonl"
    journalled = runner.play_model_duel(a, b, 200, journal=DuelJournal(path, HEADER, block=2), **kw)
    assert (totals(journalled), journalled.sprt) == (totals(straight), straight.sprt)
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["block"] == 2 and len(lines) - 1 >= straight.games // 4  # a job may play past it
    path.write_text("\n".join(lines[:3]) + "\n")  # killed after two blocks
    resumed = runner.play_model_duel(a, b, 200, journal=DuelJournal(path, HEADER, block=2), **kw)
    assert (totals(resumed), resumed.sprt, resumed.pairs) == (totals(straight), straight.sprt, straight.pairs)
    # run again whole: nothing is played, the journal decides as it did
    c, d = specs(2, 3)
    again = runner.play_model_duel(c, d, 200, journal=DuelJournal(path, HEADER, block=2), **kw)
    assert (totals(again), again.sprt) == (totals(straight), straight.sprt)


def test_a_journal_from_before_the_pairs_is_refused_in_one_line(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"journal": "koikoi duel", **HEADER, "block": 100}) + "\n"
                    + json.dumps({"block": 5, "games": 200, "wins": 100, "losses": 100, "draws": 0, "points": 0,
                                  "seconds": 1.0, "stats": {}}) + "\n")
    before = path.read_text()
    with pytest.raises(ValueError, match=f"^{path}: a duel journal written before duels counted pairs"):
        DuelJournal(path, HEADER)
    assert path.read_text() == before
