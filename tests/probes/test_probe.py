"""The rollout probes (``pipeline.probes.rollout_gain``, ``koikoi probe``): no hidden information, reproducible,
counted."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.cli import main
from pipeline.engine import DECISION_NAMES, GAME_OVER, GameState, resample_hidden
from pipeline.probes import fit_gain as fit_gain_module
from pipeline.probes.fit_gain import choice_gain, decision_states, fit_gain, search_gain
from pipeline.probes.rollout_gain import rollout_gain, rollout_values, search_duel
from pipeline.runtime.resumable import Journal
from pipeline.selfplay.executor import make_executor
from pipeline.selfplay.executor_base import InlineExecutor
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel

POINT = RewardModel("point")


def _midgame(player: NetPlayer, seed: int, steps: int) -> GameState:
    s = GameState(seed=seed)
    for _ in range(steps):
        s.step(int(player.values([s.observation(s.player)])[0].argmax()))
    assert s.phase != GAME_OVER
    return s


def test_rollout_values_depend_only_on_what_the_player_sees(make_net):
    player = NetPlayer(make_net(0))
    s = _midgame(player, 3, 5)
    other = resample_hidden(s, s.player, np.random.default_rng(9))  # same observation, other hidden cards
    assert other.hands[s.player ^ 1] != s.hands[s.player ^ 1] or other.stock != s.stock
    acts = legal_list(s.observation(s.player))
    a = rollout_values(player, s, acts, 6, POINT, np.random.default_rng(1))
    b = rollout_values(player, other, acts, 6, POINT, np.random.default_rng(1))
    assert a.shape == (len(acts), 6)
    np.testing.assert_array_equal(a, b)
    c = rollout_values(player, s, acts, 6, POINT, np.random.default_rng(2))
    assert not np.array_equal(a, c)  # other redeals, other values: the deals are not the true one


def test_search_duel_is_reproducible_and_counts_its_searches(make_net):
    player = NetPlayer(make_net(0))
    r1, searched, changed = search_duel(player, POINT, 4, 3, (0, 2), seed=5)
    r2, searched2, changed2 = search_duel(player, POINT, 4, 3, (0, 2), seed=5)
    assert r1.games == 4 and r1.summary() == r2.summary() and (searched, changed) == (searched2, changed2)
    assert 0 < changed <= searched  # discards of an untrained net are often not its best by rollout value
    with pytest.raises(ValueError, match="even"):
        search_duel(player, POINT, 3, 3, (2,), seed=5)


def test_rollout_gain_reports_every_decision_type(make_net):
    player = NetPlayer(make_net(0))
    out = rollout_gain(player, POINT, 1, 4, 0.5, seed=2)
    assert set(out) == {"discard", "pick", "koikoi"}
    assert out["discard"]["decisions"] > 0 and 0 <= out["discard"]["flip_rate"] <= 1
    assert out == rollout_gain(player, POINT, 1, 4, 0.5, seed=2)
    with pytest.raises(ValueError, match="at least 2"):
        rollout_gain(player, POINT, 1, 1, 0.5, seed=2)


def test_fit_probe_holds_out_whole_games_and_measures_the_fitted_choice(make_net):
    net = make_net(0)
    states = decision_states(NetSpec.from_net(net, "net"), POINT, 8, 4, 1, InlineExecutor())
    assert states and all(s["values"].shape == (2, 4) and s["obs"].decision == 2 for s in states)
    assert {s["game"] for s in states} & {0, 4}, "the held-out games must have koi-koi calls"
    before = {k: v.clone() for k, v in net.state_dict().items()}
    unfitted = fit_gain(net, states, 0.25, epochs=0)
    none = unfitted.gains
    unfitted = unfitted.summary
    assert unfitted["fit_gain"] == 0.0 and unfitted["fit_flip_rate"] == 0.0 and not none.any()  # its own choice
    assert unfitted["train_states"] + unfitted["test_states"] == len(states)
    done = fit_gain(net, states, 0.25, epochs=4, lr=1e-3, deals=2, seed=3)
    fitted, gains = done.summary, done.gains
    assert gains.shape == (unfitted["test_states"],) and np.isclose(gains.mean(), fitted["fit_gain"])
    assert fitted["deals"] == 2 and fitted["temperature"] == 0.25 and np.isfinite(fitted["fit_gain"])
    assert fitted["search_gain"] == unfitted["search_gain"]
    assert fitted["fit_flip_rate"] > 0  # the fit moved the choices (targets of a random net's rollouts)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())  # a copy is fitted, not the net
    test = [s for s in states if s["game"] % 4 == 0]  # the fitted network kept is the one the gains are of
    assert np.array_equal(choice_gain(test, NetPlayer(done.net).values([s["obs"] for s in test]))[1], gains)
    again = fit_gain(net, states, 0.25, epochs=4, lr=1e-3, deals=2, seed=3)
    assert again.summary == fitted and np.array_equal(again.gains, gains)  # reproducible
    with pytest.raises(ValueError, match="held out"):
        fit_gain(net, [s for s in states if s["game"] % 4], 0.25)


def _same_states(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(
        x["obs"] == y["obs"] and x["acts"] == y["acts"] and x["game"] == y["game"]
        and x["prior"].dtype == y["prior"].dtype and np.array_equal(x["prior"], y["prior"])
        and x["values"].dtype == y["values"].dtype and np.array_equal(x["values"], y["values"]) for x, y in zip(a, b))


def test_a_journalled_probe_cut_short_goes_on_to_the_straight_probes_states(make_net, tmp_path, monkeypatch):
    spec, kw = NetSpec.from_net(make_net(0), "net"), dict(decisions=(DECISION_NAMES.index("discard"),), fraction=0.3)
    inline = InlineExecutor()
    straight = decision_states(spec, POINT, 4, 2, 1, inline, **kw)
    path, header = tmp_path / "probe.jsonl", {"seed": 1}
    assert _same_states(decision_states(spec, POINT, 4, 2, 1, inline, journal=Journal(path, "koikoi probe", header),
                                        **kw), straight)
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and [json.loads(x)["game"] for x in lines[1:]] == [0, 1, 2, 3]
    path.write_text("".join(x + "\n" for x in lines[:3]) + lines[3][:40])  # killed while writing game 2's row

    played, real = [], fit_gain_module.rollout_values
    monkeypatch.setattr(fit_gain_module, "rollout_values", lambda *a, **k: played.append(1) or real(*a, **k))
    ticks: list[int] = []
    resumed = decision_states(spec, POINT, 4, 2, 1, inline, progress=ticks.append,
                              journal=Journal(path, "koikoi probe", header), **kw)
    assert _same_states(resumed, straight) and sum(ticks) == 4
    assert len(played) == sum(s["game"] >= 2 for s in straight)  # games 0 and 1 rebuilt, not played again
    assert path.read_text().splitlines() == lines  # the cut row played again, whole
    longer = decision_states(spec, POINT, 6, 2, 1, inline, journal=Journal(path, "koikoi probe", header), **kw)
    assert _same_states(longer, decision_states(spec, POINT, 6, 2, 1, inline, **kw))  # a larger --games plays on


def test_the_probe_plays_the_same_games_on_worker_processes(make_net):
    spec, kw = NetSpec.from_net(make_net(0), "net"), dict(decisions=(DECISION_NAMES.index("discard"),), fraction=0.3)
    # worker processes against worker processes: this test process's torch state (threads, flags set by other
    # tests) can round a forward pass otherwise, and the rows hold the network's values exactly
    with make_executor(1) as one, make_executor(2) as two:
        inline = decision_states(spec, POINT, 5, 2, 7, one, **kw)
        assert len({s["game"] for s in inline}) > 2
        assert _same_states(decision_states(spec, POINT, 5, 2, 7, two, **kw), inline)
    other = decision_states(spec, POINT, 5, 2, 8, InlineExecutor(), **kw)
    assert not _same_states(other, inline)  # another seed, other deals and draws


def test_calls_probe_values_other_networks_choices_on_the_same_calls(make_net):
    net, other = make_net(0), make_net(1)
    states = decision_states(NetSpec.from_net(net, "net"), POINT, 6, 4, 1, InlineExecutor())
    obs = [s["obs"] for s in states]
    own, own_gains = choice_gain(states, NetPlayer(net).values(obs))
    assert own == {"gain": 0.0, "gain_ci95": 0.0, "flip_rate": 0.0} and not own_gains.any()  # its own choices
    theirs, gains = choice_gain(states, NetPlayer(other).values(obs))
    assert 0 < theirs["flip_rate"] <= 1 and gains.shape == (len(states),)
    for s, g, q in zip(states, gains, NetPlayer(other).values(obs)):  # a gain only where the choice differs
        assert (g != 0) <= (int(np.argmax(q[s["acts"]])) != int(np.argmax(s["prior"])))
    search = search_gain(states)
    assert search["search_in_sample"] >= 0 and search["search_in_sample"] >= theirs["gain"]  # no choice beats the best


def test_probe_command_prints_json_and_refuses_bad_input(project, capsys):
    assert main(["probe", "search", "models/sl", "--reward", "point", "--games", "2", "--samples", "2"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["games"] == 2 and out["decisions"] == ["koikoi"]
    assert main(["probe", "gain", "models/sl", "--games", "1", "--samples", "2"]) == 2  # no table for wp
    assert "win-probability table" in capsys.readouterr().err
    rc = main(["probe", "fit", "models/sl", "--reward", "point", "--games", "4", "--samples", "2",
               "--epochs", "1", "--deals", "1", "2"])
    err = capsys.readouterr()  # stderr may also hold a progress heartbeat line: judge by the exit code
    assert rc in (0, 2)  # 2: too few koi-koi calls held out in 4 games
    if rc == 2:
        assert "held out" in err.err
    else:
        out = json.loads(err.out.strip().splitlines()[-1])
        assert out["epochs"] == 1 and [(f["deals"], f["temperature"]) for f in out["fits"]] == [(1, 0.25), (2, 0.25)]
    discards = ["probe", "fit", "models/sl", "--reward", "point", "--games", "4", "--samples", "2", "--epochs", "1",
                "--decisions", "discard", "--fraction", "0.5", "--temperature", "0.25", "1"]  # many a game
    assert main([*discards, "--journal", "probe.jsonl"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*discards, "--journal", "probe.jsonl"]) == 0  # every game rebuilt from the journal: the same fits
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    assert main([*discards, "--journal", "probe.jsonl", "--seed", "9"]) == 2
    assert "probe.jsonl: journal of another probe: seed is 0 there, 9 here" in capsys.readouterr().err
    assert main([*discards, "--journal", "nowhere/probe.jsonl"]) == 2
    assert "no such directory nowhere" in capsys.readouterr().err
    assert out["decisions"] == ["discard"] and out["fits"][0]["test_states"] > 1 and "fit_gain" in out["fits"][0]
    assert [f["temperature"] for f in out["fits"]] == [0.25, 1.0]  # one fit each, on the same states: paired
    assert "minus_first" not in out["fits"][0] and np.isfinite(out["fits"][1]["minus_first_ci95"])
    assert main(["probe", "calls", "models/sl", "--reward", "point", "--games", "3", "--samples", "2",
                 "--compare", "models/sl", "models/sl"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["calls"] > 0 and list(out["models"]) == ["models/sl"]  # the same directory once
    assert out["models"]["models/sl"]["gain"] == 0.0 and "search_gain" in out
    assert main(["probe", "calls", "models/sl", "--reward", "point", "--compare", "models/none"]) == 2
    assert "models/none" in capsys.readouterr().err
    assert main(["probe", "search", "models/none", "--reward", "point"]) == 2
    assert "models/none" in capsys.readouterr().err


def test_probe_fit_on_workers_keeps_a_journal_that_refuses_one_of_another_kind(project, capsys):
    args = ["probe", "fit", "models/sl", "--reward", "point", "--games", "8", "--samples", "2", "--epochs", "1",
            "--decisions", "discard", "--fraction", "0.3", "--seed", "4", "--journal", "j.jsonl"]
    assert main([*args, "--workers", "2"]) == 0
    on_workers = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(args) == 0  # rebuilt from the journal in this process: the same states, the same fit
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == on_workers
    lines = (project / "j.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    del header["streams"]  # as a journal written with one random stream for all games
    (project / "j.jsonl").write_text("".join(x + "\n" for x in [json.dumps(header), *lines[1:]]))
    assert main(args) == 2
    assert "streams" in capsys.readouterr().err


def test_probe_fit_also_reads_the_decisions_of_other_journals_of_the_probe(project, capsys):
    args = ["probe", "fit", "models/sl", "--reward", "point", "--games", "8", "--samples", "2", "--epochs", "0",
            "--decisions", "discard", "--fraction", "0.3"]
    counts = []
    for seed, name in (("4", "a.jsonl"), ("5", "b.jsonl")):
        assert main([*args, "--seed", seed, "--journal", name]) == 0
        fit = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fits"][0]
        counts.append((fit["train_states"], fit["test_states"]))
    lines = (project / "b.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    del header["streams"]  # a one-stream journal is read, though it cannot be played on
    (project / "b.jsonl").write_text("".join(x + "\n" for x in [json.dumps(header), *lines[1:]]))
    assert main([*args, "--seed", "4", "--journal", "a.jsonl", "--also", "b.jsonl"]) == 0
    fit = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fits"][0]
    assert (fit["train_states"], fit["test_states"]) == tuple(map(sum, zip(*counts)))
    assert main([*args, "--seed", "4", "--journal", "a.jsonl", "--also", "a.jsonl"]) == 2  # counted twice
    assert main([*args[:-1], "1", "--seed", "4", "--also", "b.jsonl"]) == 2  # another --fraction: another probe
    assert "fraction" in capsys.readouterr().err
