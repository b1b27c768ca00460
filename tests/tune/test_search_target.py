"""The search target: a study over a searcher's options (k, deals, z, rollout), each trial a duel against an
opponent on the same deals; its space's checks, its first trial (the knobs it starts from), the command, the stage
and the MLflow runs. Tiny untrained models, the point reward (no win-probability table), 2 games of 1 round."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
import yaml
from tiny import copy_store, save_tiny

from pipeline.cli import main
from pipeline.params import ParamError, load_params, overridden, params_with, read_doc, with_overrides
from pipeline.search.spec import parse_search
from pipeline.tune import runs
from pipeline.tune import study_report as report
from pipeline.tune.search_space import first_trial, search_space, trial_spec
from pipeline.tune.space import merged_space, sample
from pipeline.tune.study import run_tune

ROOT = Path(__file__).resolve().parents[2]
TINY_SPACE = {"k": [2, 0], "deals": {"low": 2, "high": 4}}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[str, str]:
    """A tiny searched model and a tiny opponent (other weights)."""
    d = tmp_path_factory.mktemp("search-models")
    return str(save_tiny(d / "wp")), str(save_tiny(d / "sl", seed=1))


@pytest.fixture
def mlflow_store(tmp_path, empty_store, monkeypatch) -> str:
    uri = copy_store(empty_store, tmp_path / "mlflow.db")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


def search_overrides(models: tuple[str, str], tmp_path: Path, workers: int, trials: int = 2) -> dict:
    """params.yaml overrides of a tiny search study: 2 games of 1 round a trial, fp32, the point reward."""
    model, opponent = models
    return {"tune.target": "search", "tune.trials": trials, "tune.startup_trials": 1,
            "tune.storage": f"sqlite:///{tmp_path}/optuna.db",
            "tune.search": {"model": model, "opponent": opponent, "games": 2, "seed": 7, "rollout": None,
                            "options": "reward=point", "workers": workers},
            "tune.space": {"search": TINY_SPACE}, "duels.inference": "fp32", "duels.rounds": 1}


def _trial_runs(parent_run_id: str) -> list:
    import mlflow

    client = mlflow.MlflowClient()
    exp = client.get_run(parent_run_id).info.experiment_id
    return client.search_runs([exp], f"tags.mlflow.parentRunId = '{parent_run_id}'")


@pytest.mark.slow
def test_koikoi_tune_search_duels_each_trial_and_logs_it(tmp_path, models, mlflow_store, capsys):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"),
                                                    search_overrides(models, tmp_path, workers=0))))
    out = tmp_path / "results"
    assert main(["tune", "--target", "search", "--params", str(params), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    summary = json.loads(printed.strip().splitlines()[-1])
    assert summary["target"] == "search" and summary["trials_complete"] == 2
    assert summary["budget"] == {"model": models[0], "opponent": models[1], "games": 2, "seed": 7}
    # the best as a duels.search.options string that plays what the best trial played
    best = yaml.safe_load((out / "search" / report.BEST_FILE).read_text())
    options = best["duels"]["search"]["options"]
    assert summary["best_spec"] == f"search:{models[0]}?{options}"
    model, played = parse_search(summary["best_spec"])
    assert model == models[0] and played.reward == "point" and played.k in (2, 0) and 2 <= played.deals <= 4
    # confirmed on the first deals after the trials' (seeds 7 and on; 2 games: one deal)
    assert f"koikoi duel '{summary['best_spec']}' {models[1]} --games 2000 --seed 8 --rounds 1" in printed

    trials = _trial_runs(summary["mlflow_parent_run_id"])
    assert len(trials) == 2
    for r in trials:
        m, p = r.data.metrics, r.data.params
        assert r.data.tags[runs.STATE_TAG] == "COMPLETE" and r.info.status == "FINISHED"
        assert m["duel/win_rate"] == m["optuna/value"] and m["duel/games"] == 2
        assert 0.0 <= m["duel/ci95_low"] <= m["duel/win_rate"] <= m["duel/ci95_high"] <= 1.0
        assert m["search/seconds_per_search"] > 0 and m["search/searched_per_game"] > 0
        assert (p["seed"], p["games"], p["opponent"]) == ("7", "2", models[1])  # every trial the same deals
        assert p["agent"] == f"search:{models[0]}?{p['search.options']}" and {"k", "deals", "z"} <= set(p)
        assert parse_search(p["agent"])[1].deals == int(p["deals"])

    # --apply merges the options into duels.search.options, saying the pick flatters the best
    assert main(["tune", "--apply", "--study", "search", "--params", str(params), "--out", str(out)]) == 0
    assert load_params(params).duels.search.options == options
    assert "that pick flatters its win rate there; confirm it on fresh deals: koikoi duel" in capsys.readouterr().err


@pytest.mark.slow
def test_the_tune_stage_runs_a_search_study(tmp_path, models, mlflow_store, monkeypatch, capsys):
    """``make tune`` with ``tune.target: search`` (the stage's script, in a project of its own), the duels on a
    worker process as the lead runs them: every trial on the one pool, stopped when the study ends."""
    from pipeline.duel import runner
    from stages import tune as stage

    pools = []
    make = runner.make_executor

    def tracked(*args, **kwargs):
        pools.append(make(*args, **kwargs))
        closed = pools[-1].close
        pools[-1].close = lambda: (closed(), setattr(pools[-1], "stopped", True))
        return pools[-1]

    monkeypatch.setattr(runner, "make_executor", tracked)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(with_overrides(
        read_doc(ROOT / "params.yaml"), search_overrides(models, tmp_path, workers=1, trials=2))))
    monkeypatch.chdir(tmp_path)
    stage.main(["results/tune"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["target"] == "search" and summary["trials_complete"] == 2
    assert len(pools) == 1 and getattr(pools[0], "stopped", False)
    assert (tmp_path / "results/tune/search" / report.BEST_FILE).is_file()
    assert summary["best_duel"]["games"] == 2 and summary["best_duel"]["seconds_per_search"] > 0


def test_every_trial_duels_on_the_same_deals(tmp_path, models, mlflow_store, monkeypatch):
    """The duel of each trial gets the study's seed and games, whatever the trial: only the knobs differ."""
    from pipeline.duel import runner
    from pipeline.duel.stats import DuelResult
    from pipeline.tune.search_objective import SearchObjective

    calls = []

    def fake_duel(a, b, games, seed, *args, **kwargs):
        calls.append((a.name, b.name, games, seed))
        return DuelResult(games=games, wins=games // 2, losses=games - games // 2)

    monkeypatch.setattr(runner, "duel_agents", fake_duel)
    p = params_with(search_overrides(models, tmp_path, workers=0, trials=3))
    space = merged_space("search", p.tune.space["search"], rollout=p.tune.search.rollout)
    summary = run_tune(p.tune, SearchObjective(p.tune.search, p.duels, space), tmp_path / "out", progress=False)
    assert summary["trials_complete"] == 3 and summary["best_value"] == 0.5
    assert [c[2:] for c in calls] == [(2, 7)] * 3  # the same games and first deal seed
    assert len({c[0] for c in calls}) > 1 and {c[1] for c in calls} == {models[1]}  # the searchers differ


def test_the_first_trial_plays_the_knobs_the_study_starts_from(tmp_path, mlflow_store):
    space = search_space(rollout="models/rollout")
    first = first_trial(space, "reward=point")
    assert first == {"k": 4, "deals": 32, "z": 2.0, "rollout": "own"}  # the spec parser's defaults
    assert trial_spec("m", "reward=point", first)[0] == "search:m?k=4&deals=32&z=2&rollout=own&reward=point"
    assert first_trial(search_space({"deals": {"low": 2, "high": 4}}), "") is None  # 32 deals is not in the space
    assert first_trial(search_space({"decisions": ["koikoi", "discard,pick,koikoi"]}), "")["decisions"] == \
        "discard,pick,koikoi"

    cfg = overridden(load_params(ROOT / "params.yaml").tune, {"target": "search", "trials": 1, "study": "first",
                     "storage": f"sqlite:///{tmp_path}/optuna.db"}, "tune")
    played = []

    def objective(trial: optuna.Trial, run_id: str) -> float:
        played.append(sample(trial, space))
        return 0.5

    run_tune(cfg, objective, tmp_path / "out", progress=False, first=first)
    run_tune(cfg, objective, tmp_path / "out", progress=False, first=first)  # resumed: not played again
    assert played[0] == first and played[1] != first


@pytest.mark.parametrize("space, message", [
    ({"k": {"low": 0, "high": 4}}, "tune.space.search.k: a range from 0 to 4 takes in k=1"),
    ({"k": [1, 2]}, "tune.space.search.k[0]: search option k='1': must be 0"),
    ({"deals": {"low": 0, "high": 64, "log": True}}, "tune.space.search.deals: a log range needs low > 0"),
    ({"deals": {"low": 8.5, "high": 64}}, "tune.space.search.deals.low must be an integer, got 8.5"),
    ({"deals": {"low": 8, "hi": 64}}, "tune.space.search.deals: a range needs low and high"),
    ({"z": {"low": 4, "high": 0.5}}, "tune.space.search.z: low 4.0 > high 0.5"),
    ({"z": {"low": 0, "high": 4}}, "tune.space.search.z.low: search option z='0': must be a number > 0"),
    ({"z": {"low": 0.5, "high": 4, "log": True, "step": 0.5}}, "tune.space.search.z: a range has log or step"),
    ({"rollout": []}, "tune.space.search.rollout is an empty list of choices"),
    ({"rollout": {"low": 1, "high": 2}}, "tune.space.search.rollout is a range, but rollout takes a list"),
    ({"reward": "points"}, "tune.space.search.reward: search option reward='points': must be wp or point"),
    ({"think": [1]}, "tune.space.search.think names no search option; use deals, k, z"),
])
def test_a_bad_space_is_one_line_naming_its_entry(space, message):
    with pytest.raises(ParamError, match="^my-params.yaml: " + message.replace("[", r"\[").replace("]", r"\]")) as e:
        merged_space("search", space, source="my-params.yaml")
    assert "\n" not in str(e.value)


def test_the_defaults_space_and_its_samples_are_specs_the_loader_takes():
    space = merged_space("search", rollout="models/rollout")
    assert space == {"k": [2, 3, 4, 6, 0], "deals": {"low": 8, "high": 64, "log": True},
                     "z": {"low": 0.5, "high": 4.0, "log": True}, "rollout": ["own", "self", "models/rollout"]}
    assert merged_space("search")["rollout"] == ["own", "self"]  # no other rollout model: the model's own, or self
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(30):
        trial = study.ask()
        spec, _ = trial_spec("models/rl/wp", "decisions=discard,koikoi", sample(trial, space))
        model, options = parse_search(spec)
        assert model == "models/rl/wp" and options.decisions == (0, 2) and 8 <= options.deals <= 64
        study.tell(trial, 0.0)


@pytest.mark.parametrize("over, message", [
    ({"tune.search.options": "k=3"}, "tune.search.options must not name k, which the study samples"),
    ({"tune.search.options": "deals=-1"}, "tune.search.options is not valid: search option deals='-1'"),
    ({"tune.search.games": 3}, "tune.search.games must be even"),
    ({"tune.space": {"searc": {}}}, "tune.space.searc"),
])
def test_bad_search_params_are_one_line(over, message):
    with pytest.raises(ParamError, match=message):
        params_with(over)


def test_a_missing_rollout_model_or_model_stops_before_any_trial(tmp_path, models, capsys, mlflow_store):
    params = tmp_path / "params.yaml"
    over = search_overrides(models, tmp_path, workers=0)
    over["tune.search"] = {**over["tune.search"], "rollout": str(tmp_path / "nothing")}
    params.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), over)))
    assert main(["tune", "--params", str(params), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"no rollout model at {tmp_path / 'nothing'}" in err and len(err.splitlines()) == 1
    over["tune.search"] = {**over["tune.search"], "rollout": None, "model": str(tmp_path / "none")}
    params.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), over)))
    assert main(["tune", "--params", str(params), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "tune.search.model" in err and "holds no saved model" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "optuna.db").exists()  # no study was opened
