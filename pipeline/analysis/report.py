"""A judged game as a report (JSON), as text and as a graph; a move is labelled only where its cost is sure."""

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..engine import DECISION_NAMES, STOP, card_name, card_tuple, ids_of
from ..runtime import atomic
from ..selfplay.rewards import game_outcome
from .judge import Game, Judge, judge_game

THRESHOLDS = (("blunder", 0.10), ("mistake", 0.05), ("inaccuracy", 0.02))  # the cost in P(win): the worst first
LABELS = tuple(name for name, _ in reversed(THRESHOLDS))
PLURALS = {"inaccuracy": "inaccuracies", "mistake": "mistakes", "blunder": "blunders"}
COLOURS = {"inaccuracy": "#e6b800", "mistake": "#f08c00", "blunder": "#d62728"}


def label(cost: float, low: float) -> str | None:
    """The label of a cost whose interval's lower end is ``low``."""
    return None if low <= 0.0 else next((name for name, t in THRESHOLDS if cost >= t), None)


def move_accuracy(cost: float) -> float:
    """Lichess's accuracy of a move that lost ``cost`` of P(win) (100 for none, 63 for 10 points, 0 past 80)."""
    return 100.0 if cost <= 0.0 else min(100.0, max(0.0, 103.1668 * math.exp(-0.04354 * 100.0 * cost) - 3.1669))


def move_name(action: int) -> str:
    return card_name(action) if action < STOP else ("stop" if action == STOP else "koi-koi")


def _cards(mask: int) -> list[list[int]]:
    return [list(card_tuple(c)) for c in ids_of(mask)]


def analyse(game: Game, judge: Judge, players: Sequence[int], perspective: int = 0,
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The report of ``players``' decisions (seats 0/1, 1/2 in the report), its graph ``perspective``'s P(win)."""
    verdicts = judge_game(game, judge, players, progress)
    decisions, points = [], []
    starts, rnd = {r: (pts, dealer) for r, pts, dealer in game.starts}, 0
    for i, (obs, _) in enumerate(game.decisions):
        if obs.round != rnd:  # a round starts: the table's P(win) at its start
            rnd = obs.round
            pts, dealer = starts[rnd]
            points.append({"kind": "start", "round": rnd,
                           "p": round(judge.table.prob(rnd, pts[perspective], dealer == perspective), 4)})
        v = verdicts.get(i)
        if v is None:
            continue
        decisions.append({
            "index": len(decisions), "player": obs.player + 1, "round": obs.round, "turn": obs.turn,
            "decision": DECISION_NAMES[obs.decision], **v, "label": label(v["cost"], v["ci95"][0]),
            "chosen_name": move_name(v["chosen"]), "best_name": move_name(v["best"]),
            "board": {"hand": _cards(obs.hand), "field": _cards(obs.field), "pile": _cards(obs.my_pile),
                      "opponent_pile": _cards(obs.opp_pile),
                      "pending": list(card_tuple(obs.pick_card)) if obs.pick_card >= 0 else None,
                      "points": [obs.my_points, obs.opp_points], "yaku_points": obs.my_yaku_points}})
        p = v["value"] if obs.player == perspective else 1.0 - v["value"]
        points.append({"kind": "move", "round": obs.round, "p": round(p, 4), "decision": len(decisions) - 1})
    points.append({"kind": "end", "round": rnd, "p": game_outcome(game.winner, perspective)})
    return {"record": game.path, "names": list(game.names),
            "winner": 0 if game.winner is None else game.winner + 1, "points": list(game.points),
            "judge": {"deals": judge.deals, "seed": judge.seed}, "thresholds": dict(THRESHOLDS),
            "players": {str(p + 1): player_summary(game.names[p], [d for d in decisions if d["player"] == p + 1])
                        for p in sorted(players)},
            "decisions": decisions, "graph": {"perspective": perspective + 1, "points": points}}


def player_summary(name: str, decisions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(decisions)
    acc = sum(move_accuracy(d["cost"]) for d in decisions) / n if n else None
    return {"name": name, "decisions": n, "accuracy": None if acc is None else round(acc, 1),
            **{lab: sum(d["label"] == lab for d in decisions) for lab in LABELS},
            "lost": round(sum(d["cost"] for d in decisions), 4)}


def costliest(report: dict[str, Any], most: int = 5) -> list[str]:
    worst = sorted(report["decisions"], key=lambda d: -d["cost"])[:most]
    names = report["names"]
    return [f"R{d['round']} T{d['turn']} {names[d['player'] - 1]} {d['decision']}: {d['chosen_name']} "
            f"({100 * d['value']:.1f}%), best {d['best_name']} ({100 * d['best_value']:.1f}%): cost "
            f"{100 * d['cost']:.1f} [{100 * d['ci95'][0]:.1f}, {100 * d['ci95'][1]:.1f}] points of P(win)"
            + (f", {d['label']}" if d["label"] else "") for d in worst if d["cost"] > 0]


def players_line(report: dict[str, Any]) -> str:
    return "; ".join(f"{p['name']} (player {k}): accuracy {p['accuracy']}, " +
                     ", ".join(f"{p[lab]} {lab if p[lab] == 1 else PLURALS[lab]}" for lab in reversed(LABELS))
                     for k, p in report["players"].items())


def summary_table(reports: Iterable[dict[str, Any]]) -> str:
    rows: dict[str, Counter] = {}
    for rep in reports:
        for p in rep["players"].values():
            rows.setdefault(p["name"], Counter()).update(
                {"games": 1, "decisions": p["decisions"], "accuracy": (p["accuracy"] or 0.0) * p["decisions"],
                 "lost": p["lost"], **{lab: p[lab] for lab in LABELS}})
    head = ("| player | games | decisions | accuracy | blunders / game | mistakes / game | inaccuracies / game "
            "| P(win) lost / game |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    return "\n".join([head, *(f"| {name} | {r['games']} | {r['decisions']} | "
                              f"{r['accuracy'] / max(r['decisions'], 1):.1f} | "
                              + " | ".join(f"{r[lab] / r['games']:.2f}" for lab in reversed(LABELS))
                              + f" | {r['lost'] / r['games']:.3f} |" for name, r in rows.items())])


def plot_graph(report: dict[str, Any], path: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts, seat = report["graph"]["points"], report["graph"]["perspective"]
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.plot(range(len(pts)), [p["p"] for p in pts], color="#333", lw=1.2)
    for x, p in enumerate(pts):
        if p["kind"] == "start":
            ax.axvline(x, color="grey", lw=0.6, ls=":")
            ax.text(x + 0.3, 1.02, f"R{p['round']}", fontsize=8, color="grey")
        elif p["kind"] == "move":
            d = report["decisions"][p["decision"]]
            if d["label"]:
                ax.plot(x, p["p"], "o", color=COLOURS[d["label"]], ms=6)
    for lab in reversed(LABELS):
        ax.plot([], [], "o", color=COLOURS[lab], label=lab)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set_ylim(-0.02, 1.08)
    ax.set_xlim(0, len(pts) - 1)
    ax.set_xticks([])
    ax.set_ylabel(f"P({report['names'][seat - 1]} wins)")
    ax.legend(fontsize=8, loc="lower left", ncol=3)
    ax.set_title("\n".join([f"{report['names'][0]} vs {report['names'][1]}", *players_line(report).split("; ")]),
                 fontsize=9)
    fig.tight_layout()
    out = atomic.savefig(fig, path, dpi=100)
    plt.close(fig)
    return out
