"""Progress bars only on a terminal: a log file (``2>log``, ``dvc repro``) never gets ``\\r`` fragments.

``progress_bar`` is the one way to make a tqdm bar in the project; ``on_terminal`` is the same test for
libraries that draw their own bars (Lightning's ``enable_progress_bar``, Optuna's ``show_progress_bar``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


def on_terminal() -> bool:
    """Whether stderr, where the bars go, is a terminal."""
    return sys.stderr.isatty()


def progress_bar(iterable: Iterable | None = None, *, enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, drawn only when ``enabled`` and stderr is a terminal (it still counts)."""
    from tqdm import tqdm

    # disable=None: tqdm itself turns the bar off when its output is not a terminal
    return tqdm(iterable, disable=None if enabled else True, **kwargs)
