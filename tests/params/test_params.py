"""The params layer: every key of params.yaml required and checked, one ParamError naming the dotted key,
and stages and commands turning it into one line and exit code 2."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.cli import main
from pipeline.params import PARAMS_FILE, ParamError, Params, dotted, load_params, parse_params, read_doc, with_overrides

ROOT = Path(__file__).resolve().parents[2]
DOC = read_doc(ROOT / PARAMS_FILE)
FREE_MAPPINGS = ("duels.rl_curves.", "duels.attention.")  # a label -> path map; attention: null is allowed


def _error(doc: dict) -> str:
    with pytest.raises(ParamError) as e:
        parse_params(doc)
    return str(e.value)


def _without(doc: dict, key: str) -> dict:
    out = copy.deepcopy(doc)
    *parents, leaf = key.split(".")
    d = out
    for p in parents:
        d = d[p]
    del d[leaf]
    return out


def test_the_project_params_load_and_every_section_has_a_model():
    p = load_params(ROOT / PARAMS_FILE)
    assert set(Params.model_fields) == set(DOC)
    assert p.rl.phase1.loops == DOC["rl"]["phase1"]["loops"] and p.sl_train.threads == DOC["sl_train"]["threads"]
    assert p.duels.games == DOC["duels"]["games"] and p.registry.enabled is DOC["registry"]["register"]


@pytest.mark.parametrize("key", [k for k in dotted(DOC) if not k.startswith(FREE_MAPPINGS)])
def test_every_key_is_required_no_code_default(key):
    assert _error(_without(DOC, key)) == f"params.yaml: {key} is missing"


@pytest.mark.parametrize("key", ["engine_tests.speed", "sl_dataset.records", "sl_train.learning_rate",
                                 "rl.phase2.loop", "rl.branch.temperature.score", "duels.attention.layer",
                                 "tune.rl.epochs", "winprob.c", "registry.enabled"])
def test_an_unknown_key_is_named(key):
    assert _error(with_overrides(DOC, {key: 1})) == f"params.yaml: {key} is an unknown key"


@pytest.mark.parametrize("key", ["sl_train.dropout", "sl_train.lr", "rl.epsilon.end", "rl.branch.temperature.wp",
                                 "winprob.C", "sl_dataset.val_fraction", "tune.timeout",
                                 "rl.expert.temperature.wp"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_refused_by_name(key, value):
    assert _error(with_overrides(DOC, {key: value})) == f"params.yaml: {key} must be a finite number, got {value!r}"


@pytest.mark.parametrize("key, value, what", [
    ("engine_tests.bench_games", "100", "must be an integer, got '100'"),
    ("sl_train.augment", "yes", "must be true or false, got 'yes'"),
    ("sl_train.max_epochs", True, "must be an integer, got True"),
    ("rl.phase1.loops", 2.0, "must be an integer, got 2.0"),
    ("duels.agents", "random", "must be a list, got 'random'"),
    ("winprob.inference", "fast", "must be one of auto, fp32, autocast, bf16, compile-fp32, compile-bf16; got 'fast'"),
    ("rl.selfplay", 2, "must be a mapping, got 2"),
    ("tune.target", "both", "must be one of sl, rl, search; got 'both'"),
    ("sl_train.yaku_cross", ["draw"], "must be one of discard, pick, koikoi; got 'draw'"),
])
def test_a_wrong_type_is_named(key, value, what):
    assert _error(with_overrides(DOC, {key: value})) == f"params.yaml: {key} {what}"


@pytest.mark.parametrize("key, value, what", [
    ("rl.phase1.loops", 0, "must be >= 1"),
    ("rl.games_per_loop", 0, "must be >= 1"),
    ("rl.train_threads", 257, "must be <= 256"),
    ("rl.branch.fraction", 0.0, "must be > 0.0"),
    ("rl.eval_games", 63, "must be even (each deal is played from both seats)"),
    ("sl_dataset.val_fraction", 1.0, "must be < 1.0"),
    ("sl_dataset.synthetic_games", 1, "must be >= 2"),
    ("duels.rounds", 13, "must be <= 12"),
    ("duels.games", 101, "must be even (each deal is played from both seats)"),
    ("tune.startup_trials", -1, "must be >= 0"),
    ("winprob.workers", 65, "must be <= 64"),
    # upper limits on sizes (pipeline/net/limits.py): a value past them would exhaust memory or never end
    ("sl_train.width", 1_000_000, "must be <= 4096"),
    ("sl_train.layers", 10_000, "must be <= 32"),
    ("sl_train.ff", 2**20, "must be <= 16384"),
    ("sl_train.batch_size", 10**9, "must be <= 65536"),
    ("rl.batch_size", 10**9, "must be <= 65536"),
    ("duels.games", 10**9, "must be <= 10000000"),
    ("winprob.games", 10**9, "must be <= 10000000"),
])
def test_an_out_of_range_value_is_named(key, value, what):
    assert _error(with_overrides(DOC, {key: value})) == f"params.yaml: {key} {what}, got {value!r}"


def test_checks_across_keys_name_the_key():
    with pytest.raises(ParamError, match=r"sl_train\.width must be divisible by heads \(4\), got 250"):
        parse_params(with_overrides(DOC, {"sl_train.width": 250}))
    with pytest.raises(ParamError, match=r"rl\.selfplay\.workers must be >= 1 with backend ray"):
        parse_params(with_overrides(DOC, {"rl.selfplay.backend": "ray", "rl.selfplay.workers": 0}))
    with pytest.raises(ParamError, match=r"duels\.agents names must be distinct"):
        parse_params(with_overrides(DOC, {"duels.agents": ["models/sl", "sl", "random"]}))


def test_a_missing_or_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(ParamError, match=r"nothing\.yaml: no such params file$"):
        load_params(tmp_path / "nothing.yaml")
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.raises(ParamError, match=r"list\.yaml: must be a mapping of sections, got list$"):
        load_params(tmp_path / "list.yaml")


def test_a_stage_prints_one_line_and_exits_2(tmp_path):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(with_overrides(DOC, {"sl_dataset.val_fraction": 1.5})))
    proc = subprocess.run([sys.executable, "-m", "stages.sl_dataset", "data/records", "data/sl", "results/sl_dataset"],
                          cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "sl_dataset: error: params.yaml: sl_dataset.val_fraction must be < 1.0, got 1.5"
    assert not (tmp_path / "data").exists()


def test_a_command_prints_one_line_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(with_overrides(DOC, {"sl_train.patience": -1})))
    assert main(["sl-cv", "--params", str(bad), "--dataset", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"koikoi sl-cv: error: {bad}: sl_train.patience must be >= 0, got -1"
    assert main(["sl-cv", "--params", str(ROOT / PARAMS_FILE), "--dataset", str(tmp_path), "-S", "lrr=1"]) == 2
    assert "sl_train.lrr is an unknown key" in capsys.readouterr().err
