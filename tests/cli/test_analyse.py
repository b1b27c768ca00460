"""``koikoi analyse``: a report and a graph per game, the costliest moves and the accuracies printed, the same
report from the same records, judge and seed; a table over many; one line and exit code 2 for a bad record, player
or judge. The games come from ``koikoi duel --records`` (the docs figure's path, docs/analysis.md)."""

from __future__ import annotations

import json

import pytest
from koikoi_cli import run_cli


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> str:
    """Two two-round games of heuristic against random on one deal, both seatings, from ``koikoi duel``."""
    from pipeline.cli import main

    d = tmp_path_factory.mktemp("duel") / "games"
    assert main(["duel", "heuristic", "random", "--games", "2", "--rounds", "2", "--records", str(d)]) == 0
    return str(d)


def test_a_report_and_a_graph_per_game_the_same_bit_for_bit(records, judge_spec, tmp_path, capsys):
    runs = []
    for out in ("a", "b"):
        code, stdout, _ = run_cli(["analyse", records, "--agent", judge_spec, "--out", str(tmp_path / out)], capsys)
        assert code == 0
        runs.append(stdout)
    assert runs[0] == runs[1] and runs[0].count("accuracy") == 4  # two players in each of the two games
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(f"0-A{k}.{ext}" for k in (1, 2) for ext in ("json", "png"))
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    report = json.loads((tmp_path / "a/0-A1.json").read_text())
    assert report["names"] == ["heuristic", "random"] and set(report["players"]) == {"1", "2"}
    assert report["judge"] == {"deals": 4, "seed": 0, "spec": judge_spec}

    code, _, _ = run_cli(["analyse", f"{records}/0-A1.json", "--agent", judge_spec, "--out", str(tmp_path / "c"),
                          "--player", "2", "--seed", "1", "--format", "svg"], capsys)
    alone = json.loads((tmp_path / "c/0-A1.json").read_text())
    assert code == 0 and set(alone["players"]) == {"2"} and alone["graph"]["perspective"] == 2
    assert (tmp_path / "c/0-A1.svg").read_text().lstrip().startswith("<?xml")
    assert [d["chosen"] for d in alone["decisions"]] == [d["chosen"] for d in report["decisions"] if d["player"] == 2]
    assert [d["options"] for d in alone["decisions"]] != [d["options"] for d in report["decisions"]
                                                          if d["player"] == 2]  # another seed, other deals


def test_a_summary_table_by_player_over_the_records(records, judge_spec, tmp_path, capsys):
    code, stdout, _ = run_cli(["analyse", records, "--agent", judge_spec, "--out", str(tmp_path), "--summary"],
                              capsys)
    lines = stdout.strip().splitlines()
    assert code == 0 and lines[0].startswith("| player | games | decisions | accuracy | blunders / game")
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["heuristic", "random"]
    assert all(line.split("|")[2].strip() == "2" for line in lines[2:])
    assert (tmp_path / "summary.md").read_text().endswith(stdout.strip() + "\n")


def test_bad_records_players_and_judges_are_one_line_and_exit_code_2(records, judge_spec, tmp_path, capsys):
    good = f"{records}/0-A1.json"
    text = open(good).read()
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    rec = json.loads(text)
    rec["record"]["round1"]["turn1"]["discardCard"] = [13, 1]
    (tmp_path / "bad.json").write_text(json.dumps(rec))
    cases = [
        ([str(tmp_path / "cut.json")], "cut.json: not valid JSON"),
        ([str(tmp_path / "bad.json")], "bad.json: field 'record.round1.turn1.discardCard'"),
        ([str(tmp_path / "none.json")], "none.json: no such record file or directory"),
        ([good, "--player", "3"], "argument --player: invalid choice: '3'"),
        ([good, "--agent", "random"], "agent 'random': the judge is a searcher"),
        ([good, "--agent", "search:/nonexistent"], "/nonexistent is not a model directory"),
        ([good, "--agent", judge_spec.replace("deals=4", "deals=x")], "deals='x'"),
    ]
    for argv, words in cases:
        code, stdout, stderr = run_cli(["analyse", *argv, "--out", str(tmp_path / "out"),
                                        *([] if "--agent" in argv else ["--agent", judge_spec])], capsys)
        assert code == 2 and words in stderr and len(stderr.strip().splitlines()) == 1, (argv, stderr)
        assert stdout == ""
    assert not (tmp_path / "out").exists()  # nothing written before the inputs were checked


def test_a_duel_keeps_records_only_in_this_process(tmp_path, capsys):
    code, _, stderr = run_cli(["duel", "heuristic", "random", "--games", "2", "--records", str(tmp_path / "r"),
                               "--journal", str(tmp_path / "j.jsonl")], capsys)
    assert code == 2 and "--records plays the duel in this process" in stderr


def test_the_bench_times_a_whole_game_analysed_for_one_player(judge_spec, capsys):
    code, stdout, _ = run_cli(["bench", "analyse", "--agent", judge_spec, "--repeat", "1", "--player", "2"], capsys)
    out = json.loads(stdout.strip().splitlines()[-1])
    assert code == 0 and out["rounds"] == 8 and out["player"] == 2 and out["deals"] == 4
    assert out["decisions"] > 20 and out["playouts"] > 4 * out["decisions"] and out["page_decisions"] > 20
    assert 0 < out["cpu_s"] and 0 < out["seconds"] <= out["seconds_max"] and out["page_s"] > 0
