"""One module per ``paraamr`` command; each defines ``register(subparsers)`` (see :mod:`paraamr.cli`)."""
