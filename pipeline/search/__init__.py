"""Decision-time search agents (``search:<model>?...``): docs/search.md.

``spec`` parses the agent spec (no torch); ``player`` searches; ``agent`` loads one as an agent.
"""
