"""``koikoi lookahead``: a policy's self-play fits a value, and the model written looks ahead with it
wherever a model directory plays; the same seed gives the same value; bad input is one line."""

from __future__ import annotations

import json

import torch
from koikoi_cli import run_cli
from tiny import TINY

from pipeline.agents.model_loader import load_model_agent
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import load_value, save_model
from pipeline.value.lookahead import LookaheadSpec
from pipeline.value.winprob import WinProbTable

TABLE = WinProbTable(num_rounds=8, init_points=30, coef=[[0.0, 3.0, 0.2]] * 8)




def policy_and_table(tmp_path):
    torch.manual_seed(0)
    save_model(KoiKoiNet(TINY).eval(), tmp_path / "policy", {"kind": "sl"})
    (tmp_path / "winprob.json").write_text(json.dumps(TABLE.to_dict()))
    return str(tmp_path / "policy"), str(tmp_path / "winprob.json")


def build(tmp_path, capsys, out: str, *extra: str) -> dict:
    policy, table = policy_and_table(tmp_path)
    code, stdout, err = run_cli(["lookahead", policy, "--out", str(tmp_path / out), "--winprob", table, "--games", "6",
                                 "--width", "8", "--epochs", "1", "--workers", "0", *extra], capsys)
    assert code == 0, err
    return json.loads(stdout.strip().splitlines()[-1])


def test_lookahead_model_plays_where_a_model_plays(tmp_path, capsys):
    figures = build(tmp_path, capsys, "la", "--decisions", "pick", "koikoi", "--temperature", "0.5")
    assert figures["games"] == 6 and figures["afterstates"] > 100
    assert {"r2/point", "r2/wp", "value_loss/point", "value_loss/wp"} <= set(figures)
    spec = load_model_agent(tmp_path / "la", "A").spec
    assert isinstance(spec, LookaheadSpec) and spec.decisions == (1, 2) and spec.temperature == 0.5
    assert spec.reward.kind == "wp" and spec.reward.table is not None
    code, out, err = run_cli(["duel", str(tmp_path / "la"), "random", "--games", "2", "--rounds", "1"], capsys)
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["games"] == 2


def test_same_seed_same_value(tmp_path, capsys):
    build(tmp_path, capsys, "a")
    build(tmp_path, capsys, "b")
    build(tmp_path, capsys, "c", "--seed", "1")
    a, b, c = (load_value(tmp_path / d).state_dict() for d in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_bad_input_is_one_line(tmp_path, capsys):
    policy, table = policy_and_table(tmp_path)
    code, _, err = run_cli(["lookahead", str(tmp_path / "nothing"), "--out", str(tmp_path / "o"), "--winprob", table],
                           capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nothing" in err
    code, _, err = run_cli(["lookahead", policy, "--out", str(tmp_path / "o"), "--winprob", str(tmp_path / "no.json")],
                           capsys)
    assert code == 2 and "--winprob" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["lookahead", policy, "--out", str(tmp_path / "o"), "--winprob", table, "--width", "6"],
                           capsys)
    assert code == 2 and "--width" in err
    assert not (tmp_path / "o").exists()
