"""Suite-wide: every test tracks into a throwaway MLflow store, and the repository's ``mlruns/`` is
checked to be untouched when the suite ends (a test that wrote there fails the run). The shared fixtures: tiny
networks (``make_net``), the params document shrunk to a tiny run (``params``), a project dir (``project``),
fresh MLflow stores (``new_store``), a synthetic SL dataset (``synthetic_dataset``)."""

from __future__ import annotations

import copy
import gc
import json
import os
from pathlib import Path

import pytest
import torch
from tiny import copy_store, save_tiny, tiny_net

from pipeline.net.modelio import save_model
from pipeline.params import PARAMS_FILE, read_doc
from pipeline.params.base import deep_merge

ROOT = Path(__file__).resolve().parents[1]
REPO_MLRUNS = ROOT / "mlruns"

# params.yaml with these sections' values overridden (a mapping document: tests change it, then parse it)
TINY_PARAMS = {
    "winprob": {"agent": "models/sl", "games": 8, "seed": 0, "C": 10.0,
                "workers": 0, "concurrency": 8, "inference": "fp32", "device": "cpu"},
    "rl": {
        "seed": 0, "algorithm": "mc_dqn", "init": "sl", "games_per_loop": 4, "batch_size": 64, "lr": 1.0e-3,
        "epochs": 1, "replay": 0, "augment": False,
        "branch": {"decisions": ["discard", "pick", "koikoi"], "fraction": 1.0,
                   "temperature": {"point": 1.0, "wp": 0.5}, "prior": "sl", "loss": "cross_entropy",
                   "samples": 1},
        "epsilon": {"start": 0.15, "end": 0.02}, "reward_scale": {"point": 1.0, "wp": 10.0}, "wp_baseline": 0.0,
        "eval_every": 1, "eval_games": 2, "final_eval_games": 4, "train_precision": "32-true", "train_threads": 1,
        "learner_device": "cpu",
        "selfplay": {"workers": 0, "concurrency": 8, "inference": "fp32", "start_method": "spawn", "backend": "process",
                     "device": "cpu"},
        "phase1": {"loops": 2, "target_win_rate": 1.0, "window": 2, "record_sl": False},
        "expert": {"decisions": ["discard", "pick", "koikoi"], "fraction": 0.2, "deals": 2, "k": 2, "z": 2.0,
                   "gap": 4.0, "rollout": "self", "temperature": {"point": 0.3, "wp": 0.1}},
        "phase2": {"loops": {"point": 1, "wp": 1}, "algorithm": "mc_dqn", "games_per_loop": 4, "epochs": 1},
    },
}


@pytest.fixture
def make_net():
    """``make_net(seed)``: a tiny network with seeded weights (tests import no helper module)."""
    return tiny_net


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A saved untrained model at the test sizes, with a yaku cross-attention and a card logit at picks: a real
    model agent, fast."""
    return str(save_tiny(tmp_path_factory.mktemp("models") / "tiny", yaku_cross=("pick",), card_logit=("pick",)))


@pytest.fixture(scope="session")
def judge_spec(tiny_model, tmp_path_factory) -> str:
    """A ``search:`` spec the game analysis judges with, fast: the tiny model, a tiny rollout policy (numpy) and a
    plain win-probability table, 4 deals a decision."""
    from pipeline.rollout.network import RolloutConfig, RolloutNet, save_rollout
    from pipeline.value.winprob import WinProbTable

    d = tmp_path_factory.mktemp("judge")
    torch.manual_seed(0)
    save_rollout(RolloutNet(RolloutConfig(hidden=8, layers=1)), d / "rollout")
    WinProbTable(8, 30, [[0.0, 4.0, 0.2]] * 8).save(d / "winprob")
    return f"search:{tiny_model}?rollout={d / 'rollout'}&winprob={d / 'winprob'}&deals=4"


@pytest.fixture
def params() -> dict:
    """The project's params.yaml as a mapping, shrunk: tests edit it and pass ``parse_params(params)`` on."""
    return deep_merge(read_doc(ROOT / PARAMS_FILE), copy.deepcopy(TINY_PARAMS))


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory) -> Path:
    """An MLflow SQLite store with its schema and nothing else. MLflow makes a new store's schema with a hundred
    migrations (seconds of CPU and of disk syncs); a copy of this file is the same fresh store at once."""
    import mlflow

    d = tmp_path_factory.mktemp("empty-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(d)  # MLflow puts the Default experiment's artifacts under ./mlruns of the cwd it is made in
        mlflow.MlflowClient(f"sqlite:///{d}/mlflow.db").search_experiments()
    return d / "mlflow.db"


@pytest.fixture
def new_store(empty_store, monkeypatch):
    """``new_store(db)``: a fresh MLflow store at ``db`` (``copy_store``), made the tracking store
    (``MLFLOW_TRACKING_URI``); returns its URI. A test of how a store is first made makes its own."""

    def make(db: Path) -> str:
        uri = copy_store(empty_store, db)
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        return uri

    return make


@pytest.fixture
def project(tmp_path, monkeypatch, new_store):
    """A project dir with a tiny untrained "SL" model in models/sl and MLflow in tmp_path; cwd set there."""
    save_model(tiny_net(1), tmp_path / "models/sl", {"kind": "sl"})
    new_store(tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def store_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file()}


def changes(before: dict, after: dict) -> list[str]:
    """Files added, removed or modified between two snapshots."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


DURATIONS = Path(__file__).with_name("durations.json")  # seconds per test file: `make test-durations` writes it
_file_seconds: dict[str, float] = {}


def pytest_addoption(parser) -> None:
    parser.addoption("--record-durations", metavar="FILE", default=None,
                     help="write each test file's seconds (setup, call, teardown) to FILE as JSON")


def pytest_collection_modifyitems(session, config, items) -> None:
    """The longest test files first (``DURATIONS``): xdist (``--dist loadfile --no-loadscope-reorder``) hands the
    files out in this order, so a slow one does not start last and leave the other worker idle at the end. A file
    not in the record counts as a median one; the sort is stable, so a file's tests keep their order."""
    try:
        known = json.loads(DURATIONS.read_text())
    except FileNotFoundError:
        return
    middle = sorted(known.values())[len(known) // 2] if known else 0.0
    items.sort(key=lambda item: -known.get(item.nodeid.split("::", 1)[0], middle))


def pytest_runtest_logreport(report) -> None:
    path = report.nodeid.split("::", 1)[0]
    _file_seconds[path] = _file_seconds.get(path, 0.0) + report.duration


def pytest_sessionfinish(session) -> None:
    out = session.config.getoption("--record-durations")
    if out and not hasattr(session.config, "workerinput"):  # the controller: it sees every worker's reports
        Path(out).write_text(json.dumps({k: round(v, 1) for k, v in sorted(_file_seconds.items())}, indent=0) + "\n")


def pytest_configure(config) -> None:
    # a module that registers its PRNG with Hypothesis when a test first imports it (trio) is warned about: the
    # check looks for the PRNG's referrers, and those frozen out of collection (frozen_collection) are not seen
    config.addinivalue_line("filterwarnings",
                            "ignore:It looks like `register_random`:hypothesis.errors.HypothesisWarning")


@pytest.fixture(scope="session", autouse=True)
def frozen_collection():
    """What collection loaded (torch, Lightning, MLflow, Ray, ...: over half a million objects) lives all session:
    frozen, every later full garbage collection skips it. Each one (``release_free_memory`` after every RL
    checkpoint, and Python's own) would otherwise scan it all again, over half a CPU second here. Never unfrozen: it
    lives until the process ends, and pytest's five collections as it ends would scan it."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def throwaway_mlflow_store(tmp_path_factory, empty_store):
    """``MLFLOW_TRACKING_URI`` at a temp SQLite store for the whole session (tests may point it elsewhere)."""
    before = store_snapshot(REPO_MLRUNS)
    uri = copy_store(empty_store, tmp_path_factory.mktemp("mlflow") / "mlflow.db")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_URI", uri)
        yield uri
    changed = changes(before, store_snapshot(REPO_MLRUNS))
    if changed:
        pytest.fail(f"the tests wrote into the repository's {REPO_MLRUNS}: {', '.join(changed[:10])}"
                    f"{' ...' if len(changed) > 10 else ''}", pytrace=False)


@pytest.fixture(autouse=True)
def kernel_cache_bounds_stay_in_their_test():
    """A PhaseRunner bounds the kernel caches in os.environ (pipeline.runtime.memory): later tests would inherit it."""
    from pipeline.runtime.memory import KERNEL_CACHES

    saved = {name: os.environ.get(name) for name in (*KERNEL_CACHES, "KOIKOI_BOUNDED_KERNEL_CACHES")}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def one_thread():
    """Tiny nets gain nothing from intra-op threads, and on a shared machine they lose a lot (test directories
    of tiny nets use it for every test)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def synthetic_dataset(tmp_path_factory) -> Path:
    """Three heuristic self-play games as a dataset: for tests that must run without the human records (a tuning
    trial on it is a second or two of training)."""
    from pipeline.sl.dataset import build_dataset
    from pipeline.sl.records_source import synthesize_records

    d = tmp_path_factory.mktemp("synthetic")
    synthesize_records(d / "records", 3, seed=0, progress=False)
    build_dataset(d / "records", d / "sl", val_fraction=0.34, seed=0, source="synthetic", progress=False)
    return d / "sl"
