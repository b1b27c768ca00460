"""``ParamError``, a bad param, here on the ground floor so that every layer can raise it (``train_guards``' loss
that a learning rate made infinite) without importing the params models (``pipeline.params`` hands it on)."""

from __future__ import annotations


class ParamError(Exception):
    """A bad param: ``<file>: <dotted.key> <what is wrong>, got <value>`` on one line (usage error, exit 2)."""
