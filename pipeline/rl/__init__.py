"""Reinforcement learning (paper section IV-C): the phase loops over the batched game engine (``selfplay``)."""
