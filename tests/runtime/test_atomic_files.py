"""Every file the project writes survives a kill at any write: each writer runs in a forked child whose file
size limit (RLIMIT_FSIZE) makes the kernel kill it (SIGXFSZ) at its first write, and again half way through its
largest file; its files are then absent or whole (the previous version, or the new one), never cut short.

The harness first shows it catches an in-place write (``Path.write_text``)."""

from __future__ import annotations

import json
import os
import resource
import signal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import optuna
import pytest
import torch
from tiny import TINY

from pipeline.agents.random_agent import RandomAgent
from pipeline.duel.attention import attention_figure, play_to_discard
from pipeline.duel.plots import rl_curves, winrate_matrix
from pipeline.duel.runner import play_duel
from pipeline.engine import GameState, write_record
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.play.game_session import GameSession
from pipeline.runtime import atomic
from pipeline.runtime.curves import write_curve
from pipeline.runtime.train_guards import AtomicCheckpointIO
from pipeline.tracking.resume import remember_run
from pipeline.tune.apply import apply_params
from pipeline.tune.study_report import write_outputs
from pipeline.value.winprob import WinProbTable, plot_table

OLD = b"the previous version of this file\n"
PARAMS_TEXT = (Path(__file__).resolve().parents[2] / "params.yaml").read_text()
NAMES = ["atomic.write_text", "game record", "play record", "curve csv + rl curves png", "model dir",
         "lightning checkpoint", "winrate matrix png", "attention png (koikoi attention --out)", "winprob png",
         "winprob table", "tune outputs", "tune --apply params.yaml", "remembered run"]


def run_killed(write: Callable[[], object], limit: int | None) -> int | None:
    """Run ``write()`` in a forked child limited to ``limit`` bytes per file (None: no limit); the signal that
    ended it, or None when it finished."""
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        code = 1
        try:
            null = os.open(os.devnull, os.O_WRONLY)  # pytest captures into files: keep those out of the limit
            os.dup2(null, 1)
            os.dup2(null, 2)
            # torch's OpenMP pool does not survive a fork: a child that enters a parallel region the parent's
            # threads served hangs (it did after a multi-threaded test in the same worker); run ops inline
            torch.set_num_threads(1)
            if limit is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the kernel's default kills
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            write()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    assert os.WEXITSTATUS(status) == 0, f"the writer failed (exit {os.WEXITSTATUS(status)})"
    return None


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()
            and not p.name.startswith(".")}


def tiny_net() -> KoiKoiNet:
    torch.manual_seed(0)
    return KoiKoiNet(TINY)


def finished_game(records: Path) -> GameSession:
    """A finished game whose record is still in memory (its records directory refused it)."""
    blocker = records / "blocker"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("")
    game = GameSession("g1", RandomAgent(1), "random", 3, 1, 30, blocker / "played")
    rng = np.random.default_rng(0)
    while not game.state.is_over:
        game.act(int(rng.choice(game.state.legal_actions())))
    assert game.record_unsaved
    game.records_dir = records
    return game


def study() -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    s = optuna.create_study(study_name="kill", direction="maximize")
    dist = optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True)
    for i, lr in enumerate((1e-3, 3e-3, 5e-4)):
        s.add_trial(optuna.trial.create_trial(params={"lr": lr}, distributions={"lr": dist}, value=0.5 + i / 10,
                                              user_attrs={"params": {"lr": lr}}))
    return s


def writers(tmp: Path) -> dict[str, tuple[Callable[[Path], object], list[str]]]:
    """name -> (write into a directory, the files it writes there)."""
    net = tiny_net()
    state = GameState(seed=1, num_rounds=1)
    while not state.is_over:
        state.step(state.legal_actions()[0])
    duel = play_duel(RandomAgent(0), RandomAgent(1), 4)
    curve = [{"loop": i, "games": 100 * i, "win_rate": 0.5, "point_diff": 0.0, "eval_games": 10, "ci_low": 0.3,
              "ci_high": 0.7} for i in range(1, 4)]
    obs = play_to_discard(RandomAgent(0), seed=0, turn=2)
    table = WinProbTable(num_rounds=2, init_points=30, coef=[[0.0, 3.0, 0.1], [0.0, 4.0, 0.2]])
    tuned = study()

    def curve_and_plot(d: Path) -> None:
        write_curve(curve, d / "curve.csv", list(curve[0]))
        rl_curves({"RL": d / "curve.csv"}, d / "rl_curves.png")

    return {
        "atomic.write_text": (lambda d: atomic.write_text(d / "a.txt", "x" * 5000), ["a.txt"]),
        "game record": (lambda d: write_record(state, d / "game.json"), ["game.json"]),
        "play record": (lambda d: finished_game(d / "rec").save_record(), []),
        "curve csv + rl curves png": (curve_and_plot, ["curve.csv", "rl_curves.png"]),
        "model dir": (lambda d: save_model(net, d / "model", {"kind": "sl"}), ["model/model.pt", "model/config.json"]),
        "lightning checkpoint": (lambda d: AtomicCheckpointIO().save_checkpoint(
            {"state_dict": net.state_dict(), "epoch": 3}, d / "last.ckpt"), ["last.ckpt"]),
        "winrate matrix png": (lambda d: winrate_matrix(["random", "heuristic"], {("random", "heuristic"): duel},
                                                        d / "winrate_matrix.png"), ["winrate_matrix.png"]),
        "attention png (koikoi attention --out)": (lambda d: attention_figure(net, {"kind": "sl"}, obs, d / "att.png"),
                                                   ["att.png"]),
        "winprob png": (lambda d: plot_table(table, d / "winprob.png"), ["winprob.png"]),
        "winprob table": (lambda d: table.save(d / "wp"), ["wp/winprob.json"]),
        "tune outputs": (lambda d: write_outputs(tuned, "sl", d / "tune"),
                         ["tune/best_params.yaml", "tune/summary.json", "tune/optimization_history.png",
                          "tune/param_importances.png"]),
        "tune --apply params.yaml": (lambda d: apply_params(d / "params.yaml", {"sl_train": {"lr": 0.001}}),
                                     ["params.yaml"]),
        "remembered run": (lambda d: remember_run(d / "run.json", "abc" * 10, "f" * 16), ["run.json"]),
    }


def check_writer(tmp_path: Path, write: Callable[[Path], object], names: list[str]) -> int:
    """Run ``write`` whole, then killed at its first write over old files, and half way through its largest
    file over no file and over old files; returns how many runs the limit killed."""
    ref = tmp_path / "ref"
    ref.mkdir()
    if "params.yaml" in names:  # the file it edits (old or not, it is there before)
        (ref / "params.yaml").write_text(PARAMS_TEXT)
    assert run_killed(lambda: write(ref), None) is None
    whole = files(ref)
    assert set(names) <= set(whole), sorted(whole)
    biggest = max(len(v) for v in whole.values())
    killed = 0
    for limit, old in ((0, True), (biggest // 2, False), (biggest // 2, True)):
        d = tmp_path / f"run-{limit}-{old}"
        d.mkdir()
        if "params.yaml" in names:
            (d / "params.yaml").write_text(PARAMS_TEXT)
        if old:
            for name in whole:
                if name != "params.yaml":
                    (d / name).parent.mkdir(parents=True, exist_ok=True)
                    (d / name).write_bytes(OLD)
        before = files(d)
        sig = run_killed(lambda d=d: write(d), limit)
        killed += sig == signal.SIGXFSZ
        for name, content in files(d).items():  # absent, the old version or the whole new one
            assert content == before.get(name) or content == whole.get(name) or _whole_again(name, content), \
                f"{name} cut short by a kill at byte {limit} ({len(content)} of {len(whole.get(name, b''))} bytes)"
    return killed


def _whole_again(name: str, content: bytes) -> bool:
    """A file whose bytes differ run to run (a record's time stamp): whole when it parses."""
    if name.endswith(".json"):
        try:
            json.loads(content)
            return True
        except ValueError:
            return False
    return False


def test_the_harness_catches_an_in_place_write(tmp_path):
    with pytest.raises(AssertionError, match="cut short"):
        check_writer(tmp_path, lambda d: (d / "plain.txt").write_text("y" * 5000), ["plain.txt"])


@pytest.fixture(scope="module")
def all_writers(tmp_path_factory):
    return writers(tmp_path_factory.mktemp("inputs"))


def test_every_writer_is_under_test(all_writers):
    assert sorted(all_writers) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_killed_writer_leaves_each_file_absent_or_whole(tmp_path, all_writers, name):
    write, names = all_writers[name]
    killed = check_writer(tmp_path, write, names)
    assert killed == 3, f"{name}: the limit killed only {killed} of 3 runs"
