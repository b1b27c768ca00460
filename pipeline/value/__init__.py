"""The learned afterstate value (samples, fit, build), the lookahead player over it, and the win-probability
table."""
