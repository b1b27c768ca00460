"""Reinforcement learning (paper section IV-C): batched self-play, Monte-Carlo DQN, win-probability model.

- ``policies``: networks shipped to self-play workers (``NetSpec``) and their batched evaluation.
- ``selfplay``: the batched game loop (``PlayJob`` -> ``PlayResult``), trajectories turned into samples.
- ``executor``: where play jobs run (``Executor``: in-process or a local process pool; Ray could be added).
- ``rewards``: the round reward models RL-Point and RL-WP.
- ``winprob``: the win-probability table P(win | round, points, dealer), fitted by logistic regression.
- ``learner``: the Lightning module (Q-learning by Monte-Carlo targets) and the per-type sample buffer.
- ``training``: the phase loops (phase 1 against SL, phase 2 self-play), evaluation, checkpoints, MLflow.
"""
