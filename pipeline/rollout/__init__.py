"""The rollout policy: a small network distilled from a searched network, cheap enough for the searcher's playouts
(the ``rollout`` stage distills it: ``pipeline.distill``)."""
