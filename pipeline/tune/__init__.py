"""Hyperparameter search with Optuna, tracked in MLflow (``koikoi tune``, stage ``tune``).

- ``space``: the search spaces, read from the params models' ``tuned`` fields (params.yaml ``tune.space``
  narrows them), and how a sample becomes params.yaml keys.
- ``objectives``: what a trial trains and scores (SL: val/acc with Lightning pruning; RL: win rate
  against the SL agent after a short budget).
- ``runs``: the MLflow parent run of a study and the nested run of each trial.
- ``study``: create or resume a study in an RDB storage and run a session.
- ``report``: ``best_params.yaml``, plots and summary in ``results/tune/<study>/``.
- ``apply``: merge the best params into params.yaml (ruamel.yaml round trip: comments and flow style stay).
- ``session``: the loaded params to a finished session (shared by the command and the stage).
"""
