"""koikoi: an experiment-tracked pipeline that trains Koi-Koi players (Guan et al., IEEE TAI 2023).

Run as a program (the ``koikoi`` command, ``python -m pipeline.<module>``, a DVC stage's ``python -m
stages.<stage>``), a Ctrl-C that no code of the command catches (one in its first moments, while the
imports run) ends it as every other Ctrl-C does: one line, ``<name>: interrupted``, and exit code 130.
So does any error left uncaught after a Ctrl-C: a C extension interrupted while it imports turns the
``KeyboardInterrupt`` into an ``ImportError`` (numpy: "PyCapsule_Import could not import module"), so
the SIGINT handler notes that the signal came. A Ctrl-C while a module imports is held and sent again once
no import runs: raised inside C++ that runs Python (torch's ``_c10d_init``, pybind11), it aborted the
program (exit code -6, a page of trace; seen once in CI). Imported by another program, nothing changes.

Before this module runs, a Ctrl-C is Python's own: a traceback (exit code -2, or 1 inside ``site``), and
at some steps of the start-up Python prints it and goes on (its check whether the script is a zip archive;
``site`` catching an error while it runs a ``.pth`` file), so that the command then ran to its end as if no
signal came. Hence this module imports only what the interpreter has loaded already (``_signal``, not
``signal`` and its enums; no ``threading``); the editable install runs no code in ``site`` (``package-dir``
in pyproject.toml; setuptools' finder took the start-up from ~0.015 to ~0.04 CPU s); and a Ctrl-C the
start-up printed and dropped (``sys.last_value``) ends the program here. A ``KeyboardInterrupt`` that Python
cannot raise, and would print and drop (in a weakref callback, as the import system's module locks have,
or a ``__del__``), is sent again.
"""

import _frozen_importlib as _imports  # importlib._bootstrap, loaded at start-up: its locks say an import runs
import _signal  # the C module: loaded at start-up, where ``signal`` would build its enums first
import _thread
import os as _os
import sys as _sys

_sigint_seen = False
_resend_pending = False
_raised = False  # by check_interrupted: a signal held during an import is then not sent again
_main_thread = 0  # its ident, in a program


def _program_name() -> str | None:
    """``koikoi <command>`` (``koikoi`` before one is named), or the stage's name for ``python -m
    stages.<stage>`` (the module's last name for ``python -m pipeline.<module>``); None for other programs.
    The command is in the name so that the line is the same whether the Ctrl-C came during the imports or
    once the command ran (the CLI's own handler names it)."""
    argv = getattr(_sys, "orig_argv", [])
    if "-m" in argv[1:-1]:
        at = argv.index("-m", 1) + 1
        module = argv[at]
        if not module.startswith(("pipeline.", "stages.")):
            return None
        last = module.rsplit(".", 1)[1]
        return _with_command(argv[at + 1:]) if last == "cli" else last
    at = next((i for i, a in enumerate(argv[1:], 1) if not a.startswith("-")), len(argv))
    if at == len(argv) or _os.path.basename(argv[at]) != "koikoi":
        return None
    return _with_command(argv[at + 1:])


def _with_command(args: list[str]) -> str:
    # koikoi's own options (--help, --version) take no value, so its first positional is the command
    command = next((a for a in args if not a.startswith("-")), None)
    return f"koikoi {command}" if command else "koikoi"


def _on_sigint(signum: int, frame: object) -> None:
    global _sigint_seen, _resend_pending
    _sigint_seen = True
    if _import_runs():
        # A module is being imported: the raise could land in C++ code that runs Python (pybind11, torch's
        # ``_c10d_init``), which turns the exception into ``std::terminate``, an abort and a page of trace. The
        # signal is sent again once no import runs.
        if not _resend_pending:
            _resend_pending = True
            _thread.start_new_thread(_resend_after_imports, ())
        return
    raise KeyboardInterrupt  # as signal.default_int_handler does


def _import_runs() -> bool:
    # a lock no import holds may outlive its import (a traceback keeps the frame that held it)
    for ref in list(_imports._module_locks.values()):
        lock = ref()
        if lock is not None and lock.owner is not None:
            return True
    return False


def _resend_after_imports() -> None:
    global _resend_pending
    pause = _thread.allocate_lock()
    pause.acquire()
    while _import_runs():
        pause.acquire(timeout=0.01)  # a sleep without importing ``time``
    _resend_pending = False
    if not _raised:  # check_interrupted raised it meanwhile
        _signal.pthread_kill(_main_thread, _signal.SIGINT)


def check_interrupted() -> None:
    """Raise the Ctrl-C an import swallowed: an optional import's ``except ImportError`` can catch the error an
    interrupted C extension raises, and the program would go on as if no signal came."""
    global _raised
    if _sigint_seen:
        _raised = True
        raise KeyboardInterrupt


def _interrupted(kind: type, value: BaseException, tb: object, _default=_sys.excepthook) -> None:
    if not (issubclass(kind, KeyboardInterrupt) or _sigint_seen):
        return _default(kind, value, tb)
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the line is being written: a second Ctrl-C must not cut it
    try:
        _sys.stdout.flush()
    except Exception:  # noqa: BLE001 (a closed or broken stdout must not hide the line)
        pass
    _sys.stderr.write(f"{_program_name()}: interrupted\n")
    _sys.stderr.flush()
    _os._exit(130)  # the shell's code for SIGINT; what it would have cleaned up has run as the exception rose


def _unraisable(unraisable: object, _default=_sys.unraisablehook) -> None:
    if not isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        return _default(unraisable)
    # The signal again, sent by another thread once this hook has returned (the thread waits for the
    # interpreter lock): a handler run inside this hook would raise into it, and that Python drops too.
    try:
        _thread.start_new_thread(_signal.pthread_kill, (_main_thread, _signal.SIGINT))
    except RuntimeError:  # the interpreter is shutting down
        pass


def _interrupted_in_start_up() -> bool:
    """Whether the interpreter printed a Ctrl-C and went on before this module ran (``sys.last_value``,
    e.g. "Failed checking if argv[0] is an import path entry")."""
    error, seen = getattr(_sys, "last_value", None), set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


if _program_name() is not None:
    _sys.excepthook = _interrupted
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        try:
            _signal.signal(_signal.SIGINT, _on_sigint)
            _main_thread = _thread.get_ident()
            _sys.unraisablehook = _unraisable
        except ValueError:  # imported in another thread than the main one: its handler stays
            pass
    if _interrupted_in_start_up():
        _sigint_seen = True
        raise KeyboardInterrupt
    # pydantic_core (pyo3) imports datetime's C API from Rust, and a Ctrl-C during that import makes it panic,
    # printing a Rust backtrace note on stderr before the one line; imported here, a Ctrl-C in it is a plain
    # KeyboardInterrupt, and pyo3 then finds the module loaded and runs no Python code.
    import datetime as _dt  # noqa: F401
