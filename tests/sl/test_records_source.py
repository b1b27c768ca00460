"""Where records come from (issue 69): one rule for $KOIKOI_RECORDS and sl_dataset.records_dir; a folder that is
there copied as it is into data/records; an absent one fetched from sl_dataset.records_git (a local git repository
stands in for GitHub), its hash checked; synthetic records only when asked; the records stage's description, which
sl_dataset checks, and its --changed check for records that change outside the project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from records_repo import git, records_repo

from pipeline.engine import replay_dir
from pipeline.engine.records import record_files, records_folder, records_sha256
from pipeline.params import SLDatasetParams, parse_params, read_doc, with_overrides
from pipeline.runtime.results import read_run, split_results
from pipeline.sl import records_source as rs
from pipeline.sl.records_git import RecordsFetchError, RecordsGit, fetch_records
from stages import records, sl_dataset

ROOT = Path(__file__).parents[2]
OUT = ["data/records", "results/records/source.json"]


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> Path:
    """Three engine-written records (heuristic games): no human records needed."""
    d = tmp_path_factory.mktemp("games") / "records"
    rs.synthesize_records(d, 3, seed=5, progress=False)
    return d


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv(rs.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _params(project: Path, **sl_dataset) -> None:
    doc = with_overrides(read_doc(ROOT / "params.yaml"), {
        "sl_dataset.val_fraction": 0.34, "sl_dataset.seed": 3, "sl_dataset.synthetic_games": 4,
        **{f"sl_dataset.{k}": v for k, v in sl_dataset.items()}})
    (project / "params.yaml").write_text(yaml.safe_dump(doc))


def load(doc: dict) -> SLDatasetParams:
    return parse_params(doc).sl_dataset


def _source() -> dict:
    return json.loads(Path(OUT[1]).read_text())


def test_one_rule_the_variable_stands_in_for_the_param(tmp_path, monkeypatch):
    monkeypatch.delenv(rs.ENV_VAR, raising=False)
    named = records_folder("../shared/x", tmp_path / "p")
    assert named == ((tmp_path / "shared/x").resolve(), "sl_dataset.records_dir")
    assert records_folder("", tmp_path) == (None, "sl_dataset.records_dir")  # nothing named: fetched
    monkeypatch.setenv(rs.ENV_VAR, str(tmp_path / "env"))
    assert records_folder("../shared/x", tmp_path) == ((tmp_path / "env").resolve(), "$KOIKOI_RECORDS")


def test_fetch_takes_the_pinned_folder_only_and_checks_its_hash(tmp_path, games):
    pinned = records_repo(tmp_path / "repo", games)
    dest = tmp_path / "data/records"
    files = fetch_records(RecordsGit(**pinned), dest)
    assert [f.name for f in files] == ["1.json", "2.json", "3.json"] == sorted(p.name for p in dest.iterdir())
    assert records_sha256(files) == pinned["sha256"] == records_sha256(record_files(games))
    (tmp_path / "repo/gamerecords_dataset/1.json").write_text("{}")  # a later commit changes nothing pinned
    git("commit", "-qam", "later", cwd=tmp_path / "repo")
    assert records_sha256(fetch_records(RecordsGit(**pinned), dest)) == pinned["sha256"]
    bad = [({**pinned, "sha256": "0" * 64}, "not sl_dataset.records_git.sha256"),
           ({**pinned, "rev": "1" * 40}, "sl_dataset.records_git.rev"),
           ({**pinned, "url": (tmp_path / "nowhere").as_uri()}, "sl_dataset.records_git.url"),
           ({**pinned, "path": "docs"}, "sl_dataset.records_git.path docs holds no *.json")]
    for src, says in bad:
        with pytest.raises(RecordsFetchError, match=says.replace("*", r"\*")) as e:
            fetch_records(RecordsGit(**src), dest)
        assert "\n" not in str(e.value)
        assert records_sha256(record_files(dest)) == pinned["sha256"]  # left as it was
    assert sorted(p.name for p in dest.parent.iterdir()) == ["records"]  # no scratch left behind


def test_an_absent_folder_is_fetched_once_and_a_present_one_copied_as_it_is(project, games, capsys):
    pinned = records_repo(project / "repo", games)
    _params(project, records_dir="../no-such-folder", records_git=pinned)
    records.main(OUT)
    assert _source() == {"kind": "human", "origin": "git", **pinned, "files": 3,
                         "fingerprint": pinned["sha256"][:16]}
    assert "fetched 3 records into data/records" in capsys.readouterr().err
    # run again (a param changed): data/records holds them, nothing is fetched (the repository is gone)
    (project / "repo").rename(project / "gone")
    records.main(OUT)
    assert "holds the records of" in capsys.readouterr().err
    # a folder that is there is used as it is: its records, no path of this machine in the description
    _params(project, records_dir=str(games), records_git=None)
    records.main(OUT)
    assert _source() == {"kind": "human", "origin": "folder", "files": 3, "fingerprint": pinned["sha256"][:16],
                         "sha256": pinned["sha256"]} and str(games) not in Path(OUT[1]).read_text()
    assert records_sha256(record_files("data/records")) == pinned["sha256"]


def test_records_that_cannot_be_had_are_refused_in_one_line(project, capsys, games):
    _params(project, records_dir="../no-such-folder", records_git=None)
    with pytest.raises(SystemExit) as e:
        records.main(OUT)
    assert e.value.code == 2 and "sl_dataset.records_git is null" in capsys.readouterr().err
    pinned = records_repo(project / "repo", games)
    _params(project, records_dir="", records_git={**pinned, "sha256": "f" * 64})
    with pytest.raises(SystemExit) as e:
        records.main(OUT)
    assert "records: error: the records fetched from" in str(e.value.code) and "sha256" in str(e.value.code)
    assert not Path(OUT[0]).exists() and not Path(OUT[1]).exists()


def test_changed_sees_records_that_change_outside_the_project(project, games, monkeypatch, capsys):
    folder = project / "outside"
    rs.synthesize_records(folder, 2, seed=1, progress=False)
    _params(project, records_dir=str(folder))
    p = yaml.safe_load((project / "params.yaml").read_text())
    assert records.changed(load(p), OUT[1]) is None  # never ran: dvc repro runs it anyway
    records.main(OUT)
    assert records.changed(load(p), OUT[1]) is None
    (folder / "3.json").write_text((folder / "1.json").read_text())  # a record added in place
    assert "are not those" in records.changed(load(p), OUT[1])
    with pytest.raises(SystemExit) as e:
        records.main([*OUT, "--changed"])
    assert e.value.code == 0 and "running the stage again" in capsys.readouterr().err
    records.main(OUT)
    with pytest.raises(SystemExit) as e:
        records.main([*OUT, "--changed"])
    assert e.value.code == 1
    monkeypatch.setenv(rs.ENV_VAR, str(games))  # the variable names other records: seen too
    assert "$KOIKOI_RECORDS" in records.changed(load(p), OUT[1])


def test_synthetic_records_when_asked_are_recorded_as_such(project, capsys):
    _params(project, synthetic=True, records_dir="../no-such-folder", records_git=None)
    records.main(OUT)
    assert _source()["kind"] == "synthetic" and _source()["files"] == 4
    assert "SELF-PLAY" in capsys.readouterr().err
    sl_dataset.main(["data/records", "data/sl", "results/sl_dataset", "--source", OUT[1]])
    metrics = json.loads((project / "results/sl_dataset/metrics.json").read_text())
    assert split_results(metrics) == (metrics, {})  # numbers only
    run = read_run(project / "results/sl_dataset")
    assert run["source"] == "synthetic" and run["human_records"] is False and metrics["games"] == 4
    assert run["seconds"] > 0 and run["cpu"].endswith(" cores")  # stages.run_stage: the README's make repro time
    report = replay_dir(project / "data/records")
    assert report.games == 4 and not report.mismatches and not report.errors


def test_sl_dataset_refuses_records_other_than_those_described(project, games):
    _params(project, records_dir=str(games))
    records.main(OUT)
    (project / "data/records/2.json").write_text((games / "1.json").read_text())
    with pytest.raises(SystemExit) as e:
        sl_dataset.main(["data/records", "data/sl", "results/sl_dataset", "--source", OUT[1]])
    assert "changed since the records stage ran" in str(e.value.code)
