"""A bad param never costs an output under DVC: the params_check stage refuses it before any stage runs, and
the trained models are persistent outputs that DVC leaves in place while their stage runs.

The DVC test is a real ``dvc repro`` in a temp copy of the project: the real ``params_check`` and ``sl_train``
stages of dvc.yaml, with sl_train's command swapped for a fast stand-in that does what the stage does first
(reads params.yaml, which refuses a bad param) and then writes a small model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stages.params_check import main as params_check_main

ROOT = Path(__file__).resolve().parents[2]
DVC = Path(sys.executable).parent / "dvc"
# what the training stages make, kept in place while they run
TRAINED = ("models/sl", "results/sl/metrics.json", "results/sl/run.json", "results/sl/curves.csv",
           *(f"{d}/${{item}}" for d in ("models/rl_phase1", "models/rl")),
           *(f"results/{d}/${{item}}/{f}" for d in ("rl_phase1", "rl") for f in ("metrics.json", "run.json",
                                                                                  "curve.csv")))

FAKE_TRAIN = '''
import json, sys
from pathlib import Path
from pipeline.params import load_params
from pipeline.tracking.lifecycle import stage_exit

with stage_exit("sl_train"):
    p = load_params().sl_train  # the real stage's first step (stages.run_stage)
data, model, ckpt, results = map(Path, sys.argv[1:])
model.mkdir(parents=True, exist_ok=True)
(model / "model.pt").write_text(f"weights trained with lr={p.lr}")
(model / "config.json").write_text("{}")
ckpt.mkdir(parents=True, exist_ok=True)
results.mkdir(parents=True, exist_ok=True)
(results / "metrics.json").write_text(json.dumps({"lr": p.lr}))
(results / "run.json").write_text("{}")
(results / "curves.csv").write_text("epoch,val_acc\\n1,0.5\\n")
'''


def real_stages() -> dict:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def test_every_stage_depends_on_params_check_and_it_reads_every_param():
    stages = real_stages()
    check = stages["params_check"]
    out = next(iter(check["outs"][0]))
    assert check["params"] == [{"params.yaml": None}]  # the whole file
    for name, stage in stages.items():
        if name != "params_check":
            deps = (stage.get("do") or stage)["deps"]
            assert out in deps, f"{name} does not depend on {out}"


def test_trained_models_and_their_figures_are_persistent_outputs():
    outs = {}
    for stage in real_stages().values():
        for kind in ("outs", "metrics", "plots"):
            for o in (stage.get("do") or stage).get(kind, []):
                outs.update(o if isinstance(o, dict) else {o: {}})
    for path in TRAINED:
        assert outs[path].get("persist") is True, path


def test_the_stage_refuses_a_bad_param_in_one_line(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    shutil.copy(ROOT / "params.yaml", good)
    out = tmp_path / "out" / "valid.json"
    params_check_main([str(good), str(out)])
    assert out.read_text() == '{"valid": true}\n'
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("  lr: 0.0003", "  lr: .nan", 1))
    out.unlink()
    with pytest.raises(SystemExit) as e:
        params_check_main([str(bad), str(out)])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.startswith(f"params_check: error: {bad}: sl_train.lr") and "\n" not in err
    assert not out.exists()


def dvc(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([str(DVC), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_dvc_repro_with_a_bad_param_keeps_the_models(tmp_path):
    project = tmp_path / "project"
    for package in ("pipeline", "stages"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    (project / "fake_train.py").write_text(FAKE_TRAIN)
    (project / "data/sl").mkdir(parents=True)
    (project / "data/sl/info.json").write_text("{}")
    stages = real_stages()
    train = dict(stages["sl_train"], cmd="python fake_train.py " + stages["sl_train"]["cmd"].split(" ", 3)[3])
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"params_check": stages["params_check"],
                                                                  "sl_train": train}}, sort_keys=False))
    assert dvc(project, "init", "--no-scm", "-q").returncode == 0
    first = dvc(project, "repro")
    assert first.returncode == 0, first.stderr
    model = project / "models/sl/model.pt"
    assert model.read_text() == "weights trained with lr=0.0003"
    kept = {p: p.read_bytes() for p in (model, project / "results/sl/metrics.json", project / "results/sl/curves.csv")}

    params = project / "params.yaml"
    params.write_text(params.read_text().replace("  lr: 0.0003", "  lr: .nan", 1))
    for args in (["repro"], ["repro", "sl_train"], ["repro", "-s", "sl_train"], ["repro", "-f", "-s", "sl_train"]):
        r = dvc(project, *args)
        assert r.returncode != 0, (args, r.stdout)
        assert "sl_train.lr must be a finite number" in r.stderr + r.stdout, (args, r.stderr)
        assert {p: p.read_bytes() for p in kept} == kept, args  # the model and its figures are still there
    bad_check = dvc(project, "repro")
    assert "params_check: error: params.yaml: sl_train.lr" in bad_check.stderr  # refused by the first stage

    params.write_text(params.read_text().replace("  lr: .nan", "  lr: 0.001", 1))
    again = dvc(project, "repro")
    assert again.returncode == 0, again.stderr
    assert model.read_text() == "weights trained with lr=0.001"
