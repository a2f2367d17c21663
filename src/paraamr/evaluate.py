"""``python -m paraamr.evaluate`` and ``accelerate launch -m paraamr.evaluate``: ``paraamr evaluate``."""

if __name__ == "__main__":
    from paraamr.cli import entry

    entry("evaluate")
