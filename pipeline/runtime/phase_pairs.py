"""The paths of each RL variant's final and phase-1 models, which the duels stage pairs (read by params and duels)."""


def phase_pair(variant: str) -> tuple[str, str]:
    """``(final model, phase-1 model)`` of an RL variant, as the rl_phase stages write them (dvc.yaml)."""
    return f"models/rl/{variant}", f"models/rl_phase1/{variant}"
