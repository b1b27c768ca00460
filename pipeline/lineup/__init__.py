"""The lineup: any agent spec as an agent (``loader.load_agent``): a built-in, a model directory, a searcher over a
model. Above the agents, the batched engine and the searcher, all of which it builds. Nothing is imported here:
a random or heuristic duel must not load the model and search agents (DVC stage deps follow imports)."""
