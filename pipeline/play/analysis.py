"""A finished game's analysis for the page (``GET /api/games/{id}/analysis``): the person's decisions judged in a
thread by the server's judge (``pipeline.analysis``), from the finished game's record, while the page polls the
progress; one analysis at a time, for they share the CPU with the games."""

from __future__ import annotations

import threading
from typing import Any

from .opponents import log


class Judges:
    """The server's judge, a ``search:`` spec (None: the server has none), loaded at the first analysis and kept;
    ``lock`` runs one analysis at a time."""

    def __init__(self, spec: str | None) -> None:
        self.spec = spec
        self.lock = threading.Lock()
        self.judge: Any = None  # an analysis.judge.Judge once loaded

    def get(self) -> Any:
        """The judge (call under ``lock``); ``ValueError`` when it cannot be loaded."""
        if self.judge is None:
            from ..analysis.judge import load_judge

            self.judge = load_judge(self.spec)
        return self.judge


class Analysis:
    """The analysis of the seat ``you`` of a finished game's ``record``, computed in a thread as it is made:
    ``view()`` is its progress (rounds judged of the rounds), then its report, or the line saying it failed."""

    def __init__(self, game_id: str, record: dict[str, Any], you: int, judges: Judges) -> None:
        self.id, self.record, self.you, self.judges = game_id, record, you, judges
        self.done = self.total = 0
        self.report: dict[str, Any] | None = None
        self.failed = False
        threading.Thread(target=self._run, daemon=True, name=f"analysis-{game_id}").start()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        from ..analysis.judge import read_game
        from ..analysis.report import analyse

        try:
            with self.judges.lock:
                judge = self.judges.get()
                game = read_game(f"game {self.id}", self.record)
                report = analyse(game, judge, (self.you,), self.you, self._progress)
            report["judge"]["spec"] = self.judges.spec
            self.report = report
        except Exception as e:  # the operator's log says why; the client gets one line
            log(f"game {self.id}: the analysis failed: {type(e).__name__}: {e}")
            self.failed = True

    def view(self) -> dict[str, Any]:
        """``{"status": "running", "done", "total"}``, then ``{"status": "done", **report}``, or ``{"status":
        "failed"}``."""
        if self.report is not None:
            return {"status": "done", **self.report}
        return {"status": "failed"} if self.failed else {"status": "running", "done": self.done, "total": self.total}
