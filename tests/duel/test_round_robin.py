import json
from pathlib import Path

import pytest
import yaml
from tiny import save_tiny

from pipeline.cli import main
from pipeline.params import read_doc, with_overrides

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tiny_model(tmp_path):
    """Two layers: the attention figure draws each."""
    return save_tiny(tmp_path / "tiny", layers=2)


def _stage(params: dict, tmp_path: Path, monkeypatch) -> Path:
    from stages import duels

    pfile = tmp_path / "params.yaml"
    duels_section = {**read_doc(ROOT / "params.yaml")["duels"], **params}
    pfile.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), {"duels": duels_section})))
    monkeypatch.chdir(tmp_path)
    duels.main(["results"])
    return tmp_path / "results"


@pytest.mark.slow
def test_tiny_round_robin_writes_every_output(tiny_model, tmp_path, monkeypatch, new_store):
    new_store(tmp_path / "mlflow.db")
    curve = tmp_path / "curve.csv"
    curve.write_text("loop,games,win_rate,point_diff,ci_low,ci_high\n1,100,0.4,-1.0,0.3,0.5\n2,200,0.55,0.5,0.48,0.62\n")
    params = {"agents": [str(tiny_model), "heuristic", "random"], "games": 4, "seed": 1, "anchor": "random",
              "rl_curves": {"RL-Point": str(curve), "RL-WP": str(tmp_path / "absent.csv")},
              "attention": {"model": str(tiny_model), "seed": 0, "turn": 1},
              "search": {"models": ["strongest"], "options": "decisions=koikoi,discard&deals=2&reward=point"},
              "phase_pairs": []}
    import mlflow

    from pipeline.tracking.registry import log_model
    from pipeline.tracking.store import setup_experiment

    with mlflow.start_run(experiment_id=setup_experiment("sl")):  # as sl_train registers it
        log_model(tiny_model, register=True)
    out = _stage(params, tmp_path, monkeypatch)
    metrics = json.loads((out / "metrics.json").read_text())
    # the searcher over the only (so the strongest) model plays that model; no models/sl among the agents
    assert set(metrics) == {"tiny_vs_heuristic", "tiny_vs_random", "heuristic_vs_random", "search_tiny_vs_tiny"}
    run = json.loads((out / "run.json").read_text())  # numbers only in metrics.json, the rest in run.json
    for pair, m in metrics.items():
        assert set(m) == {"win_rate", "point_diff", "ci95_low", "ci95_high"}
        assert run[pair]["games"] == 4 and 0 <= m["ci95_low"] <= m["win_rate"] <= m["ci95_high"] <= 1
    ratings = json.loads((out / "ratings.json").read_text())
    assert ratings["anchor"] == "random" and set(ratings["ratings"]) == {"tiny", "heuristic", "random", "search_tiny"}
    assert ratings["ratings"]["random"]["elo"] == 0.0
    assert ratings["search"] == {"agents": [f"search:{tiny_model}?decisions=koikoi,discard&deals=2&reward=point"]}
    assert json.loads((out / "champion.json").read_text())["spec"] is None  # no models/sl to measure against
    table = (out / "table.md").read_text()
    assert "| Heuristic |" in table and "RL against SL was not measured" in table
    assert "## Search at decision time" in table and "tiny + search" in table
    for png in ("winrate_matrix.png", "rl_curves.png", "attention.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"

    runs = mlflow.search_runs(experiment_names=["duels"])
    assert len(runs) == 1 and runs.iloc[0]["metrics.heuristic_vs_random/win_rate"] == metrics[
        "heuristic_vs_random"]["win_rate"]
    import torch

    assert runs.iloc[0]["params.device.play"] == ("cuda" if torch.cuda.is_available() else "cpu")  # duels.device auto
    rated = mlflow.MlflowClient().get_model_version_by_alias("koikoi-sl", "rated")
    assert str(rated.version) == "1" and float(rated.tags["duels.elo"]) == ratings["ratings"]["tiny"]["elo"]
    assert rated.tags["duels.run_id"] == runs.iloc[0]["run_id"] and rated.tags["duels.rank"].endswith("of 4")


def test_stage_names_missing_model_dirs(tmp_path, monkeypatch, capsys):
    params = {"agents": [str(tmp_path / "models/sl"), "heuristic", "random"], "games": 2, "attention": None,
              "phase_pairs": []}
    with pytest.raises(SystemExit, match=r"duels: error: missing model directory .*models/sl"):
        _stage(params, tmp_path, monkeypatch)
    small = {"agents": ["heuristic", "random"], "attention": None, "phase_pairs": [], "search": None}
    for over, message in (({"games": 3}, "duels.games must be even"), ({"gmes": 3}, "duels.gmes is an unknown key"),
                          ({"anchor": "models/sl"}, "duels.anchor 'sl' is not one of duels.agents"),
                          ({"confirm_seed": 500}, "duels.confirm_seed 500: the confirmation's deals 500..749 "
                           "overlap those that pick the champion (0..999"),
                          ({"sprt": {"h0": 0.55, "h1": 0.5, "alpha": 0.05, "beta": 0.05, "max_games": 100}},
                           "duels.sprt.h0 must be below h1, got h0 0.55 and h1 0.5"),
                          ({"phase_pairs": ["wp", "wp"]}, "duels.phase_pairs must be distinct"),
                          ({"phase_pairs": ["sl"]}, "duels.phase_pairs must be one of point, wp; got 'sl'"),
                          ({"search": {"models": ["models/sl"], "options": "deals=-1"}},
                           "duels.search.options is not valid: search option deals='-1': must be an integer >= 0, "
                           "got 'deals=-1'"),
                          # refused when the params load, not after every game (the ratings, the searchers)
                          ({"phase_pairs": ["wp"]}, "duels.phase_pairs wp: its final model models/rl/wp must be one "
                           "of duels.agents (the ratings reach its phase-1 model through it)"),
                          ({"search": {"models": ["strongest"], "options": ""}}, "duels.search.models strongest: "
                           "duels.agents has no model directory to search with")):
        with pytest.raises(SystemExit) as e:  # a bad param: one line, exit code 2 (runstate.stage_exit)
            _stage({**small, **over}, tmp_path, monkeypatch)
        assert e.value.code == 2 and capsys.readouterr().err.startswith(f"duels: error: params.yaml: {message}")


def test_table_and_rl_vs_sl_sentence():
    from pipeline.agents.specs import key_name
    from pipeline.duel.duel_report import rl_vs_sl_sentence, table_markdown
    from pipeline.duel.runner import DuelResult

    def res(w, losses, pd):
        n = w + losses
        return DuelResult(games=n, wins=w, losses=losses, draws=0, points=round(pd * n), seconds=1.0)

    results = {("rl_wp", "sl"): res(130, 70, 3.0), ("rl_point", "sl"): res(95, 105, -0.5),
               ("sl", "random"): res(196, 4, 20.0), ("rl_wp", "rl_point"): res(100, 100, 0.0),
               ("rl_wp", "random"): res(198, 2, 25.0), ("rl_point", "random"): res(197, 3, 30.0)}
    s = rl_vs_sl_sentence(results)
    assert "RL-WP beats SL: win rate 0.650" in s and "RL-Point is not distinguishable at this game count from SL" in s
    assert "RL-Point loses to SL" in rl_vs_sl_sentence({("sl", "rl_point"): res(150, 50, 4.0)})
    table = table_markdown(["rl_wp", "rl_point", "sl", "random"], results)
    assert "| RL-WP | 0.500 / +0.00 (paper 0.515 / -2.88) | 0.650 / +3.00 (paper 0.636 / +3.44) |" in table
    assert key_name("models/rl/wp") == "rl_wp" and key_name("/tmp/x/my-model/") == "my_model"


def test_a_sequential_duels_verdict_is_its_tests_never_its_interval():
    """Issue 87: a duel the SPRT stopped early has an interval that may say otherwise; the sentences say what the
    test decided (the table's SPRT column), whichever way round the pairing was played."""
    from pipeline.duel.duel_report import phase_sentence, rl_vs_sl_sentence, search_sentence, table_markdown
    from pipeline.duel.runner import DuelResult

    def duel(wins, losses, decision):
        return DuelResult(games=wins + losses, wins=wins, losses=losses, points=0, sprt={
            "h0": 0.5, "h1": 0.53, "llr": 3.0 if decision == "H1" else -3.0, "decision": decision})

    above, within = (140, 60), (17, 15)  # intervals above 0.5, and across it
    results = {("rl_wp", "sl"): duel(*above, "H0"), ("rl_point", "sl"): duel(*within, "H1"),
               ("search_rl_wp", "sl"): duel(*within, "none"), ("rl_wp", "rl_phase1_wp"): duel(*above, "H0")}
    said = rl_vs_sl_sentence(results)
    assert said.startswith("RL-WP does not beat SL: win rate 0.700 (95% CI 0.6")
    assert "SPRT 0.50 vs 0.53: H0 after 200 games (LLR -3.00)" in said and "RL-Point beats SL: win rate 0.531" in said
    assert search_sentence(results).startswith("RL-WP + search is not told apart by the sequential test from SL")
    assert phase_sentence(results).startswith("RL-WP does not beat RL-WP phase 1: win rate 0.700")
    # seen from the other side: the test was of the first agent's win rate
    assert rl_vs_sl_sentence({("sl", "rl_wp"): duel(*within, "H1")}).startswith("RL-WP loses to SL")
    assert rl_vs_sl_sentence({("sl", "rl_wp"): duel(*above, "H0")}).startswith("RL-WP is not beaten by SL")
    table = table_markdown(["rl_wp", "rl_point", "sl"], results)
    assert "| RL-WP vs SL | 200 | 0.700 |" in table and "0.50 vs 0.53: H0 (LLR -3.00) |" in table
    assert " beats SL" not in table.split("## RL against SL")[1].split("RL-Point")[0]


def test_attention_command(tiny_model, tmp_path, capsys):
    out = tmp_path / "att.png"
    assert main(["attention", "--model", str(tiny_model), "--seed", "2", "--turn", "1", "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert main(["attention", "--model", str(tiny_model), "--turn", "17", "--out", str(out)]) == 2
    assert "argument --turn: must be 1..16, got 17" in capsys.readouterr().err
    assert main(["attention", "--model", str(tmp_path), "--out", str(out)]) == 2
    assert "not a model directory" in capsys.readouterr().err


def test_the_attention_figure_names_what_the_outputs_are():
    from pipeline.duel.attention import value_axis

    for meta in ({"kind": "sl"}, {"kind": "rl", "algorithm": "rollout_pi"}, {}):  # policy logits
        softmax, label, _ = value_axis(meta)
        assert softmax and label.startswith("probability") and "Q value" not in label
    assert value_axis({"kind": "rl", "algorithm": "mc_dqn"})[:2] == (False, "Q value (expected round reward, "
                                                                         "training units)")


def test_a_candidate_against_sl_is_decided_with_it_as_a_and_the_rest_play_their_games(tmp_path, monkeypatch):
    from pipeline.agents.specs import duel_keys
    from pipeline.duel.sprt import Sprt
    from pipeline.duel.tournament import Arena, is_candidate, round_robin

    assert is_candidate("models/rl/wp") and is_candidate("search:models/sl?deals=2")
    assert not is_candidate("models/sl") and not is_candidate("heuristic")
    for d, seed in (("models/rl/wp", 0), ("models/sl", 1)):
        save_tiny(tmp_path / d, seed=seed)
    monkeypatch.chdir(tmp_path)
    specs = ["models/sl", "models/rl/wp", "random"]  # SL first: the candidate still plays as A
    arena = Arena(seed=0, rounds=1, progress=False, sprt=Sprt(0.5, 0.55), max_games=64)
    results = round_robin(specs, 2, arena, duel_keys(specs))
    assert set(results) == {("rl_wp", "sl"), ("sl", "random"), ("rl_wp", "random")}
    decided = results[("rl_wp", "sl")]
    assert decided.sprt is not None and decided.games in (32, 64)  # one look per block of 16 deals
    assert results[("sl", "random")].games == 2 and results[("sl", "random")].sprt is None


def test_every_duel_of_the_stage_runs_on_its_device_in_its_checked_setup(monkeypatch):
    from pipeline.duel import tournament
    from pipeline.duel.sprt import Sprt
    from pipeline.net.inference import Inference

    calls = []
    monkeypatch.setattr(tournament, "load_agent", lambda spec, seed, inference: (spec, inference))
    monkeypatch.setattr(tournament, "duel_agents", lambda a, b, games, seed, rounds, points, workers, label, device,
                        inference, sprt=None, executor=None: calls.append((a, b, device, inference, sprt)))
    setup = Inference("bf16")
    arena = tournament.Arena(seed=0, device="cuda", inference=setup, sprt=Sprt(0.5, 0.53), progress=False)
    spec = "search:models/rl/wp?deals=2"
    keys = {spec: "search_rl_wp", "models/rl/wp": "rl_wp", "models/sl": "sl"}
    tournament.search_duel(spec, "models/rl/wp", 2, arena, keys)
    tournament.phase_duels(["wp"], arena)
    assert len(calls) == 2 and all(device == "cuda" and inference is setup for _, _, device, inference, _ in calls)
    assert [sprt is not None for *_, sprt in calls] == [False, True]  # the searcher's row without SL: fixed size


def test_auto_plays_the_searchers_with_a_rollout_policy_on_the_cpus(monkeypatch):
    """Their playouts are many small forward passes, which the workers' cores serve faster than one shared GPU
    (the rule of rl.devices); only where the device option said auto, and only those searchers' pairings."""
    from pipeline.duel import tournament
    from pipeline.net.inference import Inference
    from pipeline.search.spec import play_device_of

    rollout, own = "search:models/rl/wp?rollout=models/rollout", "search:models/rl/wp?deals=2"
    assert play_device_of([rollout, "models/sl"], "cuda", auto=True) == "cpu"
    assert play_device_of([own, "models/sl"], "cuda", auto=True) == "cuda"  # the network's own playouts
    assert play_device_of([rollout, "models/sl"], "cuda", auto=False) == "cuda"  # asked for
    assert play_device_of([rollout], "cpu", auto=True) == "cpu"

    calls = []
    monkeypatch.setattr(tournament, "load_agent", lambda spec, seed, inference: (spec, inference))
    monkeypatch.setattr(tournament, "duel_agents", lambda a, b, games, seed, rounds, points, workers, label, device,
                        inference, sprt=None, executor=None: calls.append((a[0], device, inference)))
    gpu, cpu = Inference("bf16"), Inference("compile-bf16")
    arena = tournament.Arena(seed=0, device="cuda", inference=gpu, progress=False, cpu_inference=cpu)
    for spec in (rollout, own, "models/rl/wp"):
        arena.duel(spec, "models/sl", 2, 0)
    assert calls == [(rollout, "cpu", cpu), (own, "cuda", gpu), ("models/rl/wp", "cuda", gpu)]


def test_the_arena_plays_every_duel_of_a_device_on_one_worker_pool_and_stops_it(monkeypatch):
    """A pool per duel started its processes and compiled the networks each time (about 20 s a duel on 2 cores):
    the stage's duels share one per device, closed when the stage ends."""
    from pipeline.duel import runner, tournament
    from pipeline.net.inference import Inference

    made, closed, used = [], [], []

    class Pool:
        def __init__(self, workers, device):
            made.append((workers, device))

        def close(self):
            closed.append(self)

    monkeypatch.setattr(runner, "make_executor", lambda workers, device: Pool(workers, device))
    monkeypatch.setattr(tournament, "load_agent", lambda spec, seed, inference: spec)
    monkeypatch.setattr(tournament, "duel_agents", lambda a, b, games, seed, rounds, points, workers, label, device,
                        inference, sprt=None, executor=None: used.append((a, device, executor)))
    cpu = Inference("compile-bf16")
    arena = tournament.Arena(seed=0, workers=2, device="cuda", inference=Inference("fp32"), progress=False,
                             cpu_inference=cpu)
    for spec in ("models/rl/wp", "search:models/rl/wp?rollout=models/rollout", "models/rl/point"):
        arena.duel(spec, "models/sl", 2, 0)
    assert made == [(2, "cuda"), (2, "cpu")]  # one pool a device, started by its first duel
    assert used[0][2] is used[2][2] is arena.pools["cuda"] and used[1][2] is arena.pools["cpu"]
    arena.close()
    assert len(closed) == 2 and arena.pools == {}
    assert tournament.Arena(seed=0, workers=0).pool("cpu") is None  # no workers: each duel plays in this process
