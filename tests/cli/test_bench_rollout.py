"""``koikoi bench rollout``: both policies timed on the same observations, and a wrong model directory refused."""

from __future__ import annotations

import json

import torch
from koikoi_cli import run_cli

from pipeline.rollout.network import RolloutConfig, RolloutNet, save_rollout


def test_bench_rollout_times_both_policies(tiny_model, tmp_path, capsys):
    torch.manual_seed(0)
    save_rollout(RolloutNet(RolloutConfig(hidden=8, layers=1)), tmp_path / "rollout")
    args = ["bench", "rollout", "--model", tiny_model, "--positions", "80", "--rounds", "1", "--inference", "fp32"]
    code, out, err = run_cli([*args, "--rollout", str(tmp_path / "rollout")], capsys)
    assert code == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["teacher"] == tiny_model and result["rollout"] == str(tmp_path / "rollout")
    for who in ("teacher", "rollout"):
        assert set(result["us_per_decision"][who]) >= {"discard", "all"} and result["us_per_decision"][who]["all"] > 0
    assert result["speedup"] > 0 and result["threads"] == 1 and result["teacher_inference"] == "fp32"
    code, _, err = run_cli([*args, "--rollout", tiny_model], capsys)  # a KoiKoiNet is no rollout policy
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is not a rollout policy" in err
