"""Any agent spec as an agent (``loader.load_agent``). Nothing is imported here: a random or heuristic duel
must not load torch (DVC stage deps follow imports)."""
