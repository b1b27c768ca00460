"""The ``rollout`` stage's distillation of a network into the rollout policy (``pipeline.rollout``)."""
