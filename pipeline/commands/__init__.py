"""One module per ``koikoi`` subcommand, each with ``register(subparsers)``."""
