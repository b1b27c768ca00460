"""``ParamError``, on the ground floor so that every layer can raise it without importing the params models."""


class ParamError(Exception):
    """A bad param: ``<file>: <dotted.key> <what is wrong>, got <value>`` on one line (usage error, exit 2)."""
