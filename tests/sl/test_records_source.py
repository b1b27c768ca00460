"""Where records come from: env/param, shared folder, download (fails fast offline); synthetic records only when
asked (``sl_dataset.synthetic``); the records stage's hash, which makes them a dep DVC sees."""

from __future__ import annotations

import io
import json
import tarfile
import time
from pathlib import Path

import pytest
import yaml

from pipeline.engine import replay_dir
from pipeline.params import read_doc, with_overrides
from pipeline.runtime.results import read_run, split_results
from pipeline.sl import records_source as rs
from stages import records, sl_dataset

REFUSED = "http://127.0.0.1:9/koikoi.tar.gz"  # the discard port: connection refused at once


@pytest.fixture
def no_sources(monkeypatch, tmp_path):
    """No env var, no shared folder, and a download that fails."""
    monkeypatch.delenv(rs.ENV_VAR, raising=False)
    monkeypatch.setattr(rs, "default_shared_dir", lambda: tmp_path / "nowhere")
    monkeypatch.setattr(rs, "DOWNLOAD_URL", REFUSED)


def _one_record_dir(d: Path, two_records: Path) -> Path:
    d.mkdir(parents=True)
    (d / "1.json").write_text((two_records / "1.json").read_text())
    return d


def test_env_then_param_then_shared(two_records, tmp_path, monkeypatch, no_sources):
    env_dir = _one_record_dir(tmp_path / "env", two_records)
    param_dir = _one_record_dir(tmp_path / "param", two_records)
    monkeypatch.setenv(rs.ENV_VAR, str(env_dir))
    assert rs.resolve_records(str(param_dir)) == rs.RecordsSource(env_dir.resolve(), "env")
    monkeypatch.delenv(rs.ENV_VAR)
    assert rs.resolve_records(str(param_dir)) == rs.RecordsSource(param_dir.resolve(), "param")
    shared = _one_record_dir(tmp_path / "shared", two_records)
    monkeypatch.setattr(rs, "default_shared_dir", lambda: shared)
    assert rs.resolve_records("").kind == "shared"
    with pytest.raises(FileNotFoundError, match="sl_dataset.records_dir"):
        rs.resolve_records(str(tmp_path / "missing"))


def test_download_fails_fast_without_network(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(rs.RecordsUnavailable):
        rs.download_records(tmp_path / "records", url=REFUSED, timeout=5)
    assert time.monotonic() - t0 < 10
    assert not (tmp_path / "records").exists()


def test_download_extracts_only_the_records(tmp_path, monkeypatch, no_sources):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("KoiKoi-AI-abc/gamerecords_dataset/1.json", b'{"a": 1}'),
                           ("KoiKoi-AI-abc/gamerecords_dataset/notes.txt", b"x"),
                           ("KoiKoi-AI-abc/koikoigame.py", b"print()")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tarball = tmp_path / "repo.tar.gz"
    tarball.write_bytes(buf.getvalue())
    monkeypatch.setattr(rs, "DOWNLOAD_URL", tarball.as_uri())
    src = rs.resolve_records("", cache_dir=tmp_path / "data")
    assert src.kind == "download" and src.path == tmp_path / "data" / "records"
    assert sorted(p.name for p in src.path.iterdir()) == [".gitignore", "1.json"]
    assert rs.resolve_records("", cache_dir=tmp_path / "data").kind == "download"  # reused, not fetched again


def _params(tmp_path: Path, **overrides) -> None:
    doc = with_overrides(read_doc(Path(__file__).parents[2] / "params.yaml"), {
        "sl_dataset.records_dir": "", "sl_dataset.val_fraction": 0.25, "sl_dataset.seed": 3,
        "sl_dataset.synthetic_games": 4, **{f"sl_dataset.{k}": v for k, v in overrides.items()}})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(doc))


def test_no_human_records_is_refused_never_a_silent_fallback(tmp_path, monkeypatch, no_sources, capsys):
    monkeypatch.chdir(tmp_path)
    _params(tmp_path)
    with pytest.raises(rs.NoHumanRecords, match="sl_dataset.synthetic: true"):
        rs.resolve_records("", cache_dir=tmp_path / "data")
    for stage, argv in ((records, ["results/records/source.json"]), (sl_dataset, ["data/sl", "results/sl_dataset"])):
        with pytest.raises(SystemExit) as e:
            stage.main(argv)
        assert e.value.code == 2  # a usage error, in one line naming the param
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"{stage.STAGE}: error: no human game records found") and "sl_dataset.synthetic" \
            in err[-1]
    assert not (tmp_path / "data/sl").exists() and not (tmp_path / "data/records_synthetic").exists()


def test_synthetic_records_when_asked_are_recorded_as_such(tmp_path, monkeypatch, no_sources, capsys):
    monkeypatch.chdir(tmp_path)
    _params(tmp_path, synthetic=True)
    records.main(["results/records/source.json"])
    assert json.loads((tmp_path / "results/records/source.json").read_text()) == {"kind": "synthetic"}
    sl_dataset.main(["data/sl", "results/sl_dataset", "--source", "results/records/source.json"])
    metrics = json.loads((tmp_path / "results/sl_dataset/metrics.json").read_text())
    assert split_results(metrics) == (metrics, {})  # numbers only
    run = read_run(tmp_path / "results/sl_dataset")
    assert run["source"] == "synthetic" and run["human_records"] is False and run["val_games"] == 1
    assert metrics["games"] == 4 and metrics["samples"] > 0
    assert "SELF-PLAY" in capsys.readouterr().err
    report = replay_dir(tmp_path / "data/records_synthetic")
    assert report.games == 4 and not report.mismatches and not report.errors
    assert json.loads((tmp_path / "data/sl/info.json").read_text())["source"] == "synthetic"


def test_the_records_stage_hashes_the_records_wherever_they_lie(tmp_path, monkeypatch, no_sources, two_records):
    monkeypatch.chdir(tmp_path)
    _params(tmp_path)
    a = tmp_path / "a"
    a.mkdir()
    for f in ("1.json", "2.json"):
        (a / f).write_text((two_records / f).read_text())
    b = tmp_path / "b"
    b.mkdir()
    (b / "1.json").write_text((two_records / "1.json").read_text())
    out = tmp_path / "results/records/source.json"

    def source(where: Path) -> dict:
        monkeypatch.setenv(rs.ENV_VAR, str(where))
        records.main([str(out)])
        return json.loads(out.read_text())

    first = source(a)
    assert first["kind"] == "human" and first["files"] == 2 and str(a) not in out.read_text()  # no path in it
    assert source(b)["files"] == 1  # other records: another file, so DVC runs sl_dataset again
    (b / "2.json").write_text((two_records / "2.json").read_text())
    assert source(b) == first  # the same records elsewhere: the same file, nothing to rerun
    # records that change between the records stage and sl_dataset are refused
    (b / "2.json").write_text((two_records / "1.json").read_text())
    with pytest.raises(SystemExit) as e:
        sl_dataset.main(["data/sl", "results/sl_dataset", "--source", str(out)])
    assert "changed since the records stage ran" in str(e.value.code)


def test_the_records_stage_refuses_a_variable_naming_another_folder_than_the_param(tmp_path, monkeypatch, no_sources,
                                                                                  two_records, capsys):
    # dvc.yaml tracks the param's folder: records read from elsewhere would leave `dvc status` blind to them
    monkeypatch.chdir(tmp_path)
    a, b = _one_record_dir(tmp_path / "a", two_records), _one_record_dir(tmp_path / "b", two_records)
    _params(tmp_path, records_dir=str(a))
    monkeypatch.setenv(rs.ENV_VAR, str(b))
    with pytest.raises(SystemExit) as e:
        records.main(["results/records/source.json"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "set sl_dataset.records_dir instead" in err
    assert not (tmp_path / "results/records/source.json").exists()
    monkeypatch.setenv(rs.ENV_VAR, str(a))  # the same folder: fine
    records.main(["results/records/source.json"])
    assert json.loads((tmp_path / "results/records/source.json").read_text())["files"] == 1
