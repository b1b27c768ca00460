"""Progress: a tqdm bar on a terminal; off one, a line every ``LOG_EVERY`` seconds saying where each open bar is."""

import os
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from typing import Any

LOG_EVERY = 60.0  # seconds between two progress lines in a log

_lock = threading.Lock()
# the log bars open in this process, outermost first; weak, so that a bar an exception left open goes
# when its frame does (tqdm closes a bar it collects)
_open: list[weakref.ref] = []
_beat: tuple[int, threading.Thread] | None = None  # (pid, thread): a forked child starts its own


def on_terminal() -> bool:
    return sys.stderr.isatty()


def progress_bar(iterable: Iterable | None = None, *, enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr (or ``file``): drawn on a terminal, else reported by the log line."""
    from tqdm import tqdm

    if not enabled:
        return tqdm(iterable, disable=True, **kwargs)
    out = kwargs.get("file") or sys.stderr
    if getattr(out, "isatty", lambda: False)():
        return tqdm(iterable, **kwargs)
    return _log_bar_class()(iterable, **kwargs)


def _log_bar_class() -> type:
    global _LogBar
    if _LogBar is None:
        from tqdm import tqdm

        class LogBar(tqdm):
            """A tqdm that counts but never draws itself: ``_heartbeat`` reports it."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                # delay=inf: tqdm never draws it, and closing it has nothing to clear
                super().__init__(*args, **{**kwargs, "delay": float("inf"), "disable": False})
                with _lock:
                    _open.append(weakref.ref(self))
                _start_heartbeat()

            def display(self, msg: str | None = None, pos: int | None = None) -> bool:
                return True  # tqdm's monitor thread may still ask: nothing to draw

            def close(self) -> None:
                with _lock:  # by identity: tqdm's == compares positions
                    _open[:] = [r for r in _open if r() is not None and r() is not self]
                super().close()

        _LogBar = LogBar
    return _LogBar


_LogBar: type | None = None


def _interval(seconds: float) -> str:
    from tqdm import tqdm

    return tqdm.format_interval(seconds)


def log_line(bar: Any) -> str:
    """One bar's state as plain text: ``desc: done/total unit, rate, ETA ... (elapsed ...)``."""
    d = bar.format_dict
    n, total, elapsed, unit = d["n"], d["total"], d["elapsed"], d["unit"]
    done = n - (d.get("initial") or 0)
    text = f"{d['prefix'] or 'progress'}: {n}/{total} {unit}" if total else f"{d['prefix'] or 'progress'}: {n} {unit}"
    if done > 0 and elapsed > 0:
        rate = done / elapsed
        text += f", {rate:.3g} {unit}/s" if rate >= 1 else f", {_interval(1 / rate)} per {unit}"
        if total:
            text += f", ETA {_interval(max(0.0, (total - n) / rate))}"
    return f"{text} (elapsed {_interval(elapsed)})"


def report_open_bars() -> str | None:
    """Write one line for the open log bars (outermost first) to the outermost's file; returns it, or None."""
    with _lock:
        bars = [b for r in _open if (b := r()) is not None]
    if not bars:
        return None
    line = f"[{time.strftime('%H:%M:%S')}] " + " | ".join(log_line(b) for b in bars)
    out = bars[0].fp
    try:
        out.write(line + "\n")
        out.flush()
    except (ValueError, OSError):  # the log was closed under us: nothing to report to
        return None
    return line


def _heartbeat() -> None:
    while True:
        time.sleep(LOG_EVERY)
        report_open_bars()


def _start_heartbeat() -> None:
    global _beat
    with _lock:
        if _beat is not None and _beat[0] == os.getpid() and _beat[1].is_alive():
            return
        thread = threading.Thread(target=_heartbeat, name="koikoi-progress-log", daemon=True)
        _beat = (os.getpid(), thread)
    thread.start()
