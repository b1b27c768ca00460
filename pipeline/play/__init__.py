"""Play against the agents in the browser: a FastAPI app (``app``) over game sessions (``session``).

``koikoi play`` serves it; the page in ``static/`` uses only the JSON API.
"""
