"""The CLI's last traps: a misspelt option named with its subcommand and the option it may mean, messages that
name what is wrong first, a one-line note when `koikoi play` falls back to the heuristic agent, whole help
sentences, and a long stage's once-a-minute line in a log."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from koikoi_cli import run_cli
from tiny import TINY

from pipeline.cli import build_parser
from pipeline.cli_args import summary


@pytest.mark.parametrize("argv, message", [
    (["duel", "heuristic", "random", "--gmaes", "4"],
     "koikoi duel: error: unrecognized arguments: --gmaes (did you mean --games?)"),
    (["duel", "--gmaes", "4"],  # not "the following arguments are required: B": the typo is the problem
     "koikoi duel: error: unrecognized arguments: --gmaes (did you mean --games?)"),
    (["duel", "heuristic", "random", "--gmaes=4"],
     "koikoi duel: error: unrecognized arguments: --gmaes (did you mean --games?)"),
    (["bench", "engine", "--gams", "3"],
     "koikoi bench engine: error: unrecognized arguments: --gams (did you mean --games?)"),
    (["--verison"], "koikoi: error: unrecognized arguments: --verison (did you mean --version?)"),
    (["duel", "heuristic", "random", "--zzz"], "koikoi duel: error: unrecognized arguments: --zzz (see koikoi duel"),
])
def test_a_misspelt_option_names_the_subcommand_and_the_close_option(argv, message, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(message), err


def test_abbreviations_short_options_and_negative_numbers_still_parse():
    args = build_parser().parse_args(["duel", "heuristic", "random", "--game", "6", "--seed", "-3"])
    assert args.games == 6 and args.seed == -3
    assert build_parser().parse_args(["sl-cv", "-Slr=0.1"]).set == ["lr=0.1"]


def test_replay_of_a_missing_folder_names_the_path(tmp_path, capsys):
    missing = tmp_path / "nope"
    code, _, err = run_cli(["replay", str(missing)], capsys)
    assert code == 2 and err.strip() == f"koikoi replay: error: {missing}: not a directory of game records"


def _play_banner(cwd) -> str:
    """stderr of `koikoi play --no-browser` in ``cwd`` up to its "serving" line; the server is then stopped."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "play", "--no-browser", "--port", str(port),
                             "--records", str(cwd / "played")], cwd=cwd, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("koikoi play: http"):
                break
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return "".join(lines)


def test_play_outside_the_project_says_it_plays_the_heuristic_agent(tmp_path):
    from pipeline.net.model import KoiKoiNet
    from pipeline.net.modelio import save_model

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    banner = _play_banner(outside)
    assert f"koikoi play: no trained model under {outside / 'models'}" in banner and "against heuristic" in banner
    project = tmp_path / "project"
    save_model(KoiKoiNet(TINY), project / "models/sl", {"kind": "sl"})
    banner = _play_banner(project)
    assert "no trained model" not in banner and "against models/sl" in banner


def _help_of(parser, *path: str) -> str:
    for name in path:
        parser = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)
                      ).choices[name]
    return parser.format_help()


def test_bench_help_lists_whole_descriptions():
    import importlib
    import pkgutil

    from pipeline import benchmarks

    listing = " ".join(_help_of(build_parser(), "bench").split())
    assert "Give a model as --a or --b for the realistic figure" in listing  # a description's second sentence
    for mod in pkgutil.iter_modules(benchmarks.__path__):
        first = summary(importlib.import_module(f"{benchmarks.__name__}.{mod.name}").__doc__)
        assert first.endswith(".") and first in listing, mod.name


LOGGED_RUN = """
import sys, time
from pipeline.runtime import progress
progress.LOG_EVERY = 0.3
with progress.progress_bar(total=40, desc="outer", unit="loop") as outer:
    for _ in range(4):
        with progress.progress_bar(total=10, desc="inner", unit="game", leave=False) as inner:
            for _ in range(10):
                time.sleep(0.03)
                inner.update()
        outer.update()
with progress.progress_bar(total=3, desc="short", unit="game") as bar:
    bar.update(3)
"""


def test_a_long_stage_logs_one_line_a_minute_off_a_terminal():
    t0 = time.monotonic()
    err = subprocess.run([sys.executable, "-c", LOGGED_RUN], capture_output=True, text=True, timeout=120,
                         check=True).stderr
    seconds = time.monotonic() - t0
    lines = err.splitlines()
    assert "\r" not in err and lines, err
    # one line per interval (0.3 s here), whatever the updates: never one per update
    assert len(lines) <= seconds / 0.3 + 1 and len(lines) < 40, err
    assert all(" outer: " in line and "/40 loop" in line and "ETA" in line for line in lines[1:]), err
    assert any(" | inner: " in line and "/10 game" in line for line in lines), err
    assert "short" not in err  # work shorter than the interval writes nothing


def test_log_line_says_done_total_rate_and_eta(monkeypatch):
    import gc
    import io

    from pipeline.runtime import progress
    from pipeline.runtime.progress import log_line, progress_bar, report_open_bars

    monkeypatch.setattr(progress, "_open", [])  # this test's bars alone

    log = io.StringIO()
    bar = progress_bar(total=10, desc="rl_phase1[wp] loops", unit="loop", file=log)
    bar.start_t -= 120  # as if two minutes had passed
    bar.update(4)
    line = log_line(bar)
    assert line.startswith("rl_phase1[wp] loops: 4/10 loop, ") and "per loop, ETA 03:0" in line, line
    assert log.getvalue() == ""  # a bar never writes itself into a log
    assert report_open_bars().endswith(line) and log.getvalue().endswith(line + "\n")
    bar.close()
    assert report_open_bars() is None

    def abandoned() -> None:  # an exception leaves a bar open: it goes with its frame
        progress_bar(total=5, desc="left open", file=log).update(1)
        raise RuntimeError

    with pytest.raises(RuntimeError):
        abandoned()
    gc.collect()
    assert report_open_bars() is None
