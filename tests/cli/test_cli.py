"""The koikoi command's edges: one-line usage errors with exit code 2, plain-text help, --version, and
progress bars only on a terminal."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios

import pytest
from koikoi_cli import run_cli
from tiny import TINY

from pipeline.cli import build_parser


def test_version(capsys):
    from importlib.metadata import version

    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and out.strip() == f"koikoi {version('koikoi')}"


@pytest.mark.parametrize("argv, message", [
    (["bench", "engine", "--games", "0"], "koikoi bench engine: error: argument --games: must be >= 1, got 0"),
    (["bench", "inference", "--rounds", "x"], "argument --rounds: expected an integer, got 'x'"),
    (["duel", "heuristic", "random", "--rounds", "20"], "argument --rounds: must be 1..12, got 20"),
    (["duel", "heuristic", "random", "--games", "0"], "argument --games: must be >= 1"),
    (["duel", "heuristic", "nobody"], "koikoi duel: error: unknown agent 'nobody'"),
    (["duel", "heuristic", "random", "--points", str(2**63)], f"argument --points: must be 1..1000, got {2**63}"),
    (["duel", "heuristic", "x" * 300], "koikoi duel: error: agent 'xxx"),  # too long for a file name: no traceback
    (["attention", "--model", "m", "--out", "x.png", "--turn", "17"], "argument --turn: must be 1..16, got 17"),
    (["sl-cv", "--folds", "1"], "argument --folds: must be >= 2, got 1"),
    (["tune", "--trials", "-1"], "argument --trials: must be >= 0, got -1"),
    (["nope"], "invalid choice: 'nope'"),
])
def test_usage_errors_are_one_line_with_exit_code_2(argv, message, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_duel_refuses_a_cuda_device_torch_cannot_see(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    code, _, err = run_cli(["duel", "heuristic", "random", "--device", "cuda", "--games", "2"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--device is cuda but torch sees no CUDA GPU" in err
    code, out, _ = run_cli(["duel", "heuristic", "random", "--device", "cuda", "--games", "2", "--workers", "0"],
                           capsys)
    assert code == 0 and out  # no worker processes: play stays on this process's CPU, whatever --device says


def test_bench_search_times_the_play_pages_replies(capsys):
    import json

    code, out, err = run_cli(["bench", "search", "--agent", "heuristic", "--games", "1", "--rounds", "1"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["agent"] == "heuristic" and result["replies"] > 1
    assert 0 <= result["reply_p50_s"] <= result["reply_p95_s"]


def test_bench_search_counts_the_games_searches_not_the_warm_ups(tiny_model, capsys):
    import json

    agent = f"search:{tiny_model}?decisions=discard&deals=2&reward=point"  # no win-probability table needed
    code, out, err = run_cli(["bench", "search", "--agent", agent, "--games", "1", "--rounds", "1"], capsys)
    assert code == 0, err
    result = json.loads(out)
    # the warm-up searches 5 discards (of its 8 observations); one round has at most 8 of the agent's
    assert result["warm_up_s"] > 0 and 0 < result["searched"] <= 8 and result["deals_per_search"] == 2


def test_replay_of_a_directory_without_records_is_an_error(tmp_path, capsys):
    code, out, err = run_cli(["replay", str(tmp_path)], capsys)
    assert code == 2 and "no game records" in err and out == ""
    code, _, err = run_cli(["replay", str(tmp_path / "missing")], capsys)
    assert code == 2 and "not a directory" in err


def test_attention_out_into_a_missing_directory_is_refused(tmp_path, capsys):
    from pipeline.net.model import KoiKoiNet
    from pipeline.net.modelio import save_model

    model = save_model(KoiKoiNet(TINY), tmp_path / "m", {"kind": "sl"})
    out = tmp_path / "a" / "b" / "x.png"
    code, _, err = run_cli(["attention", "--model", str(model), "--out", str(out)], capsys)
    assert code == 2 and "no such directory" in err and not (tmp_path / "a").exists()


def test_a_command_refuses_to_write_over_what_it_reads(tmp_path, monkeypatch, capsys):
    """``--out`` inside an input (issue 60): the SL model an attention figure would write into stays as it was, and
    the error is one line."""
    import shutil

    from tiny import ROOT, save_tiny

    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    sl = save_tiny(tmp_path / "models/sl")
    before = {f.name: f.read_bytes() for f in sl.iterdir()}
    argv = ["attention", "--model", "models/sl", "--out", "models/sl/a.png"]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and "is inside the input models/sl" in err and len(err.strip().splitlines()) == 1
    assert err.startswith("koikoi attention: error: --out models/sl/a.png ")
    from pipeline.runtime.paths import check_apart

    for out_dir, how in (("models/sl", "is the input"), ("models", "contains the input")):
        with pytest.raises(ValueError, match=how):
            check_apart(out_dir, ["models/sl"])
    assert {f.name: f.read_bytes() for f in sl.iterdir()} == before


def _help_texts(parser) -> list[str]:
    texts = [parser.format_help()]
    for action in parser._actions:  # argparse keeps subparsers here; no public accessor
        for sub in getattr(action, "choices", None) and getattr(action.choices, "values", lambda: [])() or []:
            texts += _help_texts(sub)
    return texts


def test_help_is_plain_text():
    texts = _help_texts(build_parser())
    assert len(texts) >= 13  # koikoi, 7 commands, 5 bench targets
    for text in texts:
        assert "``" not in text and ":func:" not in text, text


def _stderr_of_duel(tty: bool) -> bytes:
    """stderr of `koikoi duel heuristic random --games 4`, written to a terminal or to a pipe (a log)."""
    argv = [sys.executable, "-m", "pipeline.cli", "duel", "heuristic", "random", "--games", "4"]
    if not tty:
        return subprocess.run(argv, capture_output=True, timeout=120, check=True).stderr
    parent, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # a new pty is 0 columns wide
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=child)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(parent, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(parent)
    return b"".join(chunks)


def test_progress_bars_only_on_a_terminal():
    assert b"\r" not in _stderr_of_duel(tty=False)  # `koikoi duel ... 2>log`: no bar fragments
    assert b"\r" in _stderr_of_duel(tty=True) and b"game" in _stderr_of_duel(tty=True)


def test_progress_bar_helper_follows_the_output(monkeypatch):
    import io

    from pipeline.runtime import progress

    log = io.StringIO()
    bar = progress.progress_bar(range(3), file=log)
    assert list(bar) == [0, 1, 2] and log.getvalue() == ""  # not a terminal: nothing written

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    list(progress.progress_bar(range(3), file=term, desc="x"))
    assert "x" in term.getvalue()
    assert progress.progress_bar(range(3), file=Terminal(), enabled=False).disable
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress.on_terminal()
