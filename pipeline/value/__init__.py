"""The win-probability table (``winprob``): RL-WP's reward and the searcher's."""
