"""Decision-time search agents (``search:<model>?...``): docs/search.md."""
