"""The rollout policy: a small network distilled from a searched network, cheap enough for the searcher's playouts.

- ``features``: what it sees of an observation, per legal token and per observation (numpy, no torch);
- ``network``: ``RolloutNet`` (a per-token MLP with a global embedding), its config and its model directory;
- ``rollout_player``: ``RolloutPlayer`` (the engine's ``Player``), ``RolloutSpec`` (shipped to workers),
  ``load_rollout``;
- ``teacher_games``: positions of the teacher's self-play games, labelled by its policy;
- ``distill_module``: the Lightning fit of a ``RolloutNet`` to them, and how a fit is judged;
- ``distill``: what the ``rollout`` stage runs: the games, the fit, the speed figures, the model directory;
- ``speed``: microseconds per decision of any two players on the same observations.
"""
