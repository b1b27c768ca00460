"""Koi-Koi for other programs: the PettingZoo environment (``aec``). Nothing is imported here."""
