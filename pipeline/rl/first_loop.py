"""Phase 1's first loop, played once for both reward models (the ``rl_phase1_play`` stage).

Both variants start from the same weights and seeds, and the reward only scores what was played, so the games are
credited with both reward models and each variant's ``rl_phase1@<reward>`` fits on its samples. Where the games
differ (``expert_it``'s searcher reads the reward), nothing is shared.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from ..runtime import atomic
from ..selfplay.batched import PlayJob, PlayResult
from ..selfplay.rewards import RewardModels
from .experience import pack_samples, unpack_samples

FORMAT = 1  # bumped when the file's layout changes


def same_games(jobs: list[PlayJob]) -> bool:
    """Whether the jobs play the same games, whatever their reward models and what their recorders only score them
    with (a temperature)."""
    def scoreless(job: PlayJob) -> PlayJob:
        return replace(job, reward=None, recorder=job.recorder.scoreless())

    first = scoreless(jobs[0])
    return all(scoreless(j) == first for j in jobs[1:])


def shared_play(jobs: dict[str, PlayJob], play: Callable[[PlayJob], PlayResult]) -> dict[str, PlayResult] | None:
    """Each variant's result of one play of ``jobs`` (per variant, the same games: ``same_games``) credited with
    every variant's reward model; None where the games differ. ``play(job)``: plays it."""
    variants = list(jobs)
    if not same_games(list(jobs.values())):
        return None
    result = play(replace(jobs[variants[0]], reward=RewardModels(tuple(jobs[v].reward for v in variants))))
    return {v: result.for_reward(k, jobs[v].recorder) for k, v in enumerate(variants)}


def write(path: Path, fingerprints: dict[str, str], results: dict[str, PlayResult] | None) -> None:
    """Per variant its run's fingerprint, samples and batch counters; nothing timed, so the same games write the
    same bytes and a rerun leaves the phases that read it up to date."""
    entries = {} if results is None else {
        v: {"fingerprint": fingerprints[v], "samples": pack_samples(r.samples), "games": len(r.trajectories),
            "forward_samples": r.forward_samples, "forward_calls": r.forward_calls}
        for v, r in results.items()}
    atomic.torch_save({"format": FORMAT, "variants": entries}, path)


def read(path: Path, variant: str, fingerprint: str) -> PlayResult | None:
    """``variant``'s first-loop result, where ``path`` holds it for a run of ``fingerprint`` (the same params,
    models, code and devices); else None."""
    if not path.is_file():
        return None
    data = torch.load(path, map_location="cpu", weights_only=True)
    entry = data.get("variants", {}).get(variant) if data.get("format") == FORMAT else None
    if entry is None or entry["fingerprint"] != fingerprint:
        return None
    return PlayResult(trajectories=[unpack_samples(entry["samples"])], forward_samples=entry["forward_samples"],
                      forward_calls=entry["forward_calls"])
