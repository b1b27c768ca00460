"""Hyperparameter search with Optuna, tracked in MLflow (``koikoi tune``, stage ``tune``)."""
