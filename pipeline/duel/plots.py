"""Figures of the duels stage: the win-rate matrix and the RL training curves against SL."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..runtime import atomic  # noqa: E402
from ..runtime.curves import read_curve  # noqa: E402
from .duel_report import display_name, oriented  # noqa: E402
from .stats import DuelResult  # noqa: E402

CURVE_COLUMNS = ("games", "win_rate", "ci_low", "ci_high", "vs_phase1", "vs_phase1_low", "vs_phase1_high")  # plotted


def winrate_matrix(keys: list[str], results: dict[tuple[str, str], DuelResult], out: str | Path) -> Path:
    """Heat map: cell (row, column) is the row agent's win rate against the column agent."""
    n = len(keys)
    m = np.full((n, n), np.nan)
    for i, a in enumerate(keys):
        for j, b in enumerate(keys):
            o = oriented(results, a, b) if i != j else None
            if o is not None:
                m[i, j] = o[0]
    fig, ax = plt.subplots(figsize=(1.4 * n + 2.5, 1.2 * n + 1.5))
    im = ax.imshow(m, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    names = [display_name(k) for k in keys]
    ax.set_xticks(range(n), names, rotation=30, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=10)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title("Win rate of row agent against column agent")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return _save(fig, out)


def curve_columns(path: str | Path) -> dict[str, np.ndarray] | None:
    """The plotted columns of an RL curve CSV (NaN where empty), or None when it lacks the win rate against SL."""
    if not Path(path).is_file():
        return None
    rows = read_curve(path)
    if not rows or any(c not in rows[0] for c in CURVE_COLUMNS[:4]):
        return None
    return {c: np.array([float(r[c]) if r.get(c) not in (None, "") else np.nan for r in rows]) for c in CURVE_COLUMNS}


def rl_curves(curves: dict[str, str | Path], out: str | Path) -> tuple[Path, list[str]]:
    """Per RL variant, the win rate against SL and phase 2's against phase 1's; the figure and the CSVs missing."""
    fig, (ax_w, ax_p) = plt.subplots(1, 2, figsize=(11, 4))
    missing = []
    for label, path in curves.items():
        c = curve_columns(path)
        if c is None:
            missing.append(str(path))
            continue
        (line,) = ax_w.plot(c["games"], c["win_rate"], marker="o", ms=3, label=label)
        ax_w.fill_between(c["games"], c["ci_low"], c["ci_high"], color=line.get_color(), alpha=0.2, lw=0)
        two = ~np.isnan(c["vs_phase1"])
        if two.any():
            ax_p.plot(c["games"][two], c["vs_phase1"][two], marker="o", ms=3, label=label, color=line.get_color())
            ax_p.fill_between(c["games"][two], c["vs_phase1_low"][two], c["vs_phase1_high"][two],
                              color=line.get_color(), alpha=0.2, lw=0)
    for ax in (ax_w, ax_p):
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax_w.set(xlabel="training games", ylabel="win rate against SL", title="RL win rate against SL")
    ax_p.set(xlabel="training games", ylabel="win rate against phase 1's network",
             title="Phase 2 against phase 1, head to head")
    for ax in (ax_w, ax_p):
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    if missing:
        note = "no RL curve found at: " + ", ".join(missing) + " (run the RL stages to produce them)"
        if len(missing) == len(curves):  # an empty figure: say so in the middle
            note = note.replace(": ", ":\n", 1).replace(", ", "\n").replace(" (", "\n(")
            fig.text(0.5, 0.5, note, ha="center", va="center", fontsize=10, color="darkred",
                     bbox={"facecolor": "white", "alpha": 0.9, "edgecolor": "darkred"})
        else:
            fig.subplots_adjust(bottom=0.22)
            fig.text(0.5, 0.02, note, ha="center", va="bottom", fontsize=9, color="darkred")
    return _save(fig, out), missing


def _save(fig, out: str | Path) -> Path:
    out = atomic.savefig(fig, out, dpi=110)
    plt.close(fig)
    return out
