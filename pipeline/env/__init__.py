"""Koi-Koi for other programs: the PettingZoo environment (``aec``), over the rules engine and the model's
observation encoding. Nothing is imported here."""
