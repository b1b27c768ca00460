"""The ``rollout`` stage's distillation of a searched network into the rollout policy (``pipeline.rollout``):

- ``teacher_games``: positions of the teacher's self-play games, labelled by its policy;
- ``fit``: the Lightning fit of a ``RolloutNet`` to them, and how a fit is judged;
- ``distill``: what the stage runs: the games, the fit, the speed figures, the model directory;
- ``speed``: microseconds per decision of any two players on the same observations.
"""
