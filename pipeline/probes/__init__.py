"""Probes of what rollout improvement can gain over a policy (``koikoi probe``)."""
