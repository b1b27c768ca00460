"""The batched game engine: play jobs (``batched``), playouts, branch targets, executors (process pool, Ray),
networks as players, reward models. RL, duels and the searcher play on it."""
