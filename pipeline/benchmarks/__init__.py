"""Benchmark targets of ``koikoi bench``: one module each, ``add_arguments`` and ``run``."""
