"""MLflow: where runs go (``store``), how they end (``lifecycle``), pipeline executions and lineage, the model
registry, resumable bookkeeping, the store's lock and move."""
