"""Reinforcement learning (paper section IV-C): the training loop over the batched game engine (``selfplay``).

- ``algorithms``: one module per ``rl.algorithm`` (``mc_dqn``, ``rollout_pi``) behind ``algorithms.base.Algorithm``.
- ``learner``: the Lightning module (``PolicyLearner``, the algorithm's loss) and the per-type sample buffer.
- ``batches``: a loop's samples encoded once for the learner's passes; ``experience``: the replayed loops' samples.
- ``training``: the phase loops (phase 1 against SL, phase 2 self-play); ``phase_state``: the loop counters and
  checkpoints; ``phase_tracking``: the phase's MLflow run; ``evaluation``; ``devices``: where a phase runs.
"""
