"""Resuming a run, shared by SL, RL and tuning (``tracking.resume``): fingerprints, resume points, run continuation."""

from __future__ import annotations

from pipeline.runtime.fingerprints import fingerprint
from pipeline.tracking.resume import continuable_run, resume_point


def test_fingerprint_ignores_the_skipped_keys_and_the_key_order():
    base = fingerprint({"lr": 0.1, "width": 16, "loops": 3}, skip=("loops",))
    assert base == fingerprint({"loops": 9, "width": 16, "lr": 0.1}, skip=("loops",))
    assert base != fingerprint({"lr": 0.2, "width": 16, "loops": 3}, skip=("loops",))
    assert len(base) == 16


def _load(path, who):
    return {"fp": path.read_text(), "loop": 2}


def test_resume_point_returns_a_matching_checkpoint_and_sets_a_stale_one_aside(tmp_path, capsys):
    path = tmp_path / "state.pt"
    assert resume_point(path, "aaa", "who", lambda c: c["fp"], _load) is None  # none yet
    path.write_text("aaa")
    assert resume_point(path, "aaa", "who", lambda c: c["fp"], _load) == {"fp": "aaa", "loop": 2}
    assert resume_point(path, "aaa", "who", lambda c: c["fp"], _load, usable=lambda c: c["loop"] <= 1) is None
    assert not path.exists() and (tmp_path / "stale-aaa.pt").read_text() == "aaa"
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("who: ")
    assert err.endswith("moved to stale-aaa.pt, starting afresh")

    path.write_text("bbb")
    assert resume_point(path, "aaa", "who", lambda c: c["fp"], _load, keep_stale=False) is None
    assert not path.exists() and not (tmp_path / "stale-bbb.pt").exists()
    path.write_text("ccc")  # unreadable: the loader said so and gave None; the file is the loader's business
    assert resume_point(path, "ccc", "who", lambda c: c["fp"], lambda p, w: None) is None and path.exists()


def test_continuable_run_only_for_a_live_run_of_the_experiment(store, tmp_path):
    import mlflow

    client = mlflow.MlflowClient()
    run = client.create_run(store).info.run_id
    assert continuable_run(run, store) == run and continuable_run(run) == run
    assert continuable_run(None, store) is None and continuable_run("0" * 32, store) is None
    other = client.create_experiment("other", artifact_location=(tmp_path / "other").as_uri())
    assert continuable_run(run, other) is None
    client.delete_run(run)
    assert continuable_run(run, store) is None


def test_file_fingerprint_follows_the_bytes(tmp_path):
    from pipeline.runtime.fingerprints import file_fingerprint

    path = tmp_path / "model.pt"
    assert file_fingerprint(path) == "-"
    path.write_bytes(b"a")
    first = file_fingerprint(path)
    path.write_bytes(b"b")
    assert len(first) == 16 and file_fingerprint(path) != first
