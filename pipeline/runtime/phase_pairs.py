"""The duels stage's phase pairings: each RL variant's final model (phase 2) against its phase-1 model, so that
the pipeline itself says whether phase 2's self-play improved on phase 1. The repository's paths of those models,
here on the ground floor: the params (``DuelsParams``, ``params.needs``) and the duels read them."""

from __future__ import annotations


def phase_pair(variant: str) -> tuple[str, str]:
    """``(final model, phase-1 model)`` of an RL variant, as the rl_phase stages write them (dvc.yaml)."""
    return f"models/rl/{variant}", f"models/rl_phase1/{variant}"
