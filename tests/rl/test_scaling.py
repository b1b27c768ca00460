"""``koikoi scale``: one run trained through budgets, each dueled against SL, resumable."""

from __future__ import annotations

import json

import pytest

from pipeline.params import parse_params


def test_scaling_study_trains_through_budgets_duels_each_and_resumes(project, params, monkeypatch):
    from pipeline.rl import scaling
    from pipeline.rl.scaling import StudyConfig, run_study

    params["rl"]["algorithm"] = "advantage"
    out = project / "study"
    cfg = StudyConfig("point", (4, 8), out, duel_games=4, duel_seed=5, workers=0, bench=None, progress=False,
                      mlflow=True, taus=(2.0,))
    study = run_study(parse_params(params), cfg)
    assert [r["games"] for r in study["rows"]] == [4, 8]
    assert all(r["duel_games"] == 4 and 0 <= r["win_rate"] <= 1 for r in study["rows"])
    assert study["discard_only"]["games"] == 8 and study["discard_only"]["tau"] in (0.5, 2.0)
    assert json.loads((out / "discard-only/config.json").read_text())["meta"]["anchored"]["decisions"] == ["discard"]
    assert [(t["games"], t["tau"]) for t in study["taus"]] == [(8, 2.0)]
    assert json.loads((out / "tau-2/config.json").read_text())["meta"]["anchored"]["tau"] == 2.0
    assert (out / "curve.png").stat().st_size > 0 and json.loads((out / "study.json").read_text()) == study
    # the second budget continued the first's run: 8 games in all, not 4 + 8
    assert json.loads((out / "training-results/run.json").read_text())["games"] == 8

    # started again: nothing is trained or dueled anew
    monkeypatch.setattr(scaling.PhaseRunner, "run", lambda self: pytest.fail("trained again"))
    monkeypatch.setattr(scaling, "_duel", lambda *a: pytest.fail("dueled again"))
    assert run_study(parse_params(params), cfg)["rows"] == study["rows"]


def test_budgets_must_be_ascending_multiples_of_a_loop():
    from pipeline.rl.scaling import check_budgets

    check_budgets((500, 1000), 500)
    for bad in ((1000, 500), (500, 750), ()):
        with pytest.raises(ValueError):
            check_budgets(bad, 500)


def test_scale_refuses_a_cuda_device_torch_cannot_see(tmp_path, capsys):
    import torch

    from pipeline.cli import main

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    assert main(["scale", "--budgets", "4", "--out", str(tmp_path / "s"), "--device", "cuda",
                 "-S", "games_per_loop=4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--device is cuda but torch sees no CUDA GPU" in err[0]
    assert not (tmp_path / "s").exists()
