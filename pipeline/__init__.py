"""koikoi: an experiment-tracked pipeline that trains Koi-Koi players (Guan et al., IEEE TAI 2023)."""
