"""The duels stage's champion end to end at tiny size: the pick among the models and searchers with enough games
against SL, champion.json, koikoi-champion@champion in a real MLflow store, the phase pairing, and the opponent
``koikoi play`` serves by default."""

import json
from pathlib import Path

import mlflow
import pytest
import yaml
from tiny import save_tiny

from pipeline.params import read_doc, with_overrides
from pipeline.play.opponents import default_opponent
from pipeline.tracking.registry import CHAMPION, CHAMPION_MODEL, find_version, log_model
from pipeline.tracking.store import setup_experiment

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = "decisions=koikoi&deals=2&reward=point"


@pytest.mark.slow
def test_the_champion_is_picked_written_registered_and_served(tmp_path, monkeypatch, new_store):
    from stages import duels

    new_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    for i, (d, meta) in enumerate((("models/sl", {"kind": "sl"}), ("models/rl/wp", {"kind": "rl", "variant": "wp"}),
                                   ("models/rl_phase1/wp", {"kind": "rl", "variant": "wp", "phase": 1}))):
        save_tiny(d, seed=i, meta=meta)
    for d in ("models/sl", "models/rl/wp"):
        with mlflow.start_run(experiment_id=setup_experiment("rl")):  # as sl_train and rl_phase2 register them
            log_model(d, register=True)
    section = {"agents": ["models/rl/wp", "models/sl", "random"], "games": 2, "rl_vs_sl_games": 4, "workers": 0,
               "anchor": "random", "rl_curves": {}, "attention": None, "phase_pairs": ["wp"],
               # the searchers play SL 6 games, RL-WP 4: only the searchers can be champion
               "champion_min_games": 6, "search": {"models": ["strongest", "models/sl"], "options": OPTIONS,
                                                   "games": 6}}
    doc = read_doc(ROOT / "params.yaml")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(with_overrides(doc, {"duels": {**doc["duels"], **section}})))
    assert default_opponent(tmp_path)[1].startswith("no champion in results/duels/champion.json")  # not yet played
    duels.main(["results/duels"])

    champion = json.loads((tmp_path / "results/duels/champion.json").read_text())
    searchers = [f"search:models/rl/wp?{OPTIONS}", f"search:models/sl?{OPTIONS}"]
    assert [c["spec"] for c in champion["candidates"]] == ["models/rl/wp", *searchers]
    assert [c["games"] for c in champion["candidates"]] == [4, 6, 6]
    best = max(champion["candidates"][1:], key=lambda c: c["win_rate"])
    assert champion["spec"] == best["spec"] and champion["against"] == "models/sl" and champion["games"] == 6
    assert champion["ci95"][0] <= champion["win_rate"] == best["win_rate"] <= champion["ci95"][1]
    metrics = json.loads((tmp_path / "results/duels/metrics.json").read_text())
    assert metrics["champion"]["win_rate"] == champion["win_rate"]
    assert {"rl_wp_vs_rl_phase1_wp", "search_rl_wp_vs_rl_wp", "search_rl_wp_vs_sl", "search_sl_vs_sl"} <= set(metrics)
    assert json.loads((tmp_path / "results/duels/run.json").read_text())["rl_wp_vs_rl_phase1_wp"]["games"] == 4
    assert "## Phase 2 against phase 1" in (tmp_path / "results/duels/table.md").read_text()

    version = mlflow.MlflowClient().get_model_version_by_alias(CHAMPION_MODEL, CHAMPION)
    underlying = find_version(champion["spec"].split(":", 1)[1].split("?")[0])
    assert version.tags["spec"] == champion["spec"] and float(version.tags["win_rate"]) == champion["win_rate"]
    assert version.source == underlying.source  # the very model the champion searches with, trained by its run

    served, line = default_opponent(tmp_path)
    assert served == f"{champion['spec']}&think=0.5s"  # a think budget per searched decision, deals at most as many
    assert line.startswith(f"playing the duels' champion {champion['spec']}: win rate {champion['win_rate']:.3f}")
    (tmp_path / "results/duels/champion.json").write_text(json.dumps({**champion, "spec": None}))
    assert default_opponent(tmp_path)[0] == "models/rl/wp"  # no champion: the ratings' rule, and it says so
