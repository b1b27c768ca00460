"""Microseconds per decision of players on the same observations, as the playouts call them: CPU time (another job
slows it less than wall time), the median of ``rounds`` rounds."""

import statistics
import time
from collections.abc import Mapping, Sequence

from ..agents.base import Player
from ..engine import DECISION_NAMES, Observation


def batches(observations: Sequence[Observation], batch: int) -> dict[str, list[list[Observation]]]:
    out: dict[str, list[list[Observation]]] = {}
    for d, name in enumerate(DECISION_NAMES):
        mine = [o for o in observations if o.decision == d]
        if mine:
            out[name] = [mine[i:i + batch] for i in range(0, len(mine), batch)]
    return out


def us_per_decision(players: Mapping[str, Player], observations: Sequence[Observation], batch: int = 64,
                    rounds: int = 3) -> dict[str, dict[str, float]]:
    """``{player: {decision type: µs, "all": µs}}``, the rounds interleaved between the players."""
    groups = batches(observations, batch)
    if not groups:
        raise ValueError("us_per_decision: no observations to time")
    times: dict[str, dict[str, list[float]]] = {p: {k: [] for k in groups} for p in players}
    for player in players.values():
        for chunks in groups.values():  # warm-up: first calls, a compile
            player.values(chunks[0])
    for _ in range(rounds):
        for name, player in players.items():
            for kind, chunks in groups.items():
                t0 = time.process_time()
                for c in chunks:
                    player.values(c)
                times[name][kind].append((time.process_time() - t0) / sum(map(len, chunks)))
    out: dict[str, dict[str, float]] = {}
    n = len(observations)
    for name in players:
        per = {k: statistics.median(v) * 1e6 for k, v in times[name].items()}
        per["all"] = sum(per[k] * sum(map(len, groups[k])) for k in groups) / n
        out[name] = {k: round(v, 2) for k, v in per.items()}
    return out
