"""MLflow: where runs go, how they end, resuming one, pipeline executions, lineage and the model registry."""
