"""Agents: random, heuristic and model-backed players behind one batched interface (``base.Agent``), built from a
spec by ``loader.load_agent``. Nothing is imported here: a module that needs only the heuristic agent (SL's
synthetic records) must not reach the loader's model and search agents (DVC stage deps follow imports)."""
