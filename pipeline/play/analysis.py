"""A finished game's analysis for the page, judged in a thread while the page polls; one at a time (CPU)."""

import threading
from typing import Any

from .opponents import default_judge, log


def judge_for(spec: str | None, seed: int = 0) -> tuple[str, Any]:
    """The judge of ``spec`` (default: ``default_judge()``) and its spec; ``ValueError`` in one line."""
    from ..analysis.judge import load_judge
    spec = spec or default_judge()
    if spec is None:
        raise ValueError("no trained model to judge with: give --agent search:<model directory>")
    try:
        return spec, load_judge(spec, seed)
    except ValueError as e:
        raise ValueError(f"--agent {e}") from None


class Judges:
    """The server's judge (spec None: none), loaded at the first analysis and kept."""

    def __init__(self, spec: str | None) -> None:
        self.spec, self.lock, self.judge = spec, threading.Lock(), None  # judge: an analysis.judge.Judge once loaded

    def get(self) -> Any:
        if self.judge is None:
            from ..analysis.judge import load_judge
            self.judge = load_judge(self.spec)
        return self.judge


class Analysis:
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
        if self.report is not None:
            return {"status": "done", **self.report}
        return {"status": "failed"} if self.failed else {"status": "running", "done": self.done, "total": self.total}
