import csv
import json
from pathlib import Path

import pytest
import torch

from pipeline.net.modelio import load_model
from pipeline.params import ParamError, parse_params
from pipeline.rl.training import STATE_FILE
from stages.rl_phase import PhasePaths, rl_stage
from stages.winprob import winprob_stage


def _curve(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def _weights(model_dir):
    """Every weight file of a model directory (model.pt), one dict."""
    return {f"{f.name}:{k}": v for f in sorted(model_dir.glob("*.pt")) for k, v in torch.load(f).items()}


CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU (torch.cuda.is_available() is false)")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=CUDA)])
@pytest.mark.parametrize("algorithm", ["mc_dqn", "rollout_pi"])
def test_resume_after_a_kill_continues_and_matches_an_uninterrupted_run(project, params, monkeypatch, algorithm,
                                                                        device):
    from pipeline.rl import training

    params["rl"]["algorithm"] = algorithm
    if device == "cuda":  # the defaults' path: both on the GPU, precisions as the GPU has them, spawned workers
        params["rl"].update(learner_device="cuda", train_precision="auto")
        params["rl"]["selfplay"].update(device="cuda", inference="auto", workers=2)
    straight = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"),
                        progress=False, mlflow=False)  # 2 loops
    w_straight = _weights(project / "models/rl_phase1/point")
    rows_straight = _curve(project / "results/rl_phase1/point/curve.csv")
    state = project / "checkpoints/rl_phase1/point" / STATE_FILE
    state.unlink()

    # kill the run while it trains loop 2
    calls = []
    original_fit = training.fit_pass

    def dying_fit(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original_fit(*args, **kwargs)

    monkeypatch.setattr(training, "fit_pass", dying_fit)
    with pytest.raises(KeyboardInterrupt):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    ck = torch.load(state, weights_only=False)
    assert ck["state"]["loop"] == 1 and len(ck["state"]["curve"]) == 2  # start + loop 1 survived the kill

    # started again: only loop 2 is played, and the result is the uninterrupted run's
    monkeypatch.setattr(training, "fit_pass", original_fit)
    played = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: played.append(job.games[0].seed) or original_play(self, job, desc))
    resumed = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert len(played) == 1 and resumed["loops"] == 2 and resumed["games"] == straight["games"] == 8
    w_resumed = _weights(project / "models/rl_phase1/point")
    assert w_resumed.keys() == w_straight.keys()
    for k in w_straight:
        torch.testing.assert_close(w_resumed[k], w_straight[k])
    rows = _curve(project / "results/rl_phase1/point/curve.csv")

    def untimed(rs):  # the CPU seconds are measured, not computed: the rest is the same bit for bit
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rs]

    assert untimed(rows) == untimed(rows_straight) and [r["loop"] for r in rows] == ["0", "1", "2"]

    # a raised budget continues the finished run from loop 2
    params["rl"]["phase1"]["loops"] = 3
    assert rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"),
                    progress=False, mlflow=False)["loops"] == 3 and len(played) == 2


def test_changed_params_start_afresh(project, params):
    params["rl"]["phase1"]["loops"] = 1
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    params["rl"]["lr"] = 5e-4
    out = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert out["loops"] == 1
    results = PhasePaths.layout(1, "point").results  # numbers in metrics.json, the rest in run.json
    metrics = json.loads((results / "metrics.json").read_text())
    assert set(metrics) == {"global_games", "win_rate", "ci95_low", "ci95_high", "point_diff", "train_seconds"}
    assert json.loads((results / "run.json").read_text())["stop_reason"] == out["stop_reason"]
    assert list((project / "checkpoints/rl_phase1/point").glob("stale-*.pt"))


def test_a_checkpoint_resumes_only_on_the_code_that_wrote_it(project, params, monkeypatch, capfd):
    from pipeline.rl import phase_state, training

    params["rl"]["phase1"]["loops"] = 1
    played = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: played.append(desc) or original_play(self, job, desc))

    def run() -> int:
        played.clear()
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
        return len(played)

    first = run()
    assert first > 0 and run() == 0  # the same code resumes the finished phase: nothing is played again
    monkeypatch.setattr(phase_state, "code_fingerprint", lambda: "another-version")
    assert run() == first  # other code: the checkpoint is set aside and the phase plays again
    assert "starting afresh" in capfd.readouterr().err
    assert list((project / "checkpoints/rl_phase1/point").glob("stale-*.pt"))


def test_the_code_fingerprint_reads_the_result_code_only(tmp_path):
    from pipeline.rl.phase_state import RESULT_CODE, code_fingerprint

    (tmp_path / "rl").mkdir()
    (tmp_path / "play").mkdir()
    (tmp_path / "rl/a.py").write_text("x = 1\n")
    (tmp_path / "sprt.py").write_text("y = 1\n")
    (tmp_path / "play/page.py").write_text("z = 1\n")
    parts = ("rl", "sprt.py")
    before = code_fingerprint(tmp_path, parts)
    (tmp_path / "play/page.py").write_text("z = 2\n")  # not a part
    (tmp_path / "rl/notes.txt").write_text("not code")
    assert code_fingerprint(tmp_path, parts) == before
    for path in ("rl/a.py", "sprt.py"):
        (tmp_path / path).write_text("changed = True\n")
        assert code_fingerprint(tmp_path, parts) != before
        before = code_fingerprint(tmp_path, parts)
    (tmp_path / "rl/b.py").write_text("")  # a new module
    assert code_fingerprint(tmp_path, parts) != before
    assert code_fingerprint() == code_fingerprint()  # stable
    assert all((Path(__file__).parents[2] / "pipeline" / part).exists() for part in RESULT_CODE)  # none renamed


@pytest.mark.slow
def test_end_to_end_winprob_phase1_phase2_with_mlflow(project, params):
    import mlflow

    from pipeline.tracking.store import tracking_uri

    metrics = winprob_stage(parse_params(params).winprob, "models/winprob", "results/winprob", progress=False)
    assert (project / "models/winprob/winprob.json").is_file() and (project / "results/winprob/winprob.png").is_file()
    assert metrics["games"] == 8
    p1 = rl_stage(1, "wp", parse_params(params), PhasePaths.layout(1, "wp"), progress=False)
    assert p1["loops"] == 2 and p1["global_loops"] == 2
    p2 = rl_stage(2, "wp", parse_params(params), PhasePaths.layout(2, "wp"),
                  progress=False, register=True)  # as the rl_phase2 stage does
    assert p2["loops"] == 1 and p2["global_loops"] == 3 and p2["global_games"] == 12
    net, meta = load_model(project / "models/rl/wp")
    assert meta["kind"] == "rl" and meta["variant"] == "wp" and meta["phase"] == 2
    start = json.loads((project / "models/winprob/winprob.json").read_text())
    assert meta["winprob"]["coef"] == start["coef"]  # the winprob stage's table throughout: no refit
    rows = _curve(project / "results/rl/wp/curve.csv")
    assert [int(r["loop"]) for r in rows] == [0, 1, 2, 3] and [int(r["games"]) for r in rows] == [0, 4, 8, 12]
    assert all(0 <= float(r["win_rate"]) <= 1 for r in rows)

    assert tracking_uri().startswith(f"sqlite:///{project}")
    client = mlflow.MlflowClient(tracking_uri())
    exp = client.get_experiment_by_name("rl")
    runs = {r.info.run_name: r for r in client.search_runs([exp.experiment_id])}
    assert {"winprob", "rl-phase1-wp", "rl-phase2-wp"} <= set(runs)
    history = client.get_metric_history(runs["rl-phase2-wp"].info.run_id, "eval/win_rate")
    assert [m.step for m in history] == [3]
    # phase 2 alone registers, and the version holds exactly the weights of models/rl/wp
    assert [m.name for m in client.search_registered_models()] == ["koikoi-rl-wp"]
    from pipeline.tracking.registry import find_version

    assert find_version(project / "models/rl/wp").run_id == runs["rl-phase2-wp"].info.run_id
    assert runs["rl-phase1-wp"].data.params["rl.games_per_loop"] == "4"
    assert runs["rl-phase2-wp"].data.params["device.learner"] == runs["winprob"].data.params["device.play"] == "cpu"


def test_phase2_plays_itself_never_sl_and_its_curve_goes_on_against_sl_and_phase1(project, params, monkeypatch):
    from pipeline.rl import training

    params["rl"]["algorithm"] = params["rl"]["phase2"]["algorithm"] = "rollout_pi"  # SL rides along as the prior
    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["phase2"].update(loops={"point": 2, "wp": 2})
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    jobs = []
    original_play = training.PhaseRunner.play
    monkeypatch.setattr(training.PhaseRunner, "play",
                        lambda self, job, desc: jobs.append(job) or original_play(self, job, desc))
    out = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    assert out["games"] == 8 and out["global_games"] == 12 and len(jobs) == 2
    run = json.loads((project / "results/rl/point/run.json").read_text())
    assert run["games"] == 8 and run["eval_games"] == 4  # phase 2's own final evaluation, on its model
    assert all({job.players[i].name for g in job.games for i in g.seats} == {"learner"} for job in jobs)
    assert all(g.record == (True, True) for job in jobs for g in job.games)  # both seats learn
    assert all(job.players[job.recorder.anchor].name == "sl" for job in jobs)  # unseated: the prior only
    rows = _curve(project / "results/rl/point/curve.csv")  # phase 1's curve, then phase 2's loops
    assert [int(r["loop"]) for r in rows] == [0, 1, 2, 3] and [int(r["games"]) for r in rows] == [0, 4, 8, 12]
    seconds = [float(r["seconds"]) for r in rows]
    assert seconds[0] == 0.0 and all(b > a for a, b in zip(seconds, seconds[1:]))  # CPU seconds trained so far
    assert all(r["vs_phase1"] == "" for r in rows[:2])  # phase 1's rows
    for r in rows[2:]:  # phase 2's: against phase 1's network too, with its interval over the deal pairs
        assert float(r["vs_phase1_low"]) <= float(r["vs_phase1"]) <= float(r["vs_phase1_high"])


@pytest.mark.parametrize("path, value, message", [
    (("rl", "games_per_loop"), -5, "rl.games_per_loop must be >= 1, got -5"),
    (("rl", "games_per_loop"), "4", "rl.games_per_loop must be an integer, got '4'"),
    (("rl", "phase1", "loops"), 0, "rl.phase1.loops must be >= 1, got 0"),
    (("rl", "lr"), 0, "rl.lr must be > 0.0, got 0"),
    (("rl", "init"), "zero", "rl.init must be one of sl, scratch"),
    (("rl", "eval_games"), 3, "rl.eval_games must be even"),
    (("rl", "typo_key"), 1, "rl.typo_key is an unknown key"),
    (("winprob", "refit_every"), 2, "winprob.refit_every is an unknown key"),  # retired: phase 2 keeps the table
])
def test_bad_params_fail_before_any_work(project, params, path, value, message):
    d = params
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    with pytest.raises(ParamError, match=message):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert not (project / "models/rl_phase1").exists()


def test_unknown_reward_and_missing_inputs(project, params):
    with pytest.raises(ParamError, match="unknown reward model 'score'"):
        rl_stage(1, "score", parse_params(params), PhasePaths.layout(1, "score"), progress=False, mlflow=False)
    with pytest.raises(FileNotFoundError, match="winprob stage"):
        rl_stage(1, "wp", parse_params(params), PhasePaths.layout(1, "wp"), progress=False, mlflow=False)
    with pytest.raises(FileNotFoundError, match="phase-1 model"):
        rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    rl = parse_params(params).rl
    assert rl.epsilon_at(0) == 0.15 and rl.epsilon_at(2) == pytest.approx(0.02)


@pytest.mark.parametrize("init", ["sl", "scratch"])
def test_initialisation_from_sl_or_scratch(project, params, init):
    params["rl"]["init"] = init
    p = parse_params(params)  # no loop: what phase 1 starts from (params_check refuses 0 loops in params.yaml)
    rl = p.rl.model_copy(update={"phase1": p.rl.phase1.model_copy(update={"loops": 0})})
    out = rl_stage(1, "point", p.model_copy(update={"rl": rl}), PhasePaths.layout(1, "point"), progress=False,
                   mlflow=False)
    assert out["loops"] == 0 and out["global_loops"] == 0
    sl = torch.load(project / "models/sl/model.pt")
    rl = torch.load(project / "models/rl_phase1/point/model.pt")
    same = all(torch.equal(sl[k], rl[k]) for k in sl)
    assert same == (init == "sl")
    if init == "sl":  # same weights, duplicate deals: a dead heat
        assert out["win_rate"] == 0.5 and out["point_diff"] == 0.0


def test_phase2_evaluates_every_eval_every_loops_and_after_the_last(project, params):
    params["rl"]["phase1"]["loops"], params["rl"]["phase2"]["loops"] = 1, {"point": 3, "wp": 3}
    params["rl"]["eval_every"] = 3
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    out = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    assert out["loops"] == 3 and out["global_loops"] == 4
    rows = _curve(project / "results/rl/point/curve.csv")
    assert [int(r["loop"]) for r in rows] == [0, 1, 4]  # eval_every 3 in phase 2, and the last loop


@pytest.mark.parametrize("loops", [0, 1])
def test_phase2_without_a_loop_keeps_phase1s_final_evaluation(project, params, monkeypatch, loops):
    from pipeline.rl import training

    params["rl"]["phase1"]["loops"], params["rl"]["phase2"]["loops"] = 1, {"point": loops, "wp": loops}
    first = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    evaluations, real_evaluate = [], training.evaluate

    def evaluate(*args, **kwargs):
        evaluations.append(kwargs["desc"])
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(training, "evaluate", evaluate)
    out = rl_stage(2, "point", parse_params(params), PhasePaths.layout(2, "point"), progress=False, mlflow=False)
    if loops == 0:  # the same model on the same deals: phase 1's figures, no game played for them
        assert evaluations == [] and (out["win_rate"], out["ci95"]) == (first["win_rate"], first["ci95"])
        one, two = (torch.load(project / f"models/{d}/point/model.pt") for d in ("rl_phase1", "rl"))
        assert all(torch.equal(one[k], two[k]) for k in one)
    else:  # a trained model is evaluated anew
        assert evaluations[-1] == "phase 2 point final eval"


@pytest.mark.parametrize("record_sl", [False, True])
def test_phase1_records_the_sl_seat_only_when_asked(project, params, monkeypatch, record_sl):
    from pipeline.rl import training

    params["rl"]["phase1"].update(loops=1, record_sl=record_sl)
    seen, original_play = [], training.PhaseRunner.play

    def play(self, job, desc):
        result, seconds = original_play(self, job, desc)
        if any(any(g.record) for g in job.games):  # the training games, not the evaluations
            seen.append((job, result))
        return result, seconds

    monkeypatch.setattr(training.PhaseRunner, "play", play)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    (job, result), = seen
    sl_seats = {g.seed: g.seats.index(1) for g in job.games}  # the SL net is player 1
    assert all(g.record == (g.seats[0] == 0 or record_sl, g.seats[1] == 0 or record_sl) for g in job.games)
    by_seat = [sum(s.obs.player == sl_seats[o.seed] for s in t) for o, t in zip(result.outcomes, result.trajectories)]
    assert (sum(by_seat) > 0) == record_sl and result.samples
