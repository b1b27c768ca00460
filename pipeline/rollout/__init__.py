"""The rollout policy: a small network distilled from a searched network, cheap enough for the searcher's playouts.

- ``features``: what it sees of an observation, per legal token and per observation (numpy, no torch);
- ``network``: ``RolloutNet`` (a per-token MLP with a global embedding), its config and its model directory;
- ``rollout_player``: ``RolloutPlayer`` (the engine's ``Player``), ``RolloutSpec`` (shipped to workers),
  ``load_rollout``;

It plays; the ``rollout`` stage distills it (``pipeline.distill``).
"""
