"""The champion: decided by sequential duels from fixed results (a known champion out), the likeliest strongest
first, keys that keep a searcher's options, and the duels stage end to end at tiny size: champion.json with its
decisions and its confirmation on fresh deals, koikoi-champion@champion in a real MLflow store, the phase pairing,
and the opponent ``koikoi play`` serves by default."""

import json
from pathlib import Path

import mlflow
import pytest
import yaml
from tiny import save_tiny

from pipeline.agents.specs import duel_keys
from pipeline.duel.champion import candidates_of, pick_champion
from pipeline.duel.stats import DuelResult
from pipeline.net.inference import resolve_inference
from pipeline.params import read_doc, with_overrides
from pipeline.play.opponents import default_opponent
from pipeline.tracking.registry import CHAMPION, CHAMPION_MODEL, find_version, log_model
from pipeline.tracking.store import setup_experiment

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = "decisions=koikoi&deals=2&reward=point"
SEARCHER = f"search:models/rl/wp?{OPTIONS}"


def _decided(wins: int, losses: int, decision: str) -> DuelResult:
    return DuelResult(games=wins + losses, wins=wins, losses=losses, pairs=[0, losses // 2, 0, wins // 2, 0],
                      sprt={"decision": decision})


# (candidate, best so far) -> its sequential duel: RL-WP beats SL, RL-Point does not beat RL-WP, the searcher
# beats RL-WP with the lowest win rate of all: the champion is the searcher, not the best figure (RL-WP's 0.7)
DUELS = {("models/rl/wp", "models/sl"): _decided(70, 30, "H1"),
         ("models/rl/point", "models/rl/wp"): _decided(40, 60, "H0"),
         (SEARCHER, "models/rl/wp"): _decided(60, 40, "H1")}


def test_the_champion_is_the_last_candidate_that_beat_the_best_so_far():
    candidates = ["models/rl/wp", "models/rl/point", SEARCHER]
    spec, rows = pick_champion(candidates, "models/sl", lambda c, best: DUELS[(c, best)])
    assert spec == SEARCHER
    assert [(r["spec"], r["against"], r["sprt"]["decision"], r["win_rate"]) for r in rows] == [
        ("models/rl/wp", "models/sl", "H1", 0.7), ("models/rl/point", "models/rl/wp", "H0", 0.4),
        (SEARCHER, "models/rl/wp", "H1", 0.6)]
    # no decision keeps the best; a candidate that never beats SL leaves no champion
    undecided = {**DUELS, (SEARCHER, "models/rl/wp"): _decided(55, 45, "none")}
    assert pick_champion(candidates, "models/sl", lambda c, best: undecided[(c, best)])[0] == "models/rl/wp"
    none, rows = pick_champion(["models/rl/point"], "models/sl", lambda c, best: _decided(45, 55, "H0"))
    assert none is None and (rows[0]["games"], rows[0]["win_rate"]) == (100, 0.45)


def test_the_likeliest_strongest_go_first_the_stages_searchers_then_the_round_robin_by_rating():
    agents = ["models/rl/wp", "models/rl/point", "models/sl", "random"]
    assert candidates_of(agents, [SEARCHER]) == [SEARCHER, "models/rl/wp", "models/rl/point"]
    elo = {"models/rl/wp": 10.0, "models/rl/point": 25.0, "models/sl": 40.0, "random": -300.0}
    assert candidates_of(agents, [SEARCHER], elo) == [SEARCHER, "models/rl/point", "models/rl/wp"]
    assert candidates_of(agents, [], {"models/rl/point": 1.0}) == ["models/rl/point", "models/rl/wp"]


def test_a_search_agent_is_a_candidate_and_keeps_its_options_where_another_shares_its_model():
    agents = ["search:models/rl/wp?deals=8", "models/rl/wp", "models/sl"]
    assert candidates_of(agents, [SEARCHER]) == [SEARCHER, "search:models/rl/wp?deals=8", "models/rl/wp"]
    keys = duel_keys([*agents, SEARCHER])
    assert keys == {"search:models/rl/wp?deals=8": "search_rl_wp__deals_8", "models/rl/wp": "rl_wp",
                    "models/sl": "sl", SEARCHER: "search_rl_wp__decisions_koikoi_deals_2_reward_point"}
    assert duel_keys(["models/rl/wp", SEARCHER])[SEARCHER] == "search_rl_wp"  # alone over its model: the short key
    from pipeline.duel.duel_report import display_name

    assert display_name("search_rl_wp__deals_8") == "RL-WP + search (deals_8)"


@pytest.mark.slow
def test_the_champion_is_decided_confirmed_written_registered_and_served(tmp_path, monkeypatch, new_store):
    from stages import duels

    new_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    for i, (d, meta) in enumerate((("models/sl", {"kind": "sl"}), ("models/rl/wp", {"kind": "rl", "variant": "wp"}),
                                   ("models/rl_phase1/wp", {"kind": "rl", "variant": "wp", "phase": 1}))):
        save_tiny(d, seed=i, meta=meta)
    for d in ("models/sl", "models/rl/wp"):
        with mlflow.start_run(experiment_id=setup_experiment("rl")):  # as sl_train and rl_phase2 register them
            log_model(d, register=True)
    # H0 0.02 against H1 0.2: any candidate that wins a fair share beats the best so far within its 16 games
    section = {"agents": ["models/rl/wp", "models/sl", "random"], "games": 2, "workers": 0, "rounds": 1,
               "anchor": "random", "rl_curves": {}, "attention": None, "phase_pairs": ["wp"],
               "sprt": {"h0": 0.02, "h1": 0.2, "alpha": 0.05, "beta": 0.05, "max_games": 16},
               "confirm_games": 6, "confirm_seed": 500, "search": {"models": ["strongest"], "options": OPTIONS}}
    doc = read_doc(ROOT / "params.yaml")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(with_overrides(doc, {"duels": {**doc["duels"], **section}})))
    assert default_opponent(tmp_path)[1].startswith("no champion in results/duels/champion.json")  # not yet played
    duels.main(["results/duels"])

    champion = json.loads((tmp_path / "results/duels/champion.json").read_text())
    rows = champion["candidates"]
    # the searcher first (against SL), then RL-WP against it, the best so far: both win their fair share
    assert [(r["spec"], r["against"], r["sprt"]["decision"]) for r in rows] == [
        (SEARCHER, "models/sl", "H1"), ("models/rl/wp", SEARCHER, "H1")]
    assert all(set(r["sprt"]) >= {"h0", "h1", "llr", "lower", "upper", "decision"} for r in rows)
    assert champion["spec"] == "models/rl/wp"
    # the champion's seed and the setup its networks ran in: its registered model plays so (issue 87)
    setup = resolve_inference(doc["duels"]["inference"], "cpu")
    assert champion["confirmation"] == {"win_rate": champion["win_rate"], "ci95": champion["ci95"], "games": 6,
                                        "seed": 500, "inference": {"setup": setup.setup, "auto": setup.auto}}
    assert champion["against"] == "models/sl" and champion["games"] == 6
    metrics = json.loads((tmp_path / "results/duels/metrics.json").read_text())
    run = json.loads((tmp_path / "results/duels/run.json").read_text())
    assert metrics["champion"]["win_rate"] == champion["win_rate"]
    assert {"rl_wp_vs_rl_phase1_wp", "search_rl_wp_vs_sl", "rl_wp_vs_sl", "rl_wp_vs_search_rl_wp"} <= set(metrics)
    # the pick's duels join the table; the champion's row against SL stays its round-robin duel (a sequential
    # one), where a champion whose row the pick played would have its confirmation there instead
    assert run["rl_wp_vs_search_rl_wp"]["games"] == rows[1]["games"]
    assert run["search_rl_wp_vs_sl"]["games"] == rows[0]["games"] and "sprt" in run["rl_wp_vs_sl"]
    assert run["rl_wp_vs_rl_phase1_wp"]["sprt"]["h1"] == 0.2 and run["rl_wp_vs_random"]["games"] == 2
    assert "## Phase 2 against phase 1" in (tmp_path / "results/duels/table.md").read_text()

    version = mlflow.MlflowClient().get_model_version_by_alias(CHAMPION_MODEL, CHAMPION)
    underlying = find_version(champion["spec"].split(":", 1)[-1].split("?")[0])
    assert version.tags["spec"] == champion["spec"] and float(version.tags["win_rate"]) == champion["win_rate"]
    # a network champion is its own registered weights (a searcher's is a pyfunc that runs its search, issue 69:
    # tests/tracking/test_registry.py)
    assert version.source == underlying.source and "network" not in version.tags

    served, line = default_opponent(tmp_path)
    assert served.startswith(champion["spec"])
    assert line.startswith(f"playing the duels' champion {champion['spec']}: win rate {champion['win_rate']:.3f}")
