"""The batched game engine: play jobs (``batched``), playouts, rollout targets, executors (process pool, Ray),
networks as players, reward models. RL, duels and the searcher play on it."""
