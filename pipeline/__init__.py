"""koikoi: an experiment-tracked pipeline that trains Koi-Koi players (Guan et al., IEEE TAI 2023).

Run as a program, any uncaught Ctrl-C (even during the imports, or one an interrupted C extension turned into
an ``ImportError``) ends it with one line, ``<name>: interrupted``, and exit code 130. A Ctrl-C while a module
imports is sent again once no import runs (raised inside C++ that runs Python, it aborts). This module imports
only what the interpreter has loaded already, so that a Ctrl-C is ours as early as possible.
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
    """``koikoi <command>``, or the module's last name for ``python -m stages.<stage>`` (or ``pipeline.<module>``);
    None for other programs. The same name as the CLI's own handler prints."""
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
        # a raise could land in C++ code that runs Python (pybind11) and abort: sent again once no import runs
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
    """Raise the Ctrl-C an import swallowed (an optional import's ``except ImportError`` can catch it)."""
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
    # sent again by another thread once this hook has returned: raised inside the hook, Python would drop it too
    try:
        _thread.start_new_thread(_signal.pthread_kill, (_main_thread, _signal.SIGINT))
    except RuntimeError:  # the interpreter is shutting down
        pass


def _interrupted_in_start_up() -> bool:
    """Whether the interpreter printed a Ctrl-C and went on before this module ran (``sys.last_value``)."""
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
    # pydantic_core (pyo3) panics on a Ctrl-C while it imports datetime: imported here, it is a plain one
    import datetime as _dt  # noqa: F401
