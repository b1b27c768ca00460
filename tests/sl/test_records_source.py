"""Where records come from (issue 69): one rule for $KOIKOI_RECORDS and sl_dataset.records_dir; a folder that is
there copied as it is into data/records; an absent one fetched from sl_dataset.records_git (a local git repository
stands in for GitHub), its hash checked; synthetic records only when asked; the records stage's description, which
sl_dataset checks, and its --changed check for records that change outside the project."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from records_repo import git, records_repo
from tiny import free_port

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
    assert e.value.code == records.CHANGED == 3 and "running the stage again" in capsys.readouterr().err
    records.main(OUT)
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        records.main([*OUT, "--changed"])
    assert e.value.code == 0
    # an error is neither answer (issue 87: make repro read a crash as "no change"): one line, exit 2 for params
    (project / "params.yaml").write_text("sl_dataset: [not, a, mapping]\n")
    with pytest.raises(SystemExit) as e:
        records.main([*OUT, "--changed"])
    assert e.value.code == 2 and capsys.readouterr().err.startswith("records: error: params.yaml: ")
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


# Issue 87: every bad record source ends in one line naming the param and what to do, within the fetch's time,
# leaving nothing behind; no network needed (local repositories, closed and silent loopback ports, a stand-in ssh).


def _refused(src: dict, dest: Path, timeout_s: float = 60.0) -> tuple[str, float]:
    """What ``fetch_records`` refuses ``src`` with, and the seconds it took; nothing may be left beside ``dest``."""
    t0 = time.monotonic()
    with pytest.raises(RecordsFetchError) as e:
        fetch_records(RecordsGit(**src), dest, timeout_s=timeout_s)
    assert "\n" not in str(e.value)
    assert not [p.name for p in dest.parent.iterdir() if p.name != dest.name]  # no scratch repository
    return str(e.value), time.monotonic() - t0


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never answers (a host that hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def test_a_bad_source_is_one_line_naming_the_param_and_what_to_do(tmp_path, games, monkeypatch):
    pinned = records_repo(tmp_path / "repo", games)
    dest = tmp_path / "data/records"
    nowhere = (tmp_path / "nowhere").as_uri()
    said, _ = _refused({**pinned, "url": nowhere}, dest)
    # git's first fatal line, not its last ("...and the repository exists."), with the url and what to do
    assert f"sl_dataset.records_git.url {nowhere}: fatal: " in said and "does not appear to be a git repository" in said
    assert said.endswith("check the url, and that this machine can reach it")
    said, _ = _refused({**pinned, "rev": "1" * 40}, dest)
    assert f"sl_dataset.records_git.rev {'1' * 40}" in said and said.endswith("must be a commit of that repository")
    closed = f"http://127.0.0.1:{free_port()}/records.git"
    said, _ = _refused({**pinned, "url": closed}, dest)
    assert f"url {closed}: fatal: unable to access" in said and "check the url" in said
    # ssh: a stand-in that says what ssh says without a key in batch mode, and waits for a prompt otherwise
    fake = tmp_path / "ssh"
    fake.write_text("#!/bin/sh\ncase \"$*\" in *BatchMode=yes*) echo 'git@host: Permission denied (publickey).' >&2;"
                    " exit 255;; esac\nsleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(fake))
    said, _ = _refused({**pinned, "url": "ssh://git@host/records.git"}, dest, timeout_s=30)
    # answered at once, not waited out (that would say "no answer within 30 s")
    assert "git@host: Permission denied (publickey). fatal: Could not read from remote repository." in said


def test_a_hanging_host_is_given_up_within_the_whole_fetchs_time(tmp_path, games, silent_port):
    pinned = records_repo(tmp_path / "repo", games)
    url = f"git://127.0.0.1:{silent_port}/records"
    said, seconds = _refused({**pinned, "url": url}, tmp_path / "data/records", timeout_s=8)
    assert said.startswith(f"fetching sl_dataset.records_git.url {url}: no answer within 8 s for the whole fetch")
    assert said.endswith("check that this machine can reach it") and seconds < 60  # git alone would wait for good


def test_an_old_git_is_named_with_the_version_it_needs(tmp_path, games, monkeypatch):
    pinned = records_repo(tmp_path / "repo", games)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\necho 'git version 2.17.1'\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    said, _ = _refused(pinned, tmp_path / "data/records")
    assert said == ("git version 2.17.1 is too old to fetch sl_dataset.records_git (a partial fetch of one commit "
                    "needs git >= 2.26): install a newer git")


def test_a_killed_fetch_leaves_nothing_for_good(project, games, silent_port):
    """A fetch killed outright (no finally runs) leaves its scratch repository: the next fetch removes it. Offline,
    the stage names the ways round the fetch."""
    pinned = records_repo(project / "repo", games)
    _params(project, records_dir="", records_git={**pinned, "url": f"git://127.0.0.1:{silent_port}/records"})
    proc = subprocess.Popen([sys.executable, "-m", "stages.records", *OUT], cwd=project, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    for _ in range(1200):  # killed in its fetch (the sparse pattern is written just before it), not mid-write
        if list(project.glob("data/.records.git-*/repo/.git/info/sparse-checkout")):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    proc.kill()
    proc.wait()
    assert [p.name.startswith(".records.git-") for p in (project / "data").iterdir()] == [True]
    fetch_records(RecordsGit(**pinned), project / "data/records")
    assert sorted(p.name for p in (project / "data").iterdir()) == ["records"]
    _params(project, records_dir="../no-such-folder", records_git={**pinned, "url": "http://127.0.0.1:9/x.git"})
    shutil.rmtree(project / "data")
    with pytest.raises(SystemExit) as e:
        records.main(OUT)
    said = str(e.value.code)
    assert said.startswith("records: error: fetching sl_dataset.records_git.rev") and "\n" not in said
    folder = (project.parent / "no-such-folder").resolve()
    assert f"put them into {folder} (sl_dataset.records_dir), name a folder of them with $KOIKOI_RECORDS, or set " \
           "sl_dataset.synthetic: true" in said
    assert sorted(p.name for p in (project / "data").iterdir()) == []
