"""Names, the paper's Table II and the markdown report of a round-robin."""

from __future__ import annotations

from ..agents.specs import OPTIONS, SEARCH
from .runner import DuelResult

# Table II of the paper: (row agent, column agent) -> (win rate, point difference), 2,000 games each.
PAPER_TABLE_II: dict[tuple[str, str], tuple[float, float]] = {
    ("rl_wp", "rl_point"): (0.515, -2.88),
    ("rl_wp", "sl"): (0.636, 3.44),
    ("rl_wp", "random"): (0.992, 27.41),
    ("rl_point", "sl"): (0.616, 6.13),
    ("rl_point", "random"): (0.982, 31.01),
    ("sl", "random"): (0.982, 20.05),
}
DISPLAY = {"rl_wp": "RL-WP", "rl_point": "RL-Point", "sl": "SL", "heuristic": "Heuristic", "random": "Random",
           "rl_phase1_wp": "RL-WP phase 1", "rl_phase1_point": "RL-Point phase 1"}


def display_name(key: str) -> str:
    if key.startswith(SEARCH):
        model, _, options = key[len(SEARCH):].partition(OPTIONS)
        return f"{display_name(model)} + search" + (f" ({options})" if options else "")
    return DISPLAY.get(key, key)


def oriented(results: dict[tuple[str, str], DuelResult], a: str, b: str) -> tuple[float, float, tuple, int] | None:
    """(win rate, point diff, ci95, games) of ``a`` against ``b``, whichever way the pairing was played."""
    if (a, b) in results:
        r = results[(a, b)]
        return r.win_rate, r.point_diff, r.ci95, r.games
    if (b, a) in results:
        r = results[(b, a)]
        lo, hi = r.ci95
        return 1.0 - r.win_rate, -r.point_diff, (1.0 - hi, 1.0 - lo), r.games
    return None


def standing(results: dict[tuple[str, str], DuelResult], a: str, b: str) -> str | None:
    """One sentence: how ``a`` stands against ``b`` and the figures behind it; None when they did not play. One
    verdict per pairing, the table's: a sequential duel's is its test's (H1: the agent played first beats the other;
    H0: it does not; no decision within its games: not told apart), never its interval's, which a duel stopped
    early leaves wide or off; a fixed-size duel's is its 95% interval's."""
    o = oriented(results, a, b)
    if o is None:
        return None
    w, p, (lo, hi), n = o
    first = (a, b) in results  # a played first: the test is of a's win rate
    t = results[(a, b) if first else (b, a)].sprt
    if t is None:
        verb = "beats" if lo > 0.5 else "loses to" if hi < 0.5 else "is not distinguishable at this game count from"
        test = ""
    else:
        verb = {"H1": "beats" if first else "loses to", "H0": "does not beat" if first else "is not beaten by"}.get(
            t["decision"], "is not told apart by the sequential test from")
        test = (f"; SPRT {t['h0']:.2f} vs {t['h1']:.2f}: {t['decision']} after {n} games (LLR {t['llr']:+.2f})")
    return (f"{display_name(a)} {verb} {display_name(b)}: win rate {w:.3f} (95% CI {lo:.3f}-{hi:.3f}, {n} games), "
            f"{p:+.2f} points per game{test}.")


def rl_vs_sl_sentence(results: dict[tuple[str, str], DuelResult]) -> str:
    """Where each RL variant stands against SL (``standing``), beside the paper's figures."""
    parts = []
    for rl in ("rl_wp", "rl_point"):
        said = standing(results, rl, "sl")
        if said is not None:
            paper = PAPER_TABLE_II[(rl, "sl")]
            parts.append(f"{said[:-1]} (paper: {paper[0]:.3f}, {paper[1]:+.2f}).")
    if not parts:
        return "RL against SL was not measured (the agents list lacks models/sl or the RL models)."
    return " ".join(parts)


def search_sentence(results: dict[tuple[str, str], DuelResult]) -> str | None:
    """Where each searcher stands against what it played (``standing``); None without one."""
    return " ".join(standing(results, a, b) for a, b in results if a.startswith(SEARCH)) or None


def phase_sentence(results: dict[tuple[str, str], DuelResult]) -> str | None:
    """Whether each RL variant's phase 2 beats its phase 1 (``standing``); None if not played."""
    return " ".join(filter(None, (standing(results, f"rl_{v}", f"rl_phase1_{v}") for v in ("wp", "point")))) or None


def table_markdown(keys: list[str], results: dict[tuple[str, str], DuelResult],
                   ratings: dict[str, dict[str, float]] | None = None) -> str:
    """Table II layout: row agent against column agent, ours next to the paper's numbers."""
    cols = keys[1:]
    lines = ["# Duels (Table II layout)", "",
             "Each cell: the row agent's win rate against the column agent (a draw counts as half a win) and its",
             "mean point difference relative to the initial points; the paper's value follows where it has one.",
             "", "| | " + " | ".join(display_name(c) for c in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for i, a in enumerate(keys[:-1]):
        cells = []
        for j, b in enumerate(cols, start=1):
            o = oriented(results, a, b) if j > i else None
            if o is None:
                cells.append("-")
                continue
            w, p, _, _ = o
            cell = f"{w:.3f} / {p:+.2f}"
            if (a, b) in PAPER_TABLE_II:
                pw, pp = PAPER_TABLE_II[(a, b)]
                cell += f" (paper {pw:.3f} / {pp:+.2f})"
            cells.append(cell)
        lines.append(f"| {display_name(a)} | " + " | ".join(cells) + " |")
    lines += ["", "## Pairings", "",
              "95% intervals from the duplicate pairs; a decided pairing's SPRT: its hypotheses and decision.", "",
              "| A vs B | games | win rate of A | 95% CI | draws | point diff | SPRT |",
              "|---|---|---|---|---|---|---|"]
    for (a, b), r in results.items():
        lo, hi = r.ci95
        t = r.sprt
        test = "-" if t is None else f"{t['h0']:.2f} vs {t['h1']:.2f}: {t['decision']} (LLR {t['llr']:+.2f})"
        lines.append(f"| {display_name(a)} vs {display_name(b)} | {r.games} | {r.win_rate:.3f} | "
                     f"{lo:.3f}-{hi:.3f} | {r.draws} | {r.point_diff:+.2f} | {test} |")
    if ratings:
        lines += ["", "## Bradley-Terry ratings (Elo scale, 95% interval)", "",
                  "| agent | Elo | 95% interval |", "|---|---|---|"]
        for k, v in sorted(ratings.items(), key=lambda kv: -kv[1]["elo"]):
            lines.append(f"| {display_name(k)} | {v['elo']:+.0f} | {v['elo_lo']:+.0f} to {v['elo_hi']:+.0f} |")
    lines += ["", "## RL against SL", "", rl_vs_sl_sentence(results), ""]
    searched = search_sentence(results)
    if searched:
        lines += ["## Search at decision time", "", searched, ""]
    phases = phase_sentence(results)
    if phases:
        lines += ["## Phase 2 against phase 1", "", phases, ""]
    return "\n".join(lines)
