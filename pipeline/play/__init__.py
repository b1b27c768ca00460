"""Play against the agents in the browser: a FastAPI app (``app``) that ``koikoi play`` serves."""
