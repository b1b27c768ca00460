"""params_check refuses what a stage would refuse only after DVC removed its outputs: a path that is not there and
that no stage makes, a model directory that is not one, cuda on a machine without CUDA (issue 47). Each case is
the check on a copy of the project's params.yaml and dvc.yaml in a temp directory (a fresh clone: no outputs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pipeline.params import ParamError, load_params, read_doc, with_overrides
from pipeline.params.needs import check_needs, stage_outputs
from pipeline.runtime.hardware import gpu_available
from stages.params_check import main as params_check_main

ROOT = Path(__file__).resolve().parents[2]
# duels without the phase pairings and searchers (DuelsParams wants those over a model among the agents)
ROUND_ROBIN_ONLY = {"duels.phase_pairs": [], "duels.search": None}


def project(tmp_path: Path, overrides: dict | None = None, dvc: bool = True) -> Path:
    """A project without outputs: params.yaml (with ``overrides``) and, unless ``dvc`` is false, dvc.yaml."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    # no records folder: a fresh machine, where the records stage fetches sl_dataset.records_git
    overrides = {"sl_dataset.records_dir": str(tmp_path / "records"), **(overrides or {})}
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(with_overrides(read_doc(ROOT / "params.yaml"), overrides),
                                     sort_keys=False))
    if dvc:
        shutil.copy(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    return params


def needs(params: Path) -> None:
    check_needs(load_params(params), params)


def test_a_fresh_clone_passes_what_the_stages_make_counts_as_present(tmp_path):
    params = project(tmp_path)
    needs(params)  # models/sl, models/rl/*: made by sl_train and rl_phase2 before winprob and duels read them
    made = stage_outputs(tmp_path / "dvc.yaml")
    assert "models/sl" in made["sl_train"] and "models/rl/wp" in made["rl_phase2@wp"]
    assert stage_outputs(tmp_path / "none.yaml") == {}
    # every model a stage trains counts, phase 1's too
    needs(project(tmp_path, {"duels.agents": ["models/rl_phase1/wp", "models/rl_phase1/point", "random"],
                             "duels.phase_pairs": []}))


@pytest.mark.parametrize("overrides, key", [
    ({"sl_dataset.records_dir": "/nonexistent", "sl_dataset.records_git": None}, "sl_dataset.records_dir"),
    ({"winprob.agent": "models/nope"}, "winprob.agent"),
    ({"winprob.agent": "models"}, "winprob.agent"),  # a directory, but no model in it
    ({"rollout.teacher": "models/nope"}, "rollout.teacher"),
    ({"rollout.teacher": "models/rollout"}, "rollout.teacher"),  # a stage's model, but not a network to distill
    ({"duels.agents": ["models/nope", "random"], "duels.phase_pairs": []}, "duels.agents[0]"),
    ({"duels.agents": ["random", "search:models/nope?deals=2"], **ROUND_ROBIN_ONLY},
     "duels.agents[1]"),
    ({"duels.attention": {"model": "models/nope", "seed": 0, "turn": 3}}, "duels.attention.model"),
    ({"duels.search": {"models": ["strongest", "models/nope"], "options": "deals=2"}},
     "duels.search.models[1]"),
    ({"duels.agents": ["heuristic", "random"], "duels.attention": None, "duels.phase_pairs": []},
     "duels.search.models strongest: duels.agents has no model directory"),
    # a searcher in the round-robin: its options, as duels.search's (issue 60)
    ({"duels.agents": ["random", "search:models/sl?deals=many"]}, "duels.agents"),
    ({"duels.agents": ["random", "search:models/sl?nosuchoption=1"]}, "duels.agents"),
    # a searcher's rollout policy: the rollout stage's model or a directory that is there (issue 66)
    ({"duels.agents": ["random", "search:models/sl?rollout=models/nope"], **ROUND_ROBIN_ONLY},
     "duels.agents[1]: search option rollout="),
    ({"duels.search": {"models": ["strongest"], "options": "rollout=models/sl/x"}},
     "duels.search.options: search option rollout="),
    ({"rl.expert.rollout": "models/nope", "rl.phase2.algorithm": "expert_it"}, "rl.expert.rollout: search option"),
    # a path inside a model a stage makes, or a stage's output that is not a model
    ({"winprob.agent": "models/sl/x"}, "winprob.agent"),
    ({"winprob.agent": "checkpoints/sl"}, "winprob.agent"),
    ({"duels.agents": ["random", "search:models/rl/wp/x"], **ROUND_ROBIN_ONLY}, "duels.agents[1]"),
    ({"duels.attention": {"model": "models/winprob", "seed": 0, "turn": 3}}, "duels.attention.model"),
])
def test_a_path_no_stage_makes_and_not_there_is_named(tmp_path, overrides, key):
    with pytest.raises(ParamError) as e:
        needs(project(tmp_path, overrides))
    assert str(e.value).startswith(f"{tmp_path / 'params.yaml'}: {key}") and "\n" not in str(e.value)


def test_a_phase_pair_no_stage_makes_is_named(tmp_path):
    final = tmp_path / "models/rl/wp"  # the final model there, its phase-1 model neither there nor made
    final.mkdir(parents=True)
    (final / "model.pt").write_bytes(b"x")
    (final / "config.json").write_text("{}")
    params = project(tmp_path, {"duels.agents": ["models/rl/wp", "random"], "duels.attention": None,
                                "duels.search": None, "duels.phase_pairs": ["wp"]}, dvc=False)
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"duels": {"cmd": "x"}}}))  # no RL stage
    with pytest.raises(ParamError, match=r"duels\.phase_pairs must be a model directory .* got 'models/rl_phase1/wp'"):
        needs(params)
    needs(project(tmp_path, {"duels.agents": ["models/rl/wp", "random"], "duels.attention": None,
                             "duels.search": None, "duels.phase_pairs": []}, dvc=False))


def test_a_phase_pair_whose_final_model_is_not_rated_is_named(tmp_path):
    # models/rl/wp made by its stage but not among the agents: its phase-1 model would have no rating to join;
    # DuelsParams refuses it when the params load
    params = project(tmp_path, {"duels.agents": ["models/sl", "random"], "duels.attention": None,
                                "duels.search": None, "duels.phase_pairs": ["wp"]})
    with pytest.raises(ParamError) as e:
        needs(params)
    assert str(e.value) == (f"{tmp_path / 'params.yaml'}: duels.phase_pairs wp: its final model models/rl/wp must be "
                            "one of duels.agents (the ratings reach its phase-1 model through it); add it or drop "
                            "the variant")


def test_paths_that_exist_pass(tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    (records / "1.json").write_text("{}")
    own = tmp_path / "models/own"
    own.mkdir(parents=True)
    (own / "model.pt").write_bytes(b"x")
    (own / "config.json").write_text("{}")
    needs(project(tmp_path, {"sl_dataset.records_dir": str(records), "winprob.agent": "models/own",
                             "duels.agents": ["models/own", "random"], "duels.phase_pairs": []}))


def test_only_the_stages_of_the_pipeline_are_checked(tmp_path):
    needs(project(tmp_path, {"winprob.agent": "models/nope"}, dvc=False))  # no dvc.yaml: no stage to check for
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"params_check": {"cmd": "x"}}}))
    needs(tmp_path / "params.yaml")


@pytest.mark.skipif(gpu_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("key, value", [("duels.device", "cuda"), ("winprob.device", "cuda"),
                                        ("rl.selfplay.device", "cuda"), ("rl.learner_device", "cuda"),
                                        ("sl_train.accelerator", "gpu")])
def test_cuda_on_a_machine_without_it_is_refused(tmp_path, key, value):
    with pytest.raises(ParamError, match=rf"params.yaml: {key} is {value} but torch sees no CUDA GPU"):
        needs(project(tmp_path, {key: value}))


@pytest.mark.skipif(gpu_available(), reason="this machine has CUDA")
def test_players_on_a_ray_clusters_gpus_pass_on_a_head_without_cuda(tmp_path, monkeypatch):
    """docs/scaling.md's setup: RL players on the cluster's GPUs, checked there (``RayExecutor``), not here; the
    same params with a private local Ray (no ``RAY_ADDRESS``) would play on this machine, so they are refused."""
    ray_gpus = {"rl.selfplay.backend": "ray", "rl.selfplay.workers": 2, "rl.selfplay.device": "cuda"}
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ParamError, match=r"params.yaml: rl.selfplay.device is cuda but torch sees no CUDA GPU"):
        needs(project(tmp_path, ray_gpus))
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    needs(project(tmp_path, ray_gpus))
    with pytest.raises(ParamError, match=r"params.yaml: rl.learner_device is cuda but torch sees no CUDA GPU"):
        needs(project(tmp_path, {**ray_gpus, "rl.learner_device": "cuda"}))  # the learner runs here


def test_the_stage_refuses_in_one_line_and_writes_nothing(tmp_path, capsys):
    params = project(tmp_path, {"winprob.agent": "models/nope"})
    out = tmp_path / "results/params_check/valid.json"
    with pytest.raises(SystemExit) as e:
        params_check_main([str(params), str(out)])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.startswith(f"params_check: error: {params}: winprob.agent") and "\n" not in err
    assert not out.exists()
    params_check_main([str(project(tmp_path)), str(out)])
    assert out.read_text() == '{"valid": true}\n'  # unchanged for valid params


def test_records_absent_are_fetched_unless_no_repository_is_named(tmp_path, monkeypatch):
    """Issue 69: a missing records folder passes while sl_dataset.records_git says where to fetch them; without it
    the error names the param and suggests no "" (an empty dep); synthetic records need no folder at all."""
    monkeypatch.delenv("KOIKOI_RECORDS", raising=False)
    needs(project(tmp_path))  # absent, records_git set: the records stage fetches them
    with pytest.raises(ParamError) as e:
        needs(project(tmp_path, {"sl_dataset.records_git": None}))
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'params.yaml'}: sl_dataset.records_dir must be a folder of game records")
    assert "records_git" in msg and '""' not in msg and "\n" not in msg
    needs(project(tmp_path, {"sl_dataset.records_git": None, "sl_dataset.synthetic": True}))
    (tmp_path / "records").mkdir()  # a folder that is there is used as it is: it must hold records
    with pytest.raises(ParamError, match=r"sl_dataset.records_dir must be a folder of \*.json game records"):
        needs(project(tmp_path))
    monkeypatch.setenv("KOIKOI_RECORDS", str(tmp_path / "elsewhere"))  # the variable stands in for the param
    with pytest.raises(ParamError, match=r"params.yaml: \$KOIKOI_RECORDS must be a folder of game records"):
        needs(project(tmp_path, {"sl_dataset.records_git": None}))


@pytest.mark.parametrize("key, value, says", [
    ("url", "ext::sh -c touch% /tmp/x", "must be a git URL"),
    ("url", "-uhttps://x", "must be a git URL"),
    ("url", "github.com/guansanghai/KoiKoi-AI", "must be a git URL"),
    ("rev", "main", "must be 40 lowercase hex digits (a full commit id, never a branch)"),
    ("path", "../outside", "must be a folder inside the repository"),
    ("sha256", "abc", "must be 64 lowercase hex digits"),
])
def test_a_bad_records_repository_is_one_line_naming_the_param(tmp_path, key, value, says):
    with pytest.raises(ParamError) as e:
        load_params(project(tmp_path, {f"sl_dataset.records_git.{key}": value}))
    assert str(e.value).startswith(f"{tmp_path / 'params.yaml'}: sl_dataset.records_git.{key} ")
    assert says in str(e.value) and "\n" not in str(e.value)
