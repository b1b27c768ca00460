"""Agents behind one batched interface (``base.Agent``). Nothing is imported here: a module that needs only the
heuristic agent must not reach the networks (DVC stage deps follow imports)."""
