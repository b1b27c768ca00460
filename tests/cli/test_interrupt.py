"""Ctrl-C at any moment of a ``koikoi`` command or a stage, from its first imports on: one line on stderr,
``<name>: interrupted``, and exit code 130. The signal goes to the whole process group, as a terminal's does,
at points measured in the process's own CPU time (a busy machine delays them, it does not skip them)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The interpreter itself starts in ~0.015 CPU s and pipeline's handler is in by ~0.03 (a busy machine: ~0.04
# for a stage, whose `-m` imports runpy first); the imports of a command take ~0.3. Before the handler a
# Ctrl-C is Python's (a traceback; at times dropped, and the program runs on): whatever runs earlier moves
# 0.05 there, as setuptools' editable finder did from `site` (pyproject.toml's package-dir), and as a
# preexec_fn does (spawn below).
IMPORTING = (0.05, 0.1, 0.2)


@contextmanager
def sigint_at_default_in_children() -> Iterator[None]:
    """Children start with SIGINT at its default, as a terminal's job does, even where this process ignores it
    (a suite started in the background): exec resets a handled signal, not an ignored one. Not with a
    preexec_fn: subprocess then forks instead of vforking, and the child's CPU clock would start with what the
    copy of this process costs it (~0.015 CPU s after torch's import, more in a suite's worker), before the
    program runs."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def spawn(argv: list[str], cwd: Path) -> subprocess.Popen:
    """``argv`` in its own session and process group, as a terminal's foreground job, stderr piped."""
    with sigint_at_default_in_children():
        return subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def interrupt_at(argv: list[str], cpu: float, cwd: Path) -> tuple[int | None, str]:
    """Start ``argv``, send SIGINT to its process group once it used ``cpu`` CPU seconds; ``(exit code,
    stderr)``, or ``(None, "")`` when it ended before."""
    proc = spawn(argv, cwd)
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


def handler_line() -> int:
    """The line of pipeline/__init__.py that installs its Ctrl-C handler."""
    lines = (ROOT / "pipeline" / "__init__.py").read_text().splitlines()
    return next(i for i, x in enumerate(lines, 1) if "_signal.signal(_signal.SIGINT, _on_sigint)" in x)


def before_the_handler(err: str) -> bool:
    """Python's own report of a Ctrl-C that came before pipeline's handler was in: a traceback ending in
    ``KeyboardInterrupt`` whose frames run no code of ``pipeline/`` past the top of its ``__init__.py``."""
    lines = err.strip().splitlines()
    if not lines or lines[-1] != "KeyboardInterrupt":
        return False
    ours, init = str(ROOT / "pipeline"), str(ROOT / "pipeline" / "__init__.py")
    frames = re.findall(r'File "([^"]+)", line (\d+)', err)
    return all(not f.startswith(ours) or (f == init and int(n) < handler_line()) for f, n in frames)


def assert_one_line(code: int | None, err: str, name: str, argv: list[str], cpu: float) -> None:
    lines = [x for x in err.splitlines() if x.strip()]
    where = f"{' '.join(argv[:4])} at {cpu} CPU s"
    if code == -signal.SIGINT:  # the signal came before pipeline's handler: 130 to a shell
        # before Python's own handler nothing is printed; after it, before pipeline's, Python's traceback
        assert lines == [] or before_the_handler(err), (where, err)
        return
    assert code == 130, (where, code, err)
    assert lines == [f"{name}: interrupted"], (where, err)


def test_only_a_ctrl_c_before_the_handler_may_end_in_pythons_traceback():
    early = ('Traceback (most recent call last):\n  File "<frozen runpy>", line 189, in _run_module_as_main\n'
             f'  File "{ROOT}/stages/__init__.py", line 13, in <module>\n    import pipeline\n'
             f'  File "{ROOT}/pipeline/__init__.py", line 22, in <module>\nKeyboardInterrupt\n')
    late = early.replace("line 22", f"line {handler_line() + 1}")
    deeper = early.replace("KeyboardInterrupt",
                           f'  File "{ROOT}/pipeline/cli.py", line 5, in <module>\nKeyboardInterrupt')
    assert before_the_handler(early) and not before_the_handler(late) and not before_the_handler(deeper)
    assert not before_the_handler("duels: error: boom\n")


def test_start_up_imports_no_editable_finder(tmp_path):
    """The editable install is the repository's path in a .pth file (pyproject.toml's package-dir): setuptools'
    finder, its way for a flat layout, imports pathlib and importlib.util in every process's start-up, before
    pipeline's Ctrl-C handler, and the 0.05 CPU s cases then fail about one run in two."""
    probe = "import sys; print(sorted(m for m in sys.modules if m.startswith('__editable___koikoi')))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", "an editable install older than pyproject.toml's package-dir: make setup"


def run_named_koikoi(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` as a script named ``koikoi``: a program pipeline's Ctrl-C handling covers."""
    script = tmp_path / "koikoi"
    script.write_text(body)
    with sigint_at_default_in_children():
        return subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)


def test_a_ctrl_c_python_can_only_print_is_raised_again(tmp_path):
    """A ``KeyboardInterrupt`` in a weakref callback (the import system's module locks have them) or a
    ``__del__`` is "unraisable": Python would print it and go on."""
    body = ("import time, weakref\nimport pipeline\n\n\nclass Box:\n    pass\n\n\n"
            "def interrupt(ref):\n    raise KeyboardInterrupt\n\n\n"
            "box = Box()\nref = weakref.ref(box, interrupt)\ndel box\nfor _ in range(300):\n    time.sleep(0.1)\n")
    done = run_named_koikoi(tmp_path, body)
    assert (done.returncode, done.stderr) == (130, "koikoi: interrupted\n")


def test_a_ctrl_c_the_start_up_printed_and_dropped_ends_the_program(tmp_path):
    """CPython prints some interrupted steps of its start-up (its check whether the script is a zip archive:
    "Failed checking if argv[0] is an import path entry") and goes on; ``sys.last_value`` keeps the error."""
    body = "import sys\nimport time\n\nsys.last_value = KeyboardInterrupt()\nimport pipeline\n\ntime.sleep(30)\n"
    done = run_named_koikoi(tmp_path, body)
    assert (done.returncode, done.stderr) == (130, "koikoi: interrupted\n")


def test_a_ctrl_c_while_a_module_imports_is_raised_once_the_import_ends(tmp_path):
    """Raised inside an import, the ``KeyboardInterrupt`` can land in C++ that runs Python (torch's
    ``_c10d_init`` through pybind11), which aborts the program (exit code -6, a page of trace: seen in CI).
    The module here sends itself the signal and imports on: it ends, then the program stops."""
    (tmp_path / "held.py").write_text("import os\nimport signal\nimport time\n\nos.kill(os.getpid(), signal.SIGINT)\n"
                                      "time.sleep(0.3)\nprint('imported', flush=True)\n")
    body = "import sys\nimport time\nimport pipeline\n\nsys.path.insert(0, '.')\nimport held  # noqa\ntime.sleep(30)\n"
    done = run_named_koikoi(tmp_path, body)
    assert (done.returncode, done.stdout, done.stderr) == (130, "imported\n", "koikoi: interrupted\n")


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
    assert_one_line(code, err, "koikoi duel", argv, cpu)  # the same line from the imports on


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
    proc = spawn(argv, project)
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
