"""The win-probability model (paper IV-C 1, Fig. 5): P(win the game | round about to start, points, dealer), one
logistic regression per round over the round starts of greedy self-play games (a draw counts half)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..net.inference import FP32, Inference
from ..runtime import atomic
from ..selfplay.batched import GameOutcome, GameSpec, PlayJob
from ..selfplay.rewards import game_outcome

TABLE_FILE = "winprob.json"


@dataclass
class WinProbTable:
    """Per round r (1-based): logistic coefficients (intercept, points, dealer) over x = (points - init) / init."""

    num_rounds: int
    init_points: int
    coef: list[list[float]]
    samples: list[int] = field(default_factory=list)  # per round, for the record
    source: str = ""

    def prob(self, round: int, points: int, dealer: bool) -> float:
        """P(the player wins the game) at the start of ``round`` with ``points``, dealing it or not."""
        if points <= 0:
            return 0.0
        if points >= 2 * self.init_points:
            return 1.0
        r = min(max(round, 1), self.num_rounds)
        b0, b1, b2 = self.coef[r - 1]
        z = b0 + b1 * (points - self.init_points) / self.init_points + b2 * float(dealer)
        return 1.0 / (1.0 + math.exp(-z))

    def grid(self) -> list[list[list[float]]]:
        """``grid[dealer][round - 1][points]`` for points 0 .. 2 * init_points."""
        pts = range(2 * self.init_points + 1)
        return [[[round(self.prob(r, p, bool(d)), 6) for p in pts] for r in range(1, self.num_rounds + 1)]
                for d in (0, 1)]

    def to_dict(self) -> dict:
        return {**asdict(self), "grid": self.grid()}

    @classmethod
    def from_dict(cls, d: dict) -> WinProbTable:
        t = cls(int(d["num_rounds"]), int(d["init_points"]), [list(map(float, c)) for c in d["coef"]],
                list(d.get("samples", [])), str(d.get("source", "")))
        if len(t.coef) != t.num_rounds or any(len(c) != 3 for c in t.coef):
            raise ValueError(f"win-probability table: need {t.num_rounds} rows of 3 coefficients")
        return t

    def save(self, directory: str | Path) -> Path:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        atomic.write_text(d / TABLE_FILE, json.dumps(self.to_dict()) + "\n")
        return d / TABLE_FILE

    @classmethod
    def load(cls, path: str | Path) -> WinProbTable:
        """From a ``winprob.json`` file or a directory holding one; one-line errors."""
        p = Path(path)
        if p.is_dir():
            p = p / TABLE_FILE
        if not p.is_file():
            raise FileNotFoundError(f"no win-probability table at {p} (run the winprob stage first)")
        try:
            return cls.from_dict(json.loads(p.read_text()))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise ValueError(f"bad win-probability table {p}: {e}") from None


def round_start_samples(outcomes: Sequence[GameOutcome]) -> np.ndarray:
    """Rows (round, points before the round, deals it 0/1, game outcome 1/0.5/0), two per round start."""
    rows = []
    for o in outcomes:
        for rnd, dealer, before, _ in o.rounds:
            for p in (0, 1):
                rows.append((rnd, before[p], int(dealer == p), game_outcome(o.winner, p)))
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def fit_table(outcomes: Sequence[GameOutcome], num_rounds: int = 8, init_points: int = 30, c: float = 10.0,
              source: str = "") -> WinProbTable:
    """One logistic regression per round; a round without both outcomes reuses the previous round's fit."""
    from sklearn.linear_model import LogisticRegression

    data = round_start_samples(outcomes)
    coef: list[list[float]] = []
    counts: list[int] = []
    fallback = [0.0, 4.0, 0.0]  # before any fit: a plain increasing curve through 0.5 at the start points
    for r in range(1, num_rounds + 1):
        rows = data[data[:, 0] == r]
        counts.append(len(rows))
        y = rows[:, 3]
        if len(rows) == 0 or not (np.any(y > 0) and np.any(y < 1)):
            coef.append(list(coef[-1]) if coef else list(fallback))
            continue
        x = np.column_stack([(rows[:, 1] - init_points) / init_points, rows[:, 2]])
        # a draw is half a win and half a loss: each row twice, labels 1 and 0, weights y and 1 - y
        xx = np.vstack([x, x])
        yy = np.concatenate([np.ones(len(y)), np.zeros(len(y))])
        w = np.concatenate([y, 1 - y])
        keep = w > 0
        model = LogisticRegression(C=c).fit(xx[keep], yy[keep], sample_weight=w[keep])
        coef.append([float(model.intercept_[0]), float(model.coef_[0, 0]), float(model.coef_[0, 1])])
    return WinProbTable(num_rounds, init_points, coef, counts, source)


def log_loss(table: WinProbTable, outcomes: Sequence[GameOutcome]) -> float:
    """Mean binary cross-entropy of the table on the round-start samples of ``outcomes``."""
    data = round_start_samples(outcomes)
    if len(data) == 0:
        return float("nan")
    p = np.array([table.prob(int(r), int(pt), bool(d)) for r, pt, d, _ in data]).clip(1e-6, 1 - 1e-6)
    y = data[:, 3]
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def simulate(player, games: int, seed: int, executor, inference: Inference = FP32, concurrency: int = 64,
             progress: Callable[[int], None] | None = None) -> list[GameOutcome]:
    """``games`` greedy self-play games of ``player`` (a NetSpec) on seeds derived from ``seed``."""
    specs = tuple(GameSpec(seed=seed * 1_000_003 + 500_000 + i) for i in range(games))
    job = PlayJob(players=(player.with_epsilon(0.0),), games=specs, inference=inference, concurrency=concurrency)
    return executor.run(job, progress=progress).outcomes


def plot_table(table: WinProbTable, path: str | Path) -> Path:
    """The paper's Fig. 5: predicted win probability against points, one line per round."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = np.arange(1, 2 * table.init_points)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, dealer in zip(axes, (True, False)):
        for r in range(1, table.num_rounds + 1):
            color = cmap((r - 1) / max(1, table.num_rounds - 1))
            if r == 1:  # every game starts at the initial points: round 1 has one point, not a curve
                ax.plot([table.init_points], [table.prob(1, table.init_points, dealer)], "o", color=color,
                        label="round 1")
                continue
            ax.plot(pts, [table.prob(r, int(p), dealer) for p in pts], color=color, label=f"round {r}")
        ax.axvline(table.init_points, color="grey", lw=0.5, ls=":")
        ax.set_title(("dealer" if dealer else "non-dealer") + " at the round start")
        ax.set_xlabel("points before the round")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("P(win the game)")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Win probability by logistic regression per round ({table.source or 'self-play'})")
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic.savefig(fig, p, dpi=110)
    plt.close(fig)
    return p
