"""The search space read from the params models, and `koikoi tune --apply` through ruamel.yaml's round trip."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import optuna
import pytest
import yaml

from pipeline.cli import main
from pipeline.params import ParamError, load_params, overridden
from pipeline.tune import apply
from pipeline.tune import study_report as report
from pipeline.tune.space import default_space, derive, merged_space, sample

ROOT = Path(__file__).resolve().parents[2]


def test_rl_space_comes_from_the_model_with_the_tuned_variant_only():
    point, wp = merged_space("rl", variant="point"), merged_space("rl", variant="wp")
    common = {"lr", "batch_size", "games_per_loop", "epochs", "branch.samples"}
    assert set(point) == common | {"branch.temperature.point"}  # rollout_pi's knobs: no epsilon, no scale
    assert set(wp) - set(point) == {"branch.temperature.wp"} and "branch.temperature.point" not in wp
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    p = derive(sample(trial, wp))
    assert set(p) == {"lr", "batch_size", "games_per_loop", "epochs", "branch"}
    assert set(p["branch"]) == {"samples", "temperature"} and set(p["branch"]["temperature"]) == {"wp"}
    dqn = merged_space("rl", variant="wp", algorithm="mc_dqn")
    assert set(dqn) == {"lr", "batch_size", "games_per_loop", "epochs", "epsilon.start", "epsilon.end",
                        "reward_scale.wp"}


def test_rl_space_ranges_hold_the_defaults():
    """Each tuned knob's range or choices contain the value params.yaml runs by default."""
    base = load_params(ROOT / "params.yaml").rl.model_dump()
    for name, spec in merged_space("rl", variant="wp", algorithm=base["algorithm"]).items():
        value = base
        for part in name.split("."):
            value = value[part]
        assert (spec["low"] <= value <= spec["high"]) if isinstance(spec, dict) else value in spec, (name, spec, value)


@pytest.mark.parametrize("target, section", [("sl", "sl_train"), ("rl", "rl")])
def test_every_sample_of_a_default_space_is_a_valid_section(target, section):
    base = getattr(load_params(ROOT / "params.yaml"), section)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(30):
        trial = study.ask()
        overridden(base, derive(sample(trial, merged_space(target, variant="wp"))), section)  # no ParamError
        study.tell(trial, 0.0)


def test_a_range_of_a_float_field_samples_floats_even_when_written_as_ints():
    space = merged_space("sl", {"weight_decay": {"low": 0, "high": 1}})
    assert space["weight_decay"] == {"low": 0.0, "high": 1.0}
    value = sample(optuna.create_study().ask(), {"weight_decay": space["weight_decay"]})["weight_decay"]
    assert isinstance(value, float)


@pytest.mark.parametrize("overrides, message", [
    ({"lrr": [0.1]}, "tune.space.sl.lrr names no sl_train key"),
    ({"dropout": {"low": 0.0, "high": 1.5}}, "tune.space.sl.dropout must be < 1.0, got 1.5"),
    ({"heads": [4, 0]}, "tune.space.sl.heads must be >= 1, got 0"),
    ({"scheduler": ["step"]}, "tune.space.sl.scheduler must be one of none, cosine, plateau; got 'step'"),
    ({"shared_trunk": [1]}, "tune.space.sl.shared_trunk must be true or false, got 1"),
])
def test_space_values_are_checked_against_the_model_fields(overrides, message):
    with pytest.raises(ParamError, match=message):
        merged_space("sl", overrides)


def test_default_spaces_name_only_tuned_fields():
    # The default SL space: the fields params.py marks with `tuned(...)`; width is sampled per head.
    assert set(default_space("sl")) == {"head_dim", "ff", "heads", "layers", "dropout", "shared_trunk", "augment",
                                        "lr", "weight_decay", "label_smoothing", "ema", "batch_size"}


def _commented(text: str, keys: tuple[str, ...]) -> str:
    """``text`` with a ``# kept`` comment after each line that sets one of ``keys`` (two-space indented)."""
    return "\n".join(f"{line}  # kept" if line.startswith(tuple(f"  {k}:" for k in keys)) else line
                     for line in text.splitlines()) + "\n"


def test_apply_keeps_comments_and_flow_style_and_changes_the_values(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    before = _commented((ROOT / "params.yaml").read_text(), ("epsilon", "reward_scale", "lr", "shared_trunk"))
    params.write_text(before)
    study = tmp_path / "out" / "s"
    study.mkdir(parents=True)
    (study / report.BEST_FILE).write_text(yaml.safe_dump({
        "rl": {"epsilon": {"start": 0.3}, "reward_scale": {"point": 0.5}, "lr": 1e-5},
        "sl_train": {"lr": 3e-4, "shared_trunk": True}}))  # sl_train.lr as it is: not a change
    assert main(["tune", "--apply", "--study", "s", "--params", str(params), "--out", str(tmp_path / "out")]) == 0
    assert "rl.epsilon.start, rl.lr, rl.reward_scale.point, sl_train.shared_trunk" in capsys.readouterr().out
    after = params.read_text()
    removed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("- ")]
    added = [line[2:] for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line.startswith("+ ")]
    assert len(removed) == len(added) == 4  # only the lines of the changed keys
    assert any(line.startswith("  epsilon: {start: 0.3, end: 0.0} ") and "# kept" in line for line in added)
    assert any(line.startswith("  reward_scale: {point: 0.5, wp: 10.0} ") and "# kept" in line for line in added)
    assert any(line.startswith("  lr: 1.0e-05 ") and "# kept" in line for line in added)  # a YAML 1.1 float
    assert any(line.startswith("  shared_trunk: true ") and "# kept" in line for line in added)
    p = load_params(params)
    assert (p.rl.epsilon.start, p.rl.epsilon.end, p.rl.reward_scale.point, p.rl.lr) == (0.3, 0.0, 0.5, 1e-5)
    assert p.sl_train.shared_trunk is True and p.sl_train.lr == 3e-4
    assert apply.apply_params(params, {"rl": {"epsilon": {"start": 0.3}}}) == [] and params.read_text() == after


def test_apply_warns_when_the_study_had_another_budget_than_the_stage(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text((ROOT / "params.yaml").read_text())
    p = load_params(params)
    study = tmp_path / "out" / "s"
    study.mkdir(parents=True)
    (study / report.BEST_FILE).write_text(yaml.safe_dump({"sl_train": {"dropout": 0.2}}))
    summary = {"study": "s", "target": "sl", "trials_complete": 2, "budget": {"max_epochs": 1}}
    (study / report.SUMMARY_FILE).write_text(json.dumps(summary))
    assert main(["tune", "--apply", "--study", "s", "--params", str(params), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert f"trained each trial 1 epoch(s) (tune.max_epochs); sl_train trains {p.sl_train.max_epochs}" in err
    assert "2 completed trial(s), fewer than tune.startup_trials" in err
    assert load_params(params).sl_train.dropout == 0.2  # applied all the same: the warning says what to weigh
    same = {"study": "s", "target": "sl", "trials_complete": 20, "budget": {"max_epochs": None}}
    assert apply.budget_warnings(same, p) == []  # null: sl_train.max_epochs, the stage's own
    rl = {"study": "r", "target": "rl", "trials_complete": 20, "budget": {"loops": p.rl.phase1.loops + 3}}
    assert "(tune.rl.loops); rl_phase1 trains" in apply.budget_warnings(rl, p)[0]
    assert "does not say what budget" in apply.budget_warnings({"study": "old", "trials_complete": 20}, p)[0]


def test_apply_refuses_what_the_params_models_refuse_and_leaves_the_file(tmp_path):
    params = tmp_path / "params.yaml"
    text = (ROOT / "params.yaml").read_text()
    params.write_text(text)
    with pytest.raises(ParamError, match=r"sl_train\.dropout must be < 1\.0, got 1\.5"):
        apply.apply_params(params, {"sl_train": {"dropout": 1.5}})
    with pytest.raises(ValueError, match="params.yaml has no mapping nope"):
        apply.apply_params(params, {"nope": {"x": 1}})
    assert params.read_text() == text


def test_exp_run_line_sets_dotted_keys():
    line = apply.exp_run_line({"sl_train": {"lr": 1e-5, "shared_trunk": True}, "rl": {"epsilon": {"end": 0.01}}})
    assert line == "dvc exp run -S 'sl_train.lr=1.0e-05' -S 'sl_train.shared_trunk=true' -S 'rl.epsilon.end=0.01'"


def test_width_may_be_given_as_widths_every_heads_value_divides():
    space = merged_space("sl", {"width": [16, 32]})
    assert "head_dim" not in space and space["width"] == [16, 32]
    base = load_params(ROOT / "params.yaml").sl_train
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=2))
    widths = set()
    for _ in range(20):
        p = overridden(base, derive(sample(study.ask(), space)), "sl_train")  # no ParamError: every pair divides
        widths.add(p.width)
    assert widths == {16, 32}


@pytest.mark.parametrize("overrides, message", [
    ({"width": [12]}, r"tune.space.sl.width 12 is not divisible by heads 8 \(a value of tune.space.sl.heads\)"),
    ({"width": [24], "heads": [3, 4]}, None),
    ({"width": {"low": 16, "high": 64}}, "tune.space.sl.width must be a list of widths"),
    ({"width": [16], "head_dim": [8]}, "names both width and head_dim"),
    ({"width": [16], "heads": {"low": 1, "high": 4}}, "tune.space.sl.heads must be a list when"),
])
def test_a_bad_width_space_is_refused_in_one_line_naming_the_file(overrides, message):
    if message is None:  # 24 divides by 3 and 4: fine
        merged_space("sl", overrides, source="my-params.yaml")
        return
    with pytest.raises(ParamError, match=rf"^my-params.yaml: .*{message}") as e:
        merged_space("sl", overrides, source="my-params.yaml")
    assert "\n" not in str(e.value)


def test_tune_messages_name_the_params_file_given(tmp_path, capsys):
    params = tmp_path / "my-params.yaml"
    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["tune"]["space"] = {"sl": {"lrr": [0.1]}}
    params.write_text(yaml.safe_dump(doc))
    assert main(["tune", "--params", str(params), "--trials", "1", "--out", str(tmp_path / "out"),
                 "--storage", f"sqlite:///{tmp_path}/optuna.db"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"koikoi tune: error: {params}: tune.space.sl.lrr names no sl_train key", err
