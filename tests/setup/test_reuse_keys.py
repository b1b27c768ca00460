"""Every model file a stage or an agent reads is in the key that decides whether its output is reused (issue 87): a
searcher champion's registered version (``champion_model.agent_sha256``), an RL phase's resume fingerprint
(``phase_state.phase_fingerprint``) and a tune study's (``study.open_study``). Each test runs the real thing on tiny
models in a project of its own, records every file it opens for reading there (an audit hook: no list is written by
hand, so a file a new option or algorithm reads is caught), then changes each of those files in turn: the key must
change every time. The few files read that are no key's, by design, are named with the reason."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from tiny import save_tiny

from pipeline.engine import random_observations
from pipeline.params import parse_params
from pipeline.rollout.network import RolloutConfig, RolloutNet, save_rollout
from pipeline.value.winprob import WinProbTable

pytestmark = pytest.mark.usefixtures("one_thread")

_reading: list[tuple[Path, set[Path]]] = []  # (root, files read under it) of the recording in progress


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _reading or not isinstance(args[0], str | bytes | os.PathLike):
        return
    mode, flags = args[1], args[2]
    if (mode is not None and any(c in mode for c in "wax+")) or (mode is None and flags & (os.O_WRONLY | os.O_RDWR)):
        return
    root, seen = _reading[-1]
    path = Path(os.fsdecode(args[0])).resolve()
    if root in path.parents and path.is_file():
        seen.add(path)


sys.addaudithook(_hook)  # hooks stay for the process's life: this one records only inside ``files_read``


@contextmanager
def files_read(root: Path) -> Iterator[set[Path]]:
    """The files under ``root`` opened for reading in this process while the block runs."""
    seen: set[Path] = set()
    _reading.append((root.resolve(), seen))
    try:
        yield seen
    finally:
        _reading.pop()


def assert_keyed(files: set[Path], key: Callable[[], object]) -> None:
    """Changing any one of ``files`` (a byte appended) changes ``key()``; each file is restored after."""
    before = key()
    for f in sorted(files):
        data = f.read_bytes()
        f.write_bytes(data + b"\0")
        try:
            assert key() != before, f"{f} is read but not in the key"
        finally:
            f.write_bytes(data)
    assert key() == before


@pytest.fixture
def models(tmp_path, monkeypatch) -> Path:
    """A project with tiny models where the stages keep them: SL, phase-1 and final RL-WP (with its own rollout
    policy, as phase 2 leaves it), the rollout policy and the win-probability table; the working directory."""
    monkeypatch.chdir(tmp_path)
    save_tiny("models/sl", seed=1)
    for i, d in enumerate(("models/rl_phase1/wp", "models/rl/wp")):
        save_tiny(d, seed=2 + i, meta={"kind": "rl", "variant": "wp", "phase": 1 + i})
    torch.manual_seed(0)
    for d in ("models/rollout", "models/rl/wp/rollout"):
        save_rollout(RolloutNet(RolloutConfig(hidden=8, layers=1)).eval(), d)
    WinProbTable(num_rounds=8, init_points=30, coef=[[0.0, 3.0, 0.1]] * 8).save("models/winprob")
    return tmp_path


@pytest.mark.parametrize(("spec", "rollout"), [("search:models/rl/wp?rollout=models/rollout&deals=2", "models/rollout"),
                                               ("search:models/rl/wp?deals=2", "models/rl/wp/rollout")])  # own
def test_a_searchers_version_is_keyed_by_every_file_it_reads(models, spec, rollout):
    from pipeline.lineup.loader import load_agent
    from pipeline.tracking.champion_model import agent_sha256

    with files_read(models) as read:  # the wp reward: models/winprob/winprob.json
        load_agent(spec, seed=3, inference="fp32").act(random_observations(20, seed=1))
    dirs = {str(f.parent.relative_to(models)) for f in read}
    assert dirs == {"models/rl/wp", rollout, "models/winprob"}  # the recording sees them
    assert_keyed(read, lambda: agent_sha256(spec, {"seed": 3}))


def test_a_phase_is_keyed_by_every_model_it_starts_from_or_plays_with(models, params):
    from pipeline.rl.phase_state import STATE_FILE, phase_fingerprint
    from pipeline.rl.training import PhaseRunner
    from stages.rl_phase import PhasePaths, phase_config

    params["rl"]["phase1"]["loops"] = 1
    params["rl"]["expert"]["rollout"] = "models/rollout"
    params["rl"]["phase2"].update(loops={"point": 1, "wp": 1}, algorithm="expert_it", games_per_loop=2)
    p = parse_params(params)
    for phase in (1, 2):
        runner = PhaseRunner(phase_config(phase, "wp", p, PhasePaths.layout(phase, "wp"), progress=False,
                                          mlflow=False))
        with files_read(models) as read:
            runner.run()
        cfg = runner.cfg
        # its own checkpoint and model are what its key decides on (it resumes them, or starts afresh)
        read = {f for f in read if cfg.ckpt_dir.resolve() not in f.parents and f.parent != cfg.out_dir.resolve()}
        if phase == 2:
            # Phase 2 also goes on from phase 1's checkpoint (Adam's moments) and curve: they were saved with phase
            # 1's model, which is in phase 2's key, and phase 1's own key decides whether they are made again.
            resumed = {(cfg.init_ckpt_dir / STATE_FILE).resolve(), cfg.init_curve.resolve()}
            assert resumed <= read and Path("models/rollout/model.pt").resolve() in read
            read -= resumed
        assert_keyed(read, lambda cfg=cfg: phase_fingerprint(cfg))


@pytest.mark.parametrize("target", ["search", "rl"])
def test_a_tune_study_is_keyed_by_every_model_its_trials_read(models, target, new_store, params):
    import yaml

    from pipeline.params import load_params, read_doc, with_overrides
    from pipeline.tune.study import open_study
    from pipeline.tune.tuning_session import RESULTS, make_objective, tune

    root = Path(__file__).resolve().parents[2]
    new_store(models / "mlflow.db")
    overrides = {"tune.target": target, "tune.trials": 1, "tune.storage": f"sqlite:///{models}/optuna.db",
                 "tune.search": {"model": "models/rl/wp", "opponent": "models/sl", "games": 2, "seed": 7,
                                 "rollout": "models/rollout", "options": "", "workers": 0},
                 "tune.space": {"search": {"k": [2], "deals": [2]},
                                "rl": {"games_per_loop": [2], "batch_size": [32], "epochs": [4]}},
                 "tune.rl": {"loops": 1, "eval_games": 2, "variant": "wp"},
                 "duels.inference": "fp32", "duels.rounds": 1}
    rl = {**params["rl"], "algorithm": "expert_it", "expert": {**params["rl"]["expert"], "rollout": "models/rollout"}}
    doc = with_overrides(read_doc(root / "params.yaml"), {**overrides, "rl": rl, "winprob": params["winprob"]})
    Path("params.yaml").write_text(yaml.safe_dump(doc))
    p = load_params("params.yaml")
    with files_read(models) as read:
        tune(p.tune, p, root=models, progress=False)
    # the study's outputs and stores, its and MLflow's; the params, which each trial records as it played them
    # (and --apply warns of a study run with another budget than the stage's)
    outputs = (models / RESULTS).resolve()
    read = {f for f in read if f.suffix != ".db" and f.name != "params.yaml" and outputs not in f.parents}
    assert Path("models/rollout/model.pt").resolve() in read
    kept = make_objective(p.tune, p, models)[1]
    assert_keyed(read, lambda: _refused(lambda: open_study(p.tune, models=kept)))


def _refused(call: Callable[[], object]) -> str:
    """The message ``call`` refuses with, or ``""`` when it does not."""
    try:
        call()
    except ValueError as e:
        return str(e)
    return ""


def test_dvc_reruns_a_stage_when_a_model_its_params_name_changes(tmp_path, monkeypatch):
    """The keys above decide whether a run resumes; DVC decides whether it runs: every model file the default params
    have a stage read is among that stage's deps, so `dvc status` names the stage once it changes (a retrained
    rollout policy: phase 2, and the duels through the searched model's own, which phase 2 writes)."""
    import yaml

    from pipeline.duel.tournament import search_spec
    from pipeline.params import load_params
    from pipeline.search.spec import read_paths

    root = Path(__file__).resolve().parents[2]
    p = load_params(root / "params.yaml")
    monkeypatch.chdir(tmp_path)  # a project whose searched model keeps its own rollout policy (rollout=own)
    (tmp_path / "models/rl/wp/rollout").mkdir(parents=True)
    (tmp_path / "models/rl/wp/rollout/model.pt").touch()
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    deps = {name: {d if isinstance(d, str) else next(iter(d)) for d in (s.get("do") or s)["deps"]}
            for name, s in stages.items()}
    agents = [*p.duels.agents, *(search_spec(m, p.duels.search.options) for m in p.duels.search.models)]
    read = {"duels": {f for a in agents for f in read_paths(a.replace("strongest", "models/rl/wp")).values()},
            "rl_phase2": {p.rl.expert.rollout}}
    assert "models/rl/wp/rollout" in read["duels"] and "models/rollout" in read["rl_phase2"]
    for stage, files in read.items():  # each a dep, or in a folder that is one
        unseen = sorted(f for f in files if not {f, *map(str, Path(f).parents)} & deps[stage])
        assert not unseen, f"{stage} reads {unseen}, which are not its DVC deps"


def test_phase2_is_keyed_by_how_it_distils_its_rollout_policy(models, params):
    """A ``rollout.*`` param phase 2 distils its moving rollout policy by is in its key and among its DVC params (the
    others make models/rollout, a model file of its key and a dep): change one and phase 2 trains afresh."""
    import dataclasses

    import yaml

    from pipeline.rl.phase_state import DISTILL_FIELDS, phase_fingerprint
    from stages.rl_phase import PhasePaths, phase_config

    params["rl"]["expert"]["rollout"] = "models/rollout"
    params["rl"]["phase2"]["algorithm"] = "expert_it"
    cfg = phase_config(2, "wp", parse_params(params), PhasePaths.layout(2, "wp"), progress=False, mlflow=False)
    before = phase_fingerprint(cfg)
    for name in DISTILL_FIELDS:
        distill = cfg.distill.model_copy(update={name: getattr(cfg.distill, name) + 1})
        assert phase_fingerprint(dataclasses.replace(cfg, distill=distill)) != before, f"rollout.{name}"
    stage = yaml.safe_load((Path(__file__).resolve().parents[2] / "dvc.yaml").read_text())["stages"]["rl_phase2"]
    assert {f"rollout.{n}" for n in DISTILL_FIELDS} <= set(stage["do"]["params"])
