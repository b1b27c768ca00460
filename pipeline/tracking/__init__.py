"""MLflow: where runs go (``store``), how they end (``lifecycle``, ``bookkeeping``), resuming one (``resume``),
pipeline executions and lineage, the model registry, the store's lock and move."""
