"""koikoi: an experiment-tracked pipeline that trains Koi-Koi players (Guan et al., IEEE TAI 2023).

Run as a program (the ``koikoi`` command, ``python -m pipeline.<module>``, a DVC stage's ``python -m
stages.<stage>``), a Ctrl-C that no code of the command catches (one in its first moments, while the
imports run) ends it as every other Ctrl-C does: one line, ``<name>: interrupted``, and exit code 130.
So does any error left uncaught after a Ctrl-C: a C extension interrupted while it imports turns the
``KeyboardInterrupt`` into an ``ImportError`` (numpy: "PyCapsule_Import could not import module"), so
the SIGINT handler notes that the signal came. Imported by another program, nothing changes.
"""

import os as _os
import signal as _signal
import sys as _sys
import threading as _threading

_sigint_seen = False


def _program_name() -> str | None:
    """``koikoi``, or the stage's name for ``python -m stages.<stage>`` (the module's last name for
    ``python -m pipeline.<module>``); None for other programs."""
    argv = getattr(_sys, "orig_argv", [])
    if "-m" in argv[1:-1]:
        module = argv[argv.index("-m", 1) + 1]
        if module.startswith(("pipeline.", "stages.")):
            last = module.rsplit(".", 1)[1]
            return "koikoi" if last == "cli" else last
        return None
    script = next((a for a in argv[1:] if not a.startswith("-")), "")
    return "koikoi" if _os.path.basename(script) == "koikoi" else None


def _on_sigint(signum: int, frame: object) -> None:
    global _sigint_seen
    _sigint_seen = True
    raise KeyboardInterrupt  # as signal.default_int_handler does


def check_interrupted() -> None:
    """Raise the Ctrl-C an import swallowed: an optional import's ``except ImportError`` can catch the error an
    interrupted C extension raises, and the program would go on as if no signal came."""
    if _sigint_seen:
        raise KeyboardInterrupt


def _interrupted(kind: type, value: BaseException, tb: object, _default=_sys.excepthook) -> None:
    if not (issubclass(kind, KeyboardInterrupt) or _sigint_seen):
        return _default(kind, value, tb)
    try:
        _sys.stdout.flush()
    except Exception:  # noqa: BLE001 (a closed or broken stdout must not hide the line)
        pass
    _sys.stderr.write(f"{_program_name()}: interrupted\n")
    _sys.stderr.flush()
    _os._exit(130)  # the shell's code for SIGINT; what it would have cleaned up has run as the exception rose


if _program_name() is not None:
    _sys.excepthook = _interrupted
    if (_threading.current_thread() is _threading.main_thread()
            and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler):
        _signal.signal(_signal.SIGINT, _on_sigint)
