"""``python -m paraamr.generate`` and ``accelerate launch -m paraamr.generate``: ``paraamr generate``."""

if __name__ == "__main__":
    from paraamr.cli import entry

    entry("generate")
