"""Agents: random, heuristic and model-backed players behind one batched interface (``base.Agent``), built from a
spec by ``pipeline.lineup.loader.load_agent``. Nothing is imported here: a module that needs only the heuristic
agent (SL's synthetic records) must not reach the model agent's networks (DVC stage deps follow imports)."""
